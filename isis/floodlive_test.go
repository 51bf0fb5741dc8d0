package isis

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
)

// TestFloodingReductionInMemory: spines 11, 12 and leaves 1, 2, 3 on
// in-memory point-to-point wires, reduction on. A new LSP of leaf 1 (its
// overload bit set) reaches every router, and the spines decide as worked
// out by hand in TestRefloodThreeStage: the walk over leaf 1's neighbours
// {11, 12} starts at index 769 mod 2 = 1, spine 12, which covers leaves 2
// and 3; spine 11 passes them over (other_reflooder) and sends them a PSNP
// entry instead.
func TestFloodingReductionInMemory(t *testing.T) {
	spines, leaves := []int{11, 12}, []int{1, 2, 3}
	ifs := map[int][]memIf{}
	for _, s := range spines {
		for _, l := range leaves {
			w := &wire{}
			ifs[s] = append(ifs[s], memIf{name: fmt.Sprintf("l%d", l), typ: "p2p", w: w, addr: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 254, byte(s), byte(2 * l)}), 31)})
			ifs[l] = append(ifs[l], memIf{name: fmt.Sprintf("s%d", s), typ: "p2p", w: w, addr: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 254, byte(s), byte(2*l + 1)}), 31)})
		}
	}
	nodes := map[int]*memNode{}
	var all []*memNode
	for _, n := range append(append([]int{}, spines...), leaves...) {
		nodes[n] = startMemExtra(t, n, ifs[n], "  flooding-reduction: true\n", "")
		all = append(all, nodes[n])
	}
	igptest.Poll(t, 20*time.Second, "every neighbour seen running the reduction", func() error {
		for n, m := range nodes {
			v, err := m.in.Flooding(context.Background())
			if err != nil {
				return err
			}
			for _, i := range v.Interfaces {
				if i.Refloods != "when_chosen" {
					return fmt.Errorf("r%d %s: %s (%s)", n, i.Name, i.Refloods, i.Why)
				}
			}
		}
		return sameDB(all...)()
	})
	decisions := func(n int, iface, reason string) uint64 {
		v, err := nodes[n].in.Flooding(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range v.Interfaces {
			if i.Name == iface {
				return i.Decisions[reason]
			}
		}
		t.Fatalf("r%d has no interface %s", n, iface)
		return 0
	}
	passed0, chosen0 := decisions(11, "l3", "other_reflooder"), decisions(12, "l3", "reflooder")
	on := true
	if _, err := nodes[1].in.SetOverload(context.Background(), &on); err != nil {
		t.Fatal(err)
	}
	igptest.Poll(t, 20*time.Second, "leaf 1's new LSP everywhere", func() error {
		for _, m := range all {
			v, err := m.in.Database(context.Background(), DatabaseQuery{LSPID: "0000.0000.0001.00-00"})
			if err != nil {
				return err
			}
			if len(v) != 1 || !v[0].Overload {
				return fmt.Errorf("%s: %+v", m.in.cfg.Hostname, v)
			}
		}
		return sameDB(all...)()
	})
	if d := decisions(11, "l3", "other_reflooder") - passed0; d != 1 {
		t.Errorf("spine 11 passed leaf 3 over %d times for the new LSP, want 1", d)
	}
	if d := decisions(12, "l3", "reflooder") - chosen0; d != 1 {
		t.Errorf("spine 12 was leaf 3's reflooder %d times for the new LSP, want 1", d)
	}
}
