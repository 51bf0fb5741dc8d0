package ospf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/ospf/packet"
)

// wire is an in-memory IP segment: every packet sent by one port reaches
// all others (a LAN; with two ports, a P2P link). Receivers filter by
// destination, as the instance does.
type wire struct {
	mu    sync.Mutex
	ports []*memPort
	drop  func(src netip.Addr, pkt []byte) bool // optional loss
	// mangle, optional, rewrites a packet in flight (a neighbour that
	// behaves differently).
	mangle func(src netip.Addr, pkt []byte) []byte
}

type memPkt struct {
	src, dst netip.Addr
	pkt      []byte
}

type memPort struct {
	w      *wire
	addr   netip.Addr
	rx     chan memPkt
	closed chan struct{}
	once   sync.Once
}

func (w *wire) port(addr netip.Addr) *memPort {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := &memPort{w: w, addr: addr, rx: make(chan memPkt, 8192), closed: make(chan struct{})}
	w.ports = append(w.ports, p)
	return p
}

func (p *memPort) Send(dst netip.Addr, pkt []byte) error {
	p.w.mu.Lock()
	defer p.w.mu.Unlock()
	if p.w.drop != nil && p.w.drop(p.addr, pkt) {
		return nil
	}
	if p.w.mangle != nil {
		pkt = p.w.mangle(p.addr, pkt)
	}
	for _, o := range p.w.ports {
		if o == p {
			continue
		}
		select {
		case o.rx <- memPkt{p.addr, dst, append([]byte(nil), pkt...)}:
		default:
		}
	}
	return nil
}

func (p *memPort) Recv(buf []byte) (netip.Addr, netip.Addr, []byte, error) {
	select {
	case f := <-p.rx:
		return f.src, f.dst, f.pkt, nil
	case <-p.closed:
		return netip.Addr{}, netip.Addr{}, nil, net.ErrClosed
	}
}

func (p *memPort) JoinAllDRouters(bool) error { return nil }

func (p *memPort) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

type memNode struct {
	in   *Instance
	stop func() // igptest.Go's
}

type memIf struct {
	name string
	typ  string // p2p | broadcast
	w    *wire
	addr netip.Prefix
	area string // default 0.0.0.0
	prio int    // -1: default
	mtu  int    // default 1500
}

// testYAML renders a config for router n (router id 10.255.0.n).
func testYAML(n int, ifs []memIf, prefixes string) string {
	y := fmt.Sprintf("hostname: r%d\nrouter-id: 10.255.0.%d\nospf:\n  lsa-gen-interval: 50ms\n  min-ls-arrival: 0s\n  retransmit-interval: 1s\n  interfaces:\n", n, n)
	for _, i := range ifs {
		area := i.area
		if area == "" {
			area = "0.0.0.0"
		}
		prio := ""
		if i.prio >= 0 && i.typ == "broadcast" {
			prio = fmt.Sprintf(", priority: %d", i.prio)
		}
		y += fmt.Sprintf("    - {name: %s, type: %s, area: %s, hello-interval: 1s, dead-interval: 3s, bandwidth: 10G%s}\n", i.name, i.typ, area, prio)
	}
	if prefixes == "" {
		prefixes = fmt.Sprintf("    - {prefix: 10.255.0.%d/32}\n", n)
	}
	return y + "  prefixes:\n" + prefixes
}

func parse(t testing.TB, y string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return cfg
}

func startMem(t testing.TB, n int, ifs []memIf) *memNode {
	t.Helper()
	return startMemCfg(t, parse(t, testYAML(n, ifs, "")), ifs, nil)
}

func startMemCfg(t testing.TB, cfg *config.Config, ifs []memIf, log *slog.Logger) *memNode {
	t.Helper()
	byName := map[string]memIf{}
	for _, f := range ifs {
		byName[f.name] = f
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	in, err := New(cfg, Options{
		Logger: log,
		Interfaces: func(name string) (*IfaceInfo, error) {
			f, ok := byName[name]
			if !ok {
				return nil, errors.New("no such interface")
			}
			mtu := f.mtu
			if mtu == 0 {
				mtu = 1500
			}
			return &IfaceInfo{Iface: net.Interface{Index: 10 + len(name), MTU: mtu, Name: name}, Running: true, Addrs: []netip.Prefix{f.addr}}, nil
		},
		OpenPort: func(ifi *net.Interface, addr netip.Addr) (Port, error) {
			f := byName[ifi.Name]
			return f.w.port(f.addr.Addr()), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &memNode{in: in, stop: igptest.Go(t, in.Run)}
	return m
}

// fullCount succeeds when m has exactly want Full neighbours.
func fullCount(m *memNode, want int) func() error {
	return func() error {
		ns, err := m.in.Neighbors(context.Background())
		if err != nil {
			return err
		}
		full := 0
		var s []string
		for _, n := range ns {
			s = append(s, n.RouterID+"="+n.State)
			if n.State == "Full" {
				full++
			}
		}
		if full != want {
			return fmt.Errorf("%s: %d Full, want %d: %v", m.in.rid, full, want, s)
		}
		return nil
	}
}

// digest lists the live LSAs of a node as area/type/id/adv/seq/checksum,
// link-scope ones (type 9, per link) excepted.
func digest(m *memNode) (string, int, error) {
	v, err := m.in.Database(context.Background(), DatabaseQuery{})
	if err != nil {
		return "", 0, err
	}
	var s []string
	for _, e := range v {
		if e.Age < MaxAge && e.Type != packet.LSAOpaqueLink {
			s = append(s, fmt.Sprintf("%s/%d/%s/%s/%s/%s", e.Area, e.Type, e.ID, e.AdvRouter, e.SeqHex, e.ChecksumX))
		}
	}
	sort.Strings(s)
	return strings.Join(s, "\n"), len(s), nil
}

// sameDB succeeds when all nodes hold the same live LSAs.
func sameDB(ms ...*memNode) func() error {
	return func() error {
		first, _, err := digest(ms[0])
		if err != nil {
			return err
		}
		for _, m := range ms[1:] {
			d, _, err := digest(m)
			if err != nil {
				return err
			}
			if d != first {
				return fmt.Errorf("databases differ:\n%s:\n%s\n%s:\n%s", ms[0].in.rid, first, m.in.rid, d)
			}
		}
		return nil
	}
}

// sameDBn is sameDB with an expected number of live LSAs.
func sameDBn(want int, ms ...*memNode) func() error {
	return func() error {
		if _, n, _ := digest(ms[0]); n != want {
			d, _, _ := digest(ms[0])
			return fmt.Errorf("%d live LSAs, want %d:\n%s", n, want, d)
		}
		return sameDB(ms...)()
	}
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
