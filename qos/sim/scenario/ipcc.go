package scenario

import (
	"net/netip"
	"time"

	"github.com/fared/fared/qos/policy"
	"github.com/fared/fared/qos/sim"
)

// IPCC in the software data plane: the policy sees every RoCEv2 packet
// the switch enqueues (Node.Observer, the simulation's "copy to CPU"),
// reads its watched queues every poll of simulated time and sends the
// CNPs it orders from the switch (Network.SendCNP), at the times it
// orders them.
//
// The simulation has no IP addresses or QPs, so they are derived: host n
// N (its node ID + 1) is 10.N>>16.N>>8.N (HostAddr), a flow's
// receiver QP is 0x100000 | flow ID and its sender QP 0x200000 | flow ID.
// Data packets carry the receiver QP and PSN = byte offset / MTU; ACKs
// and NAKs go to the sender QP with the PSN they acknowledge; the policy
// learns sender QPs from them exactly as it does on the wire.

// HostAddr is the address the IPCC adapter gives a node.
func HostAddr(nd *sim.Node) netip.Addr {
	id := nd.ID + 1
	return netip.AddrFrom4([4]byte{10, byte(id >> 16), byte(id >> 8), byte(id)})
}

// Simulated QP numbers of a flow.
const (
	recvQPBase = 0x100000
	sendQPBase = 0x200000
	qpIDMask   = 0x0FFFFF
)

// RecvQP and SendQP are a flow's simulated QPs.
func RecvQP(f *sim.Flow) uint32 { return recvQPBase | uint32(f.ID)&qpIDMask }
func SendQP(f *sim.Flow) uint32 { return sendQPBase | uint32(f.ID)&qpIDMask }

// IPCCRun is IPCC running on one simulated switch.
type IPCCRun struct {
	Node   *sim.Node
	Policy *policy.IPCC
	// Sent counts CNPs the switch sent; NoRoute those it could not.
	Sent, NoRoute uint64
	// SentTo counts the CNPs sent to each flow's sender, by flow ID.
	SentTo map[int]uint64
	// SilentFlows are flows whose ACKs the adapter hides from the
	// policy (a sender whose QP is never learnt), by flow ID.
	SilentFlows map[int]bool
	stopped     bool
}

// Stop ends the policy's polls and observations.
func (r *IPCCRun) Stop() { r.stopped = true }

func psnOf(f *sim.Flow, byteOff int64) uint32 {
	mtu := int64(f.MTU)
	if mtu <= 0 {
		mtu = 1000
	}
	return uint32(byteOff/mtu) & 0xFFFFFF
}

// StartIPCC puts the policy on switch nd of n; epoch is the wall time of
// simulated time 0 (the policy's clock). With cm, the policy also learns
// each flow's QPs at its start, as from the CM exchange that precedes a
// connection's data (the sim has no CM packets: the pair is given);
// without it only ACKs and NAKs teach them.
func StartIPCC(n *sim.Network, nd *sim.Node, cfg policy.IPCCConfig, epoch time.Time, cm bool) *IPCCRun {
	r := &IPCCRun{Node: nd, Policy: policy.NewIPCC(cfg), SilentFlows: map[int]bool{}, SentTo: map[int]uint64{}}
	prev := nd.Observer
	nd.Observer = func(ev sim.PacketEvent) {
		if prev != nil {
			prev(ev)
		}
		if r.stopped {
			return
		}
		pk := ev.Packet
		f := pk.Flow
		if f == nil || f.CC == sim.CCDCTCP {
			return // not RoCEv2
		}
		o := policy.IPCCPacket{Src: HostAddr(pk.Src), Dst: HostAddr(pk.Dst), In: ev.In.Name, Out: ev.Out.Name, Prio: ev.Prio, Size: pk.Size}
		switch pk.Kind {
		case sim.Data:
			o.DestQP, o.PSN = RecvQP(f), psnOf(f, pk.Seq)
		case sim.Ack:
			if r.SilentFlows[f.ID] {
				return
			}
			// An ACK acknowledges the packet before the next expected byte.
			o.DestQP, o.AETH, o.PSN = SendQP(f), true, psnOf(f, max(pk.Seq-1, 0))
		case sim.Nak:
			if r.SilentFlows[f.ID] {
				return
			}
			o.DestQP, o.AETH, o.PSN = SendQP(f), true, psnOf(f, pk.Seq)
		case sim.CNP:
			o.DestQP, o.CNP = SendQP(f), true
		}
		r.Policy.Observe(epoch.Add(ev.Now), o)
	}
	if cm {
		// The CM exchange that set each flow's QPs up crossed the switch
		// just before the flow's first packet.
		for _, f := range n.Flows {
			if f.CC == sim.CCDCTCP {
				continue
			}
			f := f
			n.At(f.Start, func() {
				r.Policy.LearnPair(epoch.Add(f.Start), HostAddr(f.Src), HostAddr(f.Dst), SendQP(f), RecvQP(f))
			})
		}
	}
	poll := cfg.Poll
	n.Every(n.Now()+poll, poll, func(now time.Duration) bool {
		if r.stopped {
			return false
		}
		depth := map[policy.QueueKey]uint64{}
		for _, p := range nd.Ports {
			for _, q := range cfg.Prios.List() {
				if r.Policy.Watched(p.Name, q) {
					depth[policy.QueueKey{Iface: p.Name, Prio: q}] = uint64(p.Queue(q).Depth)
				}
			}
		}
		for _, c := range r.Policy.Step(epoch.Add(now), depth) {
			id := int(c.DestQP & qpIDMask)
			if c.DestQP&^qpIDMask != sendQPBase || id >= len(n.Flows) {
				continue
			}
			f := n.Flows[id]
			if HostAddr(f.Src) != c.Dst {
				continue
			}
			n.At(c.At.Sub(epoch), func() {
				if n.SendCNP(nd, f) {
					r.Sent++
					r.SentTo[f.ID]++
				} else {
					r.NoRoute++
				}
			})
		}
		return true
	})
	return r
}
