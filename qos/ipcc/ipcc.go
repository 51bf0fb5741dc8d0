// Package ipcc runs IPCC (qos/policy's IPCC) for real on a Linux router:
//
//   - it sees the RoCEv2 packets the router forwards as copies (the seed's
//     "copy to CPU"): an AF_PACKET socket per captured interface, with a
//     kernel filter for UDP port 4791, gives it each packet as it arrived;
//   - it reads the depth of the watched egress queues over netlink: the
//     backlog of the HTB classes the linux backend builds (1:1p for
//     priority p);
//   - it sends the CNPs the policy orders through a raw socket (IP header
//     included: the ICRC covers the IP ID, which it chooses), from the
//     flow's receiver's address to its sender, to the sender's QP.
//
// One goroutine owns the policy; the capture readers send it decoded
// packets. Packets the codec rejects (truncated BTH, bad ICRC, unknown
// opcode...) are counted by kind and the first of each kind is logged
// with the offset at fault; they never reach the flow table. A panic
// while handling one packet (a reader) or one event of the loop is
// recovered by the qos module's guard (internal/guard): counted, logged
// once, the input dropped, IPCC kept running.
package ipcc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/packetsock"
	"github.com/fared/fared/internal/setting"
	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
)

// Config configures a Runtime.
type Config struct {
	Policy policy.IPCCConfig
	// Capture lists the interfaces whose incoming RoCEv2 packets are
	// copied; Policy.Ifaces the egress interfaces whose queues are read
	// (empty: the captured ones).
	Capture []string
	// DSCP maps a packet's DSCP to its egress queue (the qos dscp-map).
	DSCP [64]uint8
	// RouteCache bounds the egress lookups kept (0: 16384), each for
	// RouteTTL (0: 1 s).
	RouteCache int
	RouteTTL   time.Duration
	Log        *slog.Logger
	// Guard recovers panics on the receive path and in the loop (the
	// qos module's, core.Guard("qos"); nil: a guard of module "qos").
	Guard *guard.Guard
}

// Snapshot is what the runtime shows (a copy).
type Snapshot struct {
	Started  time.Time
	Stats    policy.IPCCStats
	Flows    []policy.IPCCFlow // at most MaxSnapshotFlows
	Queues   []policy.IPCCQueue
	Errors   map[string]uint64 // rejected packets by kind
	Captured uint64            // RoCEv2 packets copied to the runtime
	Overflow uint64            // copies dropped: the policy was behind
	NoRoute  uint64            // packets whose egress was not found
	Sent     uint64            // CNPs sent
	SendErrs uint64
	Routes   RouteStats // the egress lookup cache
	Capture  []string
	Watched  []string
	LastErr  string
}

// MaxSnapshotFlows bounds the flow table a snapshot copies: the most
// recently active flows, refreshed every flowsEvery (a poll copies only
// the counters: copying a big table every poll would cost what the
// bounded table saves).
const (
	MaxSnapshotFlows = 1000
	flowsEvery       = 100 * time.Millisecond
)

// Runtime is IPCC on a Linux router.
type Runtime struct {
	cfg   Config
	log   *slog.Logger
	guard *guard.Guard

	counts rocev2.ErrorCounts
	saidMu sync.Mutex
	said   map[rocev2.ErrKind]bool

	mu   sync.Mutex
	snap Snapshot

	// loop-owned
	pol     *policy.IPCC
	routes  *routeCache
	names   map[int]string
	flowsAt time.Time // when the snapshot's flows were copied
	sendID  uint16    // IP ID of the last CNP
	sendBuf []byte
}

// New returns a runtime; Run starts it.
func New(cfg Config) *Runtime {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Guard == nil {
		cfg.Guard = guard.New("qos", cfg.Log)
	}
	setting.Default(&cfg.RouteCache, 16384)
	setting.Default(&cfg.RouteTTL, time.Second)
	r := &Runtime{cfg: cfg, log: cfg.Log, guard: cfg.Guard, said: map[rocev2.ErrKind]bool{}, names: map[int]string{}}
	r.routes = newRouteCache(cfg.RouteCache, cfg.RouteTTL, r.routeGet)
	return r
}

// Snapshot returns the latest state (updated every poll).
func (r *Runtime) Snapshot() Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.snap
	s.Flows = append([]policy.IPCCFlow(nil), r.snap.Flows...)
	s.Queues = append([]policy.IPCCQueue(nil), r.snap.Queues...)
	s.Errors = r.counts.Map()
	return s
}

type capPkt struct {
	at    time.Time
	iface string
	f     rocev2.Frame
	p     rocev2.Packet
	size  int
}

// Run captures, polls and sends until ctx ends.
func (r *Runtime) Run(ctx context.Context) error {
	r.pol = policy.NewIPCC(r.cfg.Policy)
	watched := r.cfg.Policy.Ifaces
	if len(watched) == 0 {
		watched = r.cfg.Capture
	}
	r.mu.Lock()
	r.snap = Snapshot{Started: time.Now(), Capture: r.cfg.Capture, Watched: watched}
	r.mu.Unlock()
	send, err := rawsock.Open(rawsock.Config{NoReceive: true})
	if err != nil {
		return fmt.Errorf("ipcc: CNP socket: %w", err)
	}
	defer send.Close()
	pkts := make(chan capPkt, 4096)
	var socks []*os.File
	defer func() {
		for _, s := range socks {
			s.Close()
		}
	}()
	for _, name := range r.cfg.Capture {
		f, err := openCapture(name)
		if err != nil {
			return fmt.Errorf("ipcc: capture on %s: %w", name, err)
		}
		socks = append(socks, f)
		go r.read(name, f, pkts)
	}
	r.log.Info("ipcc running", "capture", r.cfg.Capture, "watched", watched, "poll", r.cfg.Policy.Poll,
		"priorities", r.cfg.Policy.Prios.String())
	tick := time.NewTicker(r.cfg.Policy.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case c := <-pkts:
			r.observe(c)
		case now := <-tick.C:
			// The copies already queued were captured before this poll:
			// the poll sees them first (a loop that fell behind must not
			// take a flow whose packets wait here for a silent one).
			for n := len(pkts); n > 0; n-- {
				r.observe(<-pkts)
			}
			r.poll(now, watched, send)
		}
	}
}

// cnpSender is where CNPs go (a raw socket; tests use a fake).
type cnpSender interface{ Send(ip []byte) error }

// poll reads the watched queues, steps the policy and sends the CNPs it
// orders (in the loop).
func (r *Runtime) poll(now time.Time, watched []string, send cnpSender) {
	defer r.guard.Recover("ipcc poll", nil, nil)
	depth, err := r.depths(watched)
	if err != nil {
		r.setErr(err)
	}
	orders := r.pol.Step(now, depth)
	r.routes.sweep(now)
	var sent, fails uint64
	for _, o := range orders {
		r.sendID++
		if r.sendID == 0 {
			r.sendID = 1
		}
		cnp := rocev2.NewCNP(o.DestQP)
		fr := rocev2.Frame{Src: o.Src, Dst: o.Dst, TOS: o.DSCP << 2, TTL: 64, ID: r.sendID, DF: true,
			SrcPort: 0xC000 | uint16(o.DestQP&0x3FFF)}
		r.sendBuf = fr.Append(r.sendBuf[:0], &cnp)
		if err := send.Send(r.sendBuf); err != nil {
			fails++
			r.setErr(fmt.Errorf("ipcc: sending a CNP to %s: %w", o.Dst, err))
			continue
		}
		sent++
	}
	r.publish(now, sent, fails)
}

func (r *Runtime) setErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.snap.LastErr != err.Error() {
		r.log.Warn("ipcc", "err", err)
	}
	r.snap.LastErr = err.Error()
}

func (r *Runtime) publish(now time.Time, sent, fails uint64) {
	st := r.pol.Stats()
	var flows []policy.IPCCFlow
	if now.Sub(r.flowsAt) >= flowsEvery {
		flows, r.flowsAt = r.pol.RecentFlows(MaxSnapshotFlows), now
	}
	qs := r.pol.Queues()
	rs := r.routes.Stats()
	r.mu.Lock()
	r.snap.Stats, r.snap.Queues, r.snap.Routes = st, qs, rs
	if flows != nil {
		r.snap.Flows = flows
	}
	r.snap.Sent += sent
	r.snap.SendErrs += fails
	r.mu.Unlock()
}

// observe feeds one copied packet to the policy (in the loop).
func (r *Runtime) observe(c capPkt) {
	defer r.guard.Recover("ipcc observe", nil, nil)
	out, ok := r.routes.get(c.f.Dst, c.at)
	if !ok {
		r.mu.Lock()
		r.snap.NoRoute++
		r.mu.Unlock()
		return
	}
	p := &c.p
	r.pol.Observe(c.at, policy.IPCCPacket{Src: c.f.Src, Dst: c.f.Dst, DestQP: p.BTH.DestQP, PSN: p.BTH.PSN,
		AETH: p.HasAETH, CNP: p.BTH.Opcode == rocev2.CNP, In: c.iface, Out: out,
		Prio: int(r.cfg.DSCP[c.f.TOS>>2]), Size: c.size})
}

// routeGet asks the kernel which interface it routes dst through ("":
// none); the route cache keeps the answer.
func (r *Runtime) routeGet(dst netip.Addr) string {
	rs, err := netlink.RouteGet(dst.AsSlice())
	if err != nil || len(rs) == 0 {
		return ""
	}
	idx := rs[0].LinkIndex
	if n, ok := r.names[idx]; ok {
		return n
	}
	l, err := netlink.LinkByIndex(idx)
	if err != nil {
		return ""
	}
	// Interfaces are few (the node's own): this map stays small.
	r.names[idx] = l.Attrs().Name
	return l.Attrs().Name
}

// depths reads the backlog of the watched queues: HTB classes 1:1p.
func (r *Runtime) depths(ifaces []string) (map[policy.QueueKey]uint64, error) {
	out := map[policy.QueueKey]uint64{}
	var errs []error
	for _, name := range ifaces {
		link, err := netlink.LinkByName(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("ipcc: %s: %w", name, err))
			continue
		}
		classes, err := netlink.ClassList(link, netlink.MakeHandle(1, 0))
		if err != nil {
			errs = append(errs, fmt.Errorf("ipcc: %s: classes: %w", name, err))
			continue
		}
		for _, c := range classes {
			a := c.Attrs()
			maj, min := netlink.MajorMinor(a.Handle)
			if maj != 1 || min < 0x10 || min >= 0x10+model.NumPrio || a.Statistics == nil || a.Statistics.Queue == nil {
				continue
			}
			p := int(min - 0x10)
			if r.cfg.Policy.Prios.Has(p) {
				out[policy.QueueKey{Iface: name, Prio: p}] = uint64(a.Statistics.Queue.Backlog)
			}
		}
	}
	return out, errors.Join(errs...)
}

// read decodes what one capture socket copies.
func (r *Runtime) read(iface string, f *os.File, out chan<- capPkt) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	deliver := func(c capPkt) {
		select {
		case out <- c:
		default:
			r.mu.Lock()
			r.snap.Overflow++
			r.mu.Unlock()
		}
	}
	b := make([]byte, 9216)
	for {
		var n int
		var from unix.Sockaddr
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, from, rerr = unix.Recvfrom(int(fd), b, 0)
			return rerr != unix.EAGAIN
		})
		if err != nil {
			return // closed
		}
		if rerr != nil {
			continue
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		r.rx(iface, b[:n], time.Now(), deliver)
	}
}

// rx decodes one copied packet and delivers it to the loop; a panic in
// it costs that packet only.
func (r *Runtime) rx(iface string, b []byte, at time.Time, deliver func(capPkt)) {
	defer r.guard.Recover("ipcc rx", b, nil)
	c := capPkt{at: at, iface: iface, size: len(b)}
	if err := rocev2.DecodeIPInto(b, &c.f, &c.p); err != nil {
		r.reject(iface, err, b)
		return
	}
	// The packet's payload aliases b: IPCC keeps none of it.
	c.p.Payload = nil
	r.mu.Lock()
	r.snap.Captured++
	r.mu.Unlock()
	deliver(c)
}

// reject counts a bad packet and logs the first of its kind.
func (r *Runtime) reject(iface string, err error, b []byte) {
	k := r.counts.Add(err)
	r.saidMu.Lock()
	first := !r.said[k]
	r.said[k] = true
	r.saidMu.Unlock()
	if first {
		var off int
		var de *rocev2.DecodeError
		if errors.As(err, &de) {
			off = de.Offset
		}
		lo, hi := max(off-8, 0), min(off+8, len(b))
		r.log.Warn("ipcc: bad RoCEv2 packet dropped (counted; logged once per kind)", "interface", iface, "kind", k.String(),
			"err", err, "offset", off, "bytes", fmt.Sprintf("% x", b[lo:hi]))
	}
}

// openCapture opens an AF_PACKET socket on iface that copies the IPv4
// packets to UDP port 4791 (cooked: from the IP header), non-blocking
// for the runtime's poller.
func openCapture(iface string) (*os.File, error) {
	ifi, err := netlink.LinkByName(iface)
	if err != nil {
		return nil, err
	}
	// The filter goes on before the bind: nothing else is queued.
	s, err := packetsock.Open(&net.Interface{Index: ifi.Attrs().Index, Name: iface}, unix.ETH_P_IP, packetsock.Options{
		Type: unix.SOCK_DGRAM, RcvBuf: 4 << 20, Name: "ipcc-" + iface,
		Setup: func(fd int) error { return rawsock.Attach(fd, captureFilter()) }})
	if err != nil {
		return nil, err
	}
	return s.File(), nil
}

// captureFilter accepts UDP to port 4791 that is not a fragment.
//
//	A = IP protocol; != 17 -> drop
//	A = flags/fragment offset; offset != 0 -> drop
//	X = IP header length; A = UDP destination port; != 4791 -> drop
func captureFilter() []bpf.Instruction {
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: 9, Size: 1},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 17, SkipTrue: 6},
		bpf.LoadAbsolute{Off: 6, Size: 2},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1FFF, SkipTrue: 4},
		bpf.LoadMemShift{Off: 0},
		bpf.LoadIndirect{Off: 2, Size: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: rocev2.UDPPort, SkipFalse: 1},
		bpf.RetConstant{Val: 0x40000},
		bpf.RetConstant{Val: 0},
	}
}
