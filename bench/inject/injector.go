package inject

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/isis/packet"
)

// FloodMode says on which circuits the injector floods each LSP.
type FloodMode int

const (
	// FloodAll sends every LSP on every circuit, as a leaf receives it
	// from each of its spines in a real fabric.
	FloodAll FloodMode = iota
	// FloodOne sends every LSP on one circuit only (the first that came
	// Up): the database reaches the RUT from a single neighbour, which also
	// sends CSNPs and answers requests; on the other circuits the injector
	// only acknowledges what the RUT floods on to it.
	FloodOne
)

// Config of an injector. Zero values take the defaults shown.
type Config struct {
	Fabric         *closgen.Fabric
	Area           string        // DefaultArea
	LSPMTU         int           // DefaultLSPMTU
	Lifetime       uint16        // DefaultLifetime
	HelloInterval  time.Duration // 1s
	HoldMultiplier int           // 3
	// CSNPInterval: complete sequence numbers PDUs on every Up circuit,
	// so that the RUT asks for what it lost (its socket may overflow
	// while the whole database arrives). Default 10s, FRR's and fared's
	// default on point-to-point circuits.
	CSNPInterval time.Duration
	// Retransmit: an LSP not acknowledged on a circuit after this long is
	// sent again (ISO 10589's minimumLSPTransmissionInterval). Default 5s.
	Retransmit time.Duration
	Flood      FloodMode
	// Rate limits LSP transmissions per circuit (LSPs per second); 0 is
	// as fast as the socket takes them.
	Rate int
	Log  *slog.Logger
}

func (c Config) withDefaults() Config {
	c.Area = cmp.Or(c.Area, DefaultArea)
	c.LSPMTU = cmp.Or(c.LSPMTU, DefaultLSPMTU)
	c.Lifetime = cmp.Or(c.Lifetime, DefaultLifetime)
	c.HelloInterval = cmp.Or(c.HelloInterval, time.Second)
	c.HoldMultiplier = cmp.Or(c.HoldMultiplier, 3)
	c.CSNPInterval = cmp.Or(c.CSNPInterval, 10*time.Second)
	c.Retransmit = cmp.Or(c.Retransmit, 5*time.Second)
	c.Log = cmp.Or(c.Log, slog.New(slog.DiscardHandler))
	return c
}

// Injector is the fabric's edge towards one RUT. Its state is owned by
// the goroutine of Run; the methods talk to it through events.
type Injector struct {
	cfg      Config
	area     []byte
	circuits []*circuit
	frags    [][]Fragment // per node (nil for Self)
	db       map[packet.LSPID]*lsp
	ids      []packet.LSPID // sorted keys of db
	rut      map[packet.LSPID]*lsp
	held     int
	lastHeld time.Time
	firstUp  time.Time // the first adjacency Up of the run
	maxLag   time.Duration
	primary  *circuit
	ev       chan any
	hellos   chan rx // hellos skip the queue: a backlog of LSPs must not expire a hold timer
	started  chan struct{}
	now      func() time.Time
}

// New builds every LSP of the fabric except Self's.
func New(cfg Config, circuits []Circuit) (*Injector, error) {
	cfg = cfg.withDefaults()
	if cfg.Fabric == nil {
		return nil, errors.New("inject: no fabric")
	}
	area, err := packet.ParseArea(cfg.Area)
	if err != nil {
		return nil, fmt.Errorf("inject: area %q: %w", cfg.Area, err)
	}
	in := &Injector{cfg: cfg, area: area, db: map[packet.LSPID]*lsp{}, rut: map[packet.LSPID]*lsp{},
		ev: make(chan any, 1<<16), hellos: make(chan rx, 1<<12), started: make(chan struct{}), now: time.Now}
	f := cfg.Fabric
	in.frags = make([][]Fragment, len(f.Nodes))
	born := in.now()
	for n := range f.Nodes {
		if n == f.Self {
			continue
		}
		fr, err := NodeFragments(f, n, area, cfg.LSPMTU)
		if err != nil {
			return nil, err
		}
		in.frags[n] = fr
		for _, x := range fr {
			in.db[x.ID] = in.newLSP(x, 1, born)
		}
	}
	in.sortIDs()
	for i, c := range circuits {
		in.circuits = append(in.circuits, &circuit{Circuit: c, idx: i, sysID: SystemID(c.Node),
			unacked: map[packet.LSPID]time.Time{}, ssn: map[packet.LSPID]bool{}})
	}
	return in, nil
}

func (in *Injector) newLSP(fr Fragment, seq uint32, born time.Time) *lsp {
	raw := EncodeLSP(fr, seq, in.cfg.Lifetime)
	p, err := packet.Decode(raw)
	if err != nil {
		panic(fmt.Sprintf("inject: LSP %s does not decode: %v", fr.ID, err)) // a bug in the builder
	}
	l := p.(*packet.LSP)
	return &lsp{id: fr.ID, seq: seq, checksum: l.Checksum, raw: raw, born: born, lifetime: in.cfg.Lifetime}
}

func (in *Injector) sortIDs() {
	in.ids = in.ids[:0]
	for id := range in.db {
		in.ids = append(in.ids, id)
	}
	slices.SortFunc(in.ids, func(a, b packet.LSPID) int { return a.Compare(b) })
}

// Entries returns what the injector floods: one entry per LSP (lifetime
// left zero), sorted by id. Safe before Run.
func (in *Injector) Entries(ctx context.Context) ([]packet.LSPEntry, error) {
	var out []packet.LSPEntry
	err := in.do(ctx, func() {
		for _, id := range in.ids {
			l := in.db[id]
			out = append(out, packet.LSPEntry{ID: id, Seq: l.seq, Checksum: l.checksum})
		}
	})
	return out, err
}

// Count is the number of LSPs the injector floods.
func (in *Injector) Count() int { return len(in.ids) }

// Run drives the circuits until ctx ends; ports[i] belongs to circuit i
// (see OpenPorts). It closes the ports when it returns.
func (in *Injector) Run(ctx context.Context, ports []isis.Port) error {
	if len(ports) != len(in.circuits) {
		return fmt.Errorf("inject: %d ports for %d circuits", len(ports), len(in.circuits))
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		for _, p := range ports {
			p.Close()
		}
		wg.Wait()
	}()
	for i, c := range in.circuits {
		c.port = ports[i]
		c.w = newWriter(c.port, in.cfg.Rate)
		wg.Add(2)
		go func() { defer wg.Done(); c.w.run(ctx) }()
		go func() { defer wg.Done(); in.read(ctx, c) }()
	}
	close(in.started)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	lastScan := in.now()
	lastTick := lastScan
	for {
		select {
		case h := <-in.hellos:
			in.handle(h)
			continue
		default:
		}
		select {
		case <-ctx.Done():
			return nil
		case h := <-in.hellos:
			in.handle(h)
		case e := <-in.ev:
			in.handle(e)
		case <-tick.C:
			now := in.now()
			// A loop that falls behind its 10 ms tick would expire hold
			// timers itself: record the worst lag, to tell its timeouts
			// from the RUT's.
			if lag := now.Sub(lastTick); lag > in.maxLag {
				in.maxLag = lag
			}
			lastTick = now
			scan := now.Sub(lastScan) >= time.Second
			if scan {
				lastScan = now
			}
			for _, c := range in.circuits {
				in.tickCircuit(c, now, scan)
			}
		}
	}
}

// do runs f in the loop (or directly before Run started).
func (in *Injector) do(ctx context.Context, f func()) error {
	select {
	case <-in.started:
	default:
		f()
		return nil
	}
	return loop.Call(ctx, in.ev, func(run func()) any { return call{f: run} }, f)
}

type call struct {
	f func()
}

type rx struct {
	c   *circuit
	pdu packet.PDU
	at  time.Time
}

func (in *Injector) read(ctx context.Context, c *circuit) {
	buf := make([]byte, 9216)
	for {
		_, b, err := c.port.Recv(buf)
		if err != nil {
			return
		}
		pdu, err := packet.Decode(b)
		var bad *rxBad
		switch {
		case err != nil:
			bad = &rxBad{c: c, decode: true}
		case isLSP(pdu) && packet.LSPLifetime(b) != 0 && !packet.LSPChecksumOK(b):
			bad = &rxBad{c: c}
		}
		var ev any = rx{c: c, pdu: pdu, at: in.now()}
		if bad != nil {
			ev = *bad
		}
		if h, ok := ev.(rx); ok {
			if _, hello := h.pdu.(*packet.P2PHello); hello {
				select {
				case in.hellos <- h:
				case <-ctx.Done():
					return
				}
				continue
			}
		}
		select {
		case in.ev <- ev:
		case <-ctx.Done():
			return
		}
	}
}

type rxBad struct {
	c      *circuit
	decode bool
}

func isLSP(p packet.PDU) bool {
	_, ok := p.(*packet.LSP)
	return ok
}

func (in *Injector) handle(e any) {
	switch e := e.(type) {
	case call:
		e.f()
	case rxBad:
		if e.decode {
			e.c.counters.DecodeErrors++
		} else {
			e.c.counters.BadChecksum++
		}
	case rx:
		switch p := e.pdu.(type) {
		case *packet.P2PHello:
			in.rxHello(e.c, p, e.at)
		case *packet.LSP:
			in.rxLSP(e.c, p, e.at)
		case *packet.PSNP:
			e.c.counters.PSNPsRcvd++
			if e.c.state == adjUp && p.Type == packet.TypeL2PSNP {
				for _, en := range p.TLVs.LSPEntries() {
					in.rxEntry(e.c, en, e.at)
				}
			}
		case *packet.CSNP:
			e.c.counters.CSNPsRcvd++
			if e.c.state == adjUp && p.Type == packet.TypeL2CSNP {
				in.rxCSNP(e.c, p, e.at)
			}
		}
	}
}

// Change is what SetCableBW did.
type Change struct {
	At   time.Time      // when the new LSPs were handed to the writers
	LSPs []packet.LSPID // the fragments that changed (sequence number + 1)
}

// SetCableBW changes cable i's bandwidth and floods the fragments of its
// two ends that changed (Self's end is the RUT's own business: a cable of
// Self cannot be changed here).
func (in *Injector) SetCableBW(ctx context.Context, cable int, bw float32) (Change, error) {
	var ch Change
	var err error
	derr := in.do(ctx, func() {
		f := in.cfg.Fabric
		if cable < 0 || cable >= len(f.Cables) {
			err = fmt.Errorf("inject: no cable %d", cable)
			return
		}
		cb := f.Cables[cable]
		if cb.A == f.Self || cb.B == f.Self {
			err = fmt.Errorf("inject: cable %d ends at the RUT (%s)", cable, f.Nodes[f.Self].Name)
			return
		}
		f = f.WithCableBW(cable, bw)
		in.cfg.Fabric = f
		now := in.now()
		ch.At = now
		for _, n := range []int{cb.A, cb.B} {
			frs, ferr := NodeFragments(f, n, in.area, in.cfg.LSPMTU)
			if ferr != nil {
				err = ferr
				return
			}
			if len(frs) != len(in.frags[n]) {
				err = fmt.Errorf("inject: node %s changed its fragment count", f.Nodes[n].Name)
				return
			}
			for i, fr := range frs {
				if sameBody(fr, in.frags[n][i]) {
					continue
				}
				in.install(fr, in.db[fr.ID].seq+1, now)
				ch.LSPs = append(ch.LSPs, fr.ID)
			}
			in.frags[n] = frs
		}
	})
	if derr != nil {
		return ch, derr
	}
	return ch, err
}

// Status is a snapshot of the injector.
type Status struct {
	Circuits, Up int
	FirstUp      time.Time // the first adjacency Up of the run
	AllUp        time.Time // the last circuit came Up (zero until all are)
	LSPs         int       // injected LSPs
	Held         int       // of those, confirmed held by the RUT in their current version
	LastHeld     time.Time // when the newest confirmation came
	RUTLSPs      []packet.LSPEntry
	Counters     Counters // summed over the circuits
	// MaxTickGap is the longest the injector's loop went between two of
	// its 10 ms ticks: far below the hold time, adjacency losses it timed
	// out are the RUT's silence, not the injector's.
	MaxTickGap time.Duration
}

// Full reports whether the RUT confirmed every injected LSP.
func (s Status) Full() bool { return s.Held == s.LSPs }

// Status returns a snapshot.
func (in *Injector) Status(ctx context.Context) (Status, error) {
	var s Status
	err := in.do(ctx, func() {
		now := in.now()
		s.Circuits, s.LSPs, s.Held, s.LastHeld, s.FirstUp = len(in.circuits), len(in.ids), in.held, in.lastHeld, in.firstUp
		s.MaxTickGap = in.maxLag
		all := true
		for _, c := range in.circuits {
			s.Counters.add(c.counters)
			if c.state != adjUp {
				all = false
				continue
			}
			s.Up++
			if c.upAt.After(s.AllUp) {
				s.AllUp = c.upAt
			}
		}
		if !all {
			s.AllUp = time.Time{}
		}
		for _, l := range in.rut {
			s.RUTLSPs = append(s.RUTLSPs, l.entry(now))
		}
		slices.SortFunc(s.RUTLSPs, func(a, b packet.LSPEntry) int { return a.ID.Compare(b.ID) })
	})
	return s, err
}

// HeldAt returns when the RUT first confirmed each of the given LSPs in
// their current version; ok is false while any is unconfirmed.
func (in *Injector) HeldAt(ctx context.Context, ids []packet.LSPID) (last time.Time, ok bool, err error) {
	ok = true
	err = in.do(ctx, func() {
		for _, id := range ids {
			l := in.db[id]
			if l == nil || l.heldAt.IsZero() {
				ok = false
				return
			}
			if l.heldAt.After(last) {
				last = l.heldAt
			}
		}
	})
	return last, ok, err
}
