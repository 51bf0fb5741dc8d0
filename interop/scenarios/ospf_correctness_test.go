package scenarios

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/interop"
	"github.com/fared/fared/ospf"
)

// Lab checks of issue 16 ("Protocol correctness") against FRR 8.4.4's
// ospfd.

// linkLSA is a row of `farectl ospf database opaque-link --detail`.
type linkLSA struct {
	Area      string `json:"area"`
	Interface string `json:"interface"`
	ID        string `json:"id"`
	AdvRouter string `json:"adv_router"`
	Seq       int32  `json:"sequence"`
	Age       int    `json:"age"`
	Raw       string `json:"raw_hex"`
}

func faredLinkLSAs(ctx context.Context, l *interop.Lab, node string) ([]linkLSA, error) {
	var v []linkLSA
	err := l.FarectlJSON(ctx, node, &v, "ospf", "database", "opaque-link", "--detail")
	return v, err
}

// graceAddrTLV is the hex of a Grace LSA's IP Interface Address TLV (RFC
// 3623 Appendix A, type 3, length 4) carrying addr.
func graceAddrTLV(a string) string {
	b := interopAddr(a)
	return fmt.Sprintf("00030004%02x%02x%02x%02x", b[0], b[1], b[2], b[3])
}

func interopAddr(a string) [4]byte {
	var b [4]byte
	fmt.Sscanf(a, "%d.%d.%d.%d", &b[0], &b[1], &b[2], &b[3])
	return b
}

func faredCounter(ctx context.Context, l *interop.Lab, node, iface, name string) (uint64, error) {
	var ifs []ospf.InterfaceView
	if err := l.FarectlJSON(ctx, node, &ifs, "ospf", "interfaces"); err != nil {
		return 0, err
	}
	for _, i := range ifs {
		if i.Name == iface {
			return i.Counters[name], nil
		}
	}
	return 0, fmt.Errorf("%s: no interface %s", node, iface)
}

// TestOSPFLinkLocalOpaqueFromFRR: FRR originates a type-9 opaque LSA (its
// Grace LSA, RFC 3623, on `graceful-restart prepare ip ospf`) on each of
// two parallel links to fared. They are LAN segments because only there
// does FRR put its interface address in the Grace LSA (on P2P the two
// instances differ only in sequence number). RFC 5250 §3: fared keeps one
// instance per link, each carrying FRR's address on that link. After fared
// restarts, FRR offers its Grace LSA in the database exchange: fared
// requests it and reaches Full without a BadLSReq restart.
func TestOSPFLinkLocalOpaqueFromFRR(t *testing.T) {
	const topo = `name: oll
protocol: ospf
defaults: {hello-interval: 1s}
nodes:
  r1: {kind: frr}
  f1: {kind: fared}
links:
  - {lan: seg1, nodes: [r1, f1], bandwidth: 10G}
  - {lan: seg2, nodes: [r1, f1], bandwidth: 10G}
`
	l := startLab(t, topo)
	ctx := ctxT(t)
	poll(t, ctx, 30*time.Second, "Full on both links", ospfAdjacencies(ctx, l, map[string]int{"f1": 2, "r1": 2}))
	// f1's interface on each link, and FRR's address there.
	frrAddr := map[string]string{}
	for _, f := range l.Node("f1").Interfaces {
		for _, m := range l.Links[f.Link].Members {
			if m.Node == "r1" {
				frrAddr[f.Name] = m.Addr.Addr().String()
			}
		}
	}
	if len(frrAddr) != 2 {
		t.Fatalf("f1 interfaces %+v", l.Node("f1").Interfaces)
	}
	if _, err := l.Vtysh(ctx, "r1", "configure terminal", "router ospf", "graceful-restart grace-period 600"); err != nil {
		t.Fatal(err)
	}
	if out, err := l.Vtysh(ctx, "r1", "graceful-restart prepare ip ospf"); err != nil || strings.Contains(out, "%") {
		t.Fatalf("graceful-restart prepare: %v %s", err, out)
	}
	// checkGrace: every Grace LSA fared holds sits on the link whose FRR
	// address it carries; want is how many links must hold one.
	checkGrace := func(want int) func() error {
		return func() error {
			v, err := faredLinkLSAs(ctx, l, "f1")
			if err != nil {
				return err
			}
			seen := map[string]bool{}
			for _, e := range v {
				if e.AdvRouter != rid(l, "r1") || e.ID != "3.0.0.0" || e.Age >= ospf.MaxAge {
					continue
				}
				a, ok := frrAddr[e.Interface]
				if !ok {
					return fmt.Errorf("Grace LSA not held against one of f1's links: %+v", e)
				}
				if !strings.Contains(e.Raw, graceAddrTLV(a)) {
					return fmt.Errorf("the Grace LSA held on %s does not carry FRR's address there (%s): %s", e.Interface, a, e.Raw)
				}
				seen[e.Interface] = true
			}
			if len(seen) != want {
				return fmt.Errorf("Grace LSAs on %v, want on %d links: %+v", seen, want, v)
			}
			return nil
		}
	}
	poll(t, ctx, 20*time.Second, "one Grace LSA per link", checkGrace(2))
	frrDBText, _ := l.Vtysh(ctx, "r1", "show ip ospf database opaque-link self-originate")
	t.Logf("FRR's own link-local opaque LSAs:\n%s", frrDBText)

	// Database exchange: fared restarts; FRR lists its Grace LSA in the
	// DBD of the link it is tagged with.
	if err := l.RestartNode(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 30*time.Second, "Full on both links again", ospfAdjacencies(ctx, l, map[string]int{"f1": 2, "r1": 2}))
	poll(t, ctx, 20*time.Second, "Grace LSA learnt in the exchange", checkGrace(1))
	for name := range frrAddr {
		for _, c := range []string{"seq_mismatch", "rx_bad_lsreq"} {
			n, err := faredCounter(ctx, l, "f1", name, c)
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("f1 %s: %s = %d (exchange restarted)", name, c, n)
			}
		}
	}
}

// TestOSPFBackupSeenWithFRR: RFC 2328 §10.5. FRR is DR alone on a LAN
// (BDR 0.0.0.0 in its hellos); fared joins, in Waiting, and elects on
// BackupSeen instead of waiting out its wait timer (the dead interval,
// 10 s here): it is Backup within 5 s of starting, and says why.
func TestOSPFBackupSeenWithFRR(t *testing.T) {
	const topo = `name: obs
protocol: ospf
defaults: {hello-interval: 1s, hello-multiplier: 10}
nodes:
  r1: {kind: frr, priority: 100}
  f1: {kind: fared, priority: 1}
links:
  - {lan: seg1, nodes: [r1, f1], bandwidth: 10G}
`
	l := startLab(t, topo)
	ctx := ctxT(t)
	poll(t, ctx, 30*time.Second, "Full", ospfAdjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1}))
	if err := l.StopNode(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 20*time.Second, "FRR alone, DR without BDR", func() error {
		out, err := l.Vtysh(ctx, "r1", "show ip ospf interface")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "State DR") || !strings.Contains(out, "No backup designated router") {
			return fmt.Errorf("FRR interface:\n%s", out)
		}
		return nil
	})
	st, err := os.Stat(l.FaredLog("f1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.StartNode(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, 5*time.Second, "fared Backup before its 10 s wait timer", func() error {
		var ifs []ospf.InterfaceView
		if err := l.FarectlJSON(ctx, "f1", &ifs, "ospf", "interfaces"); err != nil {
			return err
		}
		if len(ifs) != 1 || ifs[0].State != "Backup" {
			return fmt.Errorf("fared interfaces %+v", ifs)
		}
		return nil
	})
	poll(t, ctx, 30*time.Second, "Full again", ospfAdjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1}))
	b, err := os.ReadFile(l.FaredLog("f1"))
	if err != nil {
		t.Fatal(err)
	}
	var elections []string
	for _, line := range strings.Split(string(b[st.Size():]), "\n") {
		if strings.Contains(line, "DR election") {
			elections = append(elections, line)
		}
	}
	if len(elections) == 0 || !strings.Contains(elections[0], "BackupSeen") || !strings.Contains(elections[0], "Backup") {
		t.Fatalf("fared's first election after joining was not BackupSeen (to Backup):\n%s", strings.Join(elections, "\n"))
	}
}
