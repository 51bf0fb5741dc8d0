package scenarios

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/ospf"
)

// ospfRow is what two synchronised OSPF databases must agree on.
type ospfRow struct {
	Seq      uint32
	Checksum uint16
	Age      int
}

// frrOSPFTypes maps the array names of FRR 8.4.4's `show ip ospf database
// json` to LSA types.
var frrOSPFTypes = map[string]int{
	"routerLinkStates": 1, "networkLinkStates": 2, "summaryLinkStates": 3, "asbrSummaryLinkStates": 4,
	"asExternalLinkStates": 5, "linkLocalOpaqueLsa": 9, "areaLocalOpaqueLsa": 10, "asExternalOpaqueLsa": 11,
}

type frrLSA struct {
	LsID      string `json:"lsId"`
	AdvRouter string `json:"advertisedRouter"`
	Age       int    `json:"lsaAge"`
	Seq       string `json:"sequenceNumber"`
	Checksum  string `json:"checksum"`
}

// frrOSPFDB reads FRR's database, keyed "area/type/id/adv" (area "AS" for
// AS-scope LSAs). 8.4.4 shape: {"routerId", "areas": {"0.0.0.0":
// {"routerLinkStates": [...], "routerLinkStatesCount": n, ...}},
// "asExternalLinkStates": [...], ...}.
func frrOSPFDB(ctx context.Context, l *interop.Lab, node string) (map[string]ospfRow, error) {
	var v map[string]any
	if err := l.VtyshJSON(ctx, node, "show ip ospf database json", &v); err != nil {
		return nil, err
	}
	db := map[string]ospfRow{}
	add := func(area string, m map[string]any) error {
		for name, x := range m {
			arr, ok := x.([]any)
			if !ok {
				continue
			}
			typ, ok := frrOSPFTypes[name]
			if !ok {
				return fmt.Errorf("%s: unknown FRR database array %q", node, name)
			}
			for _, e := range arr {
				em, _ := e.(map[string]any)
				get := func(k string) string { s, _ := em[k].(string); return s }
				seq, _ := strconv.ParseUint(get("sequenceNumber"), 16, 32)
				ck, _ := strconv.ParseUint(get("checksum"), 16, 16)
				age, _ := em["lsaAge"].(float64)
				a := area
				if typ == 5 || typ == 11 {
					a = "AS"
				}
				db[fmt.Sprintf("%s/%d/%s/%s", a, typ, get("lsId"), get("advertisedRouter"))] = ospfRow{Seq: uint32(seq), Checksum: uint16(ck), Age: int(age)}
			}
		}
		return nil
	}
	if areas, ok := v["areas"].(map[string]any); ok {
		for a, m := range areas {
			if mm, ok := m.(map[string]any); ok {
				if err := add(a, mm); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := add("AS", v); err != nil {
		return nil, err
	}
	return db, nil
}

func faredOSPFDB(ctx context.Context, l *interop.Lab, node string) (map[string]ospfRow, error) {
	return faredRows(ctx, l, node, []string{"ospf", "database"}, func(e ospf.LSAView) (string, ospfRow) {
		return fmt.Sprintf("%s/%d/%s/%s", e.Area, e.Type, e.ID, e.AdvRouter), ospfRow{Seq: uint32(e.Seq), Checksum: e.Checksum, Age: int(e.Age)}
	})
}

func ospfNodeDB(ctx context.Context, l *interop.Lab, node string) (map[string]ospfRow, error) {
	if l.Node(node).Kind == "fared" {
		return faredOSPFDB(ctx, l, node)
	}
	return frrOSPFDB(ctx, l, node)
}

func ospfDigest(db map[string]ospfRow) (string, int) {
	var s []string
	for k, r := range db {
		if r.Age < ospf.MaxAge {
			s = append(s, fmt.Sprintf("%s/%#x/%#04x", k, r.Seq, r.Checksum))
		}
	}
	sort.Strings(s)
	return strings.Join(s, "\n"), len(s)
}

// sameOSPFDB succeeds when every node holds the same live LSAs (keys,
// sequence numbers, checksums), and as many as want.
func sameOSPFDB(ctx context.Context, l *interop.Lab, want int, nodes ...string) func() error {
	return sameDatabases(nodes, want, "LSAs", func(n string) (string, int, error) {
		db, err := ospfNodeDB(ctx, l, n)
		d, c := ospfDigest(db)
		return d, c, err
	})
}

// ospfFull returns the Full neighbours of a node as router ids.
func ospfFull(ctx context.Context, l *interop.Lab, node string) ([]string, error) {
	if l.Node(node).Kind == "fared" {
		var v []ospf.NeighborView
		if err := l.FarectlJSON(ctx, node, &v, "ospf", "neighbors"); err != nil {
			return nil, err
		}
		return interop.UpList(v, func(n ospf.NeighborView) (string, bool) { return n.RouterID, n.State == "Full" }), nil
	}
	nbrs, err := l.OSPFNeighbors(ctx, node)
	return interop.UpList(nbrs, func(n interop.OSPFNbr) (string, bool) { return n.RouterID, strings.HasPrefix(n.State, "Full") }), err
}

// ospfAdjacencies succeeds when each node has exactly the given number of
// Full neighbours.
func ospfAdjacencies(ctx context.Context, l *interop.Lab, want map[string]int) func() error {
	return neighbourCounts(want, "Full", func(n string) ([]string, error) { return ospfFull(ctx, l, n) })
}

// faredOSPFGraph returns a fared node's graph of one area.
func faredOSPFGraph(ctx context.Context, l *interop.Lab, node, area string) (*wire.Topology, error) {
	var v []wire.Topology
	if err := l.FarectlJSON(ctx, node, &v, "ospf", "lsdb", area); err != nil {
		return nil, err
	}
	if len(v) != 1 {
		return nil, fmt.Errorf("%s: no graph of area %s yet", node, area)
	}
	return &v[0], nil
}

func rid(l *interop.Lab, node string) string { return l.Node(node).Loopback.String() }
