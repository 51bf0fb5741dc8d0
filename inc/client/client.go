// Package client is fared's INC client: it joins a collective group at
// the aggregation manager (gRPC), heartbeats, and runs allreduce either in
// the fabric (INC: packets to the tree's switch, results back) or as a
// ring between the members (the baseline), both over the IRN transport
// on raw RoCEv2 sockets. Op, Result and Run (op.go) are the request and
// result lines of cmd/fareinc, which keeps only its flags and wiring.
package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/setting"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
)

// Config of a client.
type Config struct {
	Manager string // host:port of the aggregation manager
	Group   string
	Rank    int
	Size    int
	// Addr is the data-plane address; zero picks the address the kernel
	// would use towards the manager.
	Addr netip.Addr
	// QPN is the client's QP; zero picks a random one.
	QPN       uint32
	Host      string
	Transport transport.Config
	// Payload is the bytes of elements per packet (default 1024, capped
	// by the tree's switches).
	Payload int
	Log     *slog.Logger
	// Creds authenticate the client to the manager (dial.go).
	Creds Credentials
	// PKey is the BTH P_Key of the client's QP, its partition: its
	// packets carry it, and received packets that do not match it
	// (IBTA's P_Key matching) are dropped and counted as refused. Zero
	// is the default, 0xFFFF; it must match the switches' inc.p-key.
	PKey uint16
}

// Errors of an allreduce.
var (
	ErrNoTree      = errors.New("the group has no INC tree")
	ErrDismantled  = errors.New("the group was dismantled")
	ErrTreeChanged = errors.New("the group's tree changed during the operation")
)

// Client is one rank of a group.
type Client struct {
	cfg  Config
	log  *slog.Logger
	conn *grpc.ClientConn
	mgr  protos.ManagerClient
	id   string
	ep   *transport.Endpoint

	hbEvery  time.Duration
	hbCancel context.CancelFunc
	hbDone   chan struct{}
	idleDone chan struct{}
	// From heartbeats: the group's newest generation and state.
	latestGen   atomic.Uint64
	latestState atomic.Int32

	mu   sync.Mutex // one operation at a time
	tmu  sync.Mutex // tree (read by the heartbeats)
	tree *protos.TreeAssignment
	msg  uint32 // next INC message id on the current tree

	// Ring PSN counters, per direction; both ends count the same packets.
	ringSend, ringRecv uint32
	// ringRecvDone: every ring PSN from the previous rank before it has
	// arrived (completed operations).
	ringRecvDone uint32

	// totals: the task statistics since the join, sent with every
	// heartbeat.
	totals taskTotals

	// guard recovers a panic on the receive path (module "inc-client").
	guard *guard.Guard
	// refusedLogged: reasons of refused packets already logged (mu).
	refusedLogged map[string]bool
	// pkey is the P_Key of the client's QP (Config.PKey).
	pkey uint16
}

// Join joins the group: it registers with the manager and starts the
// heartbeats. The client runs in the caller's network namespace.
func Join(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	setting.Default(&cfg.Payload, 1024)
	setting.Default(&cfg.PKey, rocev2.DefaultPKey)
	if !rocev2.ValidPKey(cfg.PKey) {
		return nil, fmt.Errorf("P_Key %#04x: partition 0 is the invalid P_Key", cfg.PKey)
	}
	if !cfg.Addr.IsValid() {
		ap, err := netip.ParseAddrPort(cfg.Manager)
		if err != nil {
			return nil, fmt.Errorf("manager %q: %w (give an address:port, or the client address)", cfg.Manager, err)
		}
		if cfg.Addr, err = rawsock.LocalAddr(ap.Addr()); err != nil {
			return nil, fmt.Errorf("no route to the manager %s: %w", ap.Addr(), err)
		}
	}
	opts, err := dialOptions(cfg)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(cfg.Manager, opts...)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, log: cfg.Log.With("group", cfg.Group, "rank", cfg.Rank), conn: conn, mgr: protos.NewManagerClient(conn),
		pkey: cfg.PKey}
	c.guard = guard.New("inc-client", c.log)
	qpn := cfg.QPN
	for attempt := 0; ; attempt++ {
		if cfg.QPN == 0 {
			qpn = 0x1000 + rand.Uint32N(0xFFF000)
		}
		resp, err := c.mgr.Join(ctx, &protos.JoinRequest{Group: cfg.Group, Rank: uint32(cfg.Rank), Size: uint32(cfg.Size),
			Address: cfg.Addr.String(), Qpn: qpn, Host: cfg.Host})
		if status.Code(err) == codes.AlreadyExists && cfg.QPN == 0 && attempt < 5 && !isRankTaken(err) {
			continue // another client on this host drew the same QP
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("join %s as rank %d: %w", cfg.Group, cfg.Rank, explain(err, cfg.Manager))
		}
		c.id, c.hbEvery = resp.ClientId, time.Duration(resp.HeartbeatMs)*time.Millisecond
		break
	}
	c.cfg.QPN = qpn
	if c.ep, err = transport.Open(cfg.Addr, []uint32{qpn}); err != nil {
		c.mgr.Leave(ctx, &protos.LeaveRequest{ClientId: c.id})
		conn.Close()
		return nil, fmt.Errorf("data plane: %w", err)
	}
	c.ep.SetPKey(c.pkey)
	hctx, cancel := context.WithCancel(context.Background())
	c.hbCancel, c.hbDone, c.idleDone = cancel, make(chan struct{}), make(chan struct{})
	go c.heartbeats(hctx)
	go c.idle(hctx)
	c.log.Info("joined", "client", c.id, "address", cfg.Addr, "qpn", qpn)
	return c, nil
}

func isRankTaken(err error) bool {
	s, _ := status.FromError(err)
	return s != nil && strings.Contains(s.Message(), "rank")
}

// ID is the client id the manager gave.
func (c *Client) ID() string { return c.id }

// QPN is the client's QP.
func (c *Client) QPN() uint32 { return c.cfg.QPN }

func (c *Client) heartbeats(ctx context.Context) {
	defer close(c.hbDone)
	every := max(c.hbEvery, 50*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var gen uint64
		if a := c.loadTree(); a != nil {
			gen = a.Generation
		}
		hctx, cancel := context.WithTimeout(ctx, 2*every)
		resp, err := c.mgr.Heartbeat(hctx, &protos.HeartbeatRequest{ClientId: c.id, Generation: gen, Stats: c.totals.proto()})
		cancel()
		switch {
		case status.Code(err) == codes.NotFound:
			c.latestState.Store(int32(protos.GroupState_GROUP_STATE_DISMANTLED))
		case err == nil:
			c.latestGen.Store(resp.Generation)
			c.latestState.Store(int32(resp.State))
		}
	}
}

func (c *Client) loadTree() *protos.TreeAssignment {
	c.tmu.Lock()
	defer c.tmu.Unlock()
	return c.tree
}

func (c *Client) storeTree(a *protos.TreeAssignment) {
	c.tmu.Lock()
	defer c.tmu.Unlock()
	c.tree = a
}

// Tree returns the group's current assignment, asking the manager when
// the heartbeats say it changed (or there is none yet); it waits for the
// group to be complete and its tree programmed.
func (c *Client) Tree(ctx context.Context) (*protos.TreeAssignment, error) {
	cur := c.loadTree()
	if cur != nil && cur.Generation >= c.latestGen.Load() &&
		protos.GroupState(c.latestState.Load()) != protos.GroupState_GROUP_STATE_DISMANTLED {
		return cur, nil
	}
	var after uint64
	if cur != nil && cur.State == protos.GroupState_GROUP_STATE_READY {
		after = cur.Generation
	}
	for {
		a, err := c.mgr.GetTree(ctx, &protos.GetTreeRequest{ClientId: c.id, AfterGeneration: after})
		if status.Code(err) == codes.NotFound {
			return nil, ErrDismantled
		}
		if err != nil {
			return nil, err
		}
		switch a.State {
		case protos.GroupState_GROUP_STATE_READY:
			if a.Generation > after {
				c.adopt(a)
				return a, nil
			}
		case protos.GroupState_GROUP_STATE_NO_TREE:
			c.adopt(a)
			return a, nil
		case protos.GroupState_GROUP_STATE_DISMANTLED:
			c.adopt(a)
			return a, dismantled(a)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// Current asks the manager for the group's tree now (waiting while it is
// being programmed). Every operation starts with it: members learn a
// rebuilt tree at once, not at their next heartbeat, so they do not split
// between the old tree and the new one.
func (c *Client) Current(ctx context.Context) (*protos.TreeAssignment, error) {
	for {
		a, err := c.mgr.GetTree(ctx, &protos.GetTreeRequest{ClientId: c.id})
		if status.Code(err) == codes.NotFound {
			return nil, ErrDismantled
		}
		if err != nil {
			return nil, err
		}
		if a.State != protos.GroupState_GROUP_STATE_WAITING {
			c.adopt(a)
			if a.State == protos.GroupState_GROUP_STATE_DISMANTLED {
				return a, dismantled(a)
			}
			return a, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// dismantled is ErrDismantled with the manager's reason (a member left
// or died, or the operator dismantled the group).
func dismantled(a *protos.TreeAssignment) error {
	if a.Reason == "" {
		return ErrDismantled
	}
	return fmt.Errorf("%w: %s", ErrDismantled, a.Reason)
}

func (c *Client) adopt(a *protos.TreeAssignment) {
	old := c.loadTree()
	if old == nil || old.Generation != a.Generation {
		c.msg = 0 // a new tree starts its message ids at 0 on every member
		c.log.Info("tree", "state", a.State, "generation", a.Generation, "tree", a.TreeId, "switch", a.SwitchAddress,
			"qpn", a.SwitchQpn, "child", a.ChildIndex, "reason", a.Reason)
	}
	if a.Generation > c.latestGen.Load() {
		c.latestGen.Store(a.Generation)
	}
	c.storeTree(a)
}

// changed reports whether the heartbeats saw a generation newer than a's.
func (c *Client) changed(a *protos.TreeAssignment) bool {
	return c.latestGen.Load() > a.Generation ||
		protos.GroupState(c.latestState.Load()) == protos.GroupState_GROUP_STATE_DISMANTLED
}

// idle answers, between operations, a ring neighbour whose last ACK from
// us was lost: the end of a ring operation is the two-generals problem,
// and this is its TIME_WAIT. An operation takes the endpoint over (mu).
func (c *Client) idle(ctx context.Context) {
	defer close(c.idleDone)
	for ctx.Err() == nil {
		c.mu.Lock()
		c.pump(time.Now().Add(10*time.Millisecond), nil, func(p *packetView) {
			if p.kind == packet.KindRing {
				c.lingerAnswer(p)
			}
		})
		c.mu.Unlock()
	}
}

// Close leaves the group. It first lingers a little, answering a ring
// neighbour whose last ACK from us was lost.
func (c *Client) Close() error {
	time.Sleep(3 * c.transportCfg().RTOHigh) // idle() answers meanwhile
	c.hbCancel()
	<-c.hbDone
	<-c.idleDone
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.mgr.Leave(ctx, &protos.LeaveRequest{ClientId: c.id})
	c.ep.Close()
	c.conn.Close()
	if status.Code(err) == codes.NotFound {
		err = nil
	}
	return err
}

// Abandon stops without leaving (tests: a client that dies).
func (c *Client) Abandon() {
	c.hbCancel()
	<-c.hbDone
	<-c.idleDone
	c.ep.Close()
	c.conn.Close()
}

func (c *Client) transportCfg() transport.Config { return c.cfg.Transport.WithDefaults() }

// report sends the draft's "N timeouts" notification.
func (c *Client) report(a *protos.TreeAssignment, msg uint32, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rep, err := c.mgr.ReportTimeouts(ctx, &protos.TimeoutReport{ClientId: c.id, TreeId: a.TreeId, Generation: a.Generation,
		MessageId: msg, Timeouts: uint32(n)})
	if err != nil {
		c.log.Warn("timeout report failed", "message", msg, "error", err)
		return
	}
	c.log.Warn("reported timeouts", "message", msg, "timeouts", n, "action", rep.Action)
	if rep.Current != nil && rep.Current.Generation > a.Generation {
		c.latestGen.Store(rep.Current.Generation)
	}
}

// taskTotals are the client's task statistics since it joined (the
// draft's per-client statistics): each operation adds to them at its end
// (tally), and every heartbeat carries them to the manager, over the
// client's own authenticated session (farectl inc clients shows them).
type taskTotals struct {
	bytes, operations, failed, retransmissions, timeouts atomic.Uint64
}

func (t *taskTotals) proto() *protos.ClientStats {
	return &protos.ClientStats{Bytes: t.bytes.Load(), Operations: t.operations.Load(), FailedOperations: t.failed.Load(),
		Retransmissions: t.retransmissions.Load(), Timeouts: t.timeouts.Load()}
}

// tally adds one operation, ended with err, to the totals: its bytes when
// it completed, its retransmissions and timeouts in any case.
func (c *Client) tally(st Stats, err error) {
	t := &c.totals
	t.operations.Add(1)
	if err != nil {
		t.failed.Add(1)
	} else {
		t.bytes.Add(uint64(st.Bytes))
	}
	t.retransmissions.Add(uint64(st.Retransmits))
	t.timeouts.Add(uint64(st.Timeouts))
}

// Stats of one operation.
type Stats struct {
	Bytes       int
	Duration    time.Duration
	Packets     int
	Sent        int
	Retransmits int
	Timeouts    int
	NACKs       int
	Reports     int
	Stale       int // results or ring packets of another operation
	// Refused counts packets dropped because they did not come from
	// where the operation expects them: INC results and NACKs not from
	// the tree's switch with the tree's key to this QP, ring data not
	// from the previous rank with the group's key.
	Refused int
	Mode    string
}

func (s *Stats) add(t transport.Stats) {
	s.Packets += t.Packets
	s.Sent += t.Sent
	s.Retransmits += t.Retransmits
	s.Timeouts += t.Timeouts
	s.NACKs += t.NACKs
	s.Reports += t.Reports
}
