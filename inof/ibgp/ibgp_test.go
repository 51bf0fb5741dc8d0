package ibgp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osrg/gobgp/v4/pkg/apiutil"
	"github.com/osrg/gobgp/v4/pkg/packet/bgp"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/inof/record"
)

// These tests run real GoBGP sessions over TCP between speakers in this
// process, on 127.0.0.x and high ports (no root needed).

// node is a speaker and what it has learnt, as its events tell.
type node struct {
	t    *testing.T
	addr netip.Addr
	port int32
	sp   *Speaker

	mu       sync.Mutex
	recs     map[record.Key]record.Record
	withdraw int
	bad      []Bad
	peers    map[netip.Addr]string
}

func freePort(t *testing.T, a netip.Addr) int32 {
	l, err := net.Listen("tcp", netip.AddrPortFrom(a, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return int32(l.Addr().(*net.TCPAddr).Port)
}

func newNode(t *testing.T, last byte) *node {
	a := netip.AddrFrom4([4]byte{127, 0, 0, last})
	return &node{t: t, addr: a, port: freePort(t, a), recs: map[record.Key]record.Record{}, peers: map[netip.Addr]string{}}
}

func (n *node) event(ev Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev := ev.(type) {
	case Update:
		n.recs[ev.Key] = ev.Record
		if testLog != nil {
			testLog.Info("TEST update", "at", n.addr, "key", ev.Key, "from", ev.From)
		}
	case Withdraw:
		delete(n.recs, ev.Key)
		n.withdraw++
		if testLog != nil {
			testLog.Info("TEST withdraw", "at", n.addr, "key", ev.Key)
		}
	case Bad:
		n.bad = append(n.bad, ev)
	case PeerChange:
		n.peers[ev.Address] = ev.State
	}
}

var testLog = func() *slog.Logger {
	if os.Getenv("INOF_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return nil
}()

// start runs n's speaker with neighbours peers (all of them on
// 127.0.0.x), reflector when rr.
func (n *node) start(rr bool, mod func(c *Config), peers ...*node) {
	n.t.Helper()
	cfg := Config{ASN: 65000, RouterID: n.addr, ListenPort: n.port, ListenAddresses: []string{n.addr.String()},
		Reflector: rr, ClusterID: netip.MustParseAddr("10.255.255.1"),
		HoldTime: 3 * time.Second, ConnectRetry: time.Second,
		GracefulRestart: true, RestartTime: 2 * time.Second, DeferralTime: 2 * time.Second, Logger: testLog}
	for _, p := range peers {
		cfg.Neighbors = append(cfg.Neighbors, Neighbor{Address: p.addr, LocalAddress: n.addr, Port: uint16(p.port)})
	}
	if mod != nil {
		mod(&cfg)
	}
	sp, err := Start(context.Background(), cfg, n.event)
	if err != nil {
		n.t.Fatal(err)
	}
	n.sp = sp
	n.t.Cleanup(sp.Stop)
}

func (n *node) snapshot() map[record.Key]record.Record {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := make(map[record.Key]record.Record, len(n.recs))
	for k, v := range n.recs {
		m[k] = v
	}
	return m
}

func poll(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hosts makes n host records of switch sw, in zone.
func hosts(sw netip.Addr, n int, zone string) []record.Record {
	var out []record.Record
	for i := 0; i < n; i++ {
		out = append(out, &record.Host{Switch: sw, Port: fmt.Sprintf("p%d", i%4), Source: l2.SourceAgent, State: record.StateUp,
			Zones: []string{zone},
			Host: l2.Host{ID: fmt.Sprintf("%s-%s-h%04d", sw, zone, i), Role: l2.RoleTarget,
				Addrs: []netip.Addr{netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})}}})
	}
	return out
}

// hasExactly succeeds when n holds exactly want (same keys, same
// encoded records).
func (n *node) hasExactly(want []record.Record) func() error {
	return func() error {
		got := n.snapshot()
		if len(got) != len(want) {
			return fmt.Errorf("%s holds %d records, want %d: %s", n.addr, len(got), len(want), n.dump())
		}
		for _, r := range want {
			g, ok := got[r.Key()]
			if !ok {
				return fmt.Errorf("%s lacks %v", n.addr, r.Key())
			}
			if a, b := record.AppendTo(nil, g), record.AppendTo(nil, r); string(a) != string(b) {
				return fmt.Errorf("%s: record %v differs", n.addr, r.Key())
			}
		}
		return nil
	}
}

func (n *node) established(peers ...*node) func() error {
	return func() error {
		ps, err := n.sp.Peers(context.Background())
		if err != nil {
			return err
		}
		st := map[netip.Addr]string{}
		for _, p := range ps {
			st[p.Address] = p.State
		}
		for _, p := range peers {
			if st[p.addr] != "established" {
				return fmt.Errorf("%s: session to %s is %q", n.addr, p.addr, st[p.addr])
			}
		}
		return nil
	}
}

func concat(rs ...[]record.Record) []record.Record {
	var out []record.Record
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

// TestBatchingSurvives: 500 records in one AddPath call reach every peer
// exactly; a session drop withdraws every one of them everywhere, and
// nothing else. (GoBGP's opaque key-value family fails this: records in
// one UPDATE merge, and a drop withdraws one key.)
func TestBatchingSurvives(t *testing.T) {
	rr, a, b := newNode(t, 1), newNode(t, 2), newNode(t, 3)
	rr.start(true, nil, a, b)
	a.start(false, nil, rr)
	b.start(false, nil, rr)
	poll(t, 15*time.Second, "sessions", rr.established(a, b))

	fromA := hosts(a.addr, 500, "z1")
	fromB := hosts(b.addr, 3, "z1")
	if err := a.sp.Publish(fromA, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.sp.Publish(fromB, nil); err != nil {
		t.Fatal(err)
	}
	all := concat(fromA, fromB)
	for _, n := range []*node{rr, a, b} {
		poll(t, 20*time.Second, "all records at "+n.addr.String(), n.hasExactly(all))
	}

	// The session between the reflector and A drops (a hard reset): A's
	// 500 records leave the reflector and B, B's stay.
	if err := rr.sp.ResetPeer(context.Background(), a.addr); err != nil {
		t.Fatal(err)
	}
	poll(t, 10*time.Second, "B after the drop", b.hasExactly(fromB))
	poll(t, 10*time.Second, "reflector after the drop", rr.hasExactly(fromB))
	// The session comes back and A's records with it.
	poll(t, 20*time.Second, "B after the session is back", b.hasExactly(all))

	// A withdraws 250 of its records in one call.
	var keys []record.Key
	for _, r := range fromA[:250] {
		keys = append(keys, r.Key())
	}
	if err := a.sp.Publish(nil, keys); err != nil {
		t.Fatal(err)
	}
	left := concat(fromA[250:], fromB)
	for _, n := range []*node{rr, a, b} {
		poll(t, 10*time.Second, "after the withdrawal at "+n.addr.String(), n.hasExactly(left))
	}
	// A dies (its speaker stops with a NOTIFICATION): none of its
	// records is left anywhere.
	a.sp.Stop()
	for _, n := range []*node{rr, b} {
		poll(t, 10*time.Second, "after A died at "+n.addr.String(), n.hasExactly(fromB))
	}
	if len(b.bad) > 0 {
		t.Fatalf("bad records: %v", b.bad)
	}
}

// TestGracefulRestart: a single reflector crashes (kill -9 of its
// process) and comes back within the restart time: its clients keep
// every record (no withdrawal at all), and get them refreshed. When it
// stays away longer, they drop them.
//
// The restart time must outlast GoBGP's 5 s idle hold after a session
// loss (a fixed constant in v4.8.0: the clients refuse the restarted
// reflector's connections for that long).
func TestGracefulRestart(t *testing.T) {
	rr, a, b := newNode(t, 4), newNode(t, 5), newNode(t, 6)
	const restart = 8 * time.Second
	mod := func(c *Config) { c.RestartTime = restart }
	rrProc := rr.startProcess(restart, a, b)
	a.start(false, mod, rr)
	b.start(false, mod, rr)
	poll(t, 15*time.Second, "sessions", a.established(rr))
	poll(t, 15*time.Second, "sessions", b.established(rr))
	fromA := hosts(a.addr, 20, "z1")
	if err := a.sp.Publish(fromA, nil); err != nil {
		t.Fatal(err)
	}
	poll(t, 10*time.Second, "B has A's records", b.hasExactly(fromA))

	down := time.Now()
	rrProc.kill()
	rrProc = rr.startProcess(restart, a, b)
	poll(t, 20*time.Second, "A's session after the restart", a.established(rr))
	poll(t, 20*time.Second, "B's session after the restart", b.established(rr))
	// Wait out the restart time: what is asserted is that nothing happens.
	time.Sleep(time.Until(down.Add(restart + time.Second)))
	if err := b.hasExactly(fromA)(); err != nil {
		t.Fatal(err)
	}
	if b.withdraw != 0 {
		t.Fatalf("B saw %d withdrawals during the reflector's restart", b.withdraw)
	}
	// The records B holds are the refreshed ones: a new one from A gets
	// through the new reflector.
	more := hosts(a.addr, 21, "z1")
	a.sp.Publish(more[20:], nil)
	poll(t, 10*time.Second, "B has A's new record", b.hasExactly(more))
	// Now the reflector dies and stays away: after the restart time B
	// drops the stale records.
	rrProc.kill()
	start := time.Now()
	poll(t, restart+5*time.Second, "B drops stale records", b.hasExactly(nil))
	if d := time.Since(start); d < restart-time.Second {
		t.Fatalf("stale records dropped after %v, before the restart time", d)
	}
}

// proc is a speaker in a child process (this test binary, run by
// TestMain as a helper), so that it can be killed like a crashing daemon.
type proc struct {
	t   *testing.T
	cmd *exec.Cmd
}

type helperConfig struct {
	Addr, Port string
	Restart    time.Duration
	Peers      []string // addr:port
}

func (n *node) startProcess(restart time.Duration, peers ...*node) *proc {
	n.t.Helper()
	hc := helperConfig{Addr: n.addr.String(), Port: fmt.Sprint(n.port), Restart: restart}
	for _, p := range peers {
		hc.Peers = append(hc.Peers, netip.AddrPortFrom(p.addr, uint16(p.port)).String())
	}
	b, _ := json.Marshal(hc)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "INOF_IBGP_SPEAKER="+string(b))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		n.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	p := &proc{t: n.t, cmd: cmd}
	n.t.Cleanup(p.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		n.t.Fatalf("helper speaker: %q %v", line, err)
	}
	return p
}

func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

func TestMain(m *testing.M) {
	if s := os.Getenv("INOF_IBGP_SPEAKER"); s != "" {
		var hc helperConfig
		if err := json.Unmarshal([]byte(s), &hc); err != nil {
			panic(err)
		}
		port, _ := strconv.Atoi(hc.Port)
		cfg := Config{ASN: 65000, RouterID: netip.MustParseAddr(hc.Addr), ListenPort: int32(port), ListenAddresses: []string{hc.Addr},
			Reflector: true, ClusterID: netip.MustParseAddr("10.255.255.1"), HoldTime: 3 * time.Second,
			GracefulRestart: true, RestartTime: hc.Restart, DeferralTime: 2 * time.Second, Logger: testLog}
		for _, p := range hc.Peers {
			ap := netip.MustParseAddrPort(p)
			cfg.Neighbors = append(cfg.Neighbors, Neighbor{Address: ap.Addr(), LocalAddress: cfg.RouterID, Port: ap.Port()})
		}
		if _, err := Start(context.Background(), cfg, func(Event) {}); err != nil {
			panic(err)
		}
		fmt.Println("ready")
		select {}
	}
	os.Exit(m.Run())
}

// TestPolicy: export filters on the reflector by zone and by neighbour,
// import filters on a client by switch.
func TestPolicy(t *testing.T) {
	rr, a, b, c := newNode(t, 7), newNode(t, 8), newNode(t, 9), newNode(t, 10)
	rr.start(true, func(cfg *Config) {
		cfg.Filters = []Filter{{Export: true, Neighbors: []netip.Addr{b.addr}, Zones: []string{"secret"}}}
	}, a, b, c)
	a.start(false, nil, rr)
	b.start(false, nil, rr)
	c.start(false, func(cfg *Config) {
		cfg.Filters = []Filter{{Switches: []netip.Addr{a.addr}}}
	}, rr)
	poll(t, 15*time.Second, "sessions", rr.established(a, b, c))
	open, secret := hosts(a.addr, 3, "open"), hosts(a.addr, 2, "secret")
	fromB := hosts(b.addr, 1, "open")
	a.sp.Publish(concat(open, secret), nil)
	b.sp.Publish(fromB, nil)
	poll(t, 10*time.Second, "reflector has everything", rr.hasExactly(concat(open, secret, fromB)))
	poll(t, 10*time.Second, "B gets no secret zone", b.hasExactly(concat(open, fromB)))
	poll(t, 10*time.Second, "C takes nothing from switch A", c.hasExactly(fromB))
}

// TestMD5: a password mismatch gives no session; the right password does.
func TestMD5(t *testing.T) {
	if os.Geteuid() != 0 {
		// TCP_MD5SIG needs no privilege, but some sandboxes filter it.
		t.Log("not root")
	}
	rr, a := newNode(t, 11), newNode(t, 12)
	rr.start(true, func(c *Config) { c.Neighbors[0].Password = "right" }, a)
	a.start(false, func(c *Config) { c.Neighbors[0].Password = "wrong" }, rr)
	// Several connect retries (1 s each) without a session.
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if rr.established(a)() == nil {
			t.Fatal("session established with mismatched MD5 passwords")
		}
		time.Sleep(100 * time.Millisecond)
	}
	cfg := a.sp.cfg
	cfg.Neighbors = []Neighbor{cfg.Neighbors[0]}
	cfg.Neighbors[0].Password = "right"
	if err := a.sp.Reconfigure(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	poll(t, 15*time.Second, "session with matching passwords", rr.established(a))
}

// TestBadRecord: a route of our family without a valid record is reported
// as Bad and does not disturb the others.
func TestBadRecord(t *testing.T) {
	rr, a := newNode(t, 13), newNode(t, 14)
	rr.start(true, nil, a)
	a.start(false, nil, rr)
	poll(t, 15*time.Second, "session", rr.established(a))
	good := hosts(a.addr, 2, "z")
	// A record whose content names another switch than its NLRI.
	liar := hosts(a.addr, 3, "z")[2].(*record.Host) // not one of good's keys
	k := liar.Key()
	liar.Switch = netip.MustParseAddr("10.9.9.9")
	p, err := a.sp.path(liar, k, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.sp.s.AddPath(apiutilAdd(p)); err != nil {
		t.Fatal(err)
	}
	a.sp.Publish(good, nil)
	poll(t, 10*time.Second, "good records at the reflector", rr.hasExactly(good))
	poll(t, 5*time.Second, "bad record reported", func() error {
		rr.mu.Lock()
		defer rr.mu.Unlock()
		if len(rr.bad) == 0 {
			return fmt.Errorf("no Bad event")
		}
		if !strings.Contains(rr.bad[0].Err.Error(), "does not match the NLRI") {
			return fmt.Errorf("bad: %v", rr.bad[0].Err)
		}
		return nil
	})
}

func TestKeyNLRI(t *testing.T) {
	for _, r := range []record.Record{hosts(netip.MustParseAddr("10.255.0.3"), 1, "z")[0],
		&record.Manifest{Origin: netip.MustParseAddr("10.255.0.1")}} {
		n, err := nlri(r.Key())
		if err != nil {
			t.Fatal(err)
		}
		k, err := keyOf(n)
		if err != nil || k != r.Key() {
			t.Fatalf("%v -> %v -> %v %v", r.Key(), n, k, err)
		}
		// RD type 1 with the origin and the kind; a /128.
		if s := n.String(); !strings.HasPrefix(s, r.Key().Origin.String()+":"+fmt.Sprint(int(r.Key().Kind))+":") || !strings.HasSuffix(s, "/128") {
			t.Fatalf("NLRI %s", s)
		}
	}
	_ = sort.Strings
}

func apiutilAdd(p *apiutil.Path) apiutil.AddPathRequest {
	return apiutil.AddPathRequest{Paths: []*apiutil.Path{p}}
}

func (n *node) dump() string {
	var s []string
	for k, r := range n.snapshot() {
		s = append(s, fmt.Sprintf("%v=%v", k, r.(*record.Host).Host.ID))
	}
	return strings.Join(s, " ")
}

// TestStateName: the watched FSM states and the API's session states
// have the same names.
func TestStateName(t *testing.T) {
	for s, want := range []string{"idle", "connect", "active", "opensent", "openconfirm", "established", "unknown"} {
		if got := stateName(bgp.FSMState(s)); got != want {
			t.Errorf("FSM state %d: %q, want %q", s, got, want)
		}
	}
}
