package manager

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/logbuf"
	"github.com/fared/fared/lsdb"
)

// The attacks of issue 25 row 1 and 7, each against a manager served
// over gRPC (bufconn) with TLS, switch certificates and join tokens, as
// fared runs it. Each failed on the code before this change: GetTree,
// Heartbeat, ReportTimeouts and Leave took any client id ("c1", "c2" were
// guessable) with no credential, a switch registered with no certificate
// at any address, 2000 groups of 4096 ranks were accepted, and treeID
// spun forever once every id was in use.

type harness struct {
	t     *testing.T
	ca    *auth.CA
	key   []byte
	m     *Manager
	lis   *bufconn.Listener
	log   *logbuf.Buffer
	guard string // the guard's module name (its panic count)
}

// mgrIP is the manager's address (s2's loopback in clos).
var mgrIP = lo(6)

// newHarness serves a manager with TLS and client-auth (TLS nil when
// plaintext) on bufconn, with the clos topology.
func newHarness(t *testing.T, cfg Config, plaintext bool) *harness {
	ca, err := auth.NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ca: ca, key: []byte(auth.RandomID(32)), log: &logbuf.Buffer{}, guard: "inctest-" + t.Name() + auth.RandomID(4)}
	log := slog.New(slog.NewTextHandler(h.log, nil))
	h.m = New(cfg, log, guard.New(h.guard, log))
	sec := Security{TokenKeys: [][]byte{h.key}}
	if !plaintext {
		leaf := h.issue("s2", []netip.Addr{mgrIP}, []string{"s2"})
		c := leaf.TLS()
		pool := x509.NewCertPool()
		pool.AddCert(ca.Cert)
		sec.TLS = &auth.Material{Cert: c, Leaf: c.Leaf, Roots: pool, Sum: "test"}
	}
	h.m.SetSecurity(sec)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h.lis = bufconn.Listen(1 << 20)
	go h.m.Run(ctx)
	go h.m.Serve(ctx, h.lis)
	h.graphs(clos(nil, nil))
	return h
}

// graphs sets the manager's topology synchronously.
func (h *harness) graphs(gs ...*lsdb.Graph) {
	if err := h.m.do(context.Background(), func() { h.m.st.SetGraphs(gs) }); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) issue(cn string, ips []netip.Addr, names []string) *auth.Leaf {
	l, err := h.ca.Issue(cn, ips, names, time.Hour)
	if err != nil {
		h.t.Fatal(err)
	}
	return l
}

// token mints a token for group pattern g valid for an hour.
func (h *harness) token(g string) string {
	tok, err := auth.Mint(h.key, auth.Claims{Group: g, Subject: "test", Expires: time.Now().Add(time.Hour).Unix()}, time.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// dial connects with an optional client certificate and token. Without
// TLS (plaintext harness) tls is ignored.
func (h *harness) dial(cert *tls.Certificate, token string, plaintext bool) protos.ManagerClient {
	creds := insecure.NewCredentials()
	if !plaintext {
		pool := x509.NewCertPool()
		pool.AddCert(h.ca.Cert)
		cfg := &tls.Config{RootCAs: pool, ServerName: mgrIP.String()}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return h.lis.DialContext(ctx) })}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(auth.TokenCredentials{Token: token, Plaintext: plaintext}))
	}
	conn, err := grpc.NewClient("passthrough:///inc-manager", opts...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { conn.Close() })
	return protos.NewManagerClient(conn)
}

func (h *harness) refused() map[string]uint64 { return h.m.st.Refusals.Counts() }

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// joinGroup joins ranks 0..n-1 of group on leaf l1's subnet with c.
func joinGroup(t *testing.T, ctx context.Context, c protos.ManagerClient, group string, n int, qpBase uint32) []string {
	t.Helper()
	var ids []string
	for r := range n {
		resp, err := c.Join(ctx, &protos.JoinRequest{Group: group, Rank: uint32(r), Size: uint32(n),
			Address: fmt.Sprintf("10.1.%d.%d", r%4+1, 10+r/4), Qpn: qpBase + uint32(r)})
		if err != nil {
			t.Fatalf("join %s rank %d: %v", group, r, err)
		}
		ids = append(ids, resp.ClientId)
	}
	return ids
}

func wantCode(t *testing.T, what string, err error, code codes.Code, msg string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), msg) {
		t.Errorf("%s: %v, want %s %q", what, err, code, msg)
	}
}

// TestAttackOtherGroupsClient: a host holding a token for its own group
// (and a victim's client id, however it learnt it) cannot read the
// victim's tree and key, heartbeat for it, report timeouts on its tree
// or make it leave; the victim's group is untouched.
func TestAttackOtherGroupsClient(t *testing.T) {
	h := newHarness(t, Config{}, false)
	ctx := ctx5(t)
	victim := h.dial(nil, h.token("victim"), false)
	ids := joinGroup(t, ctx, victim, "victim", 2, 100)
	for _, id := range ids {
		if len(id) != 33 || id[0] != 'c' {
			t.Fatalf("client id %q: want c + 32 random hex digits", id)
		}
	}
	if ids[0][:8] == ids[1][:8] {
		t.Fatalf("ids %v look sequential", ids)
	}
	a, err := victim.GetTree(ctx, &protos.GetTreeRequest{ClientId: ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	evil := h.dial(nil, h.token("evil"), false)
	_, err = evil.GetTree(ctx, &protos.GetTreeRequest{ClientId: ids[0]})
	wantCode(t, "GetTree of the victim", err, codes.PermissionDenied, "not in a group the token")
	_, err = evil.Heartbeat(ctx, &protos.HeartbeatRequest{ClientId: ids[0]})
	wantCode(t, "Heartbeat of the victim", err, codes.PermissionDenied, "not in a group the token")
	for range 5 {
		_, err = evil.ReportTimeouts(ctx, &protos.TimeoutReport{ClientId: ids[0], TreeId: a.TreeId, Generation: a.Generation, Timeouts: 8})
		wantCode(t, "ReportTimeouts on the victim's tree", err, codes.PermissionDenied, "not in a group the token")
	}
	_, err = evil.Leave(ctx, &protos.LeaveRequest{ClientId: ids[1]})
	wantCode(t, "Leave of the victim", err, codes.PermissionDenied, "not in a group the token")
	// A guessed id (the old sequential form) is simply unknown.
	_, err = evil.GetTree(ctx, &protos.GetTreeRequest{ClientId: "c1"})
	wantCode(t, "GetTree c1", err, codes.NotFound, "no client")
	// The victim's group is as it was: same generation, nobody left, no
	// root excluded.
	b, err := victim.GetTree(ctx, &protos.GetTreeRequest{ClientId: ids[1]})
	if err != nil || b.Generation != a.Generation || b.State != a.State || len(b.Members) != 2 {
		t.Fatalf("victim's group after the attacks: %v %v (was %v)", b, err, a)
	}
	var g *group
	h.m.do(ctx, func() { g = h.m.st.groups["victim"] })
	if g.timeouts != 0 || len(g.exclude) != 0 {
		t.Fatalf("victim's group took reports: %d, excluded %v", g.timeouts, g.exclude)
	}
	if n := h.refused()[ReasonTokenScope]; n != 8 {
		t.Fatalf("token_scope refusals %d, want 8: %v", n, h.refused())
	}
	// Logged once (same reason, same peer).
	if n := strings.Count(h.log.String(), "reason=token_scope"); n != 1 {
		t.Fatalf("token_scope logged %d times:\n%s", n, h.log.String())
	}
}

// TestAttackJoinWithoutToken: no token, a forged one, an expired one, and
// a token for another group, all refused at Join (and for another call).
func TestAttackJoinWithoutToken(t *testing.T) {
	h := newHarness(t, Config{}, false)
	ctx := ctx5(t)
	join := &protos.JoinRequest{Group: "victim", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 7}
	_, err := h.dial(nil, "", false).Join(ctx, join)
	wantCode(t, "join without a token", err, codes.Unauthenticated, "requires a join token")
	_, err = h.dial(nil, "", false).GetTree(ctx, &protos.GetTreeRequest{ClientId: "c1"})
	wantCode(t, "GetTree without a token", err, codes.Unauthenticated, "requires a join token")

	forged, _ := auth.Mint([]byte(strings.Repeat("k", 32)), auth.Claims{Group: "*", Expires: time.Now().Add(time.Hour).Unix()}, time.Now())
	_, err = h.dial(nil, forged, false).Join(ctx, join)
	wantCode(t, "join with a forged token", err, codes.Unauthenticated, "not signed by this manager's key")
	_, err = h.dial(nil, "fit1.garbage", false).Join(ctx, join)
	wantCode(t, "join with garbage", err, codes.Unauthenticated, "malformed")

	old, _ := auth.Mint(h.key, auth.Claims{Group: "victim", Issued: time.Now().Add(-2 * time.Hour).Unix(), Expires: time.Now().Add(-time.Hour).Unix()}, time.Now())
	_, err = h.dial(nil, old, false).Join(ctx, join)
	wantCode(t, "join with an expired token", err, codes.Unauthenticated, "expired")

	_, err = h.dial(nil, h.token("evil"), false).Join(ctx, join)
	wantCode(t, "join with another group's token", err, codes.PermissionDenied, `covers group "evil" only`)
	_, err = h.dial(nil, h.token("vic*"), false).Join(ctx, &protos.JoinRequest{Group: "evil", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 7})
	wantCode(t, "join outside the token's prefix", err, codes.PermissionDenied, `covers group "vic*" only`)

	want := map[string]uint64{ReasonNoToken: 2, ReasonBadToken: 2, ReasonExpiredToken: 1, ReasonTokenScope: 2}
	for k, n := range want {
		if h.refused()[k] != n {
			t.Errorf("%s: %d refusals, want %d (%v)", k, h.refused()[k], n, h.refused())
		}
	}
	// A prefix token is a scheduler's namespace: it joins its groups.
	if _, err := h.dial(nil, h.token("vic*"), false).Join(ctx, join); err != nil {
		t.Fatalf("join with a prefix token: %v", err)
	}
}

// registerSwitch opens a session with cert (nil: none) and registers
// addr; it returns the first config (nil) or the refusal.
func (h *harness) registerSwitch(ctx context.Context, cert *tls.Certificate, node, addr string) error {
	c := h.dial(cert, "", false)
	st, err := c.SwitchSession(ctx)
	if err != nil {
		return err
	}
	// A refusal may close the stream before the registration is sent:
	// Send then says io.EOF and Recv has the status.
	if err := st.Send(&protos.SwitchMessage{Msg: &protos.SwitchMessage_Register{Register: &protos.SwitchRegister{
		NodeId: node, Address: addr, MaxTrees: 8, MaxSlots: 256, MaxRanks: 64, MaxPayload: 4096}}}); err != nil && err != io.EOF {
		return err
	}
	_, err = st.Recv() // a registered switch gets its (empty) tree set at once
	return err
}

func (h *harness) alive() map[string]bool {
	out := map[string]bool{}
	for _, s := range h.m.st.Switches() {
		if s.Alive {
			out[s.Address] = true
		}
	}
	return out
}

// TestAttackFakeSwitch: a "switch" without a certificate, with another
// CA's, with the CA's for a router not in the LSDB, a real router's
// certificate with another router's address or an address in a host
// subnet: all refused with PermissionDenied, counted; none registers.
// The real switches register (by router id or by hostname).
func TestAttackFakeSwitch(t *testing.T) {
	h := newHarness(t, Config{}, false)
	ctx := ctx5(t)
	l1 := h.issue("l1", []netip.Addr{lo(1)}, []string{"l1"}).TLS()
	l2ByName := h.issue("l2", nil, []string{"L2"}).TLS()
	other, _ := auth.NewCA("other", time.Hour)
	stranger, _ := other.Issue("l1", []netip.Addr{lo(1)}, []string{"l1"}, time.Hour)
	strangerCert := stranger.TLS()
	ghost := h.issue("ghost", []netip.Addr{netip.MustParseAddr("10.9.9.9")}, []string{"ghost"}).TLS()

	if err := h.registerSwitch(ctx, &l1, "l1", lo(1).String()); err != nil {
		t.Fatalf("l1 with its own certificate: %v", err)
	}
	if err := h.registerSwitch(ctx, &l2ByName, "l2", lo(2).String()); err != nil {
		t.Fatalf("l2 named by hostname: %v", err)
	}
	for _, c := range []struct {
		what, addr string
		cert       *tls.Certificate
		reason     string
		msg        string
	}{
		{"no certificate, a host subnet address", "10.1.1.99", nil, ReasonSwitchNoCert, "no client certificate"},
		{"no certificate, l1's address", lo(1).String(), nil, ReasonSwitchNoCert, "no client certificate"},
		{"another CA's certificate", lo(1).String(), &strangerCert, ReasonSwitchBadCert, "not valid for the manager's CA"},
		{"a router not in the LSDB", "10.9.9.9", &ghost, ReasonSwitchUnknown, "names no router"},
		{"l1 re-registering l2's address", lo(2).String(), &l1, ReasonSwitchAddress, "it is router l2's"},
		{"l1 in its host subnet", "10.1.1.99", &l1, ReasonSwitchAddress, "it is in 10.1.1.0/24 of router l1"},
	} {
		before := h.refused()[c.reason]
		err := h.registerSwitch(ctx, c.cert, "evil", c.addr)
		wantCode(t, c.what, err, codes.PermissionDenied, c.msg)
		if h.refused()[c.reason] != before+1 {
			t.Errorf("%s: %s not counted: %v", c.what, c.reason, h.refused())
		}
	}
	var alive map[string]bool
	h.m.do(ctx, func() { alive = h.alive() })
	if len(alive) != 2 || !alive[lo(1).String()] || !alive[lo(2).String()] {
		t.Fatalf("registered switches %v, want l1 and l2 only", alive)
	}
	// Before any LSDB (the manager just started), a switch is asked to
	// retry; that is no refusal.
	h.graphs()
	before := h.refused()
	err := h.registerSwitch(ctx, &l1, "l1", lo(1).String())
	wantCode(t, "before any topology", err, codes.Unavailable, "no topology yet")
	if after := h.refused(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("counted: %v -> %v", before, after)
	}
}

// TestCaps: groups per token, in total, and ranks per group are capped,
// with ResourceExhausted and the reason; the caps free up as groups go.
func TestCaps(t *testing.T) {
	h := newHarness(t, Config{MaxGroups: 5, MaxGroupsPerToken: 3, MaxGroupSize: 16}, false)
	ctx := ctx5(t)
	a := h.dial(nil, h.token("*"), false)
	var first string
	for i := range 3 {
		resp, err := a.Join(ctx, &protos.JoinRequest{Group: fmt.Sprintf("a%d", i), Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: uint32(10 + i)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = resp.ClientId
		}
	}
	_, err := a.Join(ctx, &protos.JoinRequest{Group: "a3", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 20})
	wantCode(t, "4th group of one token", err, codes.ResourceExhausted, "max-groups-per-token")
	// A second rank in a group the token already has is no new group.
	if _, err := a.Join(ctx, &protos.JoinRequest{Group: "a0", Rank: 1, Size: 2, Address: "10.1.1.11", Qpn: 21}); err != nil {
		t.Fatalf("second rank of a0: %v", err)
	}
	b := h.dial(nil, h.token("*"), false) // another token: its own share, up to the total
	for i := range 2 {
		if _, err := b.Join(ctx, &protos.JoinRequest{Group: fmt.Sprintf("b%d", i), Rank: 0, Size: 2, Address: "10.1.2.10", Qpn: uint32(30 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = b.Join(ctx, &protos.JoinRequest{Group: "b2", Rank: 0, Size: 2, Address: "10.1.2.10", Qpn: 40})
	wantCode(t, "6th group in total", err, codes.ResourceExhausted, "max-groups")
	_, err = b.Join(ctx, &protos.JoinRequest{Group: "b0", Rank: 1, Size: 17, Address: "10.1.2.11", Qpn: 41})
	wantCode(t, "a group of 17", err, codes.ResourceExhausted, "max-group-size 16")
	// a0 is complete (it has a tree); a1 loses its only rank: a slot frees.
	ids := map[string]string{}
	h.m.do(ctx, func() {
		for id, c := range h.m.st.clients {
			if c.g.name == "a1" {
				ids["a1"] = id
			}
		}
	})
	if _, err := a.Leave(ctx, &protos.LeaveRequest{ClientId: ids["a1"]}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Join(ctx, &protos.JoinRequest{Group: "a3", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 22}); err != nil {
		t.Fatalf("after a group went: %v", err)
	}
	r := h.refused()
	if r[ReasonCapGroupsPerToken] != 1 || r[ReasonCapGroups] != 1 || r[ReasonCapGroupSize] != 1 {
		t.Fatalf("refusals %v", r)
	}
	sec, err := h.m.Security(ctx)
	if err != nil || sec.Groups != 5 || len(sec.Tokens) != 2 || sec.MaxGroupsPerToken != 3 || !sec.TLS || !sec.ClientAuth {
		t.Fatalf("security view %+v %v", sec, err)
	}
	_ = first
}

// TestTreeIDExhaustion: with every tree id held, a complete group gets
// no tree, with the reason, instead of the manager's goroutine spinning
// forever (it did: the test ran into its deadline).
func TestTreeIDExhaustion(t *testing.T) {
	f := newFixture(t, clos(nil, nil), swNames...)
	f.s.cfg.MaxGroups = 1 << 17 // above the config's limit: only the ids run out
	for i := 1; i <= 65535; i++ {
		f.s.groups[fmt.Sprintf("held%d", i)] = &group{name: fmt.Sprintf("held%d", i), state: StateReady,
			tree: &treeState{id: uint16(i), plan: &Plan{Nodes: map[string]*PlanNode{}}}}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.joinAll(2)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("building a tree with every id in use did not return")
	}
	g := f.group()
	if g.state != StateNoTree || !strings.Contains(g.reason, "no free tree id") {
		t.Fatalf("group %s %q", g.state, g.reason)
	}
	// An id frees: the next build takes it.
	delete(f.s.groups, "held7")
	id, err := f.s.treeID()
	if err != nil || id != 7 {
		t.Fatalf("treeID after one freed: %d %v", id, err)
	}
}

// TestPanicRecovered: a panic while handling a call (in the handler's
// goroutine or on the manager's loop) answers codes.Internal, is counted
// by the module's guard, and the manager keeps serving.
func TestPanicRecovered(t *testing.T) {
	h := newHarness(t, Config{}, false)
	ctx := ctx5(t)
	c := h.dial(nil, h.token("*"), false)
	base := guard.Count(h.guard) // the count is per process (go test -count)
	// Corrupt the state so that the next Join panics on the loop.
	h.m.do(ctx, func() { h.m.st.groups = nil })
	_, err := c.Join(ctx, &protos.JoinRequest{Group: "g", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 7})
	wantCode(t, "join on a corrupt state", err, codes.Internal, "internal error")
	if guard.Count(h.guard) != base+1 {
		t.Fatalf("panics counted %d", guard.Count(h.guard))
	}
	h.m.do(ctx, func() { h.m.st.groups = map[string]*group{} })
	if _, err := c.Join(ctx, &protos.JoinRequest{Group: "g", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 7}); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
	// The interceptors, for a panic in a handler's own goroutine.
	_, err = h.m.recoverUnary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/x/Y"}, func(context.Context, any) (any, error) { panic("boom") })
	wantCode(t, "unary interceptor", err, codes.Internal, "internal error")
	err = h.m.recoverStream(nil, nil, &grpc.StreamServerInfo{FullMethod: "/x/Z"}, func(any, grpc.ServerStream) error { panic("boom") })
	wantCode(t, "stream interceptor", err, codes.Internal, "internal error")
	if guard.Count(h.guard) != base+3 || !strings.Contains(h.log.String(), "site=\"grpc /x/Y\"") {
		t.Fatalf("panics counted %d; log:\n%s", guard.Count(h.guard), h.log.String())
	}
}

// TestPlaintextLoopbackOnly: a manager without TLS answers only callers
// on loopback; there a switch is the manager's own node (its address
// must be the node's), and clients need no token unless client-auth is
// configured.
func TestPlaintextLoopbackOnly(t *testing.T) {
	h := newHarness(t, Config{}, true)
	h.m.SetSecurity(Security{}) // no TLS, no client-auth
	ctx := ctx5(t)
	// bufconn is not loopback TCP: refused.
	_, err := h.dial(nil, "", true).Join(ctx, &protos.JoinRequest{Group: "g", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 7})
	wantCode(t, "plaintext call from beyond loopback", err, codes.PermissionDenied, "serves its own node only")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.m.Serve(sctx, l)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := protos.NewManagerClient(conn)
	if _, err := c.Join(ctx, &protos.JoinRequest{Group: "g", Rank: 0, Size: 2, Address: "10.1.1.10", Qpn: 7}); err != nil {
		t.Fatalf("loopback join: %v", err)
	}
	h.graphs(closAt("s2", nil, nil))
	reg := func(addr string) error {
		st, err := c.SwitchSession(ctx)
		if err != nil {
			return err
		}
		st.Send(&protos.SwitchMessage{Msg: &protos.SwitchMessage_Register{Register: &protos.SwitchRegister{
			NodeId: "x", Address: addr, MaxTrees: 8, MaxSlots: 256, MaxRanks: 64, MaxPayload: 4096}}})
		_, err = st.Recv()
		return err
	}
	wantCode(t, "local switch with l1's address", reg(lo(1).String()), codes.PermissionDenied, "it is router l1's")
	if err := reg(lo(6).String()); err != nil {
		t.Fatalf("the node's own switch: %v", err)
	}
}
