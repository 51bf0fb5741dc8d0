// Package scrape reads a Prometheus text exposition for tests: it parses
// it with Prometheus' own parser (so a malformed exposition fails), lints
// the names with promlint (conventions: _total counters, base units,
// help text), looks values up by name and labels, and fetches /metrics
// from inside a network namespace with `ip netns exec NS curl`, as a
// scraper on that host would.
package scrape

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families is a parsed exposition, by metric name.
type Families map[string]*dto.MetricFamily

// Parse parses the text format; any syntax or consistency error (a
// sample without its TYPE, a duplicate series, a bad histogram) fails.
func Parse(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("exposition does not parse: %w", err)
	}
	return Families(fams), nil
}

// Lint returns promlint's complaints about the exposition, one line each.
func Lint(text []byte) ([]string, error) {
	probs, err := promlint.New(bytes.NewReader(text)).Lint()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range probs {
		out = append(out, p.Metric+": "+p.Text)
	}
	return out, nil
}

// match reports whether m carries every name=value pair of labels.
func match(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount())
	}
	return 0
}

// Sum adds the values of every series of name whose labels include the
// given name, value pairs (a histogram counts its observations); ok is
// false when no series matches.
func (f Families) Sum(name string, labels ...string) (sum float64, ok bool) {
	mf := f[name]
	if mf == nil {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		if match(m, labels) {
			sum += value(m)
			ok = true
		}
	}
	return sum, ok
}

// Type is the family's type ("COUNTER", "GAUGE", "HISTOGRAM", ...), or ""
// when it is absent.
func (f Families) Type(name string) string {
	if mf := f[name]; mf != nil {
		return mf.GetType().String()
	}
	return ""
}

// Names lists the families, sorted.
func (f Families) Names() []string {
	return slices.Sorted(maps.Keys(f))
}

// Series lists the label sets of a family as "k=v,k=v" strings (for
// failure messages).
func (f Families) Series(name string) []string {
	var out []string
	if mf := f[name]; mf != nil {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out = append(out, fmt.Sprintf("{%s} %g", strings.Join(ls, ","), value(m)))
		}
	}
	return out
}

// Get fetches url from inside the network namespace ns ("" : the current
// one) with curl, and returns the body; a status other than 200 is an
// error.
func Get(ctx context.Context, ns, url string) ([]byte, error) {
	args := []string{"curl", "-sS", "--max-time", "10", "-w", "\n%{http_code}", url}
	if ns != "" {
		args = append([]string{"ip", "netns", "exec", ns}, args...)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	i := bytes.LastIndexByte(out, '\n')
	body, code := out[:max(i, 0)], strings.TrimSpace(string(out[i+1:]))
	if code != "200" {
		return body, fmt.Errorf("GET %s: HTTP %s: %s", url, code, bytes.TrimSpace(body))
	}
	return body, nil
}

// Scrape fetches url from namespace ns, checks that it parses and that
// promlint finds nothing, and returns the families.
func Scrape(ctx context.Context, ns, url string) (Families, []byte, error) {
	body, err := Get(ctx, ns, url)
	if err != nil {
		return nil, nil, err
	}
	fams, err := Parse(bytes.NewReader(body))
	if err != nil {
		return nil, body, err
	}
	probs, err := Lint(body)
	if err != nil {
		return nil, body, err
	}
	if len(probs) > 0 {
		return fams, body, fmt.Errorf("promlint: %s", strings.Join(probs, "; "))
	}
	return fams, body, nil
}

// Undocumented returns the fared_ families of f that the markdown file at
// doc does not name in backquotes (docs/metrics.md's tables), except
// those starting with one of skip.
func (f Families) Undocumented(doc string, skip ...string) ([]string, error) {
	b, err := os.ReadFile(doc)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range f.Names() {
		if !strings.HasPrefix(n, "fared_") || slices.ContainsFunc(skip, func(p string) bool { return strings.HasPrefix(n, p) }) {
			continue
		}
		if !bytes.Contains(b, []byte("`"+n+"`")) {
			out = append(out, n)
		}
	}
	return out, nil
}
