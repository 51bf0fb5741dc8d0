package inc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/inc/aggregator"
	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/rocev2"
)

// dataPlane is an INC switch: a raw socket in the daemon's namespace that
// takes INC packets addressed to this switch (one kernel-filtered QP per
// tree), the aggregator, and the session with the manager.
type dataPlane struct {
	log     *slog.Logger
	host    string
	addr    netip.Addr
	manager string
	lim     aggregator.Limits

	configs chan applyReq                  // manager session → data plane
	view    atomic.Pointer[wire.INCSwitch] // data plane → API, every 250 ms
	reg     atomic.Bool
	// tls is this switch's certificate and the CA that signs the
	// manager's (nil: plaintext, to a manager on loopback). A reload
	// replaces it; the next session uses it.
	tls atomic.Pointer[auth.Material]

	// The data plane's receive path recovers panics through the module's
	// guard (the same counter as core.Guard("inc")).
	guard *guard.Guard
	// routesMoved: the kernel's routes changed, the ingress sets must be
	// read again (fib.WatchRoutes → data plane).
	routesMoved chan struct{}
	// ingressOff turns the ingress check off (inc.ingress-check: off;
	// a reload changes it).
	ingressOff atomic.Bool
	// pkey is the P_Key of the data plane's QPs (inc.p-key).
	pkey uint16
}

// ingressState is the data plane's ingress check: the interface sets of
// its trees' peers, read from the kernel's routes.
type ingressState struct {
	sets    map[netip.Addr][]int
	peers   int
	read    time.Time // when sets were read
	err     error     // last failure to read them
	dirty   bool      // routes moved since
	errSeen bool      // err logged
}

// Ingress refresh: at most every ingressMinGap after a route change, and
// every ingressEvery anyway (a missed notification, a route the kernel
// changed without telling).
const (
	ingressMinGap = 200 * time.Millisecond
	ingressEvery  = 5 * time.Second
)

type applyReq struct {
	cfg   *protos.SwitchConfig
	reply chan error
}

func newDataPlane(log *slog.Logger, host string, c *Config, addr netip.Addr) *dataPlane {
	d := &dataPlane{log: log, host: host, addr: addr, manager: c.Manager,
		lim:     aggregator.Limits{MaxTrees: c.Trees, MaxSlots: c.Slots, MaxRanks: c.Ranks, MaxPayload: c.MaxPayload},
		configs: make(chan applyReq), guard: guard.New("inc", log), routesMoved: make(chan struct{}, 1)}
	d.ingressOff.Store(c.IngressCheck == IngressOff)
	d.pkey = cmp.Or(c.PKey, rocev2.DefaultPKey)
	d.view.Store(&wire.INCSwitch{Address: addr.String(), Manager: c.Manager, Trees: []wire.INCSwitchTree{}, Bad: map[string]uint64{}})
	return d
}

// run runs the data plane and the manager session until ctx ends.
func (d *dataPlane) run(ctx context.Context) error {
	// QP 0 is never used: nothing until the first tree. WithIngress: the
	// interface each packet came in on, for the ingress check.
	ep, err := transport.Open(d.addr, []uint32{0}, transport.WithIngress())
	if err != nil {
		return fmt.Errorf("inc data plane on %s: %w", d.addr, err)
	}
	defer ep.Close()
	ep.SetPKey(d.pkey)
	go d.session(ctx)
	go d.watchRoutes(ctx)
	return d.forward(ctx, ep)
}

// watchRoutes tells the data plane when the kernel's routes move (the
// ingress sets follow them). Without notifications the data plane still
// reads them every ingressEvery.
func (d *dataPlane) watchRoutes(ctx context.Context) {
	err := fib.WatchRoutes(ctx, 0, func() {
		select {
		case d.routesMoved <- struct{}{}:
		default:
		}
	})
	if err != nil {
		d.log.Warn("inc: route notifications failed; the ingress check reads routes every "+ingressEvery.String(), "error", err)
	}
}

// setIngressCheck applies inc.ingress-check from a reload: the data plane
// takes it at its next refresh (within ingressMinGap).
func (d *dataPlane) setIngressCheck(mode string) {
	d.ingressOff.Store(mode == IngressOff)
	select {
	case d.routesMoved <- struct{}{}:
	default:
	}
}

// refreshIngress reads the interface sets of every tree peer from the
// kernel and hands them to the aggregator. On failure the previous sets
// stay (a peer new since then has none: its packets are refused until a
// read succeeds, which is strict RPF's answer to "no route").
func (d *dataPlane) refreshIngress(sw *aggregator.Switch, st *ingressState) {
	if d.ingressOff.Load() {
		st.read, st.dirty, st.sets, st.err = time.Now(), false, nil, nil
		sw.SetIngress(nil) // every interface is allowed
		return
	}
	peers := sw.Peers()
	sets, err := fib.Interfaces(0, peers)
	st.read, st.dirty, st.peers = time.Now(), false, len(peers)
	if err != nil {
		st.err = err
		if !st.errSeen {
			st.errSeen = true
			d.log.Warn("inc: cannot read the routes for the ingress check; keeping the previous interface sets", "error", err)
		}
		if st.sets == nil {
			st.sets = map[netip.Addr][]int{}
			sw.SetIngress(st.sets)
		}
		return
	}
	st.err, st.errSeen, st.sets = nil, false, sets
	sw.SetIngress(sets)
}

// forward is the data plane goroutine. It owns the aggregator; it is
// locked to its thread so its CPU time can be read (RUSAGE_THREAD).
func (d *dataPlane) forward(ctx context.Context, ep *transport.Endpoint) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sw := aggregator.New(d.lim)
	sw.SetPKey(d.pkey)
	ing := &ingressState{}
	d.refreshIngress(sw, ing) // the check is on from the start, before any tree
	var version uint64
	var lastErr string
	publish := time.Now()
	var logged time.Time
	refusedLogged := map[aggregator.Reason]bool{}
	for ctx.Err() == nil {
		select {
		case req := <-d.configs:
			err := d.apply(sw, ep, req.cfg)
			if err == nil {
				version, lastErr = req.cfg.Version, ""
				d.refreshIngress(sw, ing) // new peers: their sets before their first packet
			} else {
				lastErr = err.Error()
			}
			req.reply <- err
		case <-d.routesMoved:
			ing.dirty = true
		default:
		}
		if since := time.Since(ing.read); ing.dirty && since >= ingressMinGap || since >= ingressEvery {
			d.refreshIngress(sw, ing)
		}
		p, err := ep.Recv(time.Now().Add(100 * time.Millisecond))
		if err != nil && !errors.Is(err, transport.ErrTimeout) {
			if retry, closed := loop.ReadResult(err); !retry {
				if closed {
					return nil
				}
				return fmt.Errorf("inc data plane: %w", err)
			}
		}
		for p != nil {
			d.handle(sw, ep, p, refusedLogged, &logged)
			p = ep.TryRecv()
		}
		if ep.LastBad != nil && time.Since(logged) > 10*time.Second {
			logged = time.Now()
			d.log.Warn("inc: bad packet", "error", ep.LastBad)
			ep.LastBad = nil
		}
		if time.Since(publish) > 250*time.Millisecond {
			publish = time.Now()
			d.publish(sw, ep, version, lastErr, ing)
		}
	}
	return nil
}

// handle runs one received packet through the aggregator and sends what
// it answers. A panic is recovered through the module's guard: the packet
// is dropped, the data plane goes on.
func (d *dataPlane) handle(sw *aggregator.Switch, ep *transport.Endpoint, p *packet.Parsed, refusedLogged map[aggregator.Reason]bool, logged *time.Time) {
	defer d.guard.Recover("data plane rx", ep.Raw(), nil)
	outs, herr := sw.Handle(p)
	if r := aggregator.ReasonOf(herr); r != aggregator.ReasonNone {
		// A forged or misdirected packet: counted under bad_packets by the
		// aggregator, logged once per reason (a flood must not flood the
		// log). The key is never logged.
		if !refusedLogged[r] {
			refusedLogged[r] = true
			d.log.Warn("inc: packet refused by the data plane's checks; dropped", "reason", r.String(), "from", p.Frame.Src,
				"qp", p.RoCE.BTH.DestQP, "tree", p.Hdr.Tree, "rank", p.Hdr.Rank, "result", p.Hdr.IsResult(), "ifindex", p.IfIndex,
				"note", "logged once per reason; counted under bad_packets."+r.String())
		}
	} else if herr != nil && time.Since(*logged) > 10*time.Second {
		*logged = time.Now()
		d.log.Debug("inc packet refused", "from", p.Frame.Src, "qp", p.RoCE.BTH.DestQP, "error", herr)
	}
	for i := range outs {
		o := &outs[i]
		if o.NACK {
			ep.SendNACK(o.To.Addr, o.To.QP, o.Cum, o.Trig)
		} else {
			ep.SendINC(o.To.Addr, &o.Data)
		}
	}
}

func (d *dataPlane) apply(sw *aggregator.Switch, ep *transport.Endpoint, c *protos.SwitchConfig) error {
	trees := make([]aggregator.TreeConfig, 0, len(c.Trees))
	for _, t := range c.Trees {
		tc, err := treeConfig(t)
		if err != nil {
			return err
		}
		trees = append(trees, tc)
	}
	if err := sw.SetTrees(trees); err != nil {
		return err
	}
	qps := sw.QPs()
	if len(qps) == 0 {
		qps = []uint32{0}
	}
	return ep.SetQPs(qps)
}

// treeConfig converts (and checks) a tree from the manager.
func treeConfig(t *protos.SwitchTree) (aggregator.TreeConfig, error) {
	if t.TreeId == 0 || t.TreeId > 0xFFFF {
		return aggregator.TreeConfig{}, fmt.Errorf("tree id %d", t.TreeId)
	}
	c := aggregator.TreeConfig{ID: uint16(t.TreeId), QP: t.Qpn, RKey: t.Rkey, Slots: int(t.Slots), Root: t.Root, Ordered: t.Ordered,
		ParentRank: uint16(t.ParentRank)}
	if !t.Root {
		a, err := netip.ParseAddr(t.GetParent().GetAddress())
		if err != nil {
			return c, fmt.Errorf("tree %d: parent address %q", t.TreeId, t.GetParent().GetAddress())
		}
		c.Parent = aggregator.Peer{Addr: a, QP: t.Parent.Qpn}
	}
	for i, ch := range t.Children {
		a, err := netip.ParseAddr(ch.Address)
		if err != nil {
			return c, fmt.Errorf("tree %d: child %d address %q", t.TreeId, i, ch.Address)
		}
		c.Children = append(c.Children, aggregator.Child{Peer: aggregator.Peer{Addr: a, QP: ch.Qpn}, Client: ch.Client})
	}
	return c, nil
}

func (d *dataPlane) publish(sw *aggregator.Switch, ep *transport.Endpoint, version uint64, lastErr string, ing *ingressState) {
	trees, tot := sw.Stats()
	v := &wire.INCSwitch{Address: d.addr.String(), Manager: d.manager, Registered: d.reg.Load(), Version: version, Error: lastErr,
		Totals: counters(tot), Trees: []wire.INCSwitchTree{}, Bad: ep.Bad.Map(), Unknown: sw.Unknown}
	for k, n := range ep.BadINC {
		v.Bad["inc_"+k] = n
	}
	for k, n := range tot.Refusals() {
		v.Bad[k] = n
	}
	v.Ingress = wire.INCIngress{Enabled: !d.ingressOff.Load(), Peers: ing.peers, AgeMS: time.Since(ing.read).Milliseconds()}
	if ing.err != nil {
		v.Ingress.Error = ing.err.Error()
	}
	for _, a := range sw.Peers() {
		if v.Ingress.Enabled && len(ing.sets[a]) == 0 {
			v.Ingress.Unrouted = append(v.Ingress.Unrouted, a.String())
		}
	}
	for _, t := range trees {
		role := "leaf"
		if t.Root {
			role = "root"
		}
		v.SlotsInUse += t.SlotsInUse
		wt := wire.INCSwitchTree{TreeID: t.ID, QP: t.QP, Role: role, Children: t.Children, Slots: t.Slots,
			SlotsInUse: t.SlotsInUse, Counters: counters(t.Counters)}
		for _, b := range t.Busy {
			wt.Busy = append(wt.Busy, wire.INCSlot{Slot: b.Slot, State: b.State, Msg: b.Msg, Arrived: b.Arrived, Missing: b.Missing, Shadow: b.Shadow})
		}
		v.Trees = append(v.Trees, wt)
	}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) == nil {
		v.CPU = &wire.INCSwitchCPU{Seconds: float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9}
	}
	d.view.Store(v)
}

func counters(c aggregator.Counters) wire.INCSwitchCounters {
	return wire.INCSwitchCounters{Packets: c.Packets, Completed: c.Completed, Results: c.Results, Partials: c.Partials,
		Duplicates: c.Duplicates, Served: c.Served, PartialResends: c.PartialResends, DupResults: c.DupResults, NACKs: c.NACKs,
		Stale: c.Stale, Unexpected: c.Unexpected, Mismatch: c.Mismatch, BadRank: c.BadRank, BadQP: c.BadQP, BadRKey: c.BadRKey,
		BadSource: c.BadSource, BadIngress: c.BadIngress, BadPKey: c.BadPKey}
}

// session keeps a session with the manager: register, apply each config
// it sends, report status every second. It reconnects until ctx ends.
func (d *dataPlane) session(ctx context.Context) {
	var last string
	for ctx.Err() == nil {
		err := d.sessionOnce(ctx)
		if d.reg.Swap(false) {
			last = "" // a session that worked: its end is news
		}
		if ctx.Err() != nil {
			return
		}
		// A refusal (a certificate the manager does not accept) repeats
		// every second: logged when it changes.
		if msg := fmt.Sprint(err); msg != last {
			last = msg
			d.log.Warn("inc: manager session ended, retrying every second", "manager", d.manager, "error", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (d *dataPlane) sessionOnce(ctx context.Context) error {
	creds := insecure.NewCredentials()
	if m := d.tls.Load(); m != nil {
		// Mutual TLS: the manager's certificate must chain to the CA, and
		// ours names this router (the manager checks it against its LSDB).
		creds = credentials.NewTLS(auth.SwitchConfig(m))
	}
	conn, err := grpc.NewClient(d.manager, grpc.WithTransportCredentials(creds),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: time.Second, Timeout: 2 * time.Second, PermitWithoutStream: true}))
	if err != nil {
		return err
	}
	defer conn.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := protos.NewManagerClient(conn).SwitchSession(sctx)
	if err != nil {
		return err
	}
	host := d.host
	dts := []string{packet.FP16.String(), packet.FP32.String(), packet.FP64.String()}
	ops := []string{packet.Sum.String(), packet.Min.String(), packet.Max.String()}
	if err := stream.Send(&protos.SwitchMessage{Msg: &protos.SwitchMessage_Register{Register: &protos.SwitchRegister{
		NodeId: host, Address: d.addr.String(), MaxTrees: uint32(d.lim.MaxTrees), MaxSlots: uint32(d.lim.MaxSlots),
		MaxRanks: uint32(d.lim.MaxRanks), MaxPayload: uint32(d.lim.MaxPayload), Dtypes: dts, Ops: ops}}}); err != nil {
		if errors.Is(err, io.EOF) { // the manager refused the session: Recv has its status
			_, err = stream.Recv()
		}
		return err
	}
	cfgs := make(chan *protos.SwitchConfig)
	errc := make(chan error, 1)
	go func() {
		for {
			c, err := stream.Recv()
			if err != nil {
				errc <- err
				return
			}
			select {
			case cfgs <- c:
			case <-sctx.Done():
				return
			}
		}
	}()
	status := func(applied uint64, e string) error {
		v := d.view.Load()
		return stream.Send(&protos.SwitchMessage{Msg: &protos.SwitchMessage_Status{Status: &protos.SwitchStatus{
			AppliedVersion: applied, Error: e, Packets: v.Totals.Packets, Duplicates: v.Totals.Duplicates,
			Served: v.Totals.Served, SlotsInUse: uint32(v.SlotsInUse)}}})
	}
	var applied uint64
	var lastErr string
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return err
		case c := <-cfgs:
			d.reg.Store(true)
			req := applyReq{cfg: c, reply: make(chan error, 1)}
			select {
			case d.configs <- req:
			case <-ctx.Done():
				return nil
			}
			if err := <-req.reply; err != nil {
				d.log.Warn("inc: refused the manager's config", "version", c.Version, "error", err)
				lastErr = err.Error()
			} else {
				applied, lastErr = c.Version, ""
				d.log.Info("inc: trees applied", "version", c.Version, "trees", len(c.Trees))
			}
			if err := status(applied, lastErr); err != nil {
				return err
			}
		case <-tick.C:
			d.reg.Store(true)
			if err := status(applied, lastErr); err != nil {
				return err
			}
		}
	}
}
