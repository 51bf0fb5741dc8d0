package inject

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/fared/fared/internal/closgen"
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
	if c.Area == "" {
		c.Area = DefaultArea
	}
	if c.LSPMTU == 0 {
		c.LSPMTU = DefaultLSPMTU
	}
	if c.Lifetime == 0 {
		c.Lifetime = DefaultLifetime
	}
	if c.HelloInterval == 0 {
		c.HelloInterval = time.Second
	}
	if c.HoldMultiplier == 0 {
		c.HoldMultiplier = 3
	}
	if c.CSNPInterval == 0 {
		c.CSNPInterval = 10 * time.Second
	}
	if c.Retransmit == 0 {
		c.Retransmit = 5 * time.Second
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Circuit is one link between the injector and the RUT: a cable of the
// fabric's Self, on which the injector plays the node at the far end.
type Circuit struct {
	Cable   int
	Node    int          // the node the injector plays here
	Iface   string       // interface name, the same at both ends (separate namespaces)
	Addr    netip.Prefix // the injector's end
	RUTAddr netip.Prefix // the RUT's end
	BW      float32      // bytes/s
	Metric  uint32
}

// Circuits lists Self's cables. Interfaces are named after the played
// node, "-k" for the k-th cable to it: "S3-1", "P0S12-2".
func Circuits(f *closgen.Fabric) ([]Circuit, error) {
	if err := Limits(f); err != nil {
		return nil, err
	}
	var out []Circuit
	count := map[int]int{}
	for _, c := range f.CablesOf(f.Self) {
		cb := f.Cables[c]
		peer := cb.A
		if peer == f.Self {
			peer = cb.B
		}
		count[peer]++
		name := fmt.Sprintf("%s-%d", f.Nodes[peer].Name, count[peer])
		if len(name) > 15 {
			return nil, fmt.Errorf("interface name %q longer than 15 bytes", name)
		}
		rut, inj := EndAddr(f, c, f.Self)
		out = append(out, Circuit{Cable: c, Node: peer, Iface: name, Addr: inj, RUTAddr: rut, BW: cb.BW, Metric: cb.Metric})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("node %s has no cables", f.Nodes[f.Self].Name)
	}
	return out, nil
}

// lsp is one version of one injected (or received) LSP; immutable.
type lsp struct {
	id       packet.LSPID
	seq      uint32
	checksum uint16
	raw      []byte // lifetime field as originated
	born     time.Time
	lifetime uint16
	heldAt   time.Time // loop-owned: first confirmation that the RUT holds this version
}

func (l *lsp) remaining(now time.Time) uint16 {
	age := now.Sub(l.born) / time.Second
	if age >= time.Duration(l.lifetime) {
		return 0
	}
	return l.lifetime - uint16(age)
}

func (l *lsp) entry(now time.Time) packet.LSPEntry {
	return packet.LSPEntry{Lifetime: l.remaining(now), ID: l.id, Seq: l.seq, Checksum: l.checksum}
}

// Adjacency states.
const (
	adjDown = iota
	adjInit
	adjUp
)

type circuit struct {
	Circuit
	idx    int
	sysID  packet.SystemID // the played node's
	port   isis.Port
	w      *writer
	state  int
	nbr    packet.SystemID
	nbrExt uint32
	heard  time.Time
	hold   time.Duration
	upAt   time.Time
	ups    int
	// queued: LSPs handed to the writer or waiting for it; unacked: sent
	// and not yet acknowledged (value: when sent); ssn: to acknowledge.
	unacked   map[packet.LSPID]time.Time
	ssn       map[packet.LSPID]bool
	nextHello time.Time
	nextCSNP  time.Time
	counters  Counters
}

// Counters are per-circuit PDU counts.
type Counters struct {
	HellosSent, HellosRcvd    uint64
	LSPsSent, LSPsRcvd        uint64
	Retransmits               uint64
	PSNPsSent, PSNPsRcvd      uint64
	CSNPsSent, CSNPsRcvd      uint64
	BadChecksum, DecodeErrors uint64
	RUTOlder, Requests, Flaps uint64
	// AdjDowns counts adjacencies lost; HoldExpired those the injector
	// timed out (the rest the RUT reset: its hellos said Down).
	AdjDowns, HoldExpired        uint64
	NotAdjacent, ForeignLSPsRcvd uint64
}

func (c *Counters) add(o Counters) {
	c.HellosSent += o.HellosSent
	c.HellosRcvd += o.HellosRcvd
	c.LSPsSent += o.LSPsSent
	c.LSPsRcvd += o.LSPsRcvd
	c.Retransmits += o.Retransmits
	c.PSNPsSent += o.PSNPsSent
	c.PSNPsRcvd += o.PSNPsRcvd
	c.CSNPsSent += o.CSNPsSent
	c.CSNPsRcvd += o.CSNPsRcvd
	c.BadChecksum += o.BadChecksum
	c.DecodeErrors += o.DecodeErrors
	c.RUTOlder += o.RUTOlder
	c.Requests += o.Requests
	c.Flaps += o.Flaps
	c.AdjDowns += o.AdjDowns
	c.HoldExpired += o.HoldExpired
	c.NotAdjacent += o.NotAdjacent
	c.ForeignLSPsRcvd += o.ForeignLSPsRcvd
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
	done := make(chan struct{})
	select {
	case in.ev <- call{f: f, done: done}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type call struct {
	f    func()
	done chan struct{}
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
		close(e.done)
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

func (in *Injector) rxHello(c *circuit, h *packet.P2PHello, now time.Time) {
	c.counters.HellosRcvd++
	if h.CircuitType&packet.CircuitL2 == 0 {
		return
	}
	areaOK := false
	for _, a := range h.TLVs.Areas() {
		areaOK = areaOK || bytes.Equal(a, in.area)
	}
	tw, ok := h.TLVs.ThreeWay()
	if !areaOK || !ok {
		return
	}
	c.heard = now
	c.hold = time.Duration(h.HoldTime) * time.Second
	if c.state != adjDown && (h.SourceID != c.nbr || (tw.HasExtCircuit && tw.ExtCircuitID != c.nbrExt)) {
		in.adjDown(c, "neighbour changed")
	}
	c.nbr, c.nbrExt = h.SourceID, tw.ExtCircuitID
	old := c.state
	if tw.HasNeighbor && (tw.NeighborID != c.sysID || (!tw.NoNeighborExtCircuit && tw.NeighborExtCircuitID != c.extCircuit())) {
		// It names another system or circuit (RFC 5303 §3.2): no adjacency.
		in.adjDown(c, "neighbour names another system")
		return
	}
	// RFC 5303 §3.1's state table, by our state and the one received.
	switch {
	case tw.State == packet.ThreeWayDown && old == adjUp:
		in.adjDown(c, "neighbour reset")
		c.state = adjInit
	case tw.State == packet.ThreeWayDown:
		c.state = adjInit
	case tw.State == packet.ThreeWayInitializing:
		c.state = adjUp
	case tw.State == packet.ThreeWayUp && old != adjDown:
		c.state = adjUp
	}
	if c.state != old {
		in.sendHello(c, now)
		if c.state == adjUp {
			in.adjUp(c, now)
		}
	}
}

func (c *circuit) extCircuit() uint32 { return uint32(c.idx + 1) }

func (in *Injector) adjUp(c *circuit, now time.Time) {
	c.upAt = now
	if in.firstUp.IsZero() {
		in.firstUp = now
	}
	c.ups++
	if c.ups > 1 {
		c.counters.Flaps++
	}
	in.cfg.Log.Debug("adjacency up", "iface", c.Iface, "as", in.cfg.Fabric.Nodes[c.Node].Name)
	if in.cfg.Flood == FloodOne && (in.primary == nil || in.primary.state != adjUp) {
		in.primary = c
	}
	c.nextCSNP = now.Add(in.cfg.CSNPInterval)
	switch {
	case !in.serves(c):
	case c.ups == 1:
		in.queue(c, in.ids, now)
	default:
		// Back after a flap: the RUT kept its database (it did not
		// restart, or the neighbour would have changed), so describe ours
		// and send what it asks for. Re-sending everything to a router
		// that flaps under load only feeds the overload.
		c.nextCSNP = now
	}
}

// serves reports whether the injector floods, describes and answers
// requests on c (every circuit, or the primary one).
func (in *Injector) serves(c *circuit) bool {
	return in.cfg.Flood == FloodAll || c == in.primary
}

const whyHold = "hold time expired"

func (in *Injector) adjDown(c *circuit, why string) {
	if c.state == adjUp {
		in.cfg.Log.Info("adjacency down", "iface", c.Iface, "why", why)
		c.counters.AdjDowns++
		if why == whyHold {
			c.counters.HoldExpired++
		}
	}
	c.state = adjDown
	clear(c.unacked)
	clear(c.ssn)
	c.w.flush()
	if c == in.primary {
		// Another Up circuit takes over and gets the whole database.
		in.primary = nil
		for _, o := range in.circuits {
			if o.state == adjUp {
				in.primary = o
				in.queue(o, in.ids, in.now())
				break
			}
		}
	}
}

// queue hands LSPs to the circuit's writer and marks them unacknowledged.
func (in *Injector) queue(c *circuit, ids []packet.LSPID, now time.Time) {
	batch := make([]*lsp, 0, len(ids))
	for _, id := range ids {
		if l := in.db[id]; l != nil {
			batch = append(batch, l)
			c.unacked[id] = now
		}
	}
	c.counters.LSPsSent += uint64(len(batch))
	c.w.lsps(batch)
}

func (in *Injector) rxLSP(c *circuit, p *packet.LSP, now time.Time) {
	c.counters.LSPsRcvd++
	if c.state != adjUp {
		c.counters.NotAdjacent++
		return
	}
	if p.Type != packet.TypeL2LSP {
		return
	}
	c.ssn[p.ID] = true // acknowledge whatever it is
	if mine := in.db[p.ID]; mine != nil {
		in.compare(c, mine, p.Seq, p.Lifetime, now)
		return
	}
	c.counters.ForeignLSPsRcvd++
	if cur := in.rut[p.ID]; cur == nil || p.Seq > cur.seq {
		in.rut[p.ID] = &lsp{id: p.ID, seq: p.Seq, checksum: p.Checksum, born: now, lifetime: p.Lifetime}
	}
}

// compare handles the RUT's view (seq, lifetime) of one of our LSPs.
func (in *Injector) compare(c *circuit, mine *lsp, seq uint32, life uint16, now time.Time) {
	switch {
	case seq == mine.seq && life != 0:
		delete(c.unacked, mine.id)
		in.markHeld(mine, now)
	case seq < mine.seq || (seq == mine.seq && life == 0):
		c.counters.RUTOlder++
		if _, waiting := c.unacked[mine.id]; !waiting && in.serves(c) {
			c.counters.Requests++
			in.queue(c, []packet.LSPID{mine.id}, now)
		}
	default:
		// The RUT has a newer copy of an LSP we originate: never happens
		// unless a previous run left it; out-bid it.
		in.reoriginate(mine.id, seq+1, now)
	}
}

func (in *Injector) markHeld(l *lsp, now time.Time) {
	if l.heldAt.IsZero() {
		l.heldAt = now
		in.held++
		in.lastHeld = now
	}
}

func (in *Injector) rxEntry(c *circuit, en packet.LSPEntry, now time.Time) {
	if mine := in.db[en.ID]; mine != nil {
		in.compare(c, mine, en.Seq, en.Lifetime, now)
	}
}

func (in *Injector) rxCSNP(c *circuit, p *packet.CSNP, now time.Time) {
	listed := map[packet.LSPID]bool{}
	for _, en := range p.TLVs.LSPEntries() {
		listed[en.ID] = true
		in.rxEntry(c, en, now)
	}
	// Ours in the CSNP's range that it does not list: the RUT lacks them.
	lo, _ := slices.BinarySearchFunc(in.ids, p.Start, func(a, b packet.LSPID) int { return a.Compare(b) })
	var missing []packet.LSPID
	for _, id := range in.ids[lo:] {
		if id.Compare(p.End) > 0 {
			break
		}
		if _, waiting := c.unacked[id]; !listed[id] && !waiting {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 && in.serves(c) {
		c.counters.Requests += uint64(len(missing))
		in.queue(c, missing, now)
	}
}

func (in *Injector) tickCircuit(c *circuit, now time.Time, scan bool) {
	if c.state != adjDown && now.Sub(c.heard) > c.hold {
		in.adjDown(c, whyHold)
	}
	if !now.Before(c.nextHello) {
		in.sendHello(c, now)
	}
	if c.state != adjUp {
		return
	}
	if len(c.ssn) > 0 {
		in.sendPSNP(c, now)
	}
	if !now.Before(c.nextCSNP) && in.serves(c) {
		in.sendCSNPs(c, now)
		c.nextCSNP = now.Add(in.cfg.CSNPInterval)
	}
	if scan {
		var again []packet.LSPID
		for id, at := range c.unacked {
			if now.Sub(at) >= in.cfg.Retransmit {
				again = append(again, id)
			}
		}
		if len(again) > 0 {
			slices.SortFunc(again, func(a, b packet.LSPID) int { return a.Compare(b) })
			c.counters.Retransmits += uint64(len(again))
			in.queue(c, again, now)
		}
	}
}

func (in *Injector) sendHello(c *circuit, now time.Time) {
	tw := &packet.ThreeWay{HasExtCircuit: true, ExtCircuitID: c.extCircuit()}
	switch c.state {
	case adjDown:
		tw.State = packet.ThreeWayDown
	case adjInit:
		tw.State = packet.ThreeWayInitializing
	default:
		tw.State = packet.ThreeWayUp
	}
	if c.state != adjDown {
		tw.HasNeighbor, tw.NeighborID, tw.NeighborExtCircuitID = true, c.nbr, c.nbrExt
	}
	hold := in.cfg.HelloInterval * time.Duration(in.cfg.HoldMultiplier)
	h := &packet.P2PHello{
		Header:         packet.Header{Type: packet.TypeP2PHello},
		CircuitType:    packet.CircuitL2,
		SourceID:       c.sysID,
		HoldTime:       uint16(max(hold/time.Second, 1)),
		LocalCircuitID: 1,
		TLVs: packet.TLVs{
			&packet.AreaAddresses{Areas: [][]byte{in.area}},
			&packet.ProtocolsSupported{NLPIDs: []uint8{packet.NLPIDIPv4}},
			&packet.IPv4Addresses{Addrs: []netip.Addr{c.Addr.Addr()}},
			tw,
		},
	}
	c.counters.HellosSent++
	c.w.ctrl(h.AppendTo(nil))
	c.nextHello = now.Add(in.cfg.HelloInterval)
}

func (in *Injector) sendPSNP(c *circuit, now time.Time) {
	ids := make([]packet.LSPID, 0, len(c.ssn))
	for id := range c.ssn {
		ids = append(ids, id)
	}
	clear(c.ssn)
	slices.SortFunc(ids, func(a, b packet.LSPID) int { return a.Compare(b) })
	var es []packet.LSPEntry
	for _, id := range ids {
		if l := in.db[id]; l != nil {
			es = append(es, l.entry(now))
		} else if l := in.rut[id]; l != nil {
			es = append(es, l.entry(now))
		}
	}
	per := snpEntries(in.cfg.LSPMTU, packet.PSNPHeaderLen)
	for len(es) > 0 {
		n := min(per, len(es))
		p := &packet.PSNP{Header: packet.Header{Type: packet.TypeL2PSNP}, SourceID: packet.MakeNodeID(c.sysID, 0),
			TLVs: packet.TLVs(packet.PackLSPEntries(es[:n]))}
		c.counters.PSNPsSent++
		c.w.ctrl(p.AppendTo(nil))
		es = es[n:]
	}
}

// snpEntries is how many LSP entries fit an SNP PDU of at most mtu bytes
// with a fixed part of hdr bytes (TLV 9 holds 15 entries).
func snpEntries(mtu, hdr int) int {
	room := mtu - hdr
	full := room / (2 + 15*16)
	n := full * 15
	if rest := room - full*(2+15*16); rest >= 2+16 {
		n += (rest - 2) / 16
	}
	return max(n, 1)
}

// sendCSNPs describes the whole database (ours and the RUT's) in ranges.
func (in *Injector) sendCSNPs(c *circuit, now time.Time) {
	all := make([]packet.LSPEntry, 0, len(in.ids)+len(in.rut))
	for _, id := range in.ids {
		all = append(all, in.db[id].entry(now))
	}
	for _, l := range in.rut {
		if l.remaining(now) > 0 {
			all = append(all, l.entry(now))
		}
	}
	slices.SortFunc(all, func(a, b packet.LSPEntry) int { return a.ID.Compare(b.ID) })
	per := snpEntries(in.cfg.LSPMTU, packet.CSNPHeaderLen)
	start := packet.LSPID{}
	for {
		n := min(per, len(all))
		end := packet.LSPID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		if n < len(all) {
			end = all[n-1].ID
		}
		p := &packet.CSNP{Header: packet.Header{Type: packet.TypeL2CSNP}, SourceID: packet.MakeNodeID(c.sysID, 0),
			Start: start, End: end, TLVs: packet.TLVs(packet.PackLSPEntries(all[:n]))}
		c.counters.CSNPsSent++
		c.w.ctrl(p.AppendTo(nil))
		all = all[n:]
		if len(all) == 0 {
			return
		}
		start = next(end)
	}
}

func next(id packet.LSPID) packet.LSPID {
	for i := len(id) - 1; i >= 0; i-- {
		id[i]++
		if id[i] != 0 {
			break
		}
	}
	return id
}

// reoriginate installs a new version of an LSP with the given sequence
// number and floods it.
func (in *Injector) reoriginate(id packet.LSPID, seq uint32, now time.Time) {
	n := -1
	for i, fr := range in.frags {
		if len(fr) > 0 && fr[0].ID.SystemID() == id.SystemID() {
			n = i
			break
		}
	}
	if n < 0 || int(id.Fragment()) >= len(in.frags[n]) {
		return
	}
	in.install(in.frags[n][id.Fragment()], seq, now)
}

func (in *Injector) install(fr Fragment, seq uint32, now time.Time) {
	if old := in.db[fr.ID]; old != nil && !old.heldAt.IsZero() {
		in.held--
	}
	in.db[fr.ID] = in.newLSP(fr, seq, now)
	for _, c := range in.circuits {
		delete(c.unacked, fr.ID)
		if c.state == adjUp && (in.cfg.Flood == FloodAll || c == in.primary) {
			in.queue(c, []packet.LSPID{fr.ID}, now)
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
