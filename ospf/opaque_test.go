package ospf

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/ospf/packet"
)

// TestOpaqueOnlyToOpaqueNeighbors: r2 behaves like FRR's ospfd without
// "capability opaque" (no O bit in its DBDs). r1 neither describes nor
// floods its opaque LSAs (TE, Extended Prefix) to it (RFC 5250 §3), so
// the exchange completes instead of being refused over and over, and r2
// holds r1's Router LSA but none of its opaque LSAs.
func TestOpaqueOnlyToOpaqueNeighbors(t *testing.T) {
	w := &wire{}
	r2addr := netip.MustParseAddr("10.254.0.1")
	w.mangle = func(src netip.Addr, pkt []byte) []byte {
		if src != r2addr {
			return pkt
		}
		p, err := packet.Decode(pkt)
		if err != nil {
			return pkt
		}
		d, ok := p.(*packet.DBD)
		if !ok {
			return pkt
		}
		d.Options &^= optO
		return d.AppendTo(nil)
	}
	r1, r2 := startP2PPair(t, w)
	igptest.Poll(t, 10*time.Second, "r2 holds r1's Router LSA and none of its opaque LSAs", func() error {
		v, err := r2.in.Database(context.Background(), DatabaseQuery{})
		if err != nil {
			return err
		}
		router := false
		for _, e := range v {
			if e.AdvRouter != "10.255.0.1" || e.Age >= MaxAge {
				continue
			}
			switch {
			case e.Type == packet.LSARouter:
				router = true
			case e.Type >= packet.LSAOpaqueLink:
				return fmt.Errorf("r2 holds r1's opaque LSA %+v", e)
			}
		}
		if !router {
			return fmt.Errorf("no Router LSA of r1 at r2")
		}
		return nil
	})
	ns, _ := r1.in.Neighbors(context.Background())
	if len(ns) != 1 || ns[0].Retransmit != 0 {
		t.Fatalf("r1 retransmits to r2: %+v", ns)
	}
}
