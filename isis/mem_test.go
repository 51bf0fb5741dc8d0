package isis

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"testing"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
)

// wire is an in-memory broadcast segment: every frame sent by one port is
// delivered to all others (a LAN; with two ports, a P2P link).
type wire struct {
	mu    sync.Mutex
	ports []*memPort
}

type memFrame struct {
	src [6]byte
	pdu []byte
}

type memPort struct {
	w      *wire
	mac    [6]byte
	mtu    int // 0: no limit; else frames over it fail as the kernel's do
	rx     chan memFrame
	closed chan struct{}
	once   sync.Once
}

func (w *wire) port(mac [6]byte) *memPort {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := &memPort{w: w, mac: mac, rx: make(chan memFrame, 4096), closed: make(chan struct{})}
	w.ports = append(w.ports, p)
	return p
}

func (p *memPort) Send(dst [6]byte, pdu []byte) error {
	if p.mtu > 0 && len(llc)+len(pdu) > p.mtu {
		return syscall.EMSGSIZE // what AF_PACKET answers for a frame over the device MTU
	}
	if len(llc)+len(pdu) > maxLLCPayload {
		// The 802.3 length field would be an EtherType: the receiving
		// kernel never hands the frame to an 802.2 socket.
		return nil
	}
	p.w.mu.Lock()
	defer p.w.mu.Unlock()
	for _, o := range p.w.ports {
		if o == p {
			continue
		}
		b := append([]byte(nil), pdu...)
		select {
		case o.rx <- memFrame{p.mac, b}:
		default:
		}
	}
	return nil
}

func (p *memPort) Recv(buf []byte) ([6]byte, []byte, error) {
	select {
	case f := <-p.rx:
		return f.src, f.pdu, nil
	case <-p.closed:
		return [6]byte{}, nil, net.ErrClosed
	}
}

func (p *memPort) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// memNode is one instance wired to in-memory segments.
type memNode struct {
	in   *Instance
	stop func() // igptest.Go's
}

type memIf struct {
	name string
	typ  string
	w    *wire
	addr netip.Prefix
	mac  [6]byte
	mtu  int // default 1500
}

func testConfig(t testing.TB, n int, level string, ifs []memIf, extra ...string) *config.Config {
	y := fmt.Sprintf("hostname: r%d\nrouter-id: 10.255.0.%d\nsystem-id: 0000.0000.%04x\nisis:\n  areas: [49.0001]\n  level: %s\n  lsp-gen-interval: 50ms\n  csnp-interval: 1s\n  psnp-interval: 200ms\n  interfaces:\n", n, n, n, level)
	for _, i := range ifs {
		y += fmt.Sprintf("    - {name: %s, type: %s, hello-interval: 1s, hello-multiplier: 3, bandwidth: 10G}\n", i.name, i.typ)
	}
	if len(extra) > 0 {
		y += extra[0]
	}
	y += fmt.Sprintf("  prefixes:\n    - {prefix: 10.255.0.%d/32}\n", n)
	if len(extra) > 1 {
		y += extra[1]
	}
	cfg, err := config.Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func startMem(t testing.TB, n int, ifs []memIf) *memNode {
	t.Helper()
	return startMemOpts(t, n, "2", ifs, nil)
}

func startMemLog(t testing.TB, n int, ifs []memIf, log *slog.Logger) *memNode {
	t.Helper()
	return startMemOpts(t, n, "2", ifs, log)
}

func startMemLevel(t testing.TB, n int, level string, ifs []memIf) *memNode {
	t.Helper()
	return startMemOpts(t, n, level, ifs, nil)
}

func startMemExtra(t testing.TB, n int, ifs []memIf, isisExtra, prefixes string) *memNode {
	t.Helper()
	return startMemCfg(t, n, testConfig(t, n, "2", ifs, isisExtra, prefixes), ifs, nil)
}

func startMemOpts(t testing.TB, n int, level string, ifs []memIf, log *slog.Logger) *memNode {
	t.Helper()
	return startMemCfg(t, n, testConfig(t, n, level, ifs), ifs, log)
}

func startMemCfg(t testing.TB, n int, cfg *config.Config, ifs []memIf, log *slog.Logger) *memNode {
	t.Helper()
	return runMem(t, cfg, memOptions(t, n, ifs, log))
}

// memOptions are the Options of router n whose interfaces are ifs (on
// in-memory segments), logging to log (nil: nowhere).
func memOptions(t testing.TB, n int, ifs []memIf, log *slog.Logger) Options {
	byName := map[string]memIf{}
	for i, f := range ifs {
		f.mac = [6]byte{0x02, 0, 0, 0, byte(n), byte(i)}
		if f.mtu == 0 {
			f.mtu = 1500
		}
		byName[f.name] = f
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if testing.Verbose() && log == nil {
		log = slog.New(slog.NewTextHandler(igptest.Writer{T: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return Options{
		Logger: log,
		Interfaces: func(name string) (*IfaceInfo, error) {
			f, ok := byName[name]
			if !ok {
				return nil, errors.New("no such interface")
			}
			return &IfaceInfo{Iface: net.Interface{Index: 10 + len(name), MTU: f.mtu, Name: name, HardwareAddr: f.mac[:]}, Running: true, Addrs: []netip.Prefix{f.addr}}, nil
		},
		OpenPort: func(ifi *net.Interface) (Port, error) {
			f := byName[ifi.Name]
			p := f.w.port(f.mac)
			p.mtu = f.mtu
			return p, nil
		},
	}
}

// runMem builds an instance and runs it until the test ends.
func runMem(t testing.TB, cfg *config.Config, opt Options) *memNode {
	t.Helper()
	in, err := New(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	return &memNode{in: in, stop: igptest.Go(t, in.Run)}
}
