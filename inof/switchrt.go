package inof

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/bfd"
	bfdpkt "github.com/fared/fared/bfd/packet"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/inof/fabric"
	"github.com/fared/fared/inof/ibgp"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
	"github.com/fared/fared/inof/zones"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/netif"
)

// switchRT runs a switch or reflector: the fabric state machine on one
// loop goroutine, GoBGP, and two packet sockets per host-facing port (the
// iNOF protocol and LLDP).
type switchRT struct {
	log   *slog.Logger
	cfg   *Config
	rid   netip.Addr
	name  string
	lp    *loop.Loop
	sw    *fabric.Switch
	sp    *ibgp.Speaker // set before the loop runs
	spAPI atomic.Pointer[ibgp.Speaker]
	ports map[string][2]*port // name -> iNOF, LLDP
	guard *guard.Guard        // the module's (loop, readers)
	retry time.Time           // next attempt to open missing ports
	done  chan struct{}       // closed when the loop has stopped

	// BFD of the BGP sessions: the daemon's speaker (never GoBGP's own).
	bfdMgr   *bfd.Manager
	bfd      *bfd.Sessions
	bfdAt    time.Time            // next resolution of the neighbours' interfaces
	bfdWant  map[bfd.Key]bfd.Want // what the last resolution asked for
	bfdPeers map[netip.Addr]bool  // neighbours with a session asked for
	bfdWarn  map[netip.Addr]bool  // logged: BFD on, not directly connected
}

// post hands an event to the loop, or gives up once the loop has stopped
// (a blocked reader must be able to finish).
func post(done <-chan struct{}, lp *loop.Loop, ev any) {
	for !lp.TryPost(ev) {
		select {
		case <-done:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// Loop events.
type (
	frameEv struct {
		port string
		lldp bool
		b    []byte
	}
	bgpEv   struct{ ev ibgp.Event }
	bfdEv   struct{ ev bfd.Event }
	linkEv  struct{ ev netif.Event }
	readErr struct {
		port string
		err  error
	}
	zoneEv struct {
		add   bool
		req   zoneReq
		reply chan<- error
	}
	reconfEv struct {
		cfg   *Config
		reply chan<- []string
	}
)

type zoneReq struct {
	name  string
	hosts []string
}

func nonce() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := binary.BigEndian.Uint32(b[:])
	if n == 0 {
		n = 1
	}
	return n
}

func (c *Config) fabricConfig(rid netip.Addr, name string) fabric.Config {
	fc := fabric.Config{RouterID: rid, Name: name, Reflector: c.Role == RoleReflector, Zones: c.Zones, Stamp: c.Stamp,
		Ports: c.Interfaces, MinHold: c.MinHold, MaxHold: c.MaxHold, Retransmit: c.Retransmit, Window: c.Window,
		Tombstone: c.Tombstone, MaxHosts: c.MaxHosts}
	c.identityConfig(&fc)
	return fc
}

func (c *Config) ibgpConfig(rid netip.Addr, log *slog.Logger) ibgp.Config {
	ic := ibgp.Config{ASN: c.ASN, RouterID: rid, ListenPort: int32(c.Port), Reflector: c.Role == RoleReflector,
		ClusterID: c.ClusterID, HoldTime: c.Hold, ConnectRetry: c.Connect,
		GracefulRestart: c.GR, RestartTime: c.Restart, DeferralTime: c.Deferral,
		FlushDead: c.Role == RoleReflector, Logger: log}
	for _, n := range c.Neighbors {
		ic.Neighbors = append(ic.Neighbors, ibgp.Neighbor{Address: n.Address, LocalAddress: n.LocalAddress, Port: n.Port,
			Password: n.Password, BFD: n.BFD, TTLHops: uint8(n.TTLSecurity), Passive: n.Passive})
	}
	for _, f := range c.Filters {
		ic.Filters = append(ic.Filters, ibgp.Filter{Export: f.Direction == "export", Neighbors: f.Neighbors, Zones: f.Zones, Switches: f.Switches})
	}
	return ic
}

func newSwitchRT(log *slog.Logger, g *guard.Guard, cfg *Config, rid netip.Addr, name string, bm *bfd.Manager) *switchRT {
	r := &switchRT{log: log, cfg: cfg, rid: rid, name: name, lp: loop.New(4096), ports: map[string][2]*port{}, guard: g, done: make(chan struct{}),
		bfdMgr: bm, bfdPeers: map[netip.Addr]bool{}, bfdWarn: map[netip.Addr]bool{}}
	r.lp.Guard(g)
	return r
}

func (r *switchRT) run(ctx context.Context) error {
	now := time.Now()
	r.sw = fabric.New(r.cfg.fabricConfig(r.rid, r.name), r.log, r, r, nonce(), now)
	gl := r.log.With("component", "gobgp")
	defer close(r.done)
	sp, err := ibgp.Start(ctx, r.cfg.ibgpConfig(r.rid, gl), func(ev ibgp.Event) { post(r.done, r.lp, bgpEv{ev}) })
	if err != nil {
		return err
	}
	r.sp = sp
	r.spAPI.Store(sp)
	r.openPorts()
	r.lp.Run(ctx, 50*time.Millisecond, time.Now, r)
	if r.bfd != nil {
		r.bfd.Close() // peers hear AdminDown (RFC 5882 §3.2: not a failure)
	}
	for _, ps := range r.ports {
		for _, p := range ps {
			if p != nil {
				p.close()
			}
		}
	}
	if errors.Is(context.Cause(ctx), daemon.ErrShutdown) {
		// fared is exiting: the kernel closes the sessions with the
		// process, and the neighbours keep our records for the restart
		// time (graceful restart).
		sp.Abandon()
	} else {
		sp.Stop()
	}
	return nil
}

// openPorts opens the sockets of configured ports that exist and are not
// open yet (an interface may appear later: retried every second).
func (r *switchRT) openPorts() {
	want := map[string]bool{}
	for _, name := range r.cfg.Interfaces {
		want[name] = true
		if _, ok := r.ports[name]; ok {
			continue
		}
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			continue
		}
		a, err := openPort(ifi, l2.EtherType)
		if err != nil {
			r.log.Warn("inof: port", "port", name, "err", err)
			continue
		}
		var b *port
		if r.cfg.LLDP {
			if b, err = openPort(ifi, EtherTypeLLDP); err != nil {
				r.log.Warn("inof: LLDP on port", "port", name, "err", err)
			}
		}
		r.ports[name] = [2]*port{a, b}
		for i, p := range []*port{a, b} {
			if p == nil {
				continue
			}
			lldp := i == 1
			go p.read(r.guard, func(f []byte) { post(r.done, r.lp, frameEv{port: name, lldp: lldp, b: f}) },
				func(err error) { post(r.done, r.lp, readErr{name, err}) })
		}
	}
	for name, ps := range r.ports {
		if !want[name] {
			for _, p := range ps {
				if p != nil {
					p.close()
				}
			}
			delete(r.ports, name)
		}
	}
}

// Send implements fabric.Tx.
func (r *switchRT) Send(port string, dst net.HardwareAddr, m *l2.Message) {
	ps, ok := r.ports[port]
	if !ok || ps[0] == nil {
		return
	}
	f, err := l2.EncodeFrame(dst, ps[0].mac, m)
	if err != nil {
		r.log.Error("inof: encode", "port", port, "err", err)
		return
	}
	if err := ps[0].send(f); err != nil {
		r.log.Debug("inof: send", "port", port, "err", err)
	}
}

// Publish implements fabric.Exchange.
func (r *switchRT) Publish(add []record.Record, withdraw []record.Key) error {
	return r.sp.Publish(add, withdraw)
}

// Handle implements loop.Handler.
func (r *switchRT) Handle(ev any) {
	r.sw.SetNow(time.Now())
	switch ev := ev.(type) {
	case frameEv:
		if ev.lldp {
			h, err := l2.DecodeLLDP(ev.b, r.cfg.OUI)
			if err != nil {
				r.sw.BadLLDP(ev.port, err)
				return
			}
			r.sw.LLDP(ev.port, h)
			return
		}
		f, err := l2.DecodeFrame(ev.b)
		if err != nil {
			r.sw.BadFrame(ev.port, err)
			return
		}
		r.sw.Frame(ev.port, f.Src, &f.Message)
	case bgpEv:
		switch e := ev.ev.(type) {
		case ibgp.Update:
			r.sw.RecordUpdate(e.Key, e.Record)
		case ibgp.Withdraw:
			r.sw.RecordWithdraw(e.Key)
		case ibgp.Bad:
			r.sw.BadRecord(e.From, e.NLRI, e.Err)
		case ibgp.PeerChange:
			r.log.Info("inof: bgp session", "neighbor", e.Address, "state", e.State, "reason", e.Reason)
		}
	case bfdEv:
		r.onBFD(ev.ev)
	case linkEv:
		r.bfdAt = time.Time{} // interfaces moved: resolve the neighbours again
		switch ev.ev.Kind {
		case netif.LinkDown:
			r.sw.LinkDown(ev.ev.Name)
		case netif.LinkUp:
			r.openPorts()
		}
	case readErr:
		r.log.Error("inof: port reader stopped", "port", ev.port, "err", ev.err)
		for _, p := range r.ports[ev.port] {
			if p != nil {
				p.close()
			}
		}
		delete(r.ports, ev.port)
	case zoneEv:
		ev.reply <- r.zoneChange(ev.add, ev.req)
	case reconfEv:
		ev.reply <- r.reconfigure(ev.cfg)
	}
}

// Tick implements loop.Handler.
func (r *switchRT) Tick(now time.Time) {
	r.sw.Tick(now)
	r.bfdTick(now)
	if now.After(r.retry) {
		r.retry = now.Add(time.Second)
		if len(r.ports) < len(r.cfg.Interfaces) {
			r.openPorts()
		}
	}
}

// Settle implements loop.Handler.
func (r *switchRT) Settle(now time.Time) { r.sw.Settle(now) }

func (r *switchRT) zoneChange(add bool, q zoneReq) error {
	if r.cfg.Role != RoleReflector {
		return errNotReflector
	}
	cur, _, _, _ := r.sw.Zones()
	next := cur.Clone()
	if add {
		if _, err := next.Add(q.name, q.hosts...); err != nil {
			return badRequest(err)
		}
	} else if err := next.Remove(q.name, q.hosts...); err != nil {
		return notFoundOr(err)
	}
	return r.sw.SetZones(next, uint64(time.Now().UnixNano()))
}

// reconfigure applies a new section (Check accepted it) and says what
// changed.
func (r *switchRT) reconfigure(c *Config) []string {
	old := r.cfg
	var changed []string
	fc := c.fabricConfig(r.rid, r.name)
	if c.Role == RoleReflector {
		cur, _, _, _ := r.sw.Zones()
		if old.Zones.Equal(c.Zones) {
			// The file's zones did not change: keep the live ones
			// (edits through the API included).
			fc.Zones, fc.Stamp = cur, r.sw.Status().ZoneStamp
		} else {
			fc.Stamp = uint64(time.Now().UnixNano())
			changed = append(changed, "zones: replaced by the file's")
		}
	}
	r.sw.Reconfigure(fc)
	if err := r.sp.Reconfigure(context.Background(), c.ibgpConfig(r.rid, r.log)); err != nil {
		changed = append(changed, "neighbors/filters: "+err.Error())
	}
	r.cfg = c
	r.bfdAt = time.Time{} // neighbours or keys may have changed
	r.openPorts()
	return changed
}

var errNotReflector = fmt.Errorf("zones are changed on a reflector")

// zonesView converts the zone configuration for the API.
func zonesView(cfg *zones.Config, from netip.Addr, stamp uint64) []wire.INOFZone {
	var out []wire.INOFZone
	for _, n := range cfg.Names() {
		z := wire.INOFZone{Name: n, Members: append([]string{}, cfg.Zones[n]...), Default: n == zones.Default}
		if z.Default {
			z.AutoAdd = cfg.AutoAdd
		}
		if from.IsValid() {
			z.From, z.Stamp = from.String(), stamp
		}
		out = append(out, z)
	}
	return out
}

// BFD for the BGP sessions (RFC 5882 §4.3), with the daemon's one BFD
// speaker: a neighbour with bfd on and on a directly connected subnet
// gets a single-hop session (RFC 5881) on the interface toward it,
// shared with IS-IS or OSPF when they ask for the same peer. When the
// session goes from Up to Down (the peer not saying AdminDown), the BGP
// session is reset at once; ibgp's FlushDead (reflectors) watches the
// same states. The timers are the section's: min-tx and min-rx both
// become the session's interval (the larger: a session has one in each
// direction, and the larger honours both), with its multiplier and key
// chain.

// bfdTick resolves the neighbours' interfaces (every second, and at once
// after a link event or a reload) and asks the speaker for the sessions.
func (r *switchRT) bfdTick(now time.Time) {
	if r.bfdMgr == nil || now.Before(r.bfdAt) {
		return
	}
	r.bfdAt = now.Add(time.Second)
	want := map[bfd.Key]bfd.Want{}
	peers := map[netip.Addr]bool{}
	p := bfd.Params{Interval: max(r.cfg.BFDTx, r.cfg.BFDRx), Multiplier: r.cfg.BFDMult, Auth: r.cfg.BFDAuth}
	for _, n := range r.cfg.Neighbors {
		if !n.BFD {
			continue
		}
		k, w, err := bfdPeer(n)
		if err != nil {
			if !r.bfdWarn[n.Address] {
				r.bfdWarn[n.Address] = true
				r.log.Warn("inof: no BFD for this neighbour: single-hop BFD needs a directly connected one", "neighbor", n.Address, "err", err)
			}
			continue
		}
		delete(r.bfdWarn, n.Address)
		w.Params = p
		want[k] = w
		peers[n.Address] = true
	}
	if r.bfd == nil {
		if len(want) == 0 {
			return
		}
		r.bfd = bfd.NewSessions(r.bfdMgr, "inof", r.log, func(ev bfd.Event) { post(r.done, r.lp, bfdEv{ev}) })
	}
	for a := range r.bfdPeers {
		if !peers[a] {
			r.sp.SetBFD(a, "")
		}
	}
	r.bfdPeers = peers
	r.bfdWant = want
	r.bfd.Sync(want)
}

// bfdPeer finds the session of a neighbour: the interface its address is
// directly reachable on, from the neighbour's local address (else the
// kernel's source for it).
func bfdPeer(n Neighbor) (bfd.Key, bfd.Want, error) {
	rs, err := netlink.RouteGet(n.Address.AsSlice())
	if err != nil {
		return bfd.Key{}, bfd.Want{}, err
	}
	if len(rs) == 0 {
		return bfd.Key{}, bfd.Want{}, errors.New("no route")
	}
	rt := rs[0]
	if rt.Gw != nil {
		return bfd.Key{}, bfd.Want{}, fmt.Errorf("reached through %s", rt.Gw)
	}
	ifi, err := net.InterfaceByIndex(rt.LinkIndex)
	if err != nil {
		return bfd.Key{}, bfd.Want{}, err
	}
	local := n.LocalAddress
	if !local.IsValid() {
		local, _ = netip.AddrFromSlice(rt.Src)
		local = local.Unmap()
	}
	return bfd.Key{IfIndex: rt.LinkIndex, Peer: n.Address}, bfd.Want{Local: local, Iface: ifi.Name}, nil
}

// onBFD follows a session's state (the peers view and FlushDead read it)
// and resets the BGP session when BFD failed.
func (r *switchRT) onBFD(e bfd.Event) {
	if _, ok := r.bfdWant[e.Key]; !ok || r.bfd == nil {
		return // a session no longer wanted
	}
	r.sp.SetBFD(e.Key.Peer, bfdStateName(e.State))
	if !r.bfd.Failed(e) {
		return
	}
	r.log.Warn("inof: BFD session down: resetting the BGP session", "neighbor", e.Key.Peer, "diag", e.Diag.String())
	sp := r.sp
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sp.BFDDown(ctx, e.Key.Peer); err != nil {
			r.log.Debug("inof: reset after BFD down", "neighbor", e.Key.Peer, "err", err)
		}
	}()
}

func bfdStateName(s bfdpkt.State) string {
	switch s {
	case bfdpkt.Up:
		return "up"
	case bfdpkt.Init:
		return "init"
	case bfdpkt.AdminDown:
		return "admin-down"
	}
	return "down"
}
