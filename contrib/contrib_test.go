// Package contrib holds what operators install next to fared: the example
// config, the systemd unit and the Grafana dashboard. The tests keep them
// true to the code: the example parses (the isis package's tests check
// what it parses to), and the dashboard
// asks only for metrics docs/metrics.md documents (whose names the
// daemon's tests check against a real scrape).
package contrib

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fared/fared/config"
	_ "github.com/fared/fared/isis" // the example's isis section
)

func TestExampleConfig(t *testing.T) {
	b, err := os.ReadFile("fared.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse("fared.yaml", b); err != nil {
		t.Fatal(err)
	}
}

type panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct{ H, W, X, Y int }
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// The dashboard parses, every panel has a place and a query, and every
// metric it queries is documented (and so exported).
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana/fared-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title      string  `json:"title"`
		UID        string  `json:"uid"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct{ Name string } `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	if d.UID == "" || !vars["datasource"] || !vars["instance"] {
		t.Fatalf("dashboard uid %q, variables %v", d.UID, vars)
	}
	name := regexp.MustCompile(`\b(fared|go|process)_[a-z0-9_]+\b`)
	used := map[string]bool{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.GridPos.W == 0 || p.GridPos.H == 0 || len(p.Targets) == 0 {
			t.Errorf("panel %q: no place or no query", p.Title)
		}
		for _, tg := range p.Targets {
			e := tg.Expr
			if strings.Count(e, "(") != strings.Count(e, ")") || strings.Count(e, "{") != strings.Count(e, "}") || strings.Count(e, "[") != strings.Count(e, "]") {
				t.Errorf("panel %q: unbalanced expression %s", p.Title, e)
			}
			if !strings.Contains(e, `instance=~"$instance"`) {
				t.Errorf("panel %q: %s ignores the instance variable", p.Title, e)
			}
			for _, m := range name.FindAllString(e, -1) {
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if strings.HasPrefix(m, "fared_spf_duration_seconds") {
						m = strings.TrimSuffix(m, suf)
					}
				}
				used[m] = true
			}
		}
	}
	for m := range used {
		if strings.HasPrefix(m, "fared_") && !strings.Contains(string(doc), "`"+m+"`") {
			t.Errorf("dashboard queries %s, which docs/metrics.md does not document", m)
		}
	}
	// The list: adjacencies by state, LSDB size, SPF runs and
	// duration, FARE weight changes, FIB messages and errors, rejected PDUs.
	for _, m := range []string{"fared_isis_adjacencies", "fared_ospf_neighbors", "fared_isis_lsdb_lsps", "fared_ospf_lsdb_lsas",
		"fared_spf_runs_total", "fared_spf_duration_seconds", "fared_fare_weight_changes_total", "fared_fib_messages_total",
		"fared_fib_errors_total", "fared_isis_pdus_rejected_total", "fared_ospf_packets_rejected_total",
		// and each module's own.
		"fared_qos_pfc_pause_frames_total", "fared_qos_watchdog_detections_total", "fared_inof_records", "fared_inof_events_total",
		"fared_inc_aggregator_events_total", "fared_inc_groups"} {
		if !used[m] {
			t.Errorf("no panel shows %s", m)
		}
	}
}
