package inc

import (
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
	"github.com/fared/fared/inc/aggregator"
	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/internal/loop"
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
}

type applyReq struct {
	cfg   *protos.SwitchConfig
	reply chan error
}

func newDataPlane(log *slog.Logger, host string, c *Config, addr netip.Addr) *dataPlane {
	d := &dataPlane{log: log, host: host, addr: addr, manager: c.Manager,
		lim:     aggregator.Limits{MaxTrees: c.Trees, MaxSlots: c.Slots, MaxRanks: c.Ranks, MaxPayload: c.MaxPayload},
		configs: make(chan applyReq)}
	d.view.Store(&wire.INCSwitch{Address: addr.String(), Manager: c.Manager, Trees: []wire.INCSwitchTree{}, Bad: map[string]uint64{}})
	return d
}

// run runs the data plane and the manager session until ctx ends.
func (d *dataPlane) run(ctx context.Context) error {
	ep, err := transport.Open(d.addr, []uint32{0}) // QP 0 is never used: nothing until the first tree
	if err != nil {
		return fmt.Errorf("inc data plane on %s: %w", d.addr, err)
	}
	defer ep.Close()
	go d.session(ctx)
	return d.forward(ctx, ep)
}

// forward is the data plane goroutine. It owns the aggregator; it is
// locked to its thread so its CPU time can be read (RUSAGE_THREAD).
func (d *dataPlane) forward(ctx context.Context, ep *transport.Endpoint) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sw := aggregator.New(d.lim)
	var version uint64
	var lastErr string
	publish := time.Now()
	var logged time.Time
	for ctx.Err() == nil {
		select {
		case req := <-d.configs:
			err := d.apply(sw, ep, req.cfg)
			if err == nil {
				version, lastErr = req.cfg.Version, ""
			} else {
				lastErr = err.Error()
			}
			req.reply <- err
		default:
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
			outs, herr := sw.Handle(p)
			if herr != nil && time.Since(logged) > 10*time.Second {
				logged = time.Now()
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
			p = ep.TryRecv()
		}
		if ep.LastBad != nil && time.Since(logged) > 10*time.Second {
			logged = time.Now()
			d.log.Warn("inc: bad packet", "error", ep.LastBad)
			ep.LastBad = nil
		}
		if time.Since(publish) > 250*time.Millisecond {
			publish = time.Now()
			d.publish(sw, ep, version, lastErr)
		}
	}
	return nil
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

func (d *dataPlane) publish(sw *aggregator.Switch, ep *transport.Endpoint, version uint64, lastErr string) {
	trees, tot := sw.Stats()
	v := &wire.INCSwitch{Address: d.addr.String(), Manager: d.manager, Registered: d.reg.Load(), Version: version, Error: lastErr,
		Totals: counters(tot), Trees: []wire.INCSwitchTree{}, Bad: ep.Bad.Map(), Unknown: sw.Unknown}
	for k, n := range ep.BadINC {
		v.Bad["inc_"+k] = n
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
		Stale: c.Stale, Unexpected: c.Unexpected, Mismatch: c.Mismatch, BadRank: c.BadRank}
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
