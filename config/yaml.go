package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Walker walks a yaml.Node tree and collects every problem with its line,
// so that one run reports all of a file's mistakes at once. It is the one
// YAML toolkit of fared: the daemon's config, module sections registered
// with Register, and farelab's topology files all use it.
type Walker struct {
	File string // for messages; "" prints "line N: ..."
	Errs Errors

	spfAt  map[*SPF]*yaml.Node   // spf sections seen, for checks across sections
	top    map[string]*yaml.Node // the top-level keys the file sets (TopLevel)
	bfdTop *BFD                  // the top-level bfd defaults (SectionBFD)
}

// Field handles the value v of the key k.
type Field func(k, v *yaml.Node)

// Error is one problem in a config file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.File == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Errors is returned when a file has several problems, in line order.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Err returns nil, the one problem (an *Error), or all of them (Errors)
// sorted by line.
func (w *Walker) Err() error {
	sort.SliceStable(w.Errs, func(i, j int) bool { return w.Errs[i].Line < w.Errs[j].Line })
	switch len(w.Errs) {
	case 0:
		return nil
	case 1:
		return w.Errs[0]
	}
	return w.Errs
}

// Errf records a problem at the line of n (line 1 if n has none).
func (w *Walker) Errf(n *yaml.Node, format string, args ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	w.Errs = append(w.Errs, &Error{File: w.File, Line: line, Msg: fmt.Sprintf(format, args...)})
}

var yamlErrRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Document parses data and returns its root node (an empty mapping for an
// empty document), or nil after recording the syntax error at its line.
func (w *Walker) Document(data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlErrRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		w.Errs = append(w.Errs, &Error{File: w.File, Line: line, Msg: "invalid YAML: " + msg})
		return nil
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return Deref(doc.Content[0])
	}
	return &yaml.Node{Kind: yaml.MappingNode, Line: 1}
}

// Mapping calls the field for each key of the mapping n, reports unknown
// and duplicate keys, and returns the key nodes seen.
func (w *Walker) Mapping(n *yaml.Node, fields map[string]Field) map[string]*yaml.Node {
	return w.MappingIn("", n, fields)
}

// MappingIn is Mapping whose messages start with "what: " (farelab's
// topology files name the node or link a key belongs to).
func (w *Walker) MappingIn(what string, n *yaml.Node, fields map[string]Field) map[string]*yaml.Node {
	pre := ""
	if what != "" {
		pre = what + ": "
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], Deref(n.Content[i+1])
		f, ok := fields[k.Value]
		switch {
		case !ok:
			w.Errf(k, "%sunknown key %q", pre, k.Value)
		case seen[k.Value] != nil:
			w.Errf(k, "%sduplicate key %q (first at line %d)", pre, k.Value, seen[k.Value].Line)
		default:
			seen[k.Value] = k
			f(k, v)
		}
	}
	return seen
}

// Deref follows YAML aliases.
func Deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Want reports a type error unless ok.
func (w *Walker) Want(k, v *yaml.Node, what string, ok bool) bool {
	if !ok {
		got := fmt.Sprintf("%q", v.Value)
		switch {
		case v.Kind == yaml.MappingNode:
			got = "a mapping"
		case v.Kind == yaml.SequenceNode:
			got = "a list"
		case v.ShortTag() == "!!null":
			got = "no value"
		}
		w.Errf(v, "%s: expected %s, got %s", k.Value, what, got)
	}
	return ok
}

// IsMapping reports (once) unless v is a mapping: the check every section
// starts with.
func (w *Walker) IsMapping(k, v *yaml.Node) bool {
	return w.Want(k, v, "a mapping", v.Kind == yaml.MappingNode)
}

// Text returns a scalar's text. Numbers count as text: 49.0001 is an area.
func (w *Walker) Text(k, v *yaml.Node) (string, bool) {
	t := v.ShortTag()
	return v.Value, w.Want(k, v, "a string", v.Kind == yaml.ScalarNode && (t == "!!str" || t == "!!int" || t == "!!float"))
}

// Integer returns an integer in lo..hi.
func (w *Walker) Integer(k, v *yaml.Node, lo, hi int64) (int64, bool) {
	n, err := strconv.ParseInt(v.Value, 0, 64)
	if !w.Want(k, v, "an integer", v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int" && err == nil) {
		return 0, false
	}
	if n < lo || n > hi {
		w.Errf(v, "%s: %d out of range %d..%d", k.Value, n, lo, hi)
		return 0, false
	}
	return n, true
}

// SetInt stores an integer in lo..hi.
func SetInt[T ~int | ~uint8 | ~uint16 | ~uint32 | ~int64 | ~uint64](w *Walker, dst *T, lo, hi int64) Field {
	return func(k, v *yaml.Node) {
		if n, ok := w.Integer(k, v, lo, hi); ok {
			*dst = T(n)
		}
	}
}

// Str stores a string that check accepts (check returns the complaint, or
// "").
func (w *Walker) Str(dst *string, check func(string) string) Field {
	return func(k, v *yaml.Node) {
		if s, ok := w.Text(k, v); ok {
			if check != nil {
				if msg := check(s); msg != "" {
					w.Errf(v, "%s: %s", k.Value, msg)
					return
				}
			}
			*dst = s
		}
	}
}

// OneOf stores a string from the given choices.
func (w *Walker) OneOf(dst *string, choices ...string) Field {
	return w.Str(dst, func(s string) string {
		for _, c := range choices {
			if s == c {
				return ""
			}
		}
		return fmt.Sprintf("must be %s, got %q", orList(choices), s)
	})
}

func orList(s []string) string {
	switch len(s) {
	case 0:
		return "nothing"
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Bool stores true or false (YAML 1.2 booleans only: yes/no are refused).
func (w *Walker) Bool(dst *bool) Field {
	return func(k, v *yaml.Node) {
		if w.Want(k, v, "true or false", v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool") {
			_ = v.Decode(dst)
		}
	}
}

// BoolPtr stores true or false into a new bool: nil means "not set".
func (w *Walker) BoolPtr(dst **bool) Field {
	return func(k, v *yaml.Node) {
		var b bool
		w.Bool(&b)(k, v)
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" {
			*dst = &b
		}
	}
}

// Duration returns a duration in lo..hi: "1s", "500ms", or integer seconds.
func (w *Walker) Duration(k, v *yaml.Node, lo, hi time.Duration) (time.Duration, bool) {
	var d time.Duration
	err := errors.New("not a duration")
	switch {
	case v.Kind != yaml.ScalarNode:
	case v.ShortTag() == "!!int":
		var s int64
		if s, err = strconv.ParseInt(v.Value, 0, 64); err == nil {
			d = time.Duration(s) * time.Second
			if s > math.MaxInt64/int64(time.Second) {
				d = math.MaxInt64
			}
		}
	case v.ShortTag() == "!!str":
		d, err = time.ParseDuration(v.Value)
	}
	if !w.Want(k, v, "a duration (e.g. 3s, 500ms, or integer seconds)", err == nil) {
		return 0, false
	}
	if d < lo || d > hi {
		w.Errf(v, "%s: %s out of range %s..%s", k.Value, v.Value, FormatDuration(lo), FormatDuration(hi))
		return 0, false
	}
	return d, true
}

// SetDuration stores a duration in lo..hi.
func (w *Walker) SetDuration(dst *time.Duration, lo, hi time.Duration) Field {
	return func(k, v *yaml.Node) {
		if d, ok := w.Duration(k, v, lo, hi); ok {
			*dst = d
		}
	}
}

// FormatDuration writes a duration as the config does: whole seconds as
// "90s" (not "1m30s"), anything else as time.Duration does.
func FormatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// Parsed stores what parse makes of a scalar; parse's error is reported
// against the key and leaves dst alone.
func Parsed[T any](w *Walker, dst *T, parse func(string) (T, error)) Field {
	return func(k, v *yaml.Node) {
		if s, ok := w.Text(k, v); ok {
			x, err := parse(s)
			if err != nil {
				w.Errf(v, "%s: %v", k.Value, err)
				return
			}
			*dst = x
		}
	}
}

// Bandwidth stores bits/s ("100G", "1.5G", "800K").
func (w *Walker) Bandwidth(dst *Bandwidth) Field { return Parsed(w, dst, ParseBandwidth) }

// List calls item for each element of the sequence v that is a mapping.
func (w *Walker) List(item func(v *yaml.Node)) Field {
	return func(k, v *yaml.Node) {
		if !w.Want(k, v, "a list", v.Kind == yaml.SequenceNode) {
			return
		}
		for _, it := range v.Content {
			if it = Deref(it); w.Want(k, it, "a mapping", it.Kind == yaml.MappingNode) {
				item(it)
			}
		}
	}
}

// Strings returns the scalars of the sequence v.
func (w *Walker) Strings(k, v *yaml.Node) ([]string, []*yaml.Node) {
	if !w.Want(k, v, "a list", v.Kind == yaml.SequenceNode) {
		return nil, nil
	}
	var out []string
	var nodes []*yaml.Node
	for _, it := range v.Content {
		it = Deref(it)
		if s, ok := w.Text(k, it); ok {
			out = append(out, s)
			nodes = append(nodes, it)
		}
	}
	return out, nodes
}

// Bandwidth is in bits per second.
type Bandwidth float64

// BytesPerSec is the bandwidth as IS-IS and OSPF carry it on the wire.
func (b Bandwidth) BytesPerSec() float32 { return float32(b / 8) }

var bwUnits = []struct {
	suffix string
	mult   float64
}{{"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}}

// String formats b like "100G", "1.5G" or "800K".
func (b Bandwidth) String() string {
	f := float64(b)
	for _, u := range bwUnits {
		if math.Abs(f) >= u.mult && !math.IsInf(f, 0) {
			return strconv.FormatFloat(f/u.mult, 'f', -1, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// ParseBandwidth parses bits per second: a number with an optional K, M, G
// or T suffix (powers of 10, either case), e.g. "100G", "1.5G", "800K".
// The result is > 0 and fits a float32 in bytes per second.
func ParseBandwidth(s string) (Bandwidth, error) {
	num, mult := strings.TrimSpace(s), 1.0
	for _, u := range bwUnits {
		if strings.HasSuffix(strings.ToUpper(num), u.suffix) {
			num, mult = strings.TrimSpace(num[:len(num)-1]), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("invalid bandwidth %q (want bits/s with optional K, M, G or T suffix, e.g. 100G)", s)
	}
	b := Bandwidth(f * mult)
	if !(b > 0) || b.BytesPerSec() > math.MaxFloat32 {
		return 0, fmt.Errorf("invalid bandwidth %q: must be > 0 and finite", s)
	}
	return b, nil
}
