package policy

import (
	"net/netip"
	"testing"
	"time"
)

// Attacks on IPCC's flow table from a hostile host (issue 25, row 6). A
// host can put any source address, destination QP and PSN in the packets
// it sends, but not the switch port they arrive on.

func spoofSrc(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{172, 16 + byte(i>>16), byte(i >> 8), byte(i)})
}

func dataOn(port string, src, dst netip.Addr, qp, psn uint32) IPCCPacket {
	return IPCCPacket{Src: src, Dst: dst, DestQP: qp, PSN: psn, In: port, Out: "out", Prio: 3, Size: 1000}
}

func ackOn(port string, src, dst netip.Addr, qp, psn uint32) IPCCPacket {
	return IPCCPacket{Src: src, Dst: dst, DestQP: qp, PSN: psn, AETH: true, In: port, Out: "in", Prio: 3, Size: 64}
}

// flood observes 70,000 packets, packet(i) the i-th, polling every 1,000
// (polls go on during a flood), and polls once more at 100 µs.
func flood(p *IPCC, packet func(i int) IPCCPacket) {
	for i := range 70_000 {
		p.Observe(us(1), packet(i))
		if i%1000 == 999 {
			p.Step(us(1+i/1000), nil)
		}
	}
	p.Step(us(100), nil)
}

// realFlowLearns: a new flow from ha to hb still gets into the table and
// learns its source QP from hb's ACK.
func realFlowLearns(t *testing.T, p *IPCC) {
	t.Helper()
	p.Observe(us(200), dataOn("ha", hA, hB, 0x10, 7))
	p.Observe(us(201), ackOn("hb", hB, hA, 0x77, 7))
	f, ok := p.Flow(IPCCFlowKey{hA, hB, 0x10})
	if !ok || !f.Learned || f.SrcQP != 0x77 {
		t.Fatalf("the real flow after the flood: %+v (in table %v); stats %+v", f, ok, p.Stats())
	}
}

// TestIPCCFloodFromOneSource: a host on port hx sprays more flows than
// the table holds, all from one (real or spoofed) source address. A new
// flow from another host afterwards still gets in and learns its QP.
func TestIPCCFloodFromOneSource(t *testing.T) {
	p := NewIPCC(DefaultIPCC())
	// A real flow of the same address on its own port, idle during the
	// flood: the flood evicts only the flooding source's own flows.
	p.Observe(us(0), dataOn("hc", hC, hB, 0x5, 1))
	p.Step(us(0), nil)
	flood(p, func(i int) IPCCPacket { return dataOn("hx", hC, hB, 0x100+uint32(i), 1) })
	realFlowLearns(t, p)
	if _, ok := p.Flow(IPCCFlowKey{hC, hB, 0x5}); !ok {
		t.Error("the flood from hx evicted the same address's flow on port hc")
	}
	st := p.Stats()
	// 4,096 (MaxFlows/16) of the flood's flows stay; the rest evicted
	// their own oldest, 1,000 at a time between polls.
	if st.Flows != 4096+2 || st.Evicted != 70_000-4096 || st.RefusedSourceCap != 0 {
		t.Errorf("stats %+v: want 4,098 flows, %d evicted, none refused", st, 70_000-4096)
	}
}

// TestIPCCFloodFromOnePort: the same host sprays flows from 70,000
// spoofed sources.
func TestIPCCFloodFromOnePort(t *testing.T) {
	p := NewIPCC(DefaultIPCC())
	flood(p, func(i int) IPCCPacket { return dataOn("hx", spoofSrc(i), hB, 0x10, 1) })
	realFlowLearns(t, p)
	if st := p.Stats(); st.Flows != 16384+1 || st.Evicted != 70_000-16384 {
		t.Errorf("stats %+v: want 16,385 flows (MaxFlows/4 from hx), %d evicted", st, 70_000-16384)
	}
}

// TestIPCCFullTableLRU: when the table is full, a new flow evicts the
// least recently active flow; when every flow sent since the last poll,
// the new one is refused instead.
func TestIPCCFullTableLRU(t *testing.T) {
	c := DefaultIPCC()
	c.MaxFlows, c.MaxFlowsPerPort, c.MaxFlowsPerSource = 8, 8, 8
	p := NewIPCC(c)
	for i := 0; i < 8; i++ {
		p.Observe(us(i), dataOn("p"+string(rune('0'+i)), spoofSrc(i), hB, 0x10, 1))
	}
	if st := p.Stats(); st.Flows != 8 || st.Evicted != 0 {
		t.Fatalf("stats %+v", st)
	}
	// All eight sent since the last poll: a ninth is refused.
	p.Observe(us(9), dataOn("q", hA, hB, 0x10, 1))
	if _, ok := p.Flow(IPCCFlowKey{hA, hB, 0x10}); ok || p.Stats().TableFull != 1 {
		t.Fatalf("a new flow displaced an active one: %+v", p.Stats())
	}
	p.Step(us(10), nil)
	p.Observe(us(11), dataOn("p1", spoofSrc(1), hB, 0x10, 2)) // flow 1 active again
	p.Observe(us(12), dataOn("q", hA, hB, 0x10, 1))
	p.Observe(us(13), dataOn("q", hA, hB, 0x11, 1))
	for i, want := range []bool{false, true, false, true, true, true, true, true} {
		if _, ok := p.Flow(IPCCFlowKey{spoofSrc(i), hB, 0x10}); ok != want {
			t.Errorf("flow %d in the table: %v, want %v (flows 0 and 2 were the least recently active)", i, ok, want)
		}
	}
	if st := p.Stats(); st.Flows != 8 || st.Evicted != 2 || st.TableFull != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestIPCCSourceAndPortCapsRefuse: a source (then a port) whose flows all
// sent since the last poll gets no more flows until the next poll, and
// other ports are not affected.
func TestIPCCSourceAndPortCapsRefuse(t *testing.T) {
	c := DefaultIPCC()
	c.MaxFlows, c.MaxFlowsPerPort, c.MaxFlowsPerSource = 100, 6, 3
	p := NewIPCC(c)
	for qp := uint32(1); qp <= 4; qp++ {
		p.Observe(us(1), dataOn("hx", hC, hB, qp, 1))
	}
	if st := p.Stats(); st.Flows != 3 || st.RefusedSourceCap != 1 {
		t.Fatalf("stats %+v: want 3 flows and 1 refused at the source cap", st)
	}
	for i := 0; i < 4; i++ {
		p.Observe(us(2), dataOn("hx", spoofSrc(i), hB, 1, 1))
	}
	if st := p.Stats(); st.Flows != 6 || st.RefusedPortCap != 1 {
		t.Fatalf("stats %+v: want 6 flows and 1 refused at the port cap", st)
	}
	p.Observe(us(3), dataOn("ha", hA, hB, 1, 1))
	if _, ok := p.Flow(IPCCFlowKey{hA, hB, 1}); !ok {
		t.Fatal("port ha refused because hx is full")
	}
	// After a poll the flood's flows are idle: new ones evict them.
	p.Step(us(10), nil)
	p.Observe(us(11), dataOn("hx", hC, hB, 9, 1))
	if _, ok := p.Flow(IPCCFlowKey{hC, hB, 9}); !ok || p.Stats().Evicted != 1 {
		t.Fatalf("stats %+v", p.Stats())
	}
	if _, ok := p.Flow(IPCCFlowKey{hC, hB, 1}); ok {
		t.Error("the source's oldest flow was not the one evicted")
	}
}

// TestIPCCSpoofedACKAfterLearning: the real receiver's ACK taught the
// flow its sender QP; spoofed ACKs that acknowledge a PSN the flow did
// send, naming another QP, do not replace it.
func TestIPCCSpoofedACKAfterLearning(t *testing.T) {
	// The receiver is behind port hb, where the flow's data leaves: its
	// ACKs come in by that port; the attacker's by hx. No number of
	// spoofed ACKs replaces the QP.
	p := testIPCC()
	for psn := uint32(100); psn <= 110; psn++ {
		p.Observe(us(1), toward("hb", dataOn("ha", hA, hB, 0x10, psn)))
	}
	p.Observe(us(2), ackOn("hb", hB, hA, 0x77, 105))
	for i := 0; i < 3*QPReplaceVotes; i++ {
		p.Observe(us(3), ackOn("hx", hB, hA, 0x66, 108))
	}
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); !f.Learned || f.SrcQP != 0x77 {
		t.Fatalf("sender QP %#x after spoofed ACKs, want 0x77 (the real receiver's)", f.SrcQP)
	}
	if st := p.Stats(); st.QPConflict != 3*QPReplaceVotes || st.QPReplaced != 0 || st.Learned != 1 {
		t.Errorf("stats %+v", st)
	}

	// Both off the flow's path (a receiver behind ECMP uplinks, the
	// attacker behind one too): up to QPReplaceVotes-1 in a row do not
	// replace the QP, and one real ACK in between starts the count again.
	p = testIPCC()
	for psn := uint32(100); psn <= 110; psn++ {
		p.Observe(us(1), dataOn("ha", hA, hB, 0x10, psn))
	}
	p.Observe(us(2), ackOn("up1", hB, hA, 0x77, 105))
	for i := 0; i < 3*(QPReplaceVotes-1); i++ {
		if i%(QPReplaceVotes-1) == 0 {
			p.Observe(us(4), ackOn("up1", hB, hA, 0x77, 109))
		}
		p.Observe(us(4), ackOn("up2", hB, hA, 0x66, 108))
	}
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.SrcQP != 0x77 {
		t.Fatalf("sender QP %#x, want 0x77", f.SrcQP)
	}
	if st := p.Stats(); st.QPConflict != 3*(QPReplaceVotes-1) || st.QPReplaced != 0 || st.Learned != 1 {
		t.Errorf("stats %+v", st)
	}
}

// toward sets the port a data packet leaves by.
func toward(out string, pk IPCCPacket) IPCCPacket {
	pk.Out = out
	return pk
}

// TestIPCCLuckyGuessCorrected: a spoofed ACK that guessed a PSN in the
// window before the real receiver's first ACK teaches its QP; the real
// receiver's first ACK from the flow's side replaces it (from another
// port, QPReplaceVotes of them in a row).
func TestIPCCLuckyGuessCorrected(t *testing.T) {
	p := testIPCC()
	for psn := uint32(100); psn <= 110; psn++ {
		p.Observe(us(1), toward("hb", dataOn("ha", hA, hB, 0x10, psn)))
	}
	p.Observe(us(2), ackOn("hx", hB, hA, 0x66, 101))
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.SrcQP != 0x66 {
		t.Fatalf("QP %#x, want the lucky guess 0x66 at first", f.SrcQP)
	}
	p.Observe(us(3), ackOn("hb", hB, hA, 0x77, 102))
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.SrcQP != 0x77 {
		t.Fatalf("QP %#x after the receiver's ACK, want 0x77", f.SrcQP)
	}

	p = testIPCC()
	for psn := uint32(100); psn <= 110; psn++ {
		p.Observe(us(1), dataOn("ha", hA, hB, 0x10, psn))
	}
	p.Observe(us(2), ackOn("hx", hB, hA, 0x66, 101))
	for i := 0; i < QPReplaceVotes; i++ {
		if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.SrcQP != 0x66 {
			t.Fatalf("after %d real ACKs: QP %#x, want still 0x66", i, f.SrcQP)
		}
		p.Observe(us(3), ackOn("up1", hB, hA, 0x77, 102+uint32(i)))
	}
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.SrcQP != 0x77 {
		t.Fatalf("QP %#x, want the real receiver's 0x77", f.SrcQP)
	}
	if st := p.Stats(); st.QPReplaced != 1 || st.QPConflict != QPReplaceVotes {
		t.Errorf("stats %+v", st)
	}
}

// TestIPCCQPChangeAfterIdle: a flow that restarts with a new sender QP
// (same addresses and receiver QP) after idling out learns the new QP
// from its first ACK.
func TestIPCCQPChangeAfterIdle(t *testing.T) {
	p := testIPCC()
	p.Observe(us(0), dataOn("ha", hA, hB, 0x10, 5))
	p.Observe(us(1), ackOn("hb", hB, hA, 0x77, 5))
	p.Step(us(0).Add(2*time.Second), nil)
	p.Observe(us(0).Add(3*time.Second), dataOn("ha", hA, hB, 0x10, 900))
	p.Observe(us(0).Add(3*time.Second), ackOn("hb", hB, hA, 0x78, 900))
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.SrcQP != 0x78 {
		t.Fatalf("QP %#x after the restart, want 0x78", f.SrcQP)
	}
}

// TestIPCCSpoofedDataThenACK: the attacker cannot see the flow's PSNs,
// so it sends a data packet of the flow itself (same addresses and
// destination QP) with a PSN of its choice, then an ACK of that PSN.
func TestIPCCSpoofedDataThenACK(t *testing.T) {
	p := testIPCC()
	for psn := uint32(100); psn <= 110; psn++ {
		p.Observe(us(1), dataOn("ha", hA, hB, 0x10, psn))
	}
	p.Observe(us(2), ackOn("hb", hB, hA, 0x77, 105))
	p.Observe(us(3), dataOn("hx", hA, hB, 0x10, 9000))
	p.Observe(us(4), ackOn("hx", hB, hA, 0x66, 9000))
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.SrcQP != 0x77 {
		t.Fatalf("sender QP %#x, want 0x77", f.SrcQP)
	}
	// Before any real ACK too: the spoofed PSN is not one the flow sent.
	q := testIPCC()
	for psn := uint32(100); psn <= 110; psn++ {
		q.Observe(us(1), dataOn("ha", hA, hB, 0x10, psn))
	}
	q.Observe(us(3), dataOn("hx", hA, hB, 0x10, 9000))
	q.Observe(us(4), ackOn("hx", hB, hA, 0x66, 9000))
	if f, _ := q.Flow(IPCCFlowKey{hA, hB, 0x10}); f.Learned || f.In != "ha" || f.Packets != 11 {
		t.Fatalf("flow %+v: learnt from an ACK of a PSN only the attacker sent, or took its packet", f)
	}
	if st := q.Stats(); st.PortMismatch != 1 || st.Unmatched != 1 {
		t.Errorf("stats %+v: want 1 port mismatch, 1 unmatched", st)
	}
}

// TestIPCCShadowFlowsDoNotBlockLearning: the attacker makes flows
// between the same two addresses (other destination QPs) whose PSNs
// cover the real flow's, so that every real ACK would be ambiguous. The
// real ACK leaves toward the sender by the port the real flow came in
// on, which singles it out.
func TestIPCCShadowFlowsDoNotBlockLearning(t *testing.T) {
	p := testIPCC()
	for qp := uint32(0x40); qp < 0x48; qp++ {
		for psn := uint32(0); psn < 2000; psn += 100 {
			p.Observe(us(1), dataOn("hx", hA, hB, qp, psn))
		}
	}
	for psn := uint32(100); psn <= 110; psn++ {
		p.Observe(us(2), dataOn("ha", hA, hB, 0x10, psn))
	}
	ack := ackOn("hb", hB, hA, 0x77, 105)
	ack.Out = "ha"
	p.Observe(us(3), ack)
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); !f.Learned || f.SrcQP != 0x77 {
		t.Fatalf("real flow %+v; stats %+v", f, p.Stats())
	}
	for qp := uint32(0x40); qp < 0x48; qp++ {
		if f, _ := p.Flow(IPCCFlowKey{hA, hB, qp}); f.Learned {
			t.Errorf("shadow flow %#x learnt the real ACK's QP", qp)
		}
	}
}

// TestIPCCCMFlowBindsOnFirstData: a flow the CM exchange announced is
// bound to the port of its first data packet.
func TestIPCCCMFlowBindsOnFirstData(t *testing.T) {
	p := testIPCC()
	p.LearnPair(us(0), hA, hB, 0x20, 0x10)
	p.Observe(us(1), dataOn("ha", hA, hB, 0x10, 1))
	p.Observe(us(2), dataOn("hx", hA, hB, 0x10, 2))
	f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10})
	if f.In != "ha" || f.Packets != 1 || f.SrcQP != 0x20 || p.Stats().PortMismatch != 1 {
		t.Fatalf("flow %+v stats %+v", f, p.Stats())
	}
}

// TestIPCCStaleOrUnacknowledgedPSN: an ACK teaches only if it
// acknowledges a PSN among those the flow sent recently; a reverse
// packet without an AETH (anyone can send one) teaches nothing.
func TestIPCCStaleOrUnacknowledgedPSN(t *testing.T) {
	p := testIPCC()
	for psn := uint32(0); psn <= 5000; psn++ {
		p.Observe(us(1), dataOn("ha", hA, hB, 0x10, psn))
	}
	p.Observe(us(2), ackOn("hx", hB, hA, 0x66, 10)) // sent, but 4,990 PSNs ago
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.Learned {
		t.Fatalf("learnt %#x from an ACK of a PSN sent 4,990 PSNs ago", f.SrcQP)
	}
	p.Observe(us(2), IPCCPacket{Src: hB, Dst: hA, DestQP: 0x65, PSN: 5000, In: "hx", Out: "in", Prio: 3, Size: 100})
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.Learned {
		t.Fatalf("learnt %#x from a reverse packet without an AETH", f.SrcQP)
	}
	// The window is the last PSNWindow PSNs: 5000-1023 teaches.
	p.Observe(us(3), ackOn("hb", hB, hA, 0x77, 5000-1023))
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x10}); f.SrcQP != 0x77 {
		t.Fatalf("QP %#x, want 0x77 from an ACK inside the window", f.SrcQP)
	}
}

// TestIPCCStepVisitsOnlyChangedFlows counts the flows a Step looks at
// (not its time): over a full table, a poll after 3 flows sent visits 3.
func TestIPCCStepVisitsOnlyChangedFlows(t *testing.T) {
	c := DefaultIPCC()
	c.FlowTimeout = time.Second
	p := NewIPCC(c)
	for i := 0; i < 65536; i++ {
		p.Observe(us(0), dataOn("hx", spoofSrc(i/16), hB, uint32(i%16), 1))
		if i%16000 == 15999 {
			p.Step(us(0), nil)
		}
	}
	p.Step(us(1), map[QueueKey]uint64{{"out", 3}: 500_000})
	if p.Stats().Flows != 16384 {
		t.Fatalf("flows %d", p.Stats().Flows)
	}
	for i := 0; i < 3; i++ {
		p.Observe(us(2), dataOn("hx", spoofSrc(i), hB, 0, 2))
	}
	before := p.stepVisits
	p.Step(us(3), map[QueueKey]uint64{{"out", 3}: 600_000})
	if v := p.stepVisits - before; v != 3 {
		t.Fatalf("Step visited %d flows, want the 3 that sent", v)
	}
	// A poll after the timeout visits the flows that expire.
	before = p.stepVisits
	p.Observe(us(0).Add(1500*time.Millisecond), dataOn("ha", hA, hB, 1, 1))
	p.Step(us(0).Add(1500*time.Millisecond), nil)
	if v, st := p.stepVisits-before, p.Stats(); v != 16384+1 || st.Expired != 16384 || st.Flows != 1 {
		t.Fatalf("visited %d, stats %+v: want 16,385 (16,384 expired + 1 active)", v, st)
	}
	before = p.stepVisits
	p.Step(us(0).Add(1600*time.Millisecond), nil)
	if v := p.stepVisits - before; v != 0 {
		t.Fatalf("an idle poll visited %d flows", v)
	}
}

// TestIPCCACKBeforeItsData: the copy of an ACK can reach the policy
// before the copy of the data packet it acknowledges (they come through
// different capture sockets). With two flows between the same hosts whose
// PSNs overlap, that ACK must not teach the other flow, whose window
// happens to hold the PSN.
func TestIPCCACKBeforeItsData(t *testing.T) {
	p := testIPCC()
	for psn := uint32(0); psn <= 100; psn++ {
		p.Observe(us(1), toward("hb", dataOn("ha", hA, hB, 0x10, psn)))
	}
	for psn := uint32(0); psn <= 120; psn++ {
		p.Observe(us(1), toward("hb", dataOn("ha", hA, hB, 0x11, psn)))
	}
	p.Observe(us(2), ackOn("hb", hB, hA, 0x77, 103)) // 0x10's PSN 103, not seen yet
	if f, _ := p.Flow(IPCCFlowKey{hA, hB, 0x11}); f.Learned {
		t.Fatalf("flow 0x11 learnt %#x from an ACK of flow 0x10", f.SrcQP)
	}
	if st := p.Stats(); st.Ambiguous != 1 {
		t.Errorf("stats %+v: want the ACK counted as ambiguous", st)
	}
}
