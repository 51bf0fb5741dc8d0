package manager

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/lsdb"
)

// Manager runs State on its own goroutine and serves it over gRPC.
type Manager struct {
	protos.UnimplementedManagerServer
	st       *State
	loop     *loop.Loop
	log      *slog.Logger
	guard    *guard.Guard
	sec      atomic.Pointer[Security]
	sessions map[string]*session // by switch address; loop goroutine only
	changed  chan struct{}       // closed and replaced on every change; loop goroutine only
}

// Security is how the manager authenticates its callers (docs/inc.md,
// "Control-plane trust").
type Security struct {
	// TLS is the manager's certificate and the CA its switches' client
	// certificates must chain to. Nil: plaintext, and every caller must
	// be on loopback (the module then listens on loopback only).
	TLS *auth.Material
	// TokenKeys verify clients' join tokens. Nil: no client-auth, every
	// caller may join any group (only allowed without TLS, on loopback).
	TokenKeys [][]byte
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

// New returns a manager; Run and Serve start it. g recovers panics of its
// loop and gRPC handlers (nil: the guard of module "inc"). It starts with
// no TLS and no client-auth: SetSecurity before Serve.
func New(cfg Config, log *slog.Logger, g *guard.Guard) *Manager {
	if g == nil {
		g = guard.New("inc", log)
	}
	m := &Manager{loop: loop.New(64), log: log, guard: g, sessions: map[string]*session{}, changed: make(chan struct{})}
	m.loop.Guard(g)
	m.st = NewState(cfg, time.Now, log, m.push, m.notify)
	m.sec.Store(&Security{})
	return m
}

// SetSecurity sets (or, on a reload, replaces) the TLS material and token
// keys: new connections and calls use them; established switch sessions
// stay. Whether there is TLS at all is fixed when Server is called.
func (m *Manager) SetSecurity(s Security) { m.sec.Store(&s) }

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

// errInternal answers a call whose handling panicked (the guard logged
// it with the stack).
var errInternal = status.Error(codes.Internal, "internal error in the INC manager (a bug; it is logged there)")

// do runs f on the manager's goroutine. A panic in f is recovered by the
// loop's guard; the call then gets codes.Internal.
func (m *Manager) do(ctx context.Context, f func()) error {
	ran := false
	if err := m.loop.Query(ctx, func() { f(); ran = true }); err != nil {
		return status.FromContextError(err).Err()
	}
	if !ran {
		return errInternal
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

// Server returns a gRPC server with the Manager service: TLS when the
// security set so far has it, panic recovery on every call (through the
// module's guard), keepalives that find a dead switch or client
// connection within seconds, and bounded messages and streams.
func (m *Manager) Server() *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Second, Timeout: 2 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 200 * time.Millisecond, PermitWithoutStream: true}),
		grpc.MaxRecvMsgSize(1 << 20),
		grpc.MaxConcurrentStreams(maxStreams),
		grpc.ChainUnaryInterceptor(m.recoverUnary),
		grpc.ChainStreamInterceptor(m.recoverStream),
	}
	if m.sec.Load().TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(auth.ServerConfig(func() *auth.Material { return m.sec.Load().TLS }))))
	}
	s := grpc.NewServer(opts...)
	protos.RegisterManagerServer(s, m)
	return s
}

// maxStreams bounds one connection's concurrent calls (a client has at
// most a GetTree, a heartbeat and a report in flight).
const maxStreams = 32

// recoverUnary answers a call whose handler panicked with codes.Internal;
// the guard counts it (fared_panics_total{module="inc"}) and logs it once.
func (m *Manager) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer m.guard.Recover("grpc "+info.FullMethod, nil, func(any) { resp, err = nil, errInternal })
	return h(ctx, req)
}

// recoverStream is recoverUnary for streams (SwitchSession).
func (m *Manager) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer m.guard.Recover("grpc "+info.FullMethod, nil, func(any) { err = errInternal })
	return h(srv, ss)
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

// peerOf is the caller's address, for logs and refusal counts.
func peerOf(ctx context.Context) (string, net.Addr) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown", nil
	}
	return p.Addr.String(), p.Addr
}

// local reports whether a is a TCP peer on loopback.
func local(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// caller authenticates a client call: a plaintext manager serves its own
// node only; with client-auth, the call carries a valid join token.
func (m *Manager) caller(ctx context.Context) (Caller, error) {
	who, addr := peerOf(ctx)
	sec := m.sec.Load()
	ref := m.st.Refusals
	if sec.TLS == nil && !local(addr) {
		return Caller{}, ref.Refuse(ReasonNotLocal, who, codes.PermissionDenied,
			"this INC manager has no tls and serves its own node only (loopback)")
	}
	if len(sec.TokenKeys) == 0 {
		return Anyone(who), nil
	}
	c, err := auth.Verify(sec.TokenKeys, auth.TokenFrom(ctx), time.Now())
	switch {
	case err == nil:
		return Caller{Token: c, Peer: who}, nil
	case errors.Is(err, auth.ErrNoToken):
		return Caller{}, ref.Refuse(ReasonNoToken, who, codes.Unauthenticated,
			"this INC manager requires a join token (gRPC metadata %q: Bearer <token>; fareinc --token, FAREINC_TOKEN or FAREINC_TOKEN_FILE; minted with fareinc token)", auth.MetadataKey)
	case errors.Is(err, auth.ErrExpired):
		return Caller{}, ref.Refuse(ReasonExpiredToken, who, codes.Unauthenticated, "%v", err)
	}
	return Caller{}, ref.Refuse(ReasonBadToken, who, codes.Unauthenticated, "%v", err)
}

// served authenticates the caller of a gRPC call and answers it with
// call, a State method, run in the manager's loop.
func served[Q, A any](ctx context.Context, m *Manager, q Q, call func(Q, Caller) (A, error)) (A, error) {
	var a A
	who, err := m.caller(ctx)
	if err != nil {
		return a, err
	}
	if qerr := m.do(ctx, func() { a, err = call(q, who) }); qerr != nil {
		var none A
		return none, qerr
	}
	return a, err
}

// Join implements the gRPC service.
func (m *Manager) Join(ctx context.Context, r *protos.JoinRequest) (*protos.JoinResponse, error) {
	return served(ctx, m, r, m.st.Join)
}

// Heartbeat implements the gRPC service.
func (m *Manager) Heartbeat(ctx context.Context, r *protos.HeartbeatRequest) (*protos.HeartbeatResponse, error) {
	return served(ctx, m, r, m.st.Heartbeat)
}

// Leave implements the gRPC service.
func (m *Manager) Leave(ctx context.Context, r *protos.LeaveRequest) (*protos.LeaveResponse, error) {
	return served(ctx, m, r, func(r *protos.LeaveRequest, who Caller) (*protos.LeaveResponse, error) {
		if err := m.st.Leave(r, who); err != nil {
			return nil, err
		}
		return &protos.LeaveResponse{}, nil
	})
}

// ReportTimeouts implements the gRPC service.
func (m *Manager) ReportTimeouts(ctx context.Context, r *protos.TimeoutReport) (*protos.TimeoutReply, error) {
	return served(ctx, m, r, m.st.ReportTimeouts)
}

// maxWait bounds a GetTree call: the client asks again.
const maxWait = 5 * time.Second

// GetTree implements the gRPC service: it waits for a tree newer than
// the client's, or for the group to settle without one.
func (m *Manager) GetTree(ctx context.Context, r *protos.GetTreeRequest) (*protos.TreeAssignment, error) {
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	for {
		var a *protos.TreeAssignment
		var err error
		var ch chan struct{}
		if qerr := m.do(ctx, func() { a, err = m.st.Assignment(r.GetClientId(), who); ch = m.changed }); qerr != nil {
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

// switchIdentity authenticates a switch session: with TLS, the client
// certificate it presented, verified against the CA; without, the
// session must come from loopback (a process of the manager's node).
func (m *Manager) switchIdentity(ctx context.Context) (auth.Identity, string, error) {
	who, addr := peerOf(ctx)
	sec := m.sec.Load()
	ref := m.st.Refusals
	if sec.TLS == nil {
		if !local(addr) {
			return auth.Identity{}, who, ref.Refuse(ReasonNotLocal, who, codes.PermissionDenied,
				"this INC manager has no tls: switches of other nodes cannot be authenticated")
		}
		return auth.Identity{Local: true}, who, nil
	}
	var chain []*x509.Certificate
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			chain = ti.State.PeerCertificates
		}
	}
	id, err := auth.VerifySwitch(sec.TLS.Roots, chain, time.Now())
	switch {
	case errors.Is(err, auth.ErrNoCert):
		return id, who, ref.Refuse(ReasonSwitchNoCert, who, codes.PermissionDenied, "%v", err)
	case err != nil:
		return id, who, ref.Refuse(ReasonSwitchBadCert, who, codes.PermissionDenied, "%v", err)
	}
	return id, who, nil
}

// SwitchSession implements the gRPC service.
func (m *Manager) SwitchSession(stream protos.Manager_SwitchSessionServer) error {
	ctx := stream.Context()
	id, who, err := m.switchIdentity(ctx)
	if err != nil {
		return err
	}
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
		if err = m.st.Admit(reg, id, who); err != nil {
			return
		}
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
	m.log.Info("inc switch authenticated", "switch", reg.NodeId, "address", key, "identity", id.String(), "peer", who)
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
		defer m.guard.Recover("grpc switch status", nil, func(any) { recvErr <- errInternal })
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
			if status.Code(err) == codes.Internal {
				return err
			}
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

// Security is the manager's part of GET /v1/inc/security (the module adds
// where it listens).
func (m *Manager) Security(ctx context.Context) (v wire.INCSecurity, err error) {
	sec := m.sec.Load()
	v = wire.INCSecurity{TLS: sec.TLS != nil, ClientAuth: len(sec.TokenKeys) > 0, LoopbackOnly: sec.TLS == nil,
		TokenKeys: len(sec.TokenKeys), Refused: m.st.Refusals.Counts()}
	if sec.TLS != nil {
		v.TLSSum = sec.TLS.Sum
	}
	err = m.do(ctx, func() { m.st.security(&v) })
	return
}

// Refused is the count of refused calls by reason, every reason present.
func (m *Manager) Refused() map[string]uint64 {
	out := m.st.Refusals.Counts()
	for _, r := range Reasons {
		out[r] += 0
	}
	return out
}

// Switches lists the registered switches.
func (m *Manager) Switches(ctx context.Context) (v []wire.INCRegisteredSwitch, err error) {
	err = m.do(ctx, func() { v = m.st.Switches() })
	return
}
