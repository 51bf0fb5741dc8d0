package scenarios

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/protos"
	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/interop"
	"github.com/fared/fared/interop/incfabric"
)

// The INC control plane under attack from a host (issue 25, rows 1 and
// 7): an attacker namespace attached to a leaf like any host tries every
// control-plane attack against the real manager while a legitimate job
// runs allreduce; every attack fails with its counter and log line, and
// the job's results stay exact on an untouched tree.
//
// The attack functions take the lab, the attacker's node, the manager's
// node and address, and the victim group, so they run on any fabric with
// an INC manager (farelab gives the manager TLS and client-auth, its
// switches certificates, and the hosts tokens).

// incSecurity reads the manager's trust view (counters by reason).
func incSecurity(t *testing.T, ctx context.Context, l *interop.Lab, mgr string) wire.INCSecurity {
	t.Helper()
	var v wire.INCSecurity
	if err := l.FarectlJSON(ctx, mgr, &v, "inc", "security"); err != nil {
		t.Fatal(err)
	}
	return v
}

// expectRefused checks that each reason's counter moved by at least its
// count since before, and that the manager logged the reason.
func expectRefused(t *testing.T, ctx context.Context, l *interop.Lab, mgr string, before map[string]uint64, want map[string]uint64) {
	t.Helper()
	now := incSecurity(t, ctx, l, mgr).Refused
	b, _ := os.ReadFile(l.FaredLog(mgr))
	logged := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `msg="inc manager refused a call"`) {
			for r := range want {
				logged[r] = logged[r] || strings.Contains(line, " reason="+r+" ")
			}
		}
	}
	for r, n := range want {
		if now[r]-before[r] < n {
			t.Errorf("refusals %s: %d more, want at least %d (now %v)", r, now[r]-before[r], n, now)
		}
		if !logged[r] {
			t.Errorf("the manager's log has no refusal line for %s", r)
		}
	}
}

func waitINCSwitches(t *testing.T, ctx context.Context, l *interop.Lab, mgr string, n int) {
	poll(t, ctx, 90*time.Second, fmt.Sprintf("%d INC switches registered and in the topology", n), incfabric.SwitchesReady(ctx, l, mgr, n))
}

func incGroup(t *testing.T, ctx context.Context, l *interop.Lab, mgr, name string) wire.INCGroup {
	t.Helper()
	var gs []wire.INCGroup
	if err := l.FarectlJSON(ctx, mgr, &gs, "inc", "groups"); err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %s: %+v", name, gs)
	return wire.INCGroup{}
}

// nsDialer dials TCP from namespace ns: the socket is made by a thread
// switched into it (a socket stays in the namespace it was made in).
func nsDialer(ns string) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		var c net.Conn
		err := nsenter.DoNamed(ns, func() (err error) {
			var d net.Dialer
			c, err = d.DialContext(ctx, "tcp", addr)
			return err
		})
		if err != nil && c != nil {
			c.Close() // made, but the thread could not come back
			c = nil
		}
		return c, err
	}
}

// attackerClient is a gRPC client of the manager from the attacker's
// namespace: TLS verified with the lab CA (public), an optional client
// certificate and token.
func attackerClient(t *testing.T, l *interop.Lab, attacker, mgrAddr string, cert *tls.Certificate, token string) protos.ManagerClient {
	t.Helper()
	roots, err := auth.LoadCA(l.INCTLSFiles("").CA)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{RootCAs: roots}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(cfg)),
		grpc.WithContextDialer(nsDialer(l.Node(attacker).Netns))}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(auth.TokenCredentials{Token: token}))
	}
	conn, err := grpc.NewClient(mgrAddr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return protos.NewManagerClient(conn)
}

func hostAddr(l *interop.Lab, node string) string {
	return l.Node(node).Interfaces[0].Addr.Addr().String()
}

func wantRefused(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

// AttackINCNoToken: fareinc without a token says so and sends nothing; a
// client that joins without one anyway is refused (no_token).
func AttackINCNoToken(t *testing.T, ctx context.Context, l *interop.Lab, attacker, mgr, mgrAddr, group string) {
	before := incSecurity(t, ctx, l, mgr).Refused
	out, err := l.Exec(ctx, attacker, "env", "-u", "FAREINC_TOKEN", "-u", "FAREINC_TOKEN_FILE", bins.Fareinc, "allreduce",
		"--manager", mgrAddr, "--group", group, "--rank", "0", "--ranks", "3", "--size", "4KB")
	if err == nil || !strings.Contains(string(out), "no join token") {
		t.Errorf("fareinc without a token: %v\n%s", err, out)
	}
	c := attackerClient(t, l, attacker, mgrAddr, nil, "")
	_, err = c.Join(ctx, &protos.JoinRequest{Group: group, Rank: 0, Size: 3, Address: hostAddr(l, attacker), Qpn: 0x4242})
	wantRefused(t, "join without a token", err, codes.Unauthenticated)
	forged, _ := auth.Mint([]byte(strings.Repeat("guess", 8)), auth.Claims{Group: "*", Expires: time.Now().Add(time.Hour).Unix()}, time.Now())
	_, err = attackerClient(t, l, attacker, mgrAddr, nil, forged).Join(ctx, &protos.JoinRequest{Group: group, Rank: 0, Size: 3,
		Address: hostAddr(l, attacker), Qpn: 0x4243})
	wantRefused(t, "join with a forged token", err, codes.Unauthenticated)
	expectRefused(t, ctx, l, mgr, before, map[string]uint64{"no_token": 1, "bad_token": 1})
}

// AttackINCOtherGroupToken: the attacker is a tenant with a token for
// its own jobs ("evil-*"); fareinc with it cannot join the victim group.
func AttackINCOtherGroupToken(t *testing.T, ctx context.Context, l *interop.Lab, attacker, mgr, mgrAddr, group string) {
	before := incSecurity(t, ctx, l, mgr).Refused
	tok, err := l.MintINCToken("evil-*", "tenant evil", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Exec(ctx, attacker, bins.Fareinc, "allreduce", "--token", tok, "--manager", mgrAddr, "--group", group,
		"--rank", "0", "--ranks", "3", "--size", "4KB")
	if err == nil || !strings.Contains(string(out), "PermissionDenied") {
		t.Errorf("fareinc with another group's token: %v\n%s", err, out)
	}
	expectRefused(t, ctx, l, mgr, before, map[string]uint64{"token_scope": 1})
}

// AttackINCOtherClients: the attacker learnt the victim's client ids (the
// worst case: they are random) and, with its tenant token, tries to read
// the victim's tree and key, heartbeat for it, report timeouts on its
// tree until its root is excluded, and make it leave.
func AttackINCOtherClients(t *testing.T, ctx context.Context, l *interop.Lab, attacker, mgr, mgrAddr, group string) {
	before := incSecurity(t, ctx, l, mgr).Refused
	var cs []wire.INCClient
	if err := l.FarectlJSON(ctx, mgr, &cs, "inc", "clients"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		if c.Group == group {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		t.Fatalf("no clients of %s: %+v", group, cs)
	}
	g := incGroup(t, ctx, l, mgr, group)
	tok, _ := l.MintINCToken("evil-*", "tenant evil", time.Hour)
	c := attackerClient(t, l, attacker, mgrAddr, nil, tok)
	_, err := c.GetTree(ctx, &protos.GetTreeRequest{ClientId: ids[0]})
	wantRefused(t, "GetTree with the victim's id", err, codes.PermissionDenied)
	_, err = c.Heartbeat(ctx, &protos.HeartbeatRequest{ClientId: ids[0]})
	wantRefused(t, "Heartbeat with the victim's id", err, codes.PermissionDenied)
	for range 5 {
		_, err = c.ReportTimeouts(ctx, &protos.TimeoutReport{ClientId: ids[0], TreeId: uint32(g.TreeID), Generation: g.Generation, Timeouts: 8})
		wantRefused(t, "ReportTimeouts on the victim's tree", err, codes.PermissionDenied)
	}
	for _, id := range ids {
		_, err = c.Leave(ctx, &protos.LeaveRequest{ClientId: id})
		wantRefused(t, "Leave of the victim", err, codes.PermissionDenied)
	}
	expectRefused(t, ctx, l, mgr, before, map[string]uint64{"token_scope": uint64(7 + len(ids))})
}

// registerFake opens a switch session from the attacker and registers
// addr; it returns the manager's answer.
func registerFake(ctx context.Context, c protos.ManagerClient, addr string) error {
	st, err := c.SwitchSession(ctx)
	if err != nil {
		return err
	}
	if err := st.Send(&protos.SwitchMessage{Msg: &protos.SwitchMessage_Register{Register: &protos.SwitchRegister{
		NodeId: "evil", Address: addr, MaxTrees: 64, MaxSlots: 256, MaxRanks: 64, MaxPayload: 4096}}}); err != nil && err != io.EOF {
		return err
	}
	_, err = st.Recv()
	return err
}

// AttackINCFakeSwitch: the attacker registers a "switch" at its own
// address (in the leaf's host subnet, where it would aggregate that
// leaf's ranks) or at switch victim's address: without a certificate,
// with a self-made one, with one of the CA for a router that does not
// exist, and with victim's own certificate (as if stolen) at its own
// address. All refused; the registered switches do not change.
func AttackINCFakeSwitch(t *testing.T, ctx context.Context, l *interop.Lab, attacker, mgr, mgrAddr, victim string) {
	before := incSecurity(t, ctx, l, mgr).Refused
	var swBefore []wire.INCRegisteredSwitch
	if err := l.FarectlJSON(ctx, mgr, &swBefore, "inc", "switches"); err != nil {
		t.Fatal(err)
	}
	mine := hostAddr(l, attacker)
	victimAddr := l.Node(victim).Loopback.String()
	ca, err := auth.LoadCAFiles(l.INCDir())
	if err != nil {
		t.Fatal(err)
	}
	ghost, err := ca.Issue("ghost", []netip.Addr{netip.MustParseAddr(mine)}, []string{"ghost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ghostCert := ghost.TLS()
	self, _ := auth.NewCA("evil", time.Hour)
	selfLeaf, _ := self.Issue(victim, []netip.Addr{l.Node(victim).Loopback}, []string{victim}, time.Hour)
	selfCert := selfLeaf.TLS()
	stolen, err := tls.LoadX509KeyPair(l.INCTLSFiles(victim).Cert, l.INCTLSFiles(victim).Key)
	if err != nil {
		t.Fatal(err)
	}
	stolen.Leaf, _ = x509.ParseCertificate(stolen.Certificate[0])
	for _, c := range []struct {
		what string
		cert *tls.Certificate
		addr string
	}{
		{"no certificate, in the host subnet", nil, mine},
		{"no certificate, " + victim + "'s address", nil, victimAddr},
		{"a self-made certificate for " + victim, &selfCert, victimAddr},
		{"the CA's certificate of a router that does not exist", &ghostCert, mine},
		{victim + "'s certificate, in the host subnet", &stolen, mine},
	} {
		err := registerFake(ctx, attackerClient(t, l, attacker, mgrAddr, c.cert, ""), c.addr)
		wantRefused(t, "fake switch: "+c.what, err, codes.PermissionDenied)
	}
	expectRefused(t, ctx, l, mgr, before, map[string]uint64{"switch_no_cert": 2, "switch_bad_cert": 1,
		"switch_unknown_router": 1, "switch_address": 1})
	var swAfter []wire.INCRegisteredSwitch
	if err := l.FarectlJSON(ctx, mgr, &swAfter, "inc", "switches"); err != nil {
		t.Fatal(err)
	}
	if len(swAfter) != len(swBefore) {
		t.Errorf("registered switches changed: %+v -> %+v", swBefore, swAfter)
	}
	for _, s := range swAfter {
		if s.Address == mine || !s.Alive {
			t.Errorf("after the attack: %+v", s)
		}
	}
}

// AttackINCGroupFlood: with its tenant token the attacker creates groups
// until refused: it gets the per-token cap, not the manager's memory.
func AttackINCGroupFlood(t *testing.T, ctx context.Context, l *interop.Lab, attacker, mgr, mgrAddr string) {
	sec := incSecurity(t, ctx, l, mgr)
	tok, _ := l.MintINCToken("evil-*", "tenant evil flood", time.Hour)
	c := attackerClient(t, l, attacker, mgrAddr, nil, tok)
	joined := 0
	var last error
	for i := range sec.MaxGroupsPerToken + 10 {
		_, err := c.Join(ctx, &protos.JoinRequest{Group: fmt.Sprintf("evil-%d", i), Rank: 0, Size: uint32(sec.MaxGroupSize),
			Address: hostAddr(l, attacker), Qpn: uint32(0x5000 + i)})
		if err != nil {
			last = err
			break
		}
		joined++
	}
	if joined != sec.MaxGroupsPerToken || status.Code(last) != codes.ResourceExhausted {
		t.Errorf("flood: %d groups joined (cap %d), then %v", joined, sec.MaxGroupsPerToken, last)
	}
	expectRefused(t, ctx, l, mgr, sec.Refused, map[string]uint64{"cap_groups_per_token": 1})
	// Without heartbeats the flood's groups die (dead-after).
	poll(t, ctx, 30*time.Second, "the flood's groups gone", func() error {
		if n := incSecurity(t, ctx, l, mgr).Groups; n > sec.Groups {
			return fmt.Errorf("%d groups", n)
		}
		return nil
	})
}
