package scenarios

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
)

// farectlText runs farectl on a fared node without -j: what an operator
// reads.
func farectlText(t *testing.T, ctx context.Context, l *interop.Lab, node string, args ...string) string {
	t.Helper()
	n := l.Node(node)
	argv := append([]string{"netns", "exec", n.Netns, bins.Farectl, "-s", n.Socket}, args...)
	out, err := exec.CommandContext(ctx, "ip", argv...).CombinedOutput()
	if err != nil {
		t.Fatalf("farectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func mustContain(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Fatalf("%s lacks %q:\n%s", what, p, s)
		}
	}
}

// topoOf returns a fared node's one topology (the level-2 or area-0
// graph it computes on).
func topoOf(ctx context.Context, l *interop.Lab, node string) (*wire.Topology, error) {
	var v []wire.Topology
	if err := l.FarectlJSON(ctx, node, &v, "lsdb"); err != nil {
		return nil, err
	}
	for i := range v {
		if v[i].Level == 2 || v[i].Area == "0.0.0.0" {
			return &v[i], nil
		}
	}
	return nil, fmt.Errorf("%s: no topology yet", node)
}

// linkBW is the bandwidth (bits/s) f2 sees on a link.
func linkBW(ctx context.Context, l *interop.Lab, from, to string) (float64, error) {
	g, err := topoOf(ctx, l, "f2")
	if err != nil {
		return 0, err
	}
	for _, n := range g.Nodes {
		if n.Name != from && n.ID != from {
			continue
		}
		for _, lk := range n.Links {
			if (lk.ToName == to || lk.To == to) && lk.MaxBPS != nil {
				return float64(*lk.MaxBPS), nil
			}
		}
	}
	return 0, fmt.Errorf("f2 sees no link %s->%s with a bandwidth", from, to)
}

// TestOperatorISIS and TestOperatorOSPF are issue 17's operator items on
// a fared–FRR–fared line, each checked where an operator would look:
//   - a prefix configured with a metric and Path Bandwidth and also
//     present on a passive lo is advertised with the config's values
//     (FRR's route metric, f2's graph);
//   - lo's 127.0.0.1/8 (and ::1) is never advertised: FRR has no route;
//   - a run-time bandwidth override is logged, survives an unchanged
//     reload ("override kept"), and --clear drops it;
//   - IS-IS: the overload bit at run time reaches FRR; OSPF/IS-IS: clear
//     drops the adjacency on both sides and it re-forms.
func TestOperatorISIS(t *testing.T) { operatorLine(t, "isis") }
func TestOperatorOSPF(t *testing.T) { operatorLine(t, "ospf") }

func operatorLine(t *testing.T, proto string) {
	l := startLab(t, "name: op"+proto[:1]+"\nprotocol: "+proto+`
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared}
  r1: {kind: frr}
  f2: {kind: fared}
links:
  - {a: f1, b: r1, bandwidth: 100G}
  - {a: r1, b: f2, bandwidth: 100G}
`)
	ctx := ctxT(t)
	f1id := "f1"
	if proto == "ospf" {
		f1id = l.Node("f1").Loopback.String()
	}
	up := func(node string, want int) func() error {
		return func() error {
			_, ups := faredFlaps(t, ctx, l, node, proto)
			if len(ups) != want {
				return fmt.Errorf("%s: up %v", node, ups)
			}
			return nil
		}
	}
	poll(t, ctx, 60*time.Second, "f2 adjacent", up("f2", 1))
	poll(t, ctx, 30*time.Second, "f1 adjacent", up("f1", 1))

	t.Run("configured prefix wins over lo; lo's loopback scope never advertised", func(t *testing.T) {
		if _, err := l.Exec(ctx, "f1", "ip", "addr", "add", "10.10.2.1/24", "dev", "lo"); err != nil {
			t.Fatal(err)
		}
		r := editFared(t, ctx, l, "f1", func(doc *yaml.Node) {
			sec := yget(root(doc), proto)
			lo, pfx := "{name: lo, passive: true, metric: 1}", "{prefix: 10.10.2.0/24, metric: 5, path-bandwidth: 100G}"
			if proto == "ospf" {
				lo, pfx = "{name: lo, area: 0, passive: true}", "{prefix: 10.10.2.0/24, area: 0, metric: 5, path-bandwidth: 100G}"
			}
			for key, item := range map[string]string{"interfaces": lo, "prefixes": pfx} {
				var n yaml.Node
				if err := yaml.Unmarshal([]byte(item), &n); err != nil {
					t.Fatal(err)
				}
				list := yget(sec, key)
				list.Content = append(list.Content, n.Content[0])
			}
		})
		reported(t, r, proto, "interface lo: added")
		reported(t, r, proto, "prefixes[10.10.2.0/24]: added")
		poll(t, ctx, 20*time.Second, "FRR's route to 10.10.2.0/24 costs 10 + the configured 5", func() error {
			var v map[string][]struct {
				Protocol string `json:"protocol"`
				Metric   int    `json:"metric"`
			}
			if err := l.VtyshJSON(ctx, "r1", "show ip route 10.10.2.0/24 json", &v); err != nil {
				return err
			}
			rs := v["10.10.2.0/24"]
			if len(rs) != 1 || rs[0].Protocol != proto || rs[0].Metric != 15 {
				return fmt.Errorf("r1: %+v", rs)
			}
			return nil
		})
		poll(t, ctx, 20*time.Second, "f2 sees 10.10.2.0/24 from f1 with metric 5 and 100G", func() error {
			g, err := topoOf(ctx, l, "f2")
			if err != nil {
				return err
			}
			for _, p := range g.Prefixes {
				if p.Prefix == "10.10.2.0/24" {
					if p.Metric != 5 || p.PathBPS == nil || *p.PathBPS != 100e9 {
						return fmt.Errorf("%+v (path bps %v)", p, p.PathBPS)
					}
					return nil
				}
			}
			return fmt.Errorf("no 10.10.2.0/24 in %+v", g.Prefixes)
		})
		// No loopback-scope prefix anywhere: FRR has no route to 127/8,
		// and f1's LSP/LSA does not carry one.
		for _, q := range []string{"show ip route 127.0.0.0/8 json", "show ipv6 route ::1/128 json"} {
			var v map[string][]struct {
				Protocol string `json:"protocol"`
			}
			if err := l.VtyshJSON(ctx, "r1", q, &v); err != nil {
				t.Fatal(err)
			}
			for p, rs := range v {
				for _, r := range rs {
					if r.Protocol == proto {
						t.Fatalf("r1 installed %s proto %s", p, proto)
					}
				}
			}
		}
		dbq := "show isis database detail f1.00-00"
		if proto == "ospf" {
			dbq = "show ip ospf database router " + f1id
		}
		out, err := l.Vtysh(ctx, "r1", dbq)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "127.0.0") || strings.Contains(out, "::1") || !strings.Contains(out, "10.10.2.0") {
			t.Fatalf("f1's LSP/LSA at r1:\n%s", out)
		}
	})

	t.Run("bandwidth override: logged, kept across reload, cleared", func(t *testing.T) {
		want := func(bw float64) func() error {
			return func() error {
				got, err := linkBW(ctx, l, f1id, "r1")
				if proto == "ospf" {
					got, err = linkBW(ctx, l, f1id, l.Node("r1").Loopback.String())
				}
				if err != nil {
					return err
				}
				if got != bw {
					return fmt.Errorf("f1->r1 bandwidth at f2: %g bits/s, want %g", got, bw)
				}
				return nil
			}
		}
		poll(t, ctx, 10*time.Second, "100G at f2", want(100e9))
		out := farectlText(t, ctx, l, "f1", proto, "bandwidth", "r1-1", "40G")
		mustContain(t, "set", out, proto+" interface r1-1: bandwidth 40G (run-time override)")
		poll(t, ctx, 10*time.Second, "40G at f2", want(40e9))
		mustContain(t, "interfaces", farectlText(t, ctx, l, "f1", proto, "interfaces"), "bandwidth 40G (run-time override 40G)")
		out = farectlText(t, ctx, l, "f1", "reload")
		mustContain(t, "reload", out, "interface r1-1: bandwidth override 40G kept (configured bandwidth unchanged)")
		poll(t, ctx, 10*time.Second, "still 40G at f2 after the reload", want(40e9))
		out = farectlText(t, ctx, l, "f1", proto, "bandwidth", "r1-1", "--clear")
		mustContain(t, "clear", out, proto+" interface r1-1: bandwidth override cleared")
		poll(t, ctx, 10*time.Second, "100G at f2 again", want(100e9))
		log, err := os.ReadFile(l.FaredLog("f1"))
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "f1's log", string(log), `msg="bandwidth override set" proto=`+proto+` iface=r1-1 bandwidth=40G`,
			`msg="bandwidth override cleared" proto=`+proto+` iface=r1-1 was=40G`)
		if _, err := l.Farectl(ctx, "f1", proto, "bandwidth", "r1-1", "0"); err == nil {
			t.Fatal("bandwidth 0 accepted (it is not a bandwidth; --clear is)")
		}
	})

	if proto == "isis" {
		t.Run("overload at run time", func(t *testing.T) {
			ol := func(want string) func() error {
				return func() error {
					out, err := l.Vtysh(ctx, "r1", "show isis database")
					if err != nil {
						return err
					}
					for _, line := range strings.Split(out, "\n") {
						if fs := strings.Fields(line); len(fs) > 0 && fs[0] == "f1.00-00" {
							if fs[len(fs)-1] == want {
								return nil
							}
							return fmt.Errorf("r1: %q, want ATT/P/OL %s", line, want)
						}
					}
					return fmt.Errorf("r1 has no f1.00-00:\n%s", out)
				}
			}
			mustContain(t, "overload", farectlText(t, ctx, l, "f1", "isis", "overload"), "isis overload off (from the config)")
			mustContain(t, "overload on", farectlText(t, ctx, l, "f1", "isis", "overload", "on"), "isis overload on (set at run time; config says off)")
			poll(t, ctx, 10*time.Second, "FRR sees f1 overloaded", ol("0/0/1"))
			mustContain(t, "levels", farectlText(t, ctx, l, "f1", "isis", "levels"), "Overload", " on ")
			mustContain(t, "reload", farectlText(t, ctx, l, "f1", "reload"), "overload: run-time override on kept")
			mustContain(t, "overload config", farectlText(t, ctx, l, "f1", "isis", "overload", "config"), "isis overload off (from the config)")
			poll(t, ctx, 10*time.Second, "FRR sees f1 not overloaded", ol("0/0/0"))
		})
	}

	t.Run("clear drops the adjacency; it re-forms", func(t *testing.T) {
		// OSPF: our next hello lists no neighbour, so FRR drops to Init
		// too (1-WayReceived), as with vtysh's clear. IS-IS: our next
		// hello says Down (RFC 5303); FRR 8.4.4 answers by restarting
		// the three-way handshake (Initializing) while it keeps its
		// adjacency Up, so only our side counts a flap.
		args, msg := []string{"isis", "clear", "adjacency", "r1-1"}, "isis: 1 adjacencies cleared on r1-1"
		frrLog := filepath.Join(l.Node("r1").Dir, "ospfd.log")
		if proto == "ospf" {
			rid := l.Node("r1").Loopback.String()
			args, msg = []string{"ospf", "clear", "neighbor", rid}, "ospf: 1 neighbours cleared (neighbour "+rid+")"
		}
		frrDowns := func() int {
			b, _ := os.ReadFile(frrLog)
			n := 0
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, l.Node("f1").Loopback.String()) && strings.Contains(line, "Full -> ") {
					n++
				}
			}
			return n
		}
		ourDowns := func() uint64 {
			var v []struct {
				Name     string            `json:"name"`
				Counters map[string]uint64 `json:"counters"`
			}
			if err := l.FarectlJSON(ctx, "f1", &v, proto, "interfaces"); err != nil {
				t.Fatal(err)
			}
			for _, i := range v {
				if i.Name == "r1-1" {
					return i.Counters["adjacency_down"]
				}
			}
			t.Fatal("f1 has no interface r1-1")
			return 0
		}
		before, ours := frrDowns(), ourDowns()
		mustContain(t, "clear", farectlText(t, ctx, l, "f1", args...), msg)
		if d := ourDowns(); d != ours+1 {
			t.Fatalf("f1's adjacency_down on r1-1: %d -> %d, want one more", ours, d)
		}
		if proto == "ospf" {
			poll(t, ctx, 20*time.Second, "FRR saw the adjacency go", func() error {
				if d := frrDowns(); d <= before {
					b, _ := os.ReadFile(frrLog)
					return fmt.Errorf("%d Full -> lines for f1 in %s, %d before:\n%s", d, frrLog, before, b[max(0, len(b)-1500):])
				}
				return nil
			})
		}
		poll(t, ctx, 30*time.Second, "re-formed", up("f1", 1))
		if _, err := l.Farectl(ctx, "f1", args[:3]...); err != nil {
			t.Fatalf("clear without an argument (all): %v", err)
		}
		poll(t, ctx, 30*time.Second, "re-formed after clearing all", up("f1", 1))
	})
}

// TestFirstHourScript runs scripts/first-hour.sh, which runs the shell
// blocks of docs/first-hour.md (the operator's first hour: two
// namespaces, two links, fared against fared, against FRR's isisd, then
// OSPF) and checks each expected result. The namespaces carry a per-run
// prefix and go away even when the script fails half-way.
func TestFirstHourScript(t *testing.T) {
	interop.RequireLab(t)
	p := interop.UniqueName("fh")
	t.Cleanup(func() {
		for _, n := range []string{p + "-a", p + "-b"} {
			if out, err := exec.Command("ip", "netns", "pids", n).Output(); err == nil {
				for _, pid := range strings.Fields(string(out)) {
					_ = exec.Command("kill", "-9", pid).Run()
				}
			}
			_ = exec.Command("ip", "netns", "del", n).Run()
		}
		for _, d := range []string{"/var/run/frr/" + p + "-b", "/etc/frr/" + p + "-b", "/tmp/first-hour-" + p} {
			_ = os.RemoveAll(d)
		}
	})
	doc, err := os.ReadFile("../../docs/first-hour.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Count(string(doc), "\n```sh\n")
	checks := strings.Count(string(doc), "\nuntil_ok ")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../scripts/first-hour.sh")
	cmd.Env = append(os.Environ(), "P="+p, "PATH="+filepath.Dir(bins.Fared)+":"+os.Getenv("PATH"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("first-hour.sh: %v\n%s", err, out)
	}
	t.Logf("first-hour.sh passed in %v", time.Since(start).Round(time.Second))
	// Every block but the cleanup ran as a step, and every check passed.
	mustContain(t, "script output", string(out), fmt.Sprintf("first-hour: %d blocks from", blocks-1), "first-hour: all steps passed")
	if n := strings.Count(string(out), "\nok: "); n != checks {
		t.Fatalf("%d checks passed, the page has %d:\n%s", n, checks, out)
	}
	// The cleanup block ran: no namespace left.
	ns, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ns), p+"-") {
		t.Fatalf("namespaces left after the cleanup block:\n%s", ns)
	}
}
