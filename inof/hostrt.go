package inof

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/netip"
	"os/exec"
	"sync"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inof/agent"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/internal/netif"
)

// hostRT runs the host agent: the agent state machine on one loop
// goroutine, one packet socket per switch-facing interface, and the hook.
type hostRT struct {
	log   *slog.Logger
	cfg   *Config
	lp    *loop.Loop
	ag    *agent.Agent
	ports map[string]*port
	hook  *hookRunner
	guard *guard.Guard
	done  chan struct{} // closed when the loop has stopped
	retry time.Time

	stopping time.Time // deregistration in progress until answered or this deadline
	stop     context.CancelFunc
}

type (
	hostFrameEv struct {
		iface string
		b     []byte
	}
	shutdownEv struct{}
	registerEv struct {
		on    bool
		reply chan<- struct{}
	}
)

func newHostRT(log *slog.Logger, g *guard.Guard, cfg *Config) *hostRT {
	r := &hostRT{log: log, cfg: cfg, lp: loop.New(4096), ports: map[string]*port{}, guard: g, done: make(chan struct{})}
	r.lp.Guard(g)
	return r
}

func (c *Config) agentConfig() agent.Config {
	return agent.Config{ID: c.ID, Role: c.HostRole, NQN: c.NQN, Interfaces: c.Interfaces, Hold: c.HostHold, MAC: c.HostMAC, Key: c.Key}
}

func (r *hostRT) run(ctx context.Context) error {
	r.hook = newHookRunner(r.log, r.guard, r.cfg.Hook, r.cfg.HookTimeout)
	defer r.hook.close()
	r.ag = agent.New(r.cfg.agentConfig(), r.log, r, r.hook.queue, time.Now())
	// The loop outlives ctx by the deregistration (at most a second).
	inner, stop := context.WithCancel(context.Background())
	r.stop = stop
	defer close(r.done)
	go func() {
		select {
		case <-ctx.Done():
			post(r.done, r.lp, shutdownEv{})
		case <-inner.Done():
		}
	}()
	r.openPorts()
	r.lp.Run(inner, 50*time.Millisecond, time.Now, r)
	stop()
	for _, p := range r.ports {
		p.close()
	}
	return nil
}

func (r *hostRT) openPorts() {
	for _, name := range r.cfg.Interfaces {
		if _, ok := r.ports[name]; ok {
			continue
		}
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			continue
		}
		p, err := openPort(ifi, l2.EtherType)
		if err != nil {
			r.log.Warn("inof: interface", "iface", name, "err", err)
			continue
		}
		r.ports[name] = p
		go p.read(r.guard, func(f []byte) { post(r.done, r.lp, hostFrameEv{name, f}) }, func(err error) {
			post(r.done, r.lp, readErr{name, err})
		})
		r.refresh(name)
	}
}

// refresh reads an interface from the kernel and tells the agent.
func (r *hostRT) refresh(name string) {
	info, err := netif.Lookup(name)
	if err != nil {
		r.ag.Interface(name, nil, nil, false)
		return
	}
	var addrs []netip.Addr
	for _, p := range info.Addrs {
		a := p.Addr()
		if a.IsLinkLocalUnicast() || a.IsLoopback() {
			continue // not reachable from other hosts
		}
		addrs = append(addrs, a)
	}
	r.ag.Interface(name, info.Iface.HardwareAddr, addrs, info.Running)
}

// Send implements agent.Tx.
func (r *hostRT) Send(iface string, dst net.HardwareAddr, m *l2.Message) {
	p := r.ports[iface]
	if p == nil {
		return
	}
	f, err := l2.EncodeFrame(dst, p.mac, m)
	if err != nil {
		r.log.Error("inof: encode", "iface", iface, "err", err)
		return
	}
	if err := p.send(f); err != nil {
		r.log.Debug("inof: send", "iface", iface, "err", err)
	}
}

// Handle implements loop.Handler.
func (r *hostRT) Handle(ev any) {
	r.ag.SetNow(time.Now())
	switch ev := ev.(type) {
	case hostFrameEv:
		f, err := l2.DecodeFrame(ev.b)
		if err != nil {
			r.ag.BadFrame(ev.iface, err)
			return
		}
		r.ag.Frame(ev.iface, f.Src, &f.Message)
	case linkEv:
		if _, ok := r.ports[ev.ev.Name]; ok {
			r.refresh(ev.ev.Name)
		} else {
			r.openPorts()
		}
	case readErr:
		r.log.Error("inof: reader stopped", "iface", ev.port, "err", ev.err)
		if p := r.ports[ev.port]; p != nil {
			p.close()
		}
		delete(r.ports, ev.port)
	case shutdownEv:
		r.ag.Deregister()
		r.stopping = time.Now().Add(time.Second)
	case registerEv:
		if ev.on {
			r.ag.Register()
		} else {
			r.ag.Deregister()
		}
		close(ev.reply)
	}
}

// Tick implements loop.Handler.
func (r *hostRT) Tick(now time.Time) {
	r.ag.Tick(now)
	if !r.stopping.IsZero() && (!r.ag.Pending() || now.After(r.stopping)) {
		r.stop()
		return
	}
	if now.After(r.retry) {
		r.retry = now.Add(time.Second)
		if len(r.ports) < len(r.cfg.Interfaces) {
			r.openPorts()
		}
	}
}

// Settle implements loop.Handler.
func (r *hostRT) Settle(time.Time) {}

// eventWire converts an agent event for the API and the hook.
func eventWire(e agent.Event) wire.INOFEvent {
	p := e.Peer
	w := wire.INOFEvent{Time: e.Time.UTC().Format(time.RFC3339Nano), Type: e.Type.String(), Host: p.Key.ID,
		Zones: append([]string{}, p.Zones...), Role: p.Host.Role.String(), NQN: p.Host.NQN, Addresses: addrStrings(p.Host.Addrs),
		Switch: p.Key.Switch.String(), SwitchName: p.SwitchName, Port: p.Key.Port, Via: e.Via, Reason: e.Reason}
	if p.Source != 0 {
		w.Source = p.Source.String()
	}
	if len(p.Host.MAC) > 0 {
		w.MAC = p.Host.MAC.String()
	}
	if len(w.Zones) > 0 {
		w.Zone = w.Zones[0]
	}
	return w
}

func addrStrings(as []netip.Addr) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.String())
	}
	return out
}

// hookRunner runs the hook for each event, one at a time, off the
// agent's goroutine: the executable gets the event as JSON on stdin
// (wire.INOFEvent), and INOF_EVENT, INOF_HOST set. Events wait in a
// hookQueue, which keeps one per peer path: a burst of changes about one
// peer while the hook is busy runs it once, with the final state.
type hookRunner struct {
	log     *slog.Logger
	path    string
	timeout time.Duration
	guard   *guard.Guard
	exec    func(agent.Event) // the hook's run (tests replace it)

	mu     sync.Mutex
	q      hookQueue
	wake   chan struct{}
	done   chan struct{}
	closed bool
	runs   uint64
}

func newHookRunner(log *slog.Logger, g *guard.Guard, path string, timeout time.Duration) *hookRunner {
	h := &hookRunner{log: log, guard: g, path: path, timeout: timeout, wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.exec = h.run1
	go h.run()
	return h
}

func (h *hookRunner) queue(e agent.Event) {
	if h.path == "" {
		return
	}
	h.mu.Lock()
	h.q.put(e)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// counts returns how many events were coalesced into a later one, and
// how many times the hook ran.
func (h *hookRunner) counts() (coalesced, runs uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.q.coalesced, h.runs
}

func (h *hookRunner) run() {
	defer close(h.done)
	for range h.wake {
		for {
			h.mu.Lock()
			e, ok := h.q.take()
			if !ok {
				closed := h.closed
				h.mu.Unlock()
				if closed {
					return
				}
				break
			}
			h.runs++
			h.mu.Unlock()
			// A bug in the run (the JSON, the environment) costs this
			// event, not the agent.
			h.guard.Do("hook", nil, func() { h.exec(e) })
		}
	}
}

func (h *hookRunner) run1(e agent.Event) {
	b, _ := json.Marshal(eventWire(e))
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.path)
	cmd.Stdin = bytes.NewReader(append(b, '\n'))
	cmd.Env = append(cmd.Environ(), "INOF_EVENT="+e.Type.String(), "INOF_HOST="+e.Peer.Key.ID)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.log.Warn("inof: hook failed", "hook", h.path, "event", e.Type, "peer", e.Peer.Key.ID, "err", err, "output", string(bytes.TrimSpace(out)))
	}
}

// close lets queued events run (each bounded by the timeout) and stops.
func (h *hookRunner) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	close(h.wake)
	<-h.done
}

// hookQueue holds the events the hook has not run yet, at most one per
// peer path: a newer event about a path replaces the one waiting (in its
// place in the order), since the hook acts on a path's state (connect,
// disconnect), and only the last one matters.
type hookQueue struct {
	order     []agent.PathKey
	waiting   map[agent.PathKey]agent.Event
	coalesced uint64
}

func (q *hookQueue) put(e agent.Event) {
	if q.waiting == nil {
		q.waiting = map[agent.PathKey]agent.Event{}
	}
	k := e.Peer.Key
	if _, ok := q.waiting[k]; ok {
		q.coalesced++
	} else {
		q.order = append(q.order, k)
	}
	q.waiting[k] = e
}

func (q *hookQueue) take() (agent.Event, bool) {
	if len(q.order) == 0 {
		return agent.Event{}, false
	}
	k := q.order[0]
	q.order = q.order[1:]
	e := q.waiting[k]
	delete(q.waiting, k)
	if len(q.order) == 0 {
		q.order = nil
	}
	return e, true
}
