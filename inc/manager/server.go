package manager

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/lsdb"
)

// Manager runs State on its own goroutine and serves it over gRPC.
type Manager struct {
	protos.UnimplementedManagerServer
	st       *State
	loop     *loop.Loop
	log      *slog.Logger
	sessions map[string]*session // by switch address; loop goroutine only
	changed  chan struct{}       // closed and replaced on every change; loop goroutine only
}

type session struct {
	serial uint64
	cfg    chan *protos.SwitchConfig // holds the newest config not yet sent
}

// offer replaces any unsent config with c (never blocks).
func (s *session) offer(c *protos.SwitchConfig) {
	for {
		select {
		case s.cfg <- c:
			return
		default:
			select {
			case <-s.cfg:
			default:
			}
		}
	}
}

// New returns a manager; Run and Serve start it.
func New(cfg Config, log *slog.Logger) *Manager {
	m := &Manager{loop: loop.New(64), log: log, sessions: map[string]*session{}, changed: make(chan struct{})}
	m.st = NewState(cfg, time.Now, log, m.push, m.notify)
	return m
}

func (m *Manager) push(key string, c *protos.SwitchConfig) {
	if s := m.sessions[key]; s != nil {
		s.offer(c)
	}
}

func (m *Manager) notify() {
	close(m.changed)
	m.changed = make(chan struct{})
}

type handler struct{ m *Manager }

func (h handler) Handle(ev any) {
	if f, ok := ev.(func()); ok {
		f()
	}
}
func (h handler) Tick(time.Time)   { h.m.st.Tick() }
func (h handler) Settle(time.Time) {}

// Run owns the state until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	m.loop.Run(ctx, 100*time.Millisecond, time.Now, handler{m})
}

// do runs f on the manager's goroutine.
func (m *Manager) do(ctx context.Context, f func()) error {
	if err := m.loop.Query(ctx, f); err != nil {
		return status.FromContextError(err).Err()
	}
	return nil
}

// SetGraphs hands the manager the rib's newest topologies.
func (m *Manager) SetGraphs(gs []*lsdb.Graph) {
	m.loop.Post(func() { m.st.SetGraphs(gs) })
}

// SetConfig applies a reload.
func (m *Manager) SetConfig(ctx context.Context, cfg Config) error {
	return m.do(ctx, func() { m.st.SetConfig(cfg) })
}

// Server returns a gRPC server with the Manager service. Keepalives find
// a dead switch or client connection within seconds.
func (m *Manager) Server() *grpc.Server {
	s := grpc.NewServer(
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Second, Timeout: 2 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 200 * time.Millisecond, PermitWithoutStream: true}),
		grpc.MaxRecvMsgSize(1<<20),
	)
	protos.RegisterManagerServer(s, m)
	return s
}

// Serve serves gRPC on l until ctx ends.
func (m *Manager) Serve(ctx context.Context, l net.Listener) error {
	s := m.Server()
	go func() {
		<-ctx.Done()
		s.Stop()
	}()
	err := s.Serve(l)
	if errors.Is(err, grpc.ErrServerStopped) || ctx.Err() != nil {
		return nil
	}
	return err
}

// Join implements the gRPC service.
func (m *Manager) Join(ctx context.Context, r *protos.JoinRequest) (resp *protos.JoinResponse, err error) {
	if qerr := m.do(ctx, func() { resp, err = m.st.Join(r) }); qerr != nil {
		return nil, qerr
	}
	return resp, err
}

// Heartbeat implements the gRPC service.
func (m *Manager) Heartbeat(ctx context.Context, r *protos.HeartbeatRequest) (resp *protos.HeartbeatResponse, err error) {
	if qerr := m.do(ctx, func() { resp, err = m.st.Heartbeat(r) }); qerr != nil {
		return nil, qerr
	}
	return resp, err
}

// Leave implements the gRPC service.
func (m *Manager) Leave(ctx context.Context, r *protos.LeaveRequest) (*protos.LeaveResponse, error) {
	var err error
	if qerr := m.do(ctx, func() { err = m.st.Leave(r) }); qerr != nil {
		return nil, qerr
	}
	if err != nil {
		return nil, err
	}
	return &protos.LeaveResponse{}, nil
}

// ReportTimeouts implements the gRPC service.
func (m *Manager) ReportTimeouts(ctx context.Context, r *protos.TimeoutReport) (resp *protos.TimeoutReply, err error) {
	if qerr := m.do(ctx, func() { resp, err = m.st.ReportTimeouts(r) }); qerr != nil {
		return nil, qerr
	}
	return resp, err
}

// maxWait bounds a GetTree call: the client asks again.
const maxWait = 5 * time.Second

// GetTree implements the gRPC service: it waits for a tree newer than
// the client's, or for the group to settle without one.
func (m *Manager) GetTree(ctx context.Context, r *protos.GetTreeRequest) (*protos.TreeAssignment, error) {
	ctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	for {
		var a *protos.TreeAssignment
		var err error
		var ch chan struct{}
		if qerr := m.do(ctx, func() { a, err = m.st.Assignment(r.GetClientId()); ch = m.changed }); qerr != nil {
			return nil, qerr
		}
		if err != nil {
			return nil, err
		}
		if Settled(a, r.GetAfterGeneration()) {
			return a, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return a, nil // not settled yet: the client asks again
		}
	}
}

// SwitchSession implements the gRPC service.
func (m *Manager) SwitchSession(stream protos.Manager_SwitchSessionServer) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	reg := first.GetRegister()
	addr, err := ValidateRegister(reg)
	if err != nil {
		return err
	}
	key := addr.String()
	sess := &session{cfg: make(chan *protos.SwitchConfig, 1)}
	if qerr := m.do(ctx, func() {
		prev := m.sessions[key]
		m.sessions[key] = sess
		sess.serial, err = m.st.SwitchUp(reg)
		if err != nil {
			m.sessions[key] = prev
		}
	}); qerr != nil {
		return qerr
	}
	if err != nil {
		return err
	}
	// TryPost: at shutdown the loop may be gone; the session then does not
	// matter any more.
	defer m.loop.TryPost(func() {
		m.st.SwitchDown(key, sess.serial)
		if m.sessions[key] == sess {
			delete(m.sessions, key)
		}
	})
	recvErr := make(chan error, 1)
	go func() {
		for {
			msg, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			if st := msg.GetStatus(); st != nil {
				// A status lost to a full queue is repeated by the switch.
				m.loop.TryPost(func() { m.st.SwitchStatus(key, sess.serial, st) })
			}
		}
	}()
	for {
		select {
		case c := <-sess.cfg:
			if err := stream.Send(c); err != nil {
				return err
			}
		case err := <-recvErr:
			m.log.Info("inc switch session ended", "switch", reg.NodeId, "error", err)
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// Views for the API.

// Groups lists the groups.
func (m *Manager) Groups(ctx context.Context) (v []wire.INCGroup, err error) {
	err = m.do(ctx, func() { v = m.st.Groups() })
	return
}

// Trees lists the trees.
func (m *Manager) Trees(ctx context.Context) (v []wire.INCTree, err error) {
	err = m.do(ctx, func() { v = m.st.Trees() })
	return
}

// Clients lists the clients.
func (m *Manager) Clients(ctx context.Context) (v []wire.INCClient, err error) {
	err = m.do(ctx, func() { v = m.st.Clients() })
	return
}

// Switches lists the registered switches.
func (m *Manager) Switches(ctx context.Context) (v []wire.INCRegisteredSwitch, err error) {
	err = m.do(ctx, func() { v = m.st.Switches() })
	return
}
