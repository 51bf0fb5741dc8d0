package scenarios

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
	"github.com/fared/fared/rocev2/uc"
)

// Hostile hosts against IPCC (issue 25, row 6). An attacker host beside
// a legitimate RoCEv2 flow through a switch that runs IPCC sprays
// spoofed flows to lock real flows out of the flow table, and sends
// spoofed data and ACKs to have the switch's CNPs go to a QP of its
// choosing. The attack functions take node, address and interface names,
// so they run on any fabric whose switch runs IPCC on linux.

// roceFrame frames one RoCEv2 packet as a host would send it (the raw
// socket takes it from the IP header).
func roceFrame(src, dst netip.Addr, dscp uint8, id uint16, p *rocev2.Packet) []byte {
	f := rocev2.Frame{Src: src, Dst: dst, TOS: dscp << 2, TTL: 64, ID: id, DF: true, SrcPort: 0xC000 | id&0x3FFF}
	return f.Append(nil, p)
}

func ucWrite(qp, psn uint32) *rocev2.Packet {
	return &rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.UCWriteOnly, PKey: rocev2.DefaultPKey, DestQP: qp, PSN: psn & rocev2.PSNMask},
		RETH: rocev2.RETH{RKey: 1, Length: 64}, Payload: make([]byte, 64)}
}

func rcACK(qp, psn uint32) *rocev2.Packet {
	return &rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.RCAcknowledge, PKey: rocev2.DefaultPKey, DestQP: qp, PSN: psn & rocev2.PSNMask},
		AETH: rocev2.AETH{Syndrome: rocev2.SyndromeACK | 0x1F, MSN: 1}}
}

// ipccView reads the IPCC state of a switch.
func ipccView(ctx context.Context, l *interop.Lab, sw string) (wire.QoSIPCC, error) {
	var v wire.QoSIPCC
	err := l.FarectlJSON(ctx, sw, &v, "qos", "ipcc")
	return v, err
}

// ipccAttacker reads sw's IPCC view before an attack and opens a raw
// socket in attacker's namespace to send it (the caller closes it).
func ipccAttacker(t *testing.T, ctx context.Context, l *interop.Lab, attacker, sw string) (wire.QoSIPCC, *rawsock.Conn) {
	t.Helper()
	before, err := ipccView(ctx, l, sw)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rawsock.OpenIn(l.Node(attacker).Netns, rawsock.Config{NoReceive: true})
	if err != nil {
		t.Fatal(err)
	}
	return before, conn
}

// ipccSeen waits until sw has observed n packets since before and polled
// its queues 200 times more (what it saw is in its counters), and
// returns its view then.
func ipccSeen(t *testing.T, ctx context.Context, l *interop.Lab, sw string, before wire.QoSIPCC, n uint64, what string) wire.QoSIPCC {
	t.Helper()
	var now wire.QoSIPCC
	poll(t, ctx, 10*time.Second, what, func() error {
		var err error
		if now, err = ipccView(ctx, l, sw); err != nil {
			return err
		}
		if now.Observed-before.Observed < n || now.Polls < before.Polls+200 {
			return fmt.Errorf("observed %d since the attack, %d polls", now.Observed-before.Observed, now.Polls-before.Polls)
		}
		return nil
	})
	return now
}

// hostileIPCCFlowFlood: attacker (on sw's port swPort) keeps n RoCEv2
// flows toward dst alive for d (a round of n packets every 100 ms),
// half from spoofAs (one address, many destination QPs: a legitimate
// host's address, say) and half from n/2 different spoofed addresses.
// It returns once the switch has seen the first round (the flood is in
// place): ended is closed when the flood is over, and check (after that)
// checks that the switch kept at most its per-port cap of the flows, at
// most its per-source cap from spoofAs, and counted the rest as evicted
// or refused.
func hostileIPCCFlowFlood(t *testing.T, ctx context.Context, l *interop.Lab, attacker, sw, swPort string, dst, spoofAs netip.Addr,
	n int, d time.Duration) (ended <-chan struct{}, check func()) {
	t.Helper()
	before, conn := ipccAttacker(t, ctx, l, attacker, sw)
	frames := make([][]byte, n)
	for i := range frames {
		src, qp := spoofAs, uint32(0x7000+i)
		if i%2 == 1 {
			src, qp = netip.AddrFrom4([4]byte{172, 31, byte(i >> 8), byte(i)}), 0x7000
		}
		// DSCP 0: the flood needs the flow table, not the watched queue.
		frames[i] = roceFrame(src, dst, 0, uint16(i+1), ucWrite(qp, 1))
	}
	done := make(chan error, 1)
	end := make(chan struct{})
	start := time.Now()
	rounds := 0
	go func() {
		defer close(end)
		defer conn.Close()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for ; time.Since(start) < d; rounds++ {
			for _, f := range frames {
				if err := conn.Send(f); err != nil {
					done <- err
					return
				}
			}
			select {
			case <-ctx.Done():
				done <- ctx.Err()
				return
			case <-tick.C:
			}
		}
		done <- nil
	}()
	poll(t, ctx, 10*time.Second, "the switch sees the flood", func() error {
		v, err := ipccView(ctx, l, sw)
		if err != nil {
			return err
		}
		if seen := v.Observed - before.Observed + v.Overflow - before.Overflow; seen < uint64(n) {
			return fmt.Errorf("%d of the first %d packets seen", seen, n)
		}
		return nil
	})
	return end, func() {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatalf("flood: %v", err)
		}
		t.Logf("flood: %d rounds of %d spoofed flows from %s in %v", rounds, n, attacker, time.Since(start).Round(time.Millisecond))
		var v wire.QoSIPCC
		err := interop.Poll(ctx, 10*time.Second, "the switch bounds the flood's flows", func() error {
			var err error
			if v, err = ipccView(ctx, l, sw); err != nil {
				return err
			}
			// Beyond the port's cap, every new flow was evicted or refused
			// (copies the runtime had no time for never reached the table).
			shed := (v.FlowsEvicted - before.FlowsEvicted) + (v.RefusedPortCap - before.RefusedPortCap) +
				(v.RefusedSourceCap - before.RefusedSourceCap) + (v.RefusedTableFull - before.RefusedTableFull)
			want := int64(n) - int64(v.Overflow-before.Overflow) - int64(v.MaxFlowsPerPort)
			if int64(shed) < want || shed == 0 {
				return fmt.Errorf("evicted or refused %d, want >= %d (observed %d, overflow %d)", shed, want,
					v.Observed-before.Observed, v.Overflow-before.Overflow)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		port, source := 0, 0
		for _, f := range v.Flows {
			if f.In == swPort {
				port++
				if f.Src == spoofAs.String() {
					source++
				}
			}
		}
		if port > v.MaxFlowsPerPort || source > v.MaxFlowsPerSource {
			t.Errorf("the switch holds %d flows from %s (cap %d), %d of them from %s (cap %d)", port, swPort, v.MaxFlowsPerPort,
				source, spoofAs, v.MaxFlowsPerSource)
		}
		t.Logf("flood: the switch holds %d/%d flows (%d from %s, %d of them as %s); evicted %d, refused: port cap %d, source cap %d, table full %d; overflow %d",
			v.FlowCount, v.MaxFlows, port, swPort, source, spoofAs, v.FlowsEvicted, v.RefusedPortCap, v.RefusedSourceCap, v.RefusedTableFull,
			v.Overflow-before.Overflow)
	}
}

// ipccVictim is a legitimate flow through the switch: data from Sender
// (QP SenderQP) to Receiver's QP ReceiverQP, which the receiver
// acknowledges. PSN returns a PSN the sender sent last: the attacker
// cannot see it, the test hands it over (an attacker that guessed it).
type ipccVictim struct {
	Sender, Receiver     netip.Addr
	SenderQP, ReceiverQP uint32
	PSN                  func() uint32
}

// hostileIPCCSpoofedACKs: attacker tries to make sw send v's CNPs to
// attackerQP:
//   - data packets of v's flow (same addresses and QP) with PSNs of its
//     own, then ACKs of those PSNs naming attackerQP;
//   - ACKs of the PSNs v sent last (as if it had guessed them) naming
//     attackerQP, more than enough in a row to outvote the receiver.
//
// sw keeps v's learnt QP (checked) and counts both (port_mismatch,
// ack_qp_conflict).
func hostileIPCCSpoofedACKs(t *testing.T, ctx context.Context, l *interop.Lab, attacker, sw string, v ipccVictim, attackerQP uint32) {
	t.Helper()
	before, conn := ipccAttacker(t, ctx, l, attacker, sw)
	defer conn.Close()
	id := uint16(0x4000)
	send := func(src, dst netip.Addr, dscp uint8, p *rocev2.Packet) {
		id++
		if err := conn.Send(roceFrame(src, dst, dscp, id, p)); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 5; round++ {
		own := v.PSN() + 0x200000 + uint32(round)*8
		for k := uint32(0); k < 8; k++ {
			send(v.Sender, v.Receiver, 26, ucWrite(v.ReceiverQP, own+k))
		}
		for k := uint32(0); k < 8; k++ {
			send(v.Receiver, v.Sender, 26, rcACK(attackerQP, own+k))
		}
		last := v.PSN()
		for k := uint32(0); k < 16; k++ {
			send(v.Receiver, v.Sender, 26, rcACK(attackerQP, last-k%4))
		}
		time.Sleep(20 * time.Millisecond) // spread the rounds over the flow's life; not a convergence wait
	}
	// 5 rounds x (8 data + 8 + 16 ACKs) reached the switch's table.
	now := ipccSeen(t, ctx, l, sw, before, 5*32, "the switch has seen the spoofed data and ACKs")
	if now.PortMismatch-before.PortMismatch < 40 || now.QPConflict == before.QPConflict {
		t.Errorf("port mismatch %d -> %d (want +40), ACK QP conflicts %d -> %d", before.PortMismatch, now.PortMismatch,
			before.QPConflict, now.QPConflict)
		for _, f := range now.Flows {
			if f.Src == v.Sender.String() && f.Dst == v.Receiver.String() && f.DestQP < 0x7000 {
				t.Logf("sw's flow: %+v", f)
			}
		}
	}
	for _, f := range now.Flows {
		if f.Src == v.Sender.String() && f.Dst == v.Receiver.String() && f.DestQP == v.ReceiverQP {
			if !f.Learned || f.SrcQP != v.SenderQP {
				t.Errorf("flow to QP %#x: sender QP %#x (learnt %v), want %#x", v.ReceiverQP, f.SrcQP, f.Learned, v.SenderQP)
			}
		}
	}
	t.Logf("spoofed ACKs: port mismatch +%d, ACK QP conflicts +%d, unmatched +%d, QPs replaced +%d",
		now.PortMismatch-before.PortMismatch, now.QPConflict-before.QPConflict, now.Unmatched-before.Unmatched, now.QPReplaced-before.QPReplaced)
}

// hostileIPCCBlindACKs: attacker sends ACKs naming attackerQP for a flow
// whose receiver never acknowledges (no QP learnt), with PSNs it guesses
// (here: none the flow sent recently). The flow learns nothing.
func hostileIPCCBlindACKs(t *testing.T, ctx context.Context, l *interop.Lab, attacker, sw string, v ipccVictim, attackerQP uint32, n int) {
	t.Helper()
	before, conn := ipccAttacker(t, ctx, l, attacker, sw)
	defer conn.Close()
	base := v.PSN() + 0x400000
	for i := 0; i < n; i++ {
		if err := conn.Send(roceFrame(v.Receiver, v.Sender, 26, uint16(0x6000+i), rcACK(attackerQP, base+uint32(i)*997))); err != nil {
			t.Fatal(err)
		}
	}
	now := ipccSeen(t, ctx, l, sw, before, uint64(n), "the switch has seen the blind ACKs")
	for _, f := range now.Flows {
		if f.Src == v.Sender.String() && f.Dst == v.Receiver.String() && f.DestQP == v.ReceiverQP && f.Learned {
			t.Errorf("flow to QP %#x learnt %#x from blind ACKs", v.ReceiverQP, f.SrcQP)
		}
	}
	if now.Unmatched-before.Unmatched < uint64(n) {
		t.Errorf("unmatched ACKs %d since the attack, want >= %d", now.Unmatched-before.Unmatched, n)
	}
}

// ipccScene names the nodes of hostileIPCCScene: the sender, receiver
// and attacker hosts of switch sw, their addresses (A, B) and ports:
// SendIf is the sender's interface toward sw, AttackerPort sw's port
// toward the attacker.
type ipccScene struct {
	Sender, Receiver, Attacker, Switch string
	A, B                               netip.Addr
	SendIf, AttackerPort               string
}

// hostileIPCCScene: the switch (l1's qos section in hostile_test.go: the
// receiver's port shaped to 20 Mb/s so the watched queue fills, IPCC on it
// with small caps, every port of the scene captured) runs IPCC toward
// the receiver; the attacker floods the flow table first; then the
// sender's two senders start (QP 0x11, acknowledged; QP 0x12, never
// acknowledged), and the attacker tries to take their CNPs. The
// acknowledged sender still gets its CNPs, all to QP 0x11; none goes to
// the attacker's QP, and the never-acknowledged one gets none.
func hostileIPCCScene(t *testing.T, ctx context.Context, l *interop.Lab, sc ipccScene) {
	ha, hb, A, B := l.Node(sc.Sender), l.Node(sc.Receiver), sc.A, sc.B
	poll(t, ctx, 10*time.Second, "ipcc running on linux", func() error {
		v, err := ipccView(ctx, l, sc.Switch)
		if err != nil {
			return err
		}
		if !v.Enabled || !strings.HasPrefix(v.Runtime, "linux") || v.Polls == 0 || v.MaxFlowsPerPort != 256 || v.MaxFlowsPerSource != 32 {
			return fmt.Errorf("%+v", v)
		}
		return nil
	})
	poll(t, ctx, 60*time.Second, sc.Sender+" reaches "+sc.Receiver, func() error {
		return exec.Command("ip", "netns", "exec", ha.Netns, "ping", "-c1", "-W1", "-I", A.String(), B.String()).Run()
	})

	// 1. The flood (2.5 s, 1,000 flows from the attacker kept alive, more
	// than the table holds), as the real sender's address and from 500
	// spoofed ones; the real flows start while it runs.
	floodEnded, checkFlood := hostileIPCCFlowFlood(t, ctx, l, sc.Attacker, sc.Switch, sc.AttackerPort, B, A, 1000, 2500*time.Millisecond)
	capA := captureOn(t, ha.Netns, sc.SendIf)
	// Start PSNs as rdma-core picks them: apart (random there).
	const startPSN, silentPSN = 0x500000, 0x9A0000
	recv, err := uc.NewReceiver(uc.ReceiverConfig{Netns: hb.Netns, QPs: []uc.RecvQP{{QP: 0x21, PeerQP: 0x11}, {QP: 0x22, PeerQP: 0x12, NoAck: true}}})
	if err != nil {
		t.Fatal(err)
	}
	learnt, err := uc.NewSender(uc.SenderConfig{Netns: ha.Netns, Src: A, Dst: B, SrcQP: 0x11, DstQP: 0x21, StartPSN: startPSN,
		Rate: 40e6, DSCP: 26, ECT: true, Duration: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	silent, err := uc.NewSender(uc.SenderConfig{Netns: ha.Netns, Src: A, Dst: B, SrcQP: 0x12, DstQP: 0x22, StartPSN: silentPSN,
		Rate: 10e6, DSCP: 26, ECT: true, Duration: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stopTraffic := runTraffic(ctx, recv.Run, learnt.Run, silent.Run)
	defer stopTraffic()
	<-floodEnded
	// The real flow got into the table during the flood: its sender had
	// CNPs from sw before the flood ended.
	if st := learnt.Stats(); st.CNPs < 5 {
		t.Errorf("sender 0x11 got %d CNPs during the flood (first after %v): locked out of the flow table", st.CNPs, st.FirstCNP)
	}
	checkFlood()
	poll(t, ctx, 15*time.Second, "CNPs from sw reach the acknowledged sender", func() error {
		if st := learnt.Stats(); st.CNPs < 5 {
			return fmt.Errorf("sender 0x11: %d CNPs", st.CNPs)
		}
		return nil
	})
	psnOf := func(s *uc.Sender, start uint32) func() uint32 {
		return func() uint32 { return (start + uint32(s.Stats().Packets) - 1) & rocev2.PSNMask }
	}

	// 3. The spoofed data and ACKs, then blind ACKs for the flow whose
	// QP sw never learnt.
	const attackerQP = 0x66
	hostileIPCCSpoofedACKs(t, ctx, l, sc.Attacker, sc.Switch, ipccVictim{Sender: A, Receiver: B, SenderQP: 0x11, ReceiverQP: 0x21, PSN: psnOf(learnt, startPSN)}, attackerQP)
	hostileIPCCBlindACKs(t, ctx, l, sc.Attacker, sc.Switch, ipccVictim{Sender: A, Receiver: B, SenderQP: 0x12, ReceiverQP: 0x22, PSN: psnOf(silent, silentPSN)}, attackerQP, 200)
	after := learnt.Stats().CNPs
	poll(t, ctx, 15*time.Second, "the acknowledged sender keeps getting CNPs after the attack", func() error {
		if n := learnt.Stats().CNPs; n < after+5 {
			return fmt.Errorf("sender 0x11: %d CNPs since the attack", n-after)
		}
		return nil
	})
	stopTraffic()
	capA.stop()

	// Every CNP on ha's wire went to the real sender's QP.
	cnps := capA.cnps()
	toReal := 0
	for i, fr := range cnps {
		f, p, err := rocev2.DecodeIP(fr[14:])
		if err != nil {
			t.Fatalf("CNP %d: %v", i, err)
		}
		if p.BTH.DestQP != 0x11 || f.Src != B || f.Dst != A {
			t.Errorf("CNP %d to QP %#x from %v to %v: want QP 0x11 from %v to %v", i, p.BTH.DestQP, f.Src, f.Dst, B, A)
			continue
		}
		toReal++
	}
	if toReal == 0 {
		t.Fatal("no CNP reached ha")
	}
	st, sst := learnt.Stats(), silent.Stats()
	if sst.CNPs != 0 {
		t.Errorf("the never-acknowledged sender got %d CNPs", sst.CNPs)
	}
	v, err := ipccView(ctx, l, sc.Switch)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range v.Flows {
		if f.Src == A.String() && f.Dst == B.String() && f.DestQP == 0x21 && (f.SrcQP != 0x11 || f.In != sc.Sender+"-1") {
			t.Errorf("flow to 0x21: %+v", f)
		}
	}
	if v.QPReplaced != 0 || v.SendErrors != 0 {
		t.Errorf("QPs replaced %d, send errors %d", v.QPReplaced, v.SendErrors)
	}
	t.Logf("%d CNPs at the sender, %d of them to QP 0x11 (sender: %d CNPs, min rate %.1f Mb/s); switch: flows %d/%d, evicted %d, refused port/source/table %d/%d/%d, port mismatch %d, ACK QP conflicts %d, unmatched %d, skipped for no QP %d",
		len(cnps), toReal, st.CNPs, st.MinRate/1e6, v.FlowCount, v.MaxFlows, v.FlowsEvicted, v.RefusedPortCap, v.RefusedSourceCap,
		v.RefusedTableFull, v.PortMismatch, v.QPConflict, v.Unmatched, v.NoQP)
	if d, err := l.Daemons(sc.Switch); err != nil || d["fared"] == 0 {
		t.Fatalf("fared on %s is gone: %v %v", sc.Switch, d, err)
	}
}
