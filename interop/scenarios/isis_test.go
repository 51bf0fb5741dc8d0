package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/interop"
	"github.com/fared/fared/isis"
)

// TestISISP2PWithFRR: fared and FRR on one P2P link form an adjacency,
// hold identical databases, FRR decodes our Maximum Link Bandwidth and
// installs a route to our loopback.
func TestISISP2PWithFRR(t *testing.T) {
	l, ctx := syncedPair(t, "p2p", "isis", "{kind: fared, prefixes: [10.10.1.0/24]}", 2)

	// 100G = 1.25e10 bytes/s in sub-TLV 9, as FRR decodes it. Polled:
	// the databases can agree while both still hold fared's first LSP,
	// made before the adjacency (the next waits for lsp-gen-interval).
	poll(t, ctx, 20*time.Second, "FRR shows our maximum link bandwidth",
		vtyshShows(ctx, l, "r1", "show isis database detail f1.00-00", "Maximum Bandwidth: 1.25e+10 (Bytes/sec)"))
	// FRR installs our loopback and our prefix in its kernel FIB.
	frrInstalls(t, ctx, l, "r1", l.Links[0].AddrB.Addr().String(), l.Node("f1").Loopback.String()+"/32", "10.10.1.0/24")
	// And fared decodes FRR's maximum link bandwidth in the other direction.
	waitGraph(t, ctx, "fared sees FRR's link bandwidth", isisGraph(ctx, l, "f1"), nodesOf,
		nodeNamed("r1"), oneLinkOf(1.25e10))
}

// TestISISLANWithFRR: fared and two FRR routers on one bridge agree on the
// DIS, whose pseudonode LSP lists all three, and hold identical databases;
// once with fared as DIS and once with FRR. When the FRR DIS loses the
// election it purges its pseudonode LSP and fared honours the purge.
func TestISISLANWithFRR(t *testing.T) {
	for _, tc := range []struct {
		name string
		dis  string
	}{{"fared DIS", "f1"}, {"FRR DIS", "r1"}} {
		t.Run(tc.name, func(t *testing.T) {
			// te: false — FRR 8.4.4's isisd crashes (SIGSEGV in
			// ls_vertex_clean, its TE database) when a LAN's DIS changes
			// with mpls-te on, also among FRR routers alone.
			topo := fmt.Sprintf(`name: lan
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared%s}
  r1: {kind: frr, te: false%s}
  r2: {kind: frr, te: false}
links:
  - {lan: seg1, nodes: [f1, r1, r2], bandwidth: 10G}
`, prio(tc.dis == "f1"), prio(tc.dis == "r1"))
			l := startLab(t, topo)
			ctx := ctxT(t)
			poll(t, ctx, 40*time.Second, "all adjacencies Up", adjacencies(ctx, l, map[string]int{"f1": 2, "r1": 2, "r2": 2}))
			pseudo := tc.dis + ".01-00" // FRR numbers its first circuit 1, as fared does
			if tc.dis == "r1" {
				pseudo = pseudoOf(t, ctx, l, "r1")
			}
			// 3 router LSPs + 1 pseudonode LSP, the same on all three.
			poll(t, ctx, 40*time.Second, "identical LSDBs with one pseudonode", func() error {
				if err := sameLSDB(ctx, l, 4, "f1", "r1", "r2")(); err != nil {
					return err
				}
				db, _ := faredDB(ctx, l, "f1")
				if db[pseudo].Lifetime == 0 {
					return fmt.Errorf("pseudonode %s missing: %v", pseudo, db)
				}
				return nil
			})
			checkPseudonode(t, ctx, l, pseudo, "f1", "r1", "r2")
			if tc.dis == "f1" {
				var ifs []isis.InterfaceView
				if err := l.FarectlJSON(ctx, "f1", &ifs, "isis", "interfaces"); err != nil {
					t.Fatal(err)
				}
				if !ifs[0].Levels[0].DIS {
					t.Fatalf("fared does not think it is DIS: %+v", ifs[0].Levels)
				}
				return
			}
			// FRR DIS steps down: r1 purges its pseudonode LSP; fared (or
			// r2) takes over. fared must drop r1's pseudonode.
			if _, err := l.Vtysh(ctx, "r1", "configure terminal", "interface "+l.Node("r1").Interfaces[0].Name, "isis priority 0"); err != nil {
				t.Fatal(err)
			}
			poll(t, ctx, 40*time.Second, "purge of "+pseudo+" honoured", func() error {
				db, err := faredDB(ctx, l, "f1")
				if err != nil {
					return err
				}
				if r, ok := db[pseudo]; ok && r.Lifetime != 0 {
					return fmt.Errorf("%s still live at fared: %+v", pseudo, r)
				}
				v, err := faredLSDB(ctx, l, "f1")
				if err != nil {
					return err
				}
				for _, n := range v.Nodes {
					if n.Pseudo && strings.HasPrefix(n.ID, sysID(l, "r1")) {
						return fmt.Errorf("r1's pseudonode still in the graph")
					}
				}
				return sameLSDB(ctx, l, 4, "f1", "r1", "r2")()
			})
		})
	}
}

func prio(high bool) string {
	if high {
		return ", priority: 100"
	}
	return ""
}

// pseudoOf finds the live pseudonode LSP of node in fared's database.
func pseudoOf(t *testing.T, ctx context.Context, l *interop.Lab, node string) string {
	t.Helper()
	var id string
	poll(t, ctx, 30*time.Second, node+"'s pseudonode LSP", func() error {
		db, err := faredDB(ctx, l, "f1")
		if err != nil {
			return err
		}
		for k, r := range db {
			if strings.HasPrefix(k, node+".") && !strings.HasPrefix(k, node+".00-") && r.Lifetime > 0 {
				id = k
				return nil
			}
		}
		return fmt.Errorf("none in %v", db)
	})
	return id
}

// checkPseudonode asserts that the pseudonode LSP lists every router.
func checkPseudonode(t *testing.T, ctx context.Context, l *interop.Lab, pseudo string, members ...string) {
	t.Helper()
	var v []isis.LSPView
	if err := l.FarectlJSON(ctx, "f1", &v, "isis", "database", pseudo, "--detail"); err != nil {
		t.Fatal(err)
	}
	if len(v) != 1 {
		t.Fatalf("pseudonode %s: %d LSPs", pseudo, len(v))
	}
	b, _ := json.Marshal(v[0].TLVs)
	for _, m := range members {
		if !strings.Contains(string(b), sysID(l, m)+".00") {
			t.Errorf("pseudonode %s does not list %s: %s", pseudo, m, b)
		}
	}
}

// transitNodes is fared f1 — FRR r1 — fared f2, for either protocol;
// f1 advertises 10.10.1.0/24 with a Path Bandwidth of 40G.
const transitNodes = `defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared, prefixes: [{prefix: 10.10.1.0/24, path-bandwidth: 40G}]}
  r1: {kind: frr}
  f2: {kind: fared}
links:
  - {a: f1, b: r1, bandwidth: 100G}
  - {a: r1, b: f2, bandwidth: 100G}
`

// TestISISTransit: fared f1 — FRR — fared f2. f2 learns f1's Path Bandwidth
// sub-TLV through FRR with f1's exact value, and the LSP f2 stores is f1's
// byte for byte (FRR floods the unknown sub-TLV unchanged).
func TestISISTransit(t *testing.T) {
	l := startLab(t, "name: transit\n"+transitNodes)
	ctx := ctxT(t)
	poll(t, ctx, 30*time.Second, "adjacencies", adjacencies(ctx, l, map[string]int{"f1": 1, "r1": 2, "f2": 1}))
	poll(t, ctx, 30*time.Second, "identical LSDBs", sameLSDB(ctx, l, 3, "f1", "r1", "f2"))
	// 40G = 40e9 bit/s = 5e9 bytes/s, exactly representable in float32.
	waitGraph(t, ctx, "f2 sees f1's path bandwidth", isisGraph(ctx, l, "f2"), prefixesOf,
		prefixFrom("10.10.1.0/24", ""), pathBW("f1", 5e9))
	raw := func(node string) string {
		var v []isis.LSPView
		if err := l.FarectlJSON(ctx, node, &v, "isis", "database", "f1.00-00", "--detail"); err != nil || len(v) != 1 {
			t.Fatalf("%s: %v %v", node, err, v)
		}
		// Bytes 10-11 are the remaining lifetime, which every hop ages.
		return v[0].Raw[:20] + "...." + v[0].Raw[24:]
	}
	if a, b := raw("f1"), raw("f2"); a != b {
		t.Fatalf("f1's LSP changed in transit:\n f1 %s\n f2 %s", a, b)
	}
}

// TestISISFlapAndRestart: a link cut and restored, then an FRR restart:
// adjacencies drop and recover, fared re-originates, databases converge.
func TestISISFlapAndRestart(t *testing.T) {
	// The lab it was written for, not pairLab's (FRR on side A, 100G):
	// there fared's adjacency twice did not drop within 15s of FRR's
	// restart. This lab failed so once too, under heavy machine load, so
	// the cause (load or the side) is not settled.
	const topo = `name: flap
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared}
  r1: {kind: frr}
links:
  - {a: f1, b: r1, bandwidth: 10G}
`
	l := startLab(t, topo)
	ctx := ctxT(t)
	poll(t, ctx, 30*time.Second, "adjacency", adjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1}))
	poll(t, ctx, 30*time.Second, "sync", sameLSDB(ctx, l, 2, "f1", "r1"))
	ownSeq := func(node string) uint32 {
		db, err := nodeDB(ctx, l, "f1")
		if err != nil {
			t.Fatal(err)
		}
		return db[node+".00-00"].Seq
	}
	seq0 := ownSeq("f1")

	if err := l.SetLinkUp(ctx, 0, false); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 15*time.Second, "adjacency down on both sides", adjacencies(ctx, l, map[string]int{"f1": 0, "r1": 0}))
	// fared withdraws the link: its LSP is re-originated without TLV 22.
	// The deadline is the other polls' (a CI run with packages in parallel
	// once took longer than 10 s here).
	poll(t, ctx, 30*time.Second, "f1 re-originated without the link", func() error {
		v, err := faredLSDB(ctx, l, "f1")
		if err != nil {
			return err
		}
		if s := ownSeq("f1"); s <= seq0 {
			return fmt.Errorf("seq %d not above %d", s, seq0)
		}
		for _, n := range v.Nodes {
			if n.Name == "f1" && len(n.Links) != 0 {
				return fmt.Errorf("f1 still has links: %+v", n.Links)
			}
		}
		return nil
	})
	seq1 := ownSeq("f1")
	if err := l.SetLinkUp(ctx, 0, true); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 30*time.Second, "adjacency back", adjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1}))
	poll(t, ctx, 30*time.Second, "sync after link up", func() error {
		if s := ownSeq("f1"); s <= seq1 {
			return fmt.Errorf("f1 seq %d not above %d", s, seq1)
		}
		return sameLSDB(ctx, l, 2, "f1", "r1")()
	})

	frrSeq := ownSeq("r1")
	if err := l.RestartNode(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 15*time.Second, "adjacency drops with FRR gone", adjacencies(ctx, l, map[string]int{"f1": 0}))
	poll(t, ctx, 40*time.Second, "adjacency after FRR restart", adjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1}))
	// A restarted FRR starts at sequence 1, learns its old LSP from fared
	// and re-originates above it.
	poll(t, ctx, 40*time.Second, "sync after FRR restart", func() error {
		if s := ownSeq("r1"); s <= frrSeq {
			return fmt.Errorf("r1 seq %d not above %d", s, frrSeq)
		}
		return sameLSDB(ctx, l, 2, "f1", "r1")()
	})
}
