package policy

import (
	"net/netip"
	"time"
)

// The IPCC flow table, bounded against hostile hosts.
//
// Every packet IPCC sees was sent by a host that may lie about its source
// address, destination QP and PSN, but not about the switch port it
// arrived on. So the table is bounded three ways, each with an LRU list
// (most recently active first):
//
//   - per source: flows of one source address arriving on one port
//     (MaxFlowsPerSource); a host spraying flows from one address, its
//     own or a spoofed one, evicts its own oldest flows;
//   - per port: flows arriving on one port, whatever their source
//     (MaxFlowsPerPort); spraying from many spoofed addresses evicts the
//     port's own oldest flows;
//   - the table (MaxFlows): when it is full, the least recently active
//     flow of all leaves.
//
// Only a flow that has not sent since the last poll (Step) is evicted:
// when the candidate of a full list is active, the new flow is refused
// (counted) instead, so new flows never churn the flows a queue is being
// managed for. A source that fills its own budget within one poll waits
// for the next one.
//
// A flow is bound to the port its first data packet came in on: data
// packets with the flow's key arriving on another port are counted
// (PortMismatch) and change nothing, so a host cannot feed PSNs into, keep
// alive or inflate another host's flow. A flow that really moves (an
// ECMP change after a failure) gets a new entry on its new port once the
// old one idles out (FlowTimeout). Flows the CM exchange announced
// (LearnPair) are bound by their first data packet.
//
// Expiry walks the table's list from its least recently active end and
// stops at the first flow that has not timed out, and each poll looks
// only at the flows that sent since the previous one, so a poll costs
// O(flows that changed), not O(table).

// flowList is an intrusive doubly linked LRU list: front is the most
// recently active flow. Each flow is on three lists (table, port,
// source); which link a list uses is its slot.
type flowList struct {
	head, tail *flow
	n          int
	slot       int
}

type flowLink struct{ prev, next *flow }

const (
	slotTable = iota
	slotPort
	slotSource
	numSlots
)

func (l *flowList) pushFront(f *flow) {
	k := &f.links[l.slot]
	k.prev, k.next = nil, l.head
	if l.head != nil {
		l.head.links[l.slot].prev = f
	} else {
		l.tail = f
	}
	l.head = f
	l.n++
}

func (l *flowList) remove(f *flow) {
	k := &f.links[l.slot]
	if k.prev != nil {
		k.prev.links[l.slot].next = k.next
	} else {
		l.head = k.next
	}
	if k.next != nil {
		k.next.links[l.slot].prev = k.prev
	} else {
		l.tail = k.prev
	}
	k.prev, k.next = nil, nil
	l.n--
}

func (l *flowList) moveFront(f *flow) {
	if l.head == f {
		return
	}
	l.remove(f)
	l.pushFront(f)
}

// sourceKey is a source address on an ingress port: a spoofed address on
// the attacker's port does not share the real host's budget.
type sourceKey struct {
	port string
	src  netip.Addr
}

// flow is a table entry with the policy's bookkeeping.
type flow struct {
	IPCCFlow
	// PSNs of data packets seen recently on the bound port: the window
	// [psnLo, psnHi] (24-bit), at most PSNWindow wide.
	psnLo, psnHi uint32
	psnSet       bool
	recent       uint64 // bytes since the previous poll (0: not active)
	// A QP that PSN-matched ACKs name against the learnt one, and how
	// many such ACKs came in a row (see teach).
	rivalQP    uint32
	rivalVotes int
	qpOnPath   bool // the learnt QP came from an ACK from the receiver's side (or the CM)
	links      [numSlots]flowLink
	port, src  *flowList // the flow's port and source lists
	pairIdx    int       // index in byPair
	dead       bool      // left the table (a stale pointer in active)
}

// admit makes room for a new flow from src on port: it evicts the least
// recently active flow of a full source, port or table list if that
// flow is idle since the last poll, and refuses the new flow otherwise.
func (p *IPCC) admit(port string, src netip.Addr) bool {
	if l := p.sources[sourceKey{port, src}]; l != nil && l.n >= p.cfg.MaxFlowsPerSource && !p.evictFrom(l) {
		p.stats.RefusedSourceCap++
		return false
	}
	if l := p.ports[port]; l != nil && l.n >= p.cfg.MaxFlowsPerPort && !p.evictFrom(l) {
		p.stats.RefusedPortCap++
		return false
	}
	if p.all.n >= p.cfg.MaxFlows && !p.evictFrom(&p.all) {
		p.stats.TableFull++
		return false
	}
	return true
}

// evictFrom drops the least recently active flow of l if it has not
// sent since the last poll.
func (p *IPCC) evictFrom(l *flowList) bool {
	f := l.tail
	if f == nil || f.recent > 0 {
		return false
	}
	p.drop(f)
	p.stats.Evicted++
	return true
}

// insert adds a new flow bound to port (admit said yes).
func (p *IPCC) insert(now time.Time, k IPCCFlowKey, port string) *flow {
	f := &flow{IPCCFlow: IPCCFlow{IPCCFlowKey: k, In: port, First: now, LastSeen: now}}
	p.flows[k] = f
	pair := [2]netip.Addr{k.Src, k.Dst}
	f.pairIdx = len(p.byPair[pair])
	p.byPair[pair] = append(p.byPair[pair], f)
	p.all.pushFront(f)
	p.link(f, port)
	return f
}

// link puts f on the lists of its port and source.
func (p *IPCC) link(f *flow, port string) {
	pl := p.ports[port]
	if pl == nil {
		pl = &flowList{slot: slotPort}
		p.ports[port] = pl
	}
	sk := sourceKey{port, f.Src}
	sl := p.sources[sk]
	if sl == nil {
		sl = &flowList{slot: slotSource}
		p.sources[sk] = sl
	}
	pl.pushFront(f)
	sl.pushFront(f)
	f.port, f.src = pl, sl
}

// unlink takes f off its port and source lists, dropping empty lists.
func (p *IPCC) unlink(f *flow) {
	f.port.remove(f)
	if f.port.n == 0 {
		delete(p.ports, f.In)
	}
	f.src.remove(f)
	if f.src.n == 0 {
		delete(p.sources, sourceKey{f.In, f.Src})
	}
	f.port, f.src = nil, nil
}

// bind moves a flow the CM announced (no port yet) to the port of its
// first data packet. It is not admitted again: the CM exchange is
// trusted, and the lists' caps shed the excess at the next admissions.
func (p *IPCC) bind(f *flow, port string) {
	p.unlink(f)
	f.In = port
	p.link(f, port)
}

// touch marks f as the most recently active flow of its lists.
func (p *IPCC) touch(f *flow) {
	p.all.moveFront(f)
	f.port.moveFront(f)
	f.src.moveFront(f)
}

// expire drops the flows silent for longer than FlowTimeout, from the
// least recently active end of the table.
func (p *IPCC) expire(now time.Time) {
	for f := p.all.tail; f != nil && now.Sub(f.LastSeen) > p.cfg.FlowTimeout; f = p.all.tail {
		p.stepVisits++
		p.drop(f)
		p.stats.Expired++
	}
}

func (p *IPCC) drop(f *flow) {
	delete(p.flows, f.IPCCFlowKey)
	pair := [2]netip.Addr{f.Src, f.Dst}
	l := p.byPair[pair]
	last := len(l) - 1
	l[f.pairIdx] = l[last]
	l[f.pairIdx].pairIdx = f.pairIdx
	l[last] = nil
	if last == 0 {
		delete(p.byPair, pair)
	} else {
		p.byPair[pair] = l[:last]
	}
	p.all.remove(f)
	p.unlink(f)
	f.dead = true
}
