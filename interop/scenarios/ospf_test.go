package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/ospf"
)

// TestOSPFP2PWithFRR: fared and FRR ospfd on one P2P link reach Full, hold
// identical databases (keys, sequence numbers, checksums), FRR decodes our
// TE Maximum Bandwidth and installs routes to our prefixes, and fared
// reads FRR's Maximum Bandwidth.
func TestOSPFP2PWithFRR(t *testing.T) {
	// pairLab puts r1 on side A, for FRR's TED checked below.
	// f1: Router, TE router address, TE link, 3 Extended Prefix (loopback,
	// link subnet, 10.10.1.0/24); r1: Router, TE link (with its router
	// address inside, FRR's layout).
	l, ctx := syncedPair(t, "op2p", "ospf", "{kind: fared, prefixes: [{prefix: 10.10.1.0/24, path-bandwidth: 40G}]}", 8)

	out, err := l.Vtysh(ctx, "r1", "show ip ospf database opaque-area adv-router "+rid(l, "f1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Link-ID: " + rid(l, "r1"), "Maximum Bandwidth: 1.25e+10 (Bytes/sec)", "Extended Prefix TLV", "Router-Address: " + rid(l, "f1")} {
		if !strings.Contains(out, want) {
			t.Fatalf("FRR does not show %q in our opaque LSAs:\n%s", want, out)
		}
	}
	frrInstalls(t, ctx, l, "r1", l.Links[0].AddrB.Addr().String(), rid(l, "f1")+"/32", "10.10.1.0/24")
	// FRR's link-state TED (built from our Router LSA and our TE link
	// LSA) holds our edge with our Maximum Bandwidth.
	poll(t, ctx, 20*time.Second, "FRR's TED shows our maximum bandwidth", func() error {
		var v struct {
			TED struct {
				Edges []struct {
					AdvRouter string `json:"advertised-router"`
					Attr      struct {
						Local  string  `json:"local-address"`
						Remote string  `json:"remote-address"`
						MaxBW  float64 `json:"max-link-bandwidth"`
					} `json:"edge-attributes"`
				} `json:"edges"`
			} `json:"ted"`
		}
		if err := l.VtyshJSON(ctx, "r1", "show ip ospf mpls-te database json", &v); err != nil {
			return err
		}
		for _, e := range v.TED.Edges {
			if e.AdvRouter != rid(l, "f1") {
				continue
			}
			if e.Attr.Local != l.Links[0].AddrB.Addr().String() || e.Attr.Remote != l.Links[0].AddrA.Addr().String() || e.Attr.MaxBW != float64(float32(1.25e10)) {
				return fmt.Errorf("our edge in FRR's TED: %+v", e)
			}
			return nil
		}
		return fmt.Errorf("no edge advertised by %s in FRR's TED: %+v", rid(l, "f1"), v.TED.Edges)
	})
	waitGraph(t, ctx, "fared sees FRR's link bandwidth and loopback", ospfGraph(ctx, l, "f1", "0.0.0.0"), nodesOf,
		nodeNamed(rid(l, "r1")), oneLinkOf(1.25e10))
	// Nothing was rejected on a clean link.
	var ifs []ospf.InterfaceView
	if err := l.FarectlJSON(ctx, "f1", &ifs, "ospf", "interfaces"); err != nil {
		t.Fatal(err)
	}
	for k, v := range ifs[0].Counters {
		if strings.HasPrefix(k, "rx_rejected_") && v > 0 {
			t.Errorf("%s = %d talking to FRR", k, v)
		}
	}
}

// TestOSPFBroadcastWithFRR: fared and two FRR routers on one bridge agree
// on DR and BDR, once with fared as DR and once with FRR; the DR's Network
// LSA lists all three and the databases are identical.
func TestOSPFBroadcastWithFRR(t *testing.T) {
	for _, tc := range []struct {
		name string
		dr   string
	}{{"fared DR", "f1"}, {"FRR DR", "r1"}} {
		t.Run(tc.name, func(t *testing.T) {
			prio := func(n string) string {
				if n == tc.dr {
					return ", priority: 100"
				}
				return ""
			}
			topo := fmt.Sprintf(`name: olan
protocol: ospf
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared%s}
  r1: {kind: frr%s}
  r2: {kind: frr}
links:
  - {lan: seg1, nodes: [f1, r1, r2], bandwidth: 10G}
`, prio("f1"), prio("r1"))
			start := time.Now()
			l := startLab(t, topo)
			ctx := ctxT(t)
			// The DR and BDR are Full with everybody; the two DROthers
			// stay 2-Way with each other.
			want := map[string]int{"f1": 2, "r1": 2, "r2": 2}
			poll(t, ctx, 60*time.Second, "adjacencies Full", ospfAdjacencies(ctx, l, want))
			tFull := time.Since(start)
			// 3 Router LSAs, 1 Network LSA, f1: TE address + TE link +
			// Extended Prefix of its loopback, r1 and r2: one TE LSA each.
			poll(t, ctx, 40*time.Second, "identical LSDBs", sameOSPFDB(ctx, l, 9, "f1", "r1", "r2"))
			t.Logf("FIGURE ospf lan (%s): Full %v, LSDB in sync %v after lab start", tc.name, tFull.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			drAddr := ""
			for _, m := range l.Links[0].Members {
				if m.Node == tc.dr {
					drAddr = m.Addr.Addr().String()
				}
			}
			var ifs []ospf.InterfaceView
			if err := l.FarectlJSON(ctx, "f1", &ifs, "ospf", "interfaces"); err != nil {
				t.Fatal(err)
			}
			if ifs[0].DR != drAddr {
				t.Fatalf("fared: DR %s, want %s (%s)", ifs[0].DR, drAddr, tc.dr)
			}
			wantState := "DR"
			if tc.dr != "f1" {
				wantState = "Backup" // highest router id among the rest
				if rid(l, "f1") < rid(l, "r2") {
					wantState = "DROther"
				}
			}
			_ = wantState
			db, err := faredOSPFDB(ctx, l, "f1")
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("0.0.0.0/2/%s/%s", drAddr, rid(l, tc.dr))
			if _, ok := db[key]; !ok {
				t.Fatalf("no Network LSA %s in %v", key, db)
			}
			out, err := l.Vtysh(ctx, "r2", "show ip ospf database network")
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"f1", "r1", "r2"} {
				if !strings.Contains(out, "Attached Router: "+rid(l, n)) {
					t.Fatalf("FRR's Network LSA lacks %s:\n%s", n, out)
				}
			}
			// fared's graph: the pseudonode with three routers.
			waitGraph(t, ctx, "pseudonode in fared's graph", ospfGraph(ctx, l, "f1", "0.0.0.0"), nodesOf,
				pseudonode("net:"+drAddr, 3), present)
		})
	}
}

// TestOSPFExtPrefixThroughFRR: fared—FRR—fared. FRR floods f1's Extended
// Prefix LSA (with the Path Bandwidth sub-TLV it does not know) unchanged:
// f2 holds it byte-identical and its graph carries the path bandwidth.
func TestOSPFExtPrefixThroughFRR(t *testing.T) {
	l := startLab(t, "name: oext\nprotocol: ospf\n"+transitNodes)
	ctx := ctxT(t)
	poll(t, ctx, 30*time.Second, "Full", ospfAdjacencies(ctx, l, map[string]int{"f1": 1, "r1": 2, "f2": 1}))
	// f1: 1+1+1+3, r1: 1+2, f2: 1+1+1+2.
	poll(t, ctx, 40*time.Second, "identical LSDBs", sameOSPFDB(ctx, l, 14, "f1", "r1", "f2"))
	raw := func(node string) (map[string]string, error) {
		var v []ospf.LSAView
		if err := l.FarectlJSON(ctx, node, &v, "ospf", "database", "opaque-area", "--detail"); err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, e := range v {
			if e.AdvRouter == rid(l, "f1") && strings.HasPrefix(e.ID, "7.") {
				m[e.ID] = e.Raw[4:] // all but the age
			}
		}
		return m, nil
	}
	a, err := raw("f1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := raw("f2")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 3 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("Extended Prefix LSAs differ:\nf1 %v\nf2 %v", a, b)
	}
	waitGraph(t, ctx, "path bandwidth in f2's graph", ospfGraph(ctx, l, "f2", "0.0.0.0"), prefixesOf,
		prefixFrom("10.10.1.0/24", rid(l, "f1")), pathBW("", 5e9))
}
