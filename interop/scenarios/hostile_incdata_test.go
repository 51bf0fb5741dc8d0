package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
)

// Hostile hosts against the INC data plane (issue 25, row 2). An attacker
// host attached to a leaf forges the INC packets of a legitimate rank
// while that rank's job runs allreduce. The attack functions take the lab,
// the attacker's node name and a running job, and read everything else
// (the victim's tree, switch, QP, key) from the job and the fabric, so
// they run on any fabric where the job's tree exists.

// tree asks rank r's worker for its tree assignment (what the rank
// itself uses: the switch, its QP, the key, the rank's child index).
func (j *incJob) tree(r int) *protos.TreeAssignment {
	j.t.Helper()
	w := j.ws[r]
	if _, err := w.In.Write([]byte(`{"cmd":"tree"}` + "\n")); err != nil {
		j.t.Fatal(err)
	}
	var a protos.TreeAssignment
	if err := w.Read(&a, 30*time.Second); err != nil || a.SwitchAddress == "" {
		j.t.Fatalf("rank %d's tree: %+v %v", r, &a, err)
	}
	return &a
}

// incExact fails the test unless every rank verified its result.
func incExact(t *testing.T, what string, res []incResult) {
	t.Helper()
	for _, r := range res {
		if r.Error != "" || !r.Verified || r.Mode != "inc" {
			t.Fatalf("%s: rank %d: %+v", what, r.Rank, r)
		}
	}
}

// incSwitchByAddr returns the fared node whose INC data plane has addr.
func incSwitchByAddr(t *testing.T, ctx context.Context, l *interop.Lab, addr string) string {
	t.Helper()
	for _, n := range l.Nodes {
		if n.Kind != "fared" {
			continue
		}
		var v wire.INCSwitch
		if l.FarectlJSON(ctx, n.Name, &v, "inc", "switch") == nil && v.Address == addr {
			return n.Name
		}
	}
	t.Fatalf("no INC switch has address %s", addr)
	return ""
}

// incBadPackets reads a switch's bad_packets by kind.
func incBadPackets(t *testing.T, ctx context.Context, l *interop.Lab, node string) map[string]uint64 {
	t.Helper()
	var v wire.INCSwitch
	if err := l.FarectlJSON(ctx, node, &v, "inc", "switch"); err != nil {
		t.Fatal(err)
	}
	return v.Bad
}

// incForger sends forged INC packets from the attacker's namespace, at most
// max in all, until stopped; ready is closed after the first round.
type incForger struct {
	stop  atomic.Bool
	sent  atomic.Int64
	done  chan error
	ready chan struct{}
}

// incForge sends the packets build makes for messages lo..hi-1, round after
// round, in bursts (the attacker's traffic stays bounded: max packets).
func incForge(t *testing.T, l *interop.Lab, attacker string, lo, hi uint32, max int64, build func(m uint32, b []byte) []byte) *incForger {
	t.Helper()
	c, err := rawsock.OpenIn(l.Node(attacker).Netns, rawsock.Config{NoReceive: true})
	if err != nil {
		t.Fatal(err)
	}
	f := &incForger{done: make(chan error, 1), ready: make(chan struct{})}
	go func() {
		defer c.Close()
		buf := make([]byte, 0, 2048)
		for round := 0; !f.stop.Load() && f.sent.Load() < max; round++ {
			for m := lo; m < hi && f.sent.Load() < max; m++ {
				buf = build(m, buf[:0])
				if err := c.Send(buf); err != nil {
					f.done <- err
					return
				}
				if f.sent.Add(1)%256 == 0 {
					time.Sleep(time.Millisecond) // bursts, not a CPU-bound loop
				}
			}
			if round == 0 {
				close(f.ready)
			}
		}
		f.done <- nil
	}()
	t.Cleanup(func() { f.stop.Store(true) })
	return f
}

func (f *incForger) finish(t *testing.T) int64 {
	t.Helper()
	f.stop.Store(true)
	if err := <-f.done; err != nil {
		t.Fatalf("attacker: %v", err)
	}
	return f.sent.Load()
}

// waitReady waits for the incForger's first round (or its end).
func (f *incForger) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-f.ready:
	case err := <-f.done:
		f.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("attacker: first round not sent in 30 s")
	}
}

const incForgedSize = 256 << 10 // bytes per allreduce under attack: 256 messages of 1 KB

// incForgedData is rank victim's contribution to message m as the attacker
// forges it: its source address, its child index, the tree's QP and id,
// the slot of m, 1 KB of 1e30 in fp32.
func incForgedData(a *protos.TreeAssignment, src, sw netip.Addr, rkey uint32) func(m uint32, b []byte) []byte {
	payload := make([]byte, 1024)
	for i := 0; i < len(payload); i += 4 {
		payload[i], payload[i+1], payload[i+2], payload[i+3] = 0xCA, 0xF2, 0x49, 0x71 // 1e30 in little-endian fp32
	}
	id := uint16(1)
	return func(m uint32, b []byte) []byte {
		id++
		f := rocev2.Frame{Src: src, Dst: sw, ID: max(id, 1), TTL: 64}
		return packet.AppendINC(b, &f, rocev2.DefaultPKey, &packet.Data{DestQP: a.SwitchQpn, PSN: m, RKey: rkey, VA: uint64(m) * 1024,
			Hdr: packet.Header{Collective: packet.AllReduce, DType: packet.FP32, Op: packet.Sum, Tree: uint16(a.TreeId),
				Slot: uint16(m % a.Slots), Msg: m, Rank: uint16(a.ChildIndex), Count: 256}, Payload: payload})
	}
}

// incForgedResult is a result for message m addressed to dst (QP qp) from
// src: a client or a switch below the forged parent.
func incForgedResult(a *protos.TreeAssignment, src, dst netip.Addr, qp, rkey uint32, rank uint16) func(m uint32, b []byte) []byte {
	payload := make([]byte, 1024)
	for i := 0; i < len(payload); i += 4 {
		payload[i], payload[i+1], payload[i+2], payload[i+3] = 0xCA, 0xF2, 0x49, 0x71
	}
	id := uint16(1)
	return func(m uint32, b []byte) []byte {
		id++
		f := rocev2.Frame{Src: src, Dst: dst, ID: max(id, 1), TTL: 64}
		return packet.AppendINC(b, &f, rocev2.DefaultPKey, &packet.Data{DestQP: qp, PSN: m, RKey: rkey, VA: uint64(m) * 1024,
			Hdr: packet.Header{Flags: packet.FlagResult, Collective: packet.AllReduce, DType: packet.FP32, Op: packet.Sum,
				Tree: uint16(a.TreeId), Slot: uint16(m % a.Slots), Msg: m, Rank: rank, Count: 256}, Payload: payload})
	}
}

// incUnderAttack runs one allreduce of the job while f forges packets, and
// checks that every rank's result is exact.
func incUnderAttack(t *testing.T, j *incJob, f *incForger, what string) []incResult {
	t.Helper()
	f.waitReady(t)
	res := j.allreduce(incForgedSize)
	n := f.finish(t)
	incExact(t, what, res)
	t.Logf("%s: %d forged packets; every rank's result exact", what, n)
	return res
}

// incMoved fails unless counter kind of a switch's bad_packets grew.
func incMoved(t *testing.T, ctx context.Context, l *interop.Lab, node, kind string, before map[string]uint64) {
	t.Helper()
	poll(t, ctx, 5*time.Second, node+" counts bad_packets."+kind, func() error {
		if now := incBadPackets(t, ctx, l, node); now[kind] <= before[kind] {
			return fmt.Errorf("%s stayed at %d (%v)", kind, now[kind], now)
		}
		return nil
	})
}

// incLoggedOnce fails unless the node's fared log holds exactly one
// data-plane refusal line for reason.
func incLoggedOnce(t *testing.T, l *interop.Lab, node, reason string) {
	t.Helper()
	if n := len(logLines(t, l, node, "refused by the data plane's checks", "reason="+reason)); n != 1 {
		t.Fatalf("%s: %d log lines for refusals by %s, want 1", node, n, reason)
	}
}

// attackINCForgedContribution: the attacker forges rank victim's
// contribution (the victim's source address, child index, the tree's QP,
// 1e30 everywhere) to the victim's switch, for every message of the job's
// next allreduce, before and while it runs: first with a guessed R_Key,
// then with the real one (the worst case: an attacker who knows the key
// but is not on the victim's path). Every rank's result stays exact, and
// the switch counts the forgeries under bad_packets (rkey, then ingress)
// and logs each reason once.
//
// With the real key only the ingress check stands between the attacker
// and the sum, so the fabric must let it tell them apart: the attacker's
// packets must come into the victim's switch on another interface than
// the victim's (true when the victim's leaf aggregates it and the
// attacker has its own port there, or comes from another leaf). A host
// sharing the victim's path (the same non-aggregating leaf, to a spine)
// is beyond it: docs/inc.md, "What the key protects". The function
// checks this and says so rather than pass or fail for the wrong reason.
func attackINCForgedContribution(t *testing.T, ctx context.Context, l *interop.Lab, attacker string, j *incJob, victim int) {
	a := j.tree(victim)
	sw := netip.MustParseAddr(a.SwitchAddress)
	node := incSwitchByAddr(t, ctx, l, a.SwitchAddress)
	src := j.address(ctx, victim)
	if dv, da := routeDev(t, ctx, l, node, src), routeDev(t, ctx, l, node, l.Node(attacker).Interfaces[0].Addr.Addr()); dv == da {
		t.Fatalf("fabric: %s reaches the victim %s and the attacker %s over the same interface %s: the ingress check cannot tell them apart there",
			node, src, attacker, dv)
	}
	for _, c := range []struct {
		what, kind string
		rkey       uint32
	}{
		{"forged contribution, guessed R_Key", "rkey", a.GroupKey ^ 0x5A5A5A5A},
		{"forged contribution, the real R_Key", "ingress", a.GroupKey},
	} {
		before := incBadPackets(t, ctx, l, node)
		base := j.used(a.TreeId)
		f := incForge(t, l, attacker, base, base+incForgedSize/1024, 40000, incForgedData(a, src, sw, c.rkey))
		incUnderAttack(t, j, f, c.what+" (rank "+fmt.Sprint(victim)+" at "+node+")")
		incMoved(t, ctx, l, node, c.kind, before)
		incLoggedOnce(t, l, node, c.kind)
	}
}

// attackINCForgedResults: the attacker forges results. To the victim
// client from its own address with the real key (a client takes results
// only from its parent: counted as refused by the victim); and to the
// victim's switch from its parent's address with the real key (the switch
// takes results only from the parent on the route to it: bad_packets
// ingress). Every rank's result stays exact.
func attackINCForgedResults(t *testing.T, ctx context.Context, l *interop.Lab, attacker string, j *incJob, victim int) {
	a := j.tree(victim)
	own := l.Node(attacker).Interfaces[0].Addr.Addr()
	dst := j.address(ctx, victim)
	base := j.used(a.TreeId)
	f := incForge(t, l, attacker, base, base+incForgedSize/1024, 40000, incForgedResult(a, own, dst, j.ws[victim].QPN, a.GroupKey, uint16(a.ChildIndex)))
	res := incUnderAttack(t, j, f, "forged results to rank "+fmt.Sprint(victim)+" from "+own.String())
	if res[victim].Refused == 0 {
		t.Fatalf("rank %d refused no forged result: %+v", victim, res[victim])
	}
	t.Logf("rank %d refused %d forged results", victim, res[victim].Refused)

	// The victim's switch under a parent: forge the parent's results.
	parent, qp := j.parentOf(ctx, a)
	if !parent.IsValid() {
		t.Logf("rank %d's switch is the root: no parent to forge", victim)
		return
	}
	node := incSwitchByAddr(t, ctx, l, a.SwitchAddress)
	before := incBadPackets(t, ctx, l, node)
	base = j.used(a.TreeId)
	f = incForge(t, l, attacker, base, base+incForgedSize/1024, 40000,
		incForgedResult(a, parent, netip.MustParseAddr(a.SwitchAddress), qp, a.GroupKey, 0))
	incUnderAttack(t, j, f, "forged results to "+node+" from its parent "+parent.String())
	incMoved(t, ctx, l, node, "ingress", before)
}

// routeDev is the interface node's route to addr goes out of.
func routeDev(t *testing.T, ctx context.Context, l *interop.Lab, node string, addr netip.Addr) string {
	t.Helper()
	out, err := l.Exec(ctx, node, "ip", "-j", "route", "get", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	var rs []struct {
		Dev string `json:"dev"`
	}
	if err := json.Unmarshal(out, &rs); err != nil || len(rs) == 0 {
		t.Fatalf("%s: ip route get %s: %v %s", node, addr, err, out)
	}
	return rs[0].Dev
}

// address is rank r's data-plane address, as the manager knows it.
func (j *incJob) address(ctx context.Context, r int) netip.Addr {
	j.t.Helper()
	var cs []wire.INCClient
	if err := j.l.FarectlJSON(ctx, j.mgrNode, &cs, "inc", "clients"); err != nil {
		j.t.Fatal(err)
	}
	for _, c := range cs {
		if c.Group == j.group && c.Rank == r {
			return netip.MustParseAddr(c.Address)
		}
	}
	j.t.Fatalf("rank %d of %s unknown to the manager: %+v", r, j.group, cs)
	return netip.Addr{}
}

// parentOf returns, for the switch of assignment a, its parent's address
// in the group's tree (invalid at the root) and the switch's own QP.
func (j *incJob) parentOf(ctx context.Context, a *protos.TreeAssignment) (netip.Addr, uint32) {
	j.t.Helper()
	var trees []wire.INCTree
	if err := j.l.FarectlJSON(ctx, j.mgrNode, &trees, "inc", "trees"); err != nil {
		j.t.Fatal(err)
	}
	for _, tr := range trees {
		if tr.Group != j.group {
			continue
		}
		addr := map[string]string{}
		for _, s := range tr.Switches {
			addr[s.Switch] = s.Address
		}
		for _, s := range tr.Switches {
			if s.Address == a.SwitchAddress {
				if s.Parent == "" {
					return netip.Addr{}, s.QP
				}
				return netip.MustParseAddr(addr[s.Parent]), s.QP
			}
		}
	}
	j.t.Fatalf("no tree of %s has switch %s: %+v", j.group, a.SwitchAddress, trees)
	return netip.Addr{}, 0
}
