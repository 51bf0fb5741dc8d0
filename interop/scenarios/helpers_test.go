// Package scenarios holds the lab tests that prove fared against FRR on
// real veth links in network namespaces. Topologies are data; convergence is
// "poll until the state matches, with a deadline".
package scenarios

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/isis"
)

var bins interop.Bins

func TestMain(m *testing.M) { interop.MainWithBins(m, &bins) }

func startLab(t *testing.T, topo string) *interop.Lab {
	t.Helper()
	return interop.StartLab(t, topo, interop.Options{FaredBin: bins.Fared, FarectlBin: bins.Farectl})
}

// pairLab starts fared f1 (f1 is its node's YAML, "" for a plain one)
// and FRR r1 on one 100G link, running proto ("isis" or "ospf"), and
// waits for their adjacency. FRR is side A, so f1's address ends in .1:
// FRR 8.4.4's TED drops an edge whose local address ends in .0
// (docs/ospf.md).
func pairLab(t *testing.T, name, proto, f1 string) (*interop.Lab, context.Context) {
	t.Helper()
	if f1 == "" {
		f1 = "{kind: fared}"
	}
	l := startLab(t, "name: "+name+"\nprotocol: "+proto+`
defaults: {hello-interval: 1s}
nodes:
  f1: `+f1+`
  r1: {kind: frr}
links:
  - {a: r1, b: f1, bandwidth: 100G}
`)
	ctx := ctxT(t)
	up := map[string]int{"f1": 1, "r1": 1}
	if proto == "ospf" {
		poll(t, ctx, 30*time.Second, "Full on both sides", ospfAdjacencies(ctx, l, up))
	} else {
		poll(t, ctx, 30*time.Second, "adjacency Up on both sides", adjacencies(ctx, l, up))
	}
	return l, ctx
}

// syncedPair is pairLab, then identical databases of lsps entries on
// both; it logs how long the two took.
func syncedPair(t *testing.T, name, proto, f1 string, lsps int) (*interop.Lab, context.Context) {
	t.Helper()
	start := time.Now()
	l, ctx := pairLab(t, name, proto, f1)
	tAdj := time.Since(start)
	same := sameLSDB
	if proto == "ospf" {
		same = sameOSPFDB
	}
	poll(t, ctx, 30*time.Second, "identical LSDBs", same(ctx, l, lsps, "f1", "r1"))
	t.Logf("FIGURE %s %s: adjacency %v, LSDB in sync %v after lab start", proto, name, tAdj.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return l, ctx
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func poll(t *testing.T, ctx context.Context, d time.Duration, what string, f func() error) {
	t.Helper()
	if err := interop.Poll(ctx, d, what, f); err != nil {
		t.Fatal(err)
	}
}

// lspRow is what two synchronised databases must agree on.
type lspRow struct {
	Seq      uint32
	Checksum uint16
	Lifetime int
}

// frrDB reads FRR's L2 database from `show isis database` text.
func frrDB(ctx context.Context, l *interop.Lab, node string) (map[string]lspRow, error) {
	rows, err := l.ISISDatabase(ctx, node)
	db := map[string]lspRow{}
	for _, r := range rows {
		db[r.LSPID] = lspRow{Seq: r.Seq, Checksum: r.Checksum, Lifetime: r.Holdtime}
	}
	return db, err
}

// faredDB reads fared's database keyed like FRR's: hostname.pp-ff.
func faredDB(ctx context.Context, l *interop.Lab, node string) (map[string]lspRow, error) {
	return faredRows(ctx, l, node, []string{"isis", "database"}, func(e isis.LSPView) (string, lspRow) {
		key := e.LSPID
		if e.Hostname != "" {
			key = e.Hostname + e.LSPID[len("0000.0000.0000"):]
		}
		return key, lspRow{Seq: e.Seq, Checksum: e.Checksum, Lifetime: int(e.Lifetime)}
	})
}

// faredRows reads a farectl listing of a fared node into a map; row gives
// an entry's key and what is kept of it.
func faredRows[T, R any](ctx context.Context, l *interop.Lab, node string, args []string, row func(T) (string, R)) (map[string]R, error) {
	var v []T
	if err := l.FarectlJSON(ctx, node, &v, args...); err != nil {
		return nil, err
	}
	db := map[string]R{}
	for _, e := range v {
		k, r := row(e)
		db[k] = r
	}
	return db, nil
}

func nodeDB(ctx context.Context, l *interop.Lab, node string) (map[string]lspRow, error) {
	if l.Node(node).Kind == "fared" {
		return faredDB(ctx, l, node)
	}
	return frrDB(ctx, l, node)
}

// liveDigest lists the live LSPs (id, sequence number, checksum) in order.
func liveDigest(db map[string]lspRow) string {
	var s []string
	for id, r := range db {
		if r.Lifetime > 0 {
			s = append(s, fmt.Sprintf("%s/%#x/%#04x", id, r.Seq, r.Checksum))
		}
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// sameLSDB succeeds when every node holds the same live LSPs, and as many
// as want.
func sameLSDB(ctx context.Context, l *interop.Lab, want int, nodes ...string) func() error {
	return sameDatabases(nodes, want, "LSPs", func(n string) (string, int, error) {
		db, err := nodeDB(ctx, l, n)
		d := liveDigest(db)
		return d, strings.Count(d, "/") / 2, err
	})
}

// sameDatabases succeeds when every node's digest (its live entries, and
// how many) is the same, of want entries; what names them.
func sameDatabases(nodes []string, want int, what string, digest func(node string) (string, int, error)) func() error {
	return func() error {
		var first string
		for i, n := range nodes {
			d, c, err := digest(n)
			if err != nil {
				return err
			}
			if c != want {
				return fmt.Errorf("%s holds %d live %s, want %d:\n%s", n, c, what, want, d)
			}
			if i == 0 {
				first = d
			} else if d != first {
				return fmt.Errorf("databases differ:\n%s:\n%s\n%s:\n%s", nodes[0], first, n, d)
			}
		}
		return nil
	}
}

// faredUp returns the Up adjacencies of a fared node as hostnames.
func faredUp(ctx context.Context, l *interop.Lab, node string) ([]string, error) {
	var v []isis.NeighborView
	if err := l.FarectlJSON(ctx, node, &v, "isis", "neighbors"); err != nil {
		return nil, err
	}
	return interop.UpList(v, func(n isis.NeighborView) (string, bool) { return n.Hostname + "@" + n.Interface, n.State == "Up" }), nil
}

// isisUp returns a node's Up adjacencies, fared's or FRR's.
func isisUp(ctx context.Context, l *interop.Lab, node string) ([]string, error) {
	if l.Node(node).Kind == "fared" {
		return faredUp(ctx, l, node)
	}
	return l.ISISUp(ctx, node)
}

// adjacencies succeeds when each node has exactly the given number of Up
// adjacencies.
func adjacencies(ctx context.Context, l *interop.Lab, want map[string]int) func() error {
	return neighbourCounts(want, "Up", func(n string) ([]string, error) { return isisUp(ctx, l, n) })
}

// neighbourCounts succeeds when each node has exactly the wanted number
// of the adjacencies list returns, those in state.
func neighbourCounts(want map[string]int, state string, list func(node string) ([]string, error)) func() error {
	return func() error {
		for n, w := range want {
			adjs, err := list(n)
			if err != nil {
				return err
			}
			if len(adjs) != w {
				return fmt.Errorf("%s: %s with %v, want %d", n, state, adjs, w)
			}
		}
		return nil
	}
}

func faredLSDB(ctx context.Context, l *interop.Lab, node string) (*wire.Topology, error) {
	var v []wire.Topology
	if err := l.FarectlJSON(ctx, node, &v, "lsdb"); err != nil {
		return nil, err
	}
	for i := range v {
		if v[i].Level == 2 {
			return &v[i], nil
		}
	}
	return nil, fmt.Errorf("%s: no level-2 graph yet", node)
}

func sysID(l *interop.Lab, node string) string { return l.Node(node).SystemID }

// frrRoute returns the next hops FRR installed in its kernel for prefix
// (zebra uses nexthop objects, so `ip route` shows only an id).
func frrRoute(ctx context.Context, l *interop.Lab, node, prefix string) ([]string, error) {
	var v map[string][]struct {
		Installed bool `json:"installed"`
		Nexthops  []struct {
			IP  string `json:"ip"`
			FIB bool   `json:"fib"`
		} `json:"nexthops"`
	}
	if err := l.VtyshJSON(ctx, node, "show ip route "+prefix+" json", &v); err != nil {
		return nil, err
	}
	var hops []string
	for _, r := range v[prefix] {
		if !r.Installed {
			continue
		}
		for _, h := range r.Nexthops {
			if h.FIB {
				hops = append(hops, h.IP)
			}
		}
	}
	return hops, nil
}

// waitGraph polls until the topology graph returns holds an element (of
// those in selects) that match finds and check accepts.
func waitGraph[T any](t *testing.T, ctx context.Context, what string, graph func() (*wire.Topology, error), in func(*wire.Topology) []T, match func(T) bool, check func(T) error) {
	t.Helper()
	poll(t, ctx, 20*time.Second, what, func() error {
		g, err := graph()
		if err != nil {
			return err
		}
		for _, e := range in(g) {
			if match(e) {
				return check(e)
			}
		}
		return fmt.Errorf("none such in the graph: %+v", in(g))
	})
}

func nodesOf(g *wire.Topology) []wire.TopoNode      { return g.Nodes }
func prefixesOf(g *wire.Topology) []wire.TopoPrefix { return g.Prefixes }

// isisGraph and ospfGraph get a fared node's level-2 graph or its graph
// of an area, for waitGraph.
func isisGraph(ctx context.Context, l *interop.Lab, node string) func() (*wire.Topology, error) {
	return func() (*wire.Topology, error) { return faredLSDB(ctx, l, node) }
}

func ospfGraph(ctx context.Context, l *interop.Lab, node, area string) func() (*wire.Topology, error) {
	return func() (*wire.Topology, error) { return faredOSPFGraph(ctx, l, node, area) }
}

// nodeNamed matches a graph node by its ID or name.
func nodeNamed(id string) func(wire.TopoNode) bool {
	return func(n wire.TopoNode) bool { return n.ID == id || n.Name == id }
}

// pseudonode matches the pseudonode id with its number of links.
func pseudonode(id string, links int) func(wire.TopoNode) bool {
	return func(n wire.TopoNode) bool { return n.ID == id && n.Pseudo && len(n.Links) == links }
}

// prefixFrom matches a prefix, from advertiser unless that is "".
func prefixFrom(prefix, advertiser string) func(wire.TopoPrefix) bool {
	return func(p wire.TopoPrefix) bool {
		return p.Prefix == prefix && (advertiser == "" || p.Advertiser == advertiser)
	}
}

// present accepts any element waitGraph finds.
func present[T any](T) error { return nil }

// oneLinkOf checks that a node has one link, of maximum bandwidth bw
// (bytes/s as float32 carries it).
func oneLinkOf(bw float64) func(wire.TopoNode) error {
	return func(n wire.TopoNode) error {
		if len(n.Links) == 1 && n.Links[0].MaxBW != nil && *n.Links[0].MaxBW == float64(float32(bw)) {
			return nil
		}
		return fmt.Errorf("%s links: %+v", n.Name, n.Links)
	}
}

// pathBW checks that a prefix carries Path Bandwidth bw (bytes/s), and
// that its advertiser's name is name unless that is "".
func pathBW(name string, bw float64) func(wire.TopoPrefix) error {
	return func(p wire.TopoPrefix) error {
		if (name != "" && p.Name != name) || p.PathBW == nil || *p.PathBW != bw {
			return fmt.Errorf("prefix %+v", p)
		}
		return nil
	}
}

// frrInstalls polls until FRR node has installed each prefix in its
// kernel with the one next hop via.
func frrInstalls(t *testing.T, ctx context.Context, l *interop.Lab, node, via string, prefixes ...string) {
	t.Helper()
	for _, p := range prefixes {
		poll(t, ctx, 20*time.Second, "FRR route to "+p, func() error {
			hops, err := frrRoute(ctx, l, node, p)
			if err != nil {
				return err
			}
			if len(hops) != 1 || hops[0] != via {
				return fmt.Errorf("installed next hops %v", hops)
			}
			return nil
		})
	}
}

// logLines returns the lines of node's fared log that hold every one of
// parts.
func logLines(t *testing.T, l *interop.Lab, node string, parts ...string) []string {
	t.Helper()
	b, err := os.ReadFile(l.FaredLog(node))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// vtyshShows is a poll condition: node's answer to cmd contains want.
func vtyshShows(ctx context.Context, l *interop.Lab, node, cmd, want string) func() error {
	return func() error {
		out, err := l.Vtysh(ctx, node, cmd)
		if err != nil {
			return err
		}
		if !strings.Contains(out, want) {
			return fmt.Errorf("%q not in %s's %q:\n%s", want, node, cmd, out)
		}
		return nil
	}
}
