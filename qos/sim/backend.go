package sim

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/fared/fared/qos/model"
)

// NodeBackend drives one simulated switch through model.Backend, the
// interface the Linux and SONiC backends implement: policies cannot tell
// it from hardware. Epoch is the wall time that simulated time 0 stands
// for in counter snapshots.
type NodeBackend struct {
	Node  *Node
	Epoch time.Time
	// Advance, when set, is called first by every method: a backend
	// embedded in a running daemon uses it to bring the simulation up to
	// the wall clock.
	Advance func()
}

// Backend returns the model.Backend of node nd.
func (nd *Node) Backend(epoch time.Time) *NodeBackend { return &NodeBackend{Node: nd, Epoch: epoch} }

// Name is "sim".
func (b *NodeBackend) Name() string { return "sim" }

// Close does nothing: the network outlives its backends.
func (b *NodeBackend) Close() error { return nil }

// Apply sets the node's classification, PFC, thresholds, profiles,
// schedulers, port groups and elephant rule. Every feature is supported
// on every port of a simulated switch.
func (b *NodeBackend) Apply(_ context.Context, d *model.Desired) (model.Report, error) {
	if b.Advance != nil {
		b.Advance()
	}
	nd := b.Node
	rep := model.Report{}
	for _, i := range d.Ifaces {
		if nd.Port(i.Name) == nil {
			return rep, fmt.Errorf("interface %s: no such port on %s", i.Name, nd.Name)
		}
	}
	nd.DSCP = d.DSCP
	groups := map[string]int{}
	for _, i := range d.Ifaces {
		if i.Group != "" {
			if _, ok := groups[i.Group]; !ok {
				groups[i.Group] = len(groups)
			}
		}
	}
	nd.groupIDs = groups
	nd.remaps = map[int]*[64]remapTo{}
	for _, r := range d.Remaps {
		g, ok := groups[r.Group]
		if !ok {
			continue
		}
		if nd.remaps[g] == nil {
			nd.remaps[g] = &[64]remapTo{}
		}
		nd.remaps[g][r.From] = remapTo{to: r.To, prio: r.Prio, ok: true}
	}
	if d.Elephant != nil {
		e := *d.Elephant
		nd.elephant = &e
	} else {
		nd.elephant = nil
	}
	for _, i := range d.Ifaces {
		p := nd.Port(i.Name)
		for q := 0; q < model.NumPrio; q++ {
			was := p.PFC.Has(q)
			p.Thr[q] = i.Thresholds[q]
			p.Sched[q] = i.Queues[q]
			if p.Sched[q].Sched == "" {
				p.Sched[q].Sched = model.Strict
			}
			if p.Sched[q].Weight == 0 {
				p.Sched[q].Weight = 1
			}
			p.Profile[q] = nil
			if name := i.Queues[q].Profile; name != "" {
				prof := d.Profile(name)
				if prof == nil {
					return rep, fmt.Errorf("interface %s queue %d: no profile %q", i.Name, q, name)
				}
				p.SetProfile(q, prof)
			}
			if was && !i.PFC.Has(q) && p.xoffSent[q] {
				// PFC off: stop refreshing the PAUSE we sent.
				p.xoffSent[q] = false
				p.refreshGen[q]++
			}
			if !p.Drop.Has(q) && i.Drop.Has(q) {
				p.flush(q)
			}
		}
		p.PFC = i.PFC
		p.Drop = i.Drop
		p.Group = -1
		if i.Group != "" {
			p.Group = groups[i.Group]
		}
		for _, f := range model.Features {
			rep.Set(i.Name, f, true, "")
		}
		// Turning PFC back on, or lifting a drop, may let a queue send.
		p.kick()
	}
	return rep, nil
}

// Counters reads every port's counters.
func (b *NodeBackend) Counters(context.Context) (*model.Counters, error) {
	if b.Advance != nil {
		b.Advance()
	}
	nd := b.Node
	c := &model.Counters{At: b.Epoch.Add(nd.net.now), Ifaces: map[string]*model.IfaceCounters{}}
	for _, p := range nd.Ports {
		ic := &model.IfaceCounters{Name: p.Name, Speed: uint64(p.Rate)}
		for q := 0; q < model.NumPrio; q++ {
			s := p.C[q]
			ic.Prio[q] = model.PrioCounters{PauseRx: s.PauseRx, PauseTx: s.PauseTx, XOFFOnsets: s.XOFFOnsets,
				Paused: p.paused[q], PausedKnown: true, TxPackets: s.TxPackets, TxBytes: s.TxBytes,
				Drops: s.Drops, Marks: s.Marks, Depth: uint64(p.qBytes[q]), Remapped: s.Remapped,
				ElephantBytes: s.ElephantBytes, MiceBytes: s.MiceBytes}
			ic.ElephantBytes += s.ElephantBytes
			ic.MiceBytes += s.MiceBytes
		}
		c.Ifaces[p.Name] = ic
	}
	// Elephants the node's meters know, on the port each one leaves by.
	var flows []*Flow
	for f := range nd.meters {
		flows = append(flows, f)
	}
	sort.Slice(flows, func(i, j int) bool { return flows[i].ID < flows[j].ID })
	for _, f := range flows {
		out := nd.egress(&Packet{Flow: f, Dst: f.Dst})
		if out == nil {
			continue
		}
		ic := c.Ifaces[out.Name]
		ic.Flows = append(ic.Flows, model.Flow{Key: f.Name, Elephant: nd.meters[f].elephant})
	}
	return c, nil
}
