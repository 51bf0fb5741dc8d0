// Package ibgp carries iNOF records between switches with GoBGP v4
// embedded as a library: IBGP with route reflection, graceful restart,
// BFD, TCP MD5 and GTSM, and routing policy on zones and switches.
//
// BFD is fared's (the daemon's one BFD speaker; the caller runs the
// sessions and reports them with SetBFD and BFDDown), never GoBGP's
// built-in one: two BFD speakers in one process would both claim UDP
// 3784 and answer each other's packets (issue 25).
//
// A record is a VPNv6 route (AFI 2, SAFI 128): the RD is type 1 with the
// originating switch's router id and the record's kind, the prefix is the
// record id as a /128, and the record itself is path attribute 255
// (package record). GoBGP's opaque key-value family is not used: in
// v4.8.0 it merges the values of records that share an UPDATE and
// withdraws only one key of a batch. VPN NLRI are self-delimiting, so
// any number of them survive one UPDATE.
package ibgp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	api "github.com/osrg/gobgp/v4/api"
	"github.com/osrg/gobgp/v4/pkg/apiutil"
	"github.com/osrg/gobgp/v4/pkg/packet/bgp"
	"github.com/osrg/gobgp/v4/pkg/server"

	"github.com/fared/fared/inof/record"
)

// Family is the address family records travel in.
var Family = bgp.RF_IPv6_VPN

// Config is one speaker.
type Config struct {
	ASN      uint32
	RouterID netip.Addr
	// ListenPort is the BGP port (179 when 0); tests use high ports.
	ListenPort int32
	// ListenAddresses restricts the listener (default: all).
	ListenAddresses []string
	// Reflector makes every neighbour a route-reflector client; ClusterID
	// must then be set, and be the same on redundant reflectors.
	Reflector bool
	ClusterID netip.Addr
	Neighbors []Neighbor

	HoldTime     time.Duration // default 9s
	Keepalive    time.Duration // default HoldTime/3
	ConnectRetry time.Duration // default 1s

	// GracefulRestart: a helper keeps a restarting neighbour's records
	// stale for RestartTime (whole seconds, 1..4095); a speaker that
	// starts announces itself as restarting so its helpers keep its
	// records until it has sent them again.
	GracefulRestart bool
	RestartTime     time.Duration
	DeferralTime    time.Duration // wait for every neighbour's End-of-RIB at most this long (default 5s)

	// Filters reject records by zone or switch (routing policy).
	Filters []Filter

	// FlushDead (reflectors): when a session with BFD up goes down and
	// BFD follows within DeadWindow, the neighbour is dead, not
	// restarting: its records are dropped at once instead of being kept
	// stale for the restart time. (GoBGP keeps them when the TCP session
	// dies first, as a killed process's does.)
	FlushDead  bool
	DeadWindow time.Duration // default 2s

	Logger *slog.Logger
}

// Neighbor is one IBGP session.
type Neighbor struct {
	Address      netip.Addr
	LocalAddress netip.Addr // optional source address
	Port         uint16     // remote port, 179 when 0
	Password     string     // TCP MD5 (RFC 2385)
	BFD          bool
	// TTLHops enables GTSM (RFC 5082): packets are sent with TTL 255 and
	// only those that arrive with TTL > 255-TTLHops are accepted. 0 = off.
	TTLHops uint8
	Passive bool
}

// Filter rejects records in one direction: import (received) or export
// (sent). A record matches when it carries one of Zones (or one of
// Switches), and, if Neighbors is set, comes from (import) or goes to
// (export) one of them.
type Filter struct {
	Export    bool
	Neighbors []netip.Addr
	Zones     []string
	Switches  []netip.Addr
}

func (c *Config) defaults() {
	c.HoldTime = cmp.Or(c.HoldTime, 9*time.Second)
	c.Keepalive = cmp.Or(c.Keepalive, c.HoldTime/3)
	c.ConnectRetry = cmp.Or(c.ConnectRetry, time.Second)
	c.RestartTime = cmp.Or(c.RestartTime, 5*time.Second)
	c.DeferralTime = cmp.Or(c.DeferralTime, 5*time.Second)
	c.DeadWindow = cmp.Or(c.DeadWindow, 2*time.Second)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Event is what the speaker reports: Update, Withdraw, Bad, PeerChange.
type Event any

// Update: the best route of a record is new or changed.
type Update struct {
	Key    record.Key
	Record record.Record
	// From is the neighbour it came from; invalid for our own records.
	From netip.Addr
}

// Withdraw: no route of the record is left.
type Withdraw struct{ Key record.Key }

// Bad: a route in our family that is not a valid record (malformed
// attribute, key mismatch). It is ignored; nothing else is lost.
type Bad struct {
	From netip.Addr
	NLRI string
	Err  error
}

// PeerChange: a session changed state.
type PeerChange struct {
	Address netip.Addr
	State   string // idle, connect, active, opensent, openconfirm, established
	Reason  string
}

// Speaker is a running GoBGP server speaking for one switch.
type Speaker struct {
	s   *server.BgpServer
	cfg Config // neighbours and filters change under mu (Reconfigure)

	established map[netip.Addr]bool // event goroutine only

	bfdMu  sync.Mutex
	bfdSes map[netip.Addr]string // BFD state per neighbour (SetBFD)

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Start starts GoBGP, its neighbours and policies, and the watcher that
// calls events (from one goroutine, in order) for every change of the
// best routes and of the sessions.
func Start(ctx context.Context, cfg Config, events func(Event)) (*Speaker, error) {
	cfg.defaults()
	if !cfg.RouterID.Is4() {
		return nil, fmt.Errorf("ibgp: router id %v is not IPv4", cfg.RouterID)
	}
	if cfg.Reflector && !cfg.ClusterID.Is4() {
		return nil, errors.New("ibgp: a reflector needs an IPv4 cluster id")
	}
	lvl := new(slog.LevelVar)
	lvl.Set(slog.LevelInfo)
	// GoBGP's debug output (every connect attempt, every BFD packet it
	// cannot send) would drown fared's own: info and above only.
	gl := slog.New(minLevel{cfg.Logger.Handler(), lvl})
	s := server.NewBgpServer(server.LoggerOption(gl, lvl))
	go s.Serve()
	port := cfg.ListenPort
	if port == 0 {
		port = bgp.BGP_PORT
	}
	g := &api.Global{Asn: cfg.ASN, RouterId: cfg.RouterID.String(), ListenPort: port, ListenAddresses: cfg.ListenAddresses}
	if cfg.GracefulRestart {
		g.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: grSeconds(cfg.RestartTime), DeferralTime: grSeconds(cfg.DeferralTime)}
	}
	if err := s.StartBgp(ctx, &api.StartBgpRequest{Global: g}); err != nil {
		s.Stop()
		return nil, fmt.Errorf("ibgp: start: %w", err)
	}
	sp := &Speaker{s: s, cfg: cfg, done: make(chan struct{}), established: map[netip.Addr]bool{}, bfdSes: map[netip.Addr]string{}}
	wctx, cancel := context.WithCancel(context.Background())
	sp.cancel = cancel
	ch := make(chan Event, 1024)
	// GoBGP calls back from its watcher goroutine; a goroutine of ours
	// hands the events on, so a slow consumer never stalls GoBGP's
	// watcher (whose queue is unbounded) and events keep their order.
	err := s.WatchEvent(wctx, server.WatchEventMessageCallbacks{
		OnBestPath: func(paths []*apiutil.Path, _ time.Time) {
			for _, p := range paths {
				if ev := pathEvent(p); ev != nil {
					ch <- ev
				}
			}
		},
		OnPeerUpdate: func(pe *apiutil.WatchEventMessage_PeerEvent, _ time.Time) {
			if pe.Type != apiutil.PEER_EVENT_STATE {
				return
			}
			ch <- PeerChange{Address: pe.Peer.State.NeighborAddress, State: stateName(pe.Peer.State.SessionState),
				Reason: pe.Peer.State.DisconnectMessage}
		},
	}, server.WatchBestPath(true), server.WatchPeer())
	if err != nil {
		cancel()
		s.Stop()
		return nil, fmt.Errorf("ibgp: watch: %w", err)
	}
	go func() {
		defer close(sp.done)
		for {
			select {
			case ev := <-ch:
				if pc, ok := ev.(PeerChange); ok {
					sp.sessionChange(pc)
				}
				events(ev)
			case <-wctx.Done():
				return
			}
		}
	}()
	if err := sp.setPolicies(ctx, cfg.Filters); err != nil {
		sp.Stop()
		return nil, err
	}
	for _, n := range cfg.Neighbors {
		if err := s.AddPeer(ctx, &api.AddPeerRequest{Peer: sp.peer(n)}); err != nil {
			sp.Stop()
			return nil, fmt.Errorf("ibgp: neighbor %s: %w", n.Address, err)
		}
	}
	return sp, nil
}

func grSeconds(d time.Duration) uint32 {
	s := (d + time.Second - 1) / time.Second
	return uint32(min(max(s, 1), 4095))
}

// minLevel drops records below a level.
type minLevel struct {
	slog.Handler
	min slog.Leveler
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min.Level() && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}

// Stop ends the speaker: every neighbour gets a NOTIFICATION and drops
// our records at once (iNOF is being deconfigured).
func (sp *Speaker) Stop() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.cancel == nil {
		return
	}
	sp.s.Stop() // StopBgp with notifications
	sp.cancel()
	<-sp.done
	sp.cancel = nil
}

// Abandon stops reporting events and leaves the sessions as they are, for
// a process about to exit: the kernel then closes every session at once,
// without a NOTIFICATION, and the neighbours keep our records for the
// restart time (graceful restart). GoBGP's own graceful stop deletes
// neighbours one by one and withdraws each one's records from the
// others, which a restarting reflector must not do.
func (sp *Speaker) Abandon() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.cancel == nil {
		return
	}
	sp.cancel()
	<-sp.done
	sp.cancel = nil
}

func (sp *Speaker) peer(n Neighbor) *api.Peer {
	c := sp.cfg
	p := &api.Peer{
		Conf: &api.PeerConf{NeighborAddress: n.Address.String(), PeerAsn: c.ASN, LocalAsn: c.ASN, AuthPassword: n.Password},
		Timers: &api.Timers{Config: &api.TimersConfig{
			HoldTime:          uint64(max(c.HoldTime/time.Second, 3)),
			KeepaliveInterval: uint64(max(c.Keepalive/time.Second, 1)),
			ConnectRetry:      uint64(max(c.ConnectRetry/time.Second, 1)),
			// GoBGP waits 30 s by default before reconnecting after a
			// reset; an iNOF switch wants its session back at once.
			IdleHoldTimeAfterReset: uint64(max(c.ConnectRetry/time.Second, 1)),
		}},
		Transport: &api.Transport{PassiveMode: n.Passive, RemotePort: uint32(n.Port)},
		AfiSafis: []*api.AfiSafi{{
			Config: &api.AfiSafiConfig{Family: &api.Family{Afi: api.Family_AFI_IP6, Safi: api.Family_SAFI_MPLS_VPN}, Enabled: true},
		}},
	}
	if n.LocalAddress.IsValid() {
		p.Transport.LocalAddress = n.LocalAddress.String()
	}
	if c.Reflector {
		p.RouteReflector = &api.RouteReflector{RouteReflectorClient: true, RouteReflectorClusterId: c.ClusterID.String()}
	}
	if c.GracefulRestart {
		// LocalRestarting: until every neighbour's End-of-RIB (or the
		// deferral time), send nothing, and tell helpers (R bit) to keep
		// what they hold from us; a restarted reflector thus never makes
		// its clients drop records it has not relearnt yet.
		p.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: grSeconds(c.RestartTime),
			DeferralTime: grSeconds(c.DeferralTime), LocalRestarting: true}
		p.AfiSafis[0].MpGracefulRestart = &api.MpGracefulRestart{Config: &api.MpGracefulRestartConfig{Enabled: true}}
	}
	if n.TTLHops > 0 {
		p.TtlSecurity = &api.TtlSecurity{Enabled: true, TtlMin: uint32(256 - int(n.TTLHops))}
	}
	return p
}

// stateName names a watched session state as apiStateName does: GoBGP's
// API numbers the same FSM states from 1 (its gRPC server adds 1 too).
func stateName(s bgp.FSMState) string { return apiStateName(api.PeerState_SessionState(s + 1)) }

// nlri maps a record key to its VPNv6 NLRI.
func nlri(k record.Key) (bgp.NLRI, error) {
	rd, err := bgp.NewRouteDistinguisherIPAddressAS(k.Origin, uint16(k.Kind))
	if err != nil {
		return nil, err
	}
	return bgp.NewLabeledVPNIPAddrPrefix(netip.PrefixFrom(netip.AddrFrom16(k.ID), 128), *bgp.NewMPLSLabelStack(0), rd)
}

// keyOf maps a VPNv6 NLRI back to a record key.
func keyOf(n bgp.NLRI) (record.Key, error) {
	v, ok := n.(*bgp.LabeledVPNIPAddrPrefix)
	if !ok {
		return record.Key{}, fmt.Errorf("NLRI %T", n)
	}
	rd, ok := v.RD.(*bgp.RouteDistinguisherIPAddressAS)
	if !ok || !rd.Admin.Is4() {
		return record.Key{}, fmt.Errorf("RD %v is not type 1", v.RD)
	}
	kind := record.Kind(rd.Assigned)
	if kind < record.KindHost || kind > record.KindManifest {
		return record.Key{}, fmt.Errorf("RD %v: unknown kind %d", v.RD, rd.Assigned)
	}
	if v.Prefix.Bits() != 128 || !v.Prefix.Addr().Is6() {
		return record.Key{}, fmt.Errorf("prefix %v is not a /128", v.Prefix)
	}
	return record.Key{Origin: rd.Admin, Kind: kind, ID: v.Prefix.Addr().As16()}, nil
}

// pathEvent turns a best-path change into an event; other families
// (there are none configured) are ignored.
func pathEvent(p *apiutil.Path) Event {
	if p.Family != Family {
		return nil
	}
	k, err := keyOf(p.Nlri)
	if err != nil {
		if p.Withdrawal {
			return nil // a withdrawal of something we never took
		}
		return Bad{From: p.PeerAddress, NLRI: p.Nlri.String(), Err: err}
	}
	if p.Withdrawal {
		return Withdraw{Key: k}
	}
	var val []byte
	for _, a := range p.Attrs {
		if u, ok := a.(*bgp.PathAttributeUnknown); ok && a.GetType() == record.AttrType {
			val = u.Value
		}
	}
	if val == nil {
		return Bad{From: p.PeerAddress, NLRI: p.Nlri.String(), Err: fmt.Errorf("no attribute %d", record.AttrType)}
	}
	r, err := record.Decode(val)
	if err != nil {
		return Bad{From: p.PeerAddress, NLRI: p.Nlri.String(), Err: err}
	}
	if r.Key() != k {
		return Bad{From: p.PeerAddress, NLRI: p.Nlri.String(), Err: fmt.Errorf("record key %v does not match the NLRI (%v)", r.Key(), k)}
	}
	u := Update{Key: k, Record: r}
	if p.PeerAddress.IsValid() && !p.PeerAddress.IsUnspecified() {
		u.From = p.PeerAddress
	}
	return u
}

// path builds the GoBGP path of a record (or of its withdrawal).
func (sp *Speaker) path(r record.Record, k record.Key, withdraw bool) (*apiutil.Path, error) {
	n, err := nlri(k)
	if err != nil {
		return nil, err
	}
	p := &apiutil.Path{Family: Family, Nlri: n, Withdrawal: withdraw}
	if withdraw {
		return p, nil
	}
	mp, err := bgp.NewPathAttributeMpReachNLRI(Family, []bgp.PathNLRI{{NLRI: n}}, netip.IPv6Unspecified())
	if err != nil {
		return nil, err
	}
	p.Attrs = []bgp.PathAttributeInterface{bgp.NewPathAttributeOrigin(bgp.BGP_ORIGIN_ATTR_TYPE_IGP), mp}
	if h, ok := r.(*record.Host); ok {
		var lc []*bgp.LargeCommunity
		for _, c := range h.Communities(sp.cfg.ASN) {
			lc = append(lc, bgp.NewLargeCommunity(c.Global, c.Local1, c.Local2))
		}
		p.Attrs = append(p.Attrs, bgp.NewPathAttributeLargeCommunities(lc))
	}
	p.Attrs = append(p.Attrs, bgp.NewPathAttributeUnknown(bgp.BGP_ATTR_FLAG_OPTIONAL|bgp.BGP_ATTR_FLAG_TRANSITIVE, record.AttrType, record.AppendTo(nil, r)))
	return p, nil
}

// Publish originates (or replaces) records and withdraws keys, each list
// in one GoBGP call.
func (sp *Speaker) Publish(add []record.Record, withdraw []record.Key) error {
	var errs []error
	if len(add) > 0 {
		paths := make([]*apiutil.Path, 0, len(add))
		for _, r := range add {
			p, err := sp.path(r, r.Key(), false)
			if err != nil {
				errs = append(errs, fmt.Errorf("record %v: %w", r.Key(), err))
				continue
			}
			paths = append(paths, p)
		}
		if len(paths) > 0 {
			if _, err := sp.s.AddPath(apiutil.AddPathRequest{Paths: paths}); err != nil {
				errs = append(errs, fmt.Errorf("ibgp: add %d records: %w", len(paths), err))
			}
		}
	}
	if len(withdraw) > 0 {
		paths := make([]*apiutil.Path, 0, len(withdraw))
		for _, k := range withdraw {
			p, err := sp.path(nil, k, true)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			paths = append(paths, p)
		}
		if len(paths) > 0 {
			if err := sp.s.DeletePath(apiutil.DeletePathRequest{Paths: paths}); err != nil {
				errs = append(errs, fmt.Errorf("ibgp: withdraw %d records: %w", len(paths), err))
			}
		}
	}
	return errors.Join(errs...)
}

// PeerState is one neighbour as the API shows it.
type PeerState struct {
	Address  netip.Addr
	State    string
	Uptime   time.Duration
	Received int    // records accepted from it
	BFD      string // "", "up", "down", "init", "admin-down"
	Reason   string // of the last session loss
	Flaps    int    // times the session left established
}

// Peers lists the neighbours.
func (sp *Speaker) Peers(ctx context.Context) ([]PeerState, error) {
	sp.mu.Lock()
	bfdOn := map[netip.Addr]bool{}
	for _, n := range sp.cfg.Neighbors {
		bfdOn[n.Address] = n.BFD
	}
	sp.mu.Unlock()
	var out []PeerState
	err := sp.s.ListPeer(ctx, &api.ListPeerRequest{}, func(p *api.Peer) {
		a, _ := netip.ParseAddr(p.GetConf().GetNeighborAddress())
		ps := PeerState{Address: a, State: apiStateName(p.GetState().GetSessionState()), Reason: p.GetState().GetDisconnectMessage(),
			Flaps: int(p.GetState().GetFlops())}
		if bfdOn[a] {
			ps.BFD = sp.bfdState(a)
			if ps.BFD == "" {
				ps.BFD = "down"
			}
		}
		if up := p.GetTimers().GetState().GetUptime(); up != nil && ps.State == "established" {
			ps.Uptime = time.Since(up.AsTime()).Round(time.Second)
		}
		for _, af := range p.GetAfiSafis() {
			ps.Received += int(af.GetState().GetAccepted())
		}
		out = append(out, ps)
	})
	return out, err
}

// apiStateName is the API's name of s in lower case ("established"), or
// "unknown".
func apiStateName(s api.PeerState_SessionState) string {
	if s < api.PeerState_SESSION_STATE_IDLE || s > api.PeerState_SESSION_STATE_ESTABLISHED {
		return "unknown"
	}
	return strings.ToLower(strings.TrimPrefix(s.String(), "SESSION_STATE_"))
}

// sessionChange watches a session that went down while its BFD was up:
// if BFD goes down too within the dead window, the neighbour is flushed
// (FlushDead).
func (sp *Speaker) sessionChange(pc PeerChange) {
	was := sp.established[pc.Address]
	sp.established[pc.Address] = pc.State == "established"
	if !was || pc.State == "established" || !sp.cfg.FlushDead {
		return
	}
	sp.mu.Lock()
	var nb *Neighbor
	for i := range sp.cfg.Neighbors {
		if sp.cfg.Neighbors[i].Address == pc.Address && sp.cfg.Neighbors[i].BFD {
			n := sp.cfg.Neighbors[i]
			nb = &n
		}
	}
	sp.mu.Unlock()
	if nb == nil || sp.bfdState(pc.Address) != "up" {
		return
	}
	go func() {
		deadline := time.Now().Add(sp.cfg.DeadWindow)
		for time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			switch sp.bfdState(pc.Address) {
			case "up":
				continue
			case "":
				return // deconfigured meanwhile
			}
			sp.mu.Lock()
			defer sp.mu.Unlock()
			if sp.cancel == nil || !slices.Contains(sp.cfg.Neighbors, *nb) {
				return
			}
			sp.cfg.Logger.Warn("inof: neighbour lost with its BFD: dropping its records, no graceful restart", "neighbor", pc.Address)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := sp.s.DeletePeer(ctx, &api.DeletePeerRequest{Address: pc.Address.String()}); err != nil {
				sp.cfg.Logger.Error("inof: flush neighbour", "neighbor", pc.Address, "err", err)
				return
			}
			if err := sp.s.AddPeer(ctx, &api.AddPeerRequest{Peer: sp.peer(*nb)}); err != nil {
				sp.cfg.Logger.Error("inof: re-add neighbour", "neighbor", pc.Address, "err", err)
			}
			return
		}
	}()
}

// SetBFD records the state of a neighbour's BFD session ("up", "down",
// "init", "admin-down"; "" when it has none), as fared's BFD speaker
// reports it: Peers shows it, and FlushDead watches it.
func (sp *Speaker) SetBFD(a netip.Addr, state string) {
	sp.bfdMu.Lock()
	defer sp.bfdMu.Unlock()
	if state == "" {
		delete(sp.bfdSes, a)
	} else {
		sp.bfdSes[a] = state
	}
}

func (sp *Speaker) bfdState(a netip.Addr) string {
	sp.bfdMu.Lock()
	defer sp.bfdMu.Unlock()
	return sp.bfdSes[a]
}

// BFDDown takes the session to a neighbour down at once because its BFD
// session failed (RFC 5882 §4.3): a hard reset with a NOTIFICATION, as
// GoBGP's own BFD did, so the neighbour's records go now rather than when
// the hold timer expires. The session reconnects by itself.
func (sp *Speaker) BFDDown(ctx context.Context, a netip.Addr) error {
	return sp.s.ResetPeer(ctx, &api.ResetPeerRequest{Address: a.String(), Communication: "BFD is down"})
}

// ResetPeer drops a session (hard reset: no graceful restart).
func (sp *Speaker) ResetPeer(ctx context.Context, addr netip.Addr) error {
	return sp.s.ResetPeer(ctx, &api.ResetPeerRequest{Address: addr.String(), Communication: "reset by fared"})
}

// Reconfigure applies neighbour and filter changes: removed neighbours
// are deleted, new ones added, changed ones replaced (their session
// restarts); filters are replaced as a whole. Global settings (ASN,
// router id, port, reflector role, timers, GR) need a restart.
func (sp *Speaker) Reconfigure(ctx context.Context, cfg Config) error {
	cfg.defaults()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	old := map[netip.Addr]Neighbor{}
	for _, n := range sp.cfg.Neighbors {
		old[n.Address] = n
	}
	var errs []error
	for _, n := range cfg.Neighbors {
		o, had := old[n.Address]
		delete(old, n.Address)
		if had && o == n {
			continue
		}
		if had {
			if err := sp.s.DeletePeer(ctx, &api.DeletePeerRequest{Address: n.Address.String()}); err != nil {
				errs = append(errs, err)
			}
		}
		c := sp.cfg
		c.Neighbors = nil
		tmp := &Speaker{cfg: c}
		if err := sp.s.AddPeer(ctx, &api.AddPeerRequest{Peer: tmp.peer(n)}); err != nil {
			errs = append(errs, fmt.Errorf("neighbor %s: %w", n.Address, err))
		}
	}
	for a := range old {
		if err := sp.s.DeletePeer(ctx, &api.DeletePeerRequest{Address: a.String()}); err != nil {
			errs = append(errs, err)
		}
	}
	if !slices.EqualFunc(cfg.Filters, sp.cfg.Filters, filterEqual) {
		if err := sp.setPolicies(ctx, cfg.Filters); err != nil {
			errs = append(errs, err)
		} else if err := sp.s.ResetPeer(ctx, &api.ResetPeerRequest{Address: "all", Soft: true, Direction: api.ResetPeerRequest_DIRECTION_BOTH}); err != nil {
			// New policy applies to routes already exchanged only
			// after a soft reset (route refresh in, re-send out).
			errs = append(errs, err)
		}
	}
	sp.cfg.Neighbors = cfg.Neighbors
	sp.cfg.Filters = cfg.Filters
	return errors.Join(errs...)
}

func filterEqual(a, b Filter) bool {
	return a.Export == b.Export && slices.Equal(a.Neighbors, b.Neighbors) && slices.Equal(a.Zones, b.Zones) && slices.Equal(a.Switches, b.Switches)
}

// setPolicies installs the filters as GoBGP's global import and export
// policies (per-neighbour policy exists only for route-server clients):
// one statement per filter, matching the neighbour set and a large
// community set, rejecting; everything else is accepted.
func (sp *Speaker) setPolicies(ctx context.Context, filters []Filter) error {
	var sets []*api.DefinedSet
	var imp, exp []*api.Statement
	for i, f := range filters {
		name := "inof-" + strconv.Itoa(i)
		cond := &api.Conditions{}
		if len(f.Neighbors) > 0 {
			ns := &api.DefinedSet{DefinedType: api.DefinedType_DEFINED_TYPE_NEIGHBOR, Name: name + "-nbr"}
			for _, a := range f.Neighbors {
				ns.List = append(ns.List, netip.PrefixFrom(a, a.BitLen()).String())
			}
			sets = append(sets, ns)
			cond.NeighborSet = &api.MatchSet{Name: ns.Name, Type: api.MatchSet_TYPE_ANY}
		}
		lc := &api.DefinedSet{DefinedType: api.DefinedType_DEFINED_TYPE_LARGE_COMMUNITY, Name: name + "-lc"}
		for _, z := range f.Zones {
			lc.List = append(lc.List, "^"+record.ZoneCommunity(sp.cfg.ASN, z).String()+"$")
		}
		for _, s := range f.Switches {
			lc.List = append(lc.List, "^"+record.SwitchCommunity(sp.cfg.ASN, s).String()+"$")
		}
		if len(lc.List) == 0 {
			return fmt.Errorf("ibgp: filter %d matches no zone and no switch", i)
		}
		sets = append(sets, lc)
		cond.LargeCommunitySet = &api.MatchSet{Name: lc.Name, Type: api.MatchSet_TYPE_ANY}
		st := &api.Statement{Name: name, Conditions: cond, Actions: &api.Actions{RouteAction: api.RouteAction_ROUTE_ACTION_REJECT}}
		if f.Export {
			exp = append(exp, st)
		} else {
			imp = append(imp, st)
		}
	}
	// SetPolicies replaces definitions but keeps assignments (and fails
	// if they name a policy it removes): clear them, define, assign.
	dirs := []struct {
		dir api.PolicyDirection
		sts []*api.Statement
		nm  string
	}{{api.PolicyDirection_POLICY_DIRECTION_IMPORT, imp, "inof-import"}, {api.PolicyDirection_POLICY_DIRECTION_EXPORT, exp, "inof-export"}}
	for _, d := range dirs {
		pa := &api.PolicyAssignment{Name: "global", Direction: d.dir, DefaultAction: api.RouteAction_ROUTE_ACTION_ACCEPT}
		if err := sp.s.SetPolicyAssignment(ctx, &api.SetPolicyAssignmentRequest{Assignment: pa}); err != nil {
			return fmt.Errorf("ibgp: policies: %w", err)
		}
	}
	req := &api.SetPoliciesRequest{DefinedSets: sets}
	for _, d := range dirs {
		if len(d.sts) > 0 {
			req.Policies = append(req.Policies, &api.Policy{Name: d.nm, Statements: d.sts})
		}
	}
	if err := sp.s.SetPolicies(ctx, req); err != nil {
		return fmt.Errorf("ibgp: policies: %w", err)
	}
	for _, d := range dirs {
		if len(d.sts) == 0 {
			continue
		}
		pa := &api.PolicyAssignment{Name: "global", Direction: d.dir, DefaultAction: api.RouteAction_ROUTE_ACTION_ACCEPT,
			Policies: []*api.Policy{{Name: d.nm}}}
		if err := sp.s.SetPolicyAssignment(ctx, &api.SetPolicyAssignmentRequest{Assignment: pa}); err != nil {
			return fmt.Errorf("ibgp: policies: %w", err)
		}
	}
	return nil
}
