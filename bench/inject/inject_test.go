package inject

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/isis/packet"
)

// The LSPs of a 512-neighbour spine: every fragment fits the LSP MTU,
// decodes, carries a valid checksum, and together they list each cable
// once with its addresses and bandwidth.
func TestNodeFragments(t *testing.T) {
	f := closgen.ThreeStage{Spines: 4, Leaves: 512, Parallel: 7, Seed: 3}.Fabric()
	area, _ := packet.ParseArea(DefaultArea)
	s0 := f.Index("S0")
	frs, err := NodeFragments(f, s0, area, DefaultLSPMTU)
	if err != nil {
		t.Fatal(err)
	}
	// 512 leaves, every 7th pair doubled: leaves l with 4l % 7 == 0.
	want := 0
	for _, c := range f.Cables {
		if c.A == s0 || c.B == s0 {
			want++
		}
	}
	if want <= 512 {
		t.Fatalf("fabric has %d cables at S0, expected parallel ones", want)
	}
	got := 0
	seen := map[netip.Addr]bool{}
	for i, fr := range frs {
		raw := EncodeLSP(fr, 7, 1200)
		if len(raw) > DefaultLSPMTU {
			t.Errorf("fragment %d: %d bytes", i, len(raw))
		}
		if !packet.LSPChecksumOK(raw) {
			t.Errorf("fragment %d: bad checksum", i)
		}
		p, err := packet.Decode(raw)
		if err != nil {
			t.Fatalf("fragment %d: %v", i, err)
		}
		l := p.(*packet.LSP)
		if l.ID != packet.MakeLSPID(SystemID(s0), 0, uint8(i)) || l.Seq != 7 || l.ISType() != 3 {
			t.Errorf("fragment %d: id %s seq %d flags %#x", i, l.ID, l.Seq, l.Flags)
		}
		for _, nb := range l.TLVs.ExtISNeighbors() {
			got++
			local, _ := packet.IPv4IfAddr(nb.SubTLVs)
			remote, _ := packet.IPv4NbrAddr(nb.SubTLVs)
			bw, ok := packet.MaxLinkBandwidth(nb.SubTLVs)
			// The local address names the cable: find it and check the
			// neighbour and bandwidth against the fabric.
			off := int(local.As4()[1]-64)<<16 | int(local.As4()[2])<<8 | int(local.As4()[3])
			c := f.Cables[off/2]
			peer := c.A
			if peer == s0 {
				peer = c.B
			}
			if nb.ID != packet.MakeNodeID(SystemID(peer), 0) || !ok || bw != c.BW || nb.Metric != closgen.Metric {
				t.Errorf("neighbour %s via %s: cable %d says %s bw %v, LSP bw %v metric %d", nb.ID, local, off/2, f.Nodes[peer].Name, c.BW, bw, nb.Metric)
			}
			if seen[local] || remote.As4()[3] != local.As4()[3]^1 {
				t.Errorf("address %s repeated or remote %s not its /31 peer", local, remote)
			}
			seen[local] = true
		}
	}
	if got != want {
		t.Errorf("%d neighbours in the LSPs, %d cables", got, want)
	}
	// A leaf's single fragment carries its prefix with the Path Bandwidth.
	frs, _ = NodeFragments(f, f.Index("L3"), area, DefaultLSPMTU)
	p, _ := packet.Decode(EncodeLSP(frs[0], 1, 1200))
	ps := p.(*packet.LSP).TLVs.ExtIPPrefixes()
	if len(ps) != 1 || ps[0].Prefix != netip.MustParsePrefix("10.0.0.3/32") {
		t.Fatalf("L3 prefixes %+v", ps)
	}
	if pb, ok := packet.PathBandwidth(ps[0].SubTLVs, PathBWSubTLV); !ok || pb != f.Nodes[f.Index("L3")].Prefixes[0].PathBW {
		t.Errorf("L3 path bandwidth %v %v", pb, ok)
	}
}

// memPort is one end of an in-memory link.
type memPort struct {
	in     chan []byte
	out    chan []byte
	closed chan struct{}
}

func memLink() (a, b *memPort) {
	x, y := make(chan []byte, 1<<14), make(chan []byte, 1<<14)
	return &memPort{in: x, out: y, closed: make(chan struct{})}, &memPort{in: y, out: x, closed: make(chan struct{})}
}

func (p *memPort) Send(_ [6]byte, pdu []byte) error {
	select {
	case p.out <- append([]byte(nil), pdu...):
		return nil
	case <-p.closed:
		return errors.New("closed")
	}
}

func (p *memPort) Recv(buf []byte) ([6]byte, []byte, error) {
	select {
	case b := <-p.in:
		return [6]byte{2}, b, nil
	case <-p.closed:
		return [6]byte{}, nil, errors.New("closed")
	}
}

func (p *memPort) Close() error {
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	return nil
}

// A scripted RUT on one circuit: three-way handshake, the whole database,
// acknowledgements, then a bandwidth change re-flooded with sequence 2.
func TestAdjacencyAndFlooding(t *testing.T) {
	f := closgen.ThreeStage{Spines: 1, Leaves: 3, Seed: 1}.Fabric()
	cs, err := Circuits(f)
	if err != nil || len(cs) != 1 || cs[0].Iface != "S0-1" {
		t.Fatalf("circuits %+v %v", cs, err)
	}
	inj, err := New(Config{Fabric: f, HelloInterval: 50 * time.Millisecond}, cs)
	if err != nil {
		t.Fatal(err)
	}
	mine, rut := memLink()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go inj.Run(ctx, []isis.Port{mine})
	me := SystemID(f.Self)
	area, _ := packet.ParseArea(DefaultArea)
	hello := func(state uint8, nbr *packet.SystemID, ext uint32) []byte {
		tw := &packet.ThreeWay{State: state, HasExtCircuit: true, ExtCircuitID: 9}
		if nbr != nil {
			tw.HasNeighbor, tw.NeighborID, tw.NeighborExtCircuitID = true, *nbr, ext
		}
		h := &packet.P2PHello{Header: packet.Header{Type: packet.TypeP2PHello}, CircuitType: packet.CircuitL2, SourceID: me, HoldTime: 3,
			TLVs: packet.TLVs{&packet.AreaAddresses{Areas: [][]byte{area}}, tw}}
		return h.AppendTo(nil)
	}
	next := func(want uint8) packet.PDU {
		t.Helper()
		for {
			select {
			case b := <-rut.in:
				p, err := packet.Decode(b)
				if err != nil {
					t.Fatalf("injector sent a bad PDU: %v", err)
				}
				if p.PDUHeader().Type == want {
					return p
				}
			case <-ctx.Done():
				t.Fatalf("no PDU of type %d", want)
			}
		}
	}
	rut.Send([6]byte{}, hello(packet.ThreeWayDown, nil, 0))
	// The injector answers Initializing, naming us.
	var h *packet.P2PHello
	for {
		h = next(packet.TypeP2PHello).(*packet.P2PHello)
		if tw, _ := h.TLVs.ThreeWay(); tw.State == packet.ThreeWayInitializing && tw.NeighborID == me && tw.NeighborExtCircuitID == 9 {
			break
		}
	}
	if h.SourceID != SystemID(cs[0].Node) {
		t.Fatalf("injector plays %s, want S0's id", h.SourceID)
	}
	tw, _ := h.TLVs.ThreeWay()
	rut.Send([6]byte{}, hello(packet.ThreeWayUp, &h.SourceID, tw.ExtCircuitID))
	// Every LSP but ours arrives; acknowledge each.
	got := map[packet.LSPID]uint32{}
	for len(got) < inj.Count() {
		l := next(packet.TypeL2LSP).(*packet.LSP)
		got[l.ID] = l.Seq
		ps := &packet.PSNP{Header: packet.Header{Type: packet.TypeL2PSNP}, SourceID: packet.MakeNodeID(me, 0),
			TLVs: packet.TLVs{&packet.LSPEntries{Entries: []packet.LSPEntry{l.Entry()}}}}
		rut.Send([6]byte{}, ps.AppendTo(nil))
	}
	if inj.Count() != 3 { // S0, L1, L2: L0 is the RUT
		t.Errorf("%d LSPs injected, want 3", inj.Count())
	}
	if _, ok := got[packet.MakeLSPID(me, 0, 0)]; ok {
		t.Error("the injector flooded the RUT's own LSP")
	}
	waitFull := func() Status {
		for {
			s, err := inj.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.Full() {
				return s
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	s := waitFull()
	if s.Up != 1 || s.FirstUp.IsZero() || s.LastHeld.Before(s.FirstUp) {
		t.Errorf("status %+v", s)
	}
	// L2–S0 is cable 2: both its ends change, re-flooded with seq 2.
	ch, err := inj.SetCableBW(ctx, 2, closgen.Gbps(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.LSPs) != 2 {
		t.Fatalf("changed %v, want S0's and L2's fragment", ch.LSPs)
	}
	for range 2 {
		l := next(packet.TypeL2LSP).(*packet.LSP)
		if l.Seq != 2 {
			t.Errorf("%s seq %d after the change", l.ID, l.Seq)
		}
		for _, nb := range l.TLVs.ExtISNeighbors() {
			if bw, _ := packet.MaxLinkBandwidth(nb.SubTLVs); nb.ID == packet.MakeNodeID(SystemID(f.Index("L2")), 0) && bw != closgen.Gbps(1) {
				t.Errorf("S0→L2 bandwidth %v", bw)
			}
		}
	}
	if _, ok, _ := inj.HeldAt(ctx, ch.LSPs); ok {
		t.Error("unacknowledged new versions counted as held")
	}
	if _, err := inj.SetCableBW(ctx, 0, 1); err == nil {
		t.Error("a cable of the RUT could be changed")
	}
}
