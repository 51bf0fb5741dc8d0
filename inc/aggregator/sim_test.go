package aggregator_test

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/fared/fared/inc/aggregator"
	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/rocev2"
)

// The whole INC protocol in memory: clients with the IRN sender, leaf and
// root aggregators, links that lose a share of the packets in both
// directions and delay them. Every message must complete with the right
// value, whatever is lost.

type simPkt struct {
	at   time.Duration
	seq  int
	from netip.Addr
	to   netip.Addr
	ip   []byte
}

type pq []*simPkt

func (q pq) Len() int { return len(q) }
func (q pq) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q pq) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pq) Push(x any)   { *q = append(*q, x.(*simPkt)) }
func (q *pq) Pop() any {
	o := *q
	x := o[len(o)-1]
	*q = o[:len(o)-1]
	return x
}

type simNet struct {
	rng   *rand.Rand
	now   time.Duration
	q     pq
	seq   int
	loss  float64
	last  map[[2]netip.Addr]time.Duration // FIFO per direction
	lost  int
	total int
}

func (n *simNet) send(from, to netip.Addr, ip []byte) {
	n.total++
	if n.rng.Float64() < n.loss {
		n.lost++
		return
	}
	at := n.now + time.Duration(50+n.rng.IntN(200))*time.Microsecond
	k := [2]netip.Addr{from, to}
	if at < n.last[k] {
		at = n.last[k]
	}
	n.last[k] = at
	n.seq++
	heap.Push(&n.q, &simPkt{at: at, seq: n.seq, from: from, to: to, ip: append([]byte(nil), ip...)})
}

const simKey = 0x1234567

type simClient struct {
	addr   netip.Addr
	qp     uint32
	rank   int
	sw     netip.Addr
	swQP   uint32
	child  int
	snd    *transport.Sender
	done   []bool
	result []float32
	id     uint16
}

func TestSimLossyProtocol(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { simRun(t, seed, 0.05, 600) })
	}
}

func simRun(t *testing.T, seed uint64, loss float64, msgs int) {
	const slots, per = 8, 4
	rng := rand.New(rand.NewPCG(seed, 7))
	net := &simNet{rng: rng, loss: loss, last: map[[2]netip.Addr]time.Duration{}}
	rootA := netip.MustParseAddr("10.255.0.9")
	leafA := []netip.Addr{netip.MustParseAddr("10.255.0.1"), netip.MustParseAddr("10.255.0.2")}
	host := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 1, byte(i), 2}) }
	sws := map[netip.Addr]*aggregator.Switch{}
	root := aggregator.New(aggregator.DefaultLimits)
	root.SetTrees([]aggregator.TreeConfig{{ID: 1, QP: 30, RKey: simKey, Slots: slots, Root: true, Children: []aggregator.Child{
		{Peer: aggregator.Peer{Addr: leafA[0], QP: 20}}, {Peer: aggregator.Peer{Addr: leafA[1], QP: 20}}}}})
	sws[rootA] = root
	var clients []*simClient
	for l := range 2 {
		c := aggregator.TreeConfig{ID: 1, QP: 20, RKey: simKey, Slots: slots, Parent: aggregator.Peer{Addr: rootA, QP: 30}, ParentRank: uint16(l)}
		for i := range 2 {
			r := 2*l + i
			c.Children = append(c.Children, aggregator.Child{Peer: aggregator.Peer{Addr: host(r), QP: uint32(100 + r)}, Client: true})
			snd := transport.NewSender(transport.Config{Window: 4, RTOLow: 2 * time.Millisecond, RTOHigh: 5 * time.Millisecond, ReportAfter: 8}, msgs)
			clients = append(clients, &simClient{addr: host(r), qp: uint32(100 + r), rank: r, sw: leafA[l], swQP: 20, child: i, snd: snd,
				done: make([]bool, msgs), result: make([]float32, msgs*per)})
		}
		s := aggregator.New(aggregator.DefaultLimits)
		if err := s.SetTrees([]aggregator.TreeConfig{c}); err != nil {
			t.Fatal(err)
		}
		sws[leafA[l]] = s
	}
	// Every switch checks where packets come in: each sender is on its own
	// interface, numbered by its address's last byte and third byte.
	ifOf := func(a netip.Addr) int { b := a.As4(); return int(b[2])<<8 | int(b[3]) }
	for _, sw := range sws {
		in := map[netip.Addr][]int{}
		for _, a := range sw.Peers() {
			in[a] = []int{ifOf(a)}
		}
		sw.SetIngress(in)
	}
	val := func(r, m, k int) float32 { return float32((r+1)*1000 + m*3 + k) }
	start := time.Unix(0, 0)
	clock := func() time.Time { return start.Add(net.now) }
	var reports int
	buf := make([]byte, 0, 2048)
	for _, c := range clients {
		c.snd.OnReport = func(i, n int) { reports++ }
	}
	sendData := func(c *simClient, i int, retx bool) {
		pl := make([]byte, per*4)
		for k := range per {
			binary.LittleEndian.PutUint32(pl[4*k:], math.Float32bits(val(c.rank, i, k)))
		}
		f := rocev2.Frame{Src: c.addr, Dst: c.sw, ID: 1}
		d := packet.Data{DestQP: c.swQP, PSN: uint32(i), RKey: simKey, Hdr: packet.Header{Collective: packet.AllReduce, DType: packet.FP32, Op: packet.Sum,
			Tree: 1, Slot: uint16(i % slots), Msg: uint32(i), Rank: uint16(c.child), Count: per}, Payload: pl}
		buf = packet.AppendINC(buf[:0], &f, rocev2.DefaultPKey, &d)
		net.send(c.addr, c.sw, buf)
	}
	byAddr := map[netip.Addr]*simClient{}
	for _, c := range clients {
		byAddr[c.addr] = c
	}
	limit := 60 * time.Second
	for net.now < limit {
		allDone := true
		for _, c := range clients {
			c.snd.Poll(clock(), func(i int, retx bool) { sendData(c, i, retx) })
			allDone = allDone && c.snd.Done()
		}
		if allDone {
			break
		}
		// Next event: a packet or a timer.
		next := net.now + time.Millisecond
		if len(net.q) > 0 && net.q[0].at < next {
			next = net.q[0].at
		}
		for _, c := range clients {
			if dl := c.snd.NextDeadline(); !dl.IsZero() && dl.Sub(start) < next {
				next = max(dl.Sub(start), net.now)
			}
		}
		net.now = next
		for len(net.q) > 0 && net.q[0].at <= net.now {
			pk := heap.Pop(&net.q).(*simPkt)
			var p packet.Parsed
			if err := packet.Parse(pk.ip, &p); err != nil {
				t.Fatal(err)
			}
			p.IfIndex = ifOf(pk.from)
			if sw := sws[pk.to]; sw != nil {
				outs, err := sw.Handle(&p)
				if err != nil {
					t.Fatalf("switch %s: %v", pk.to, err)
				}
				for _, o := range outs {
					f := rocev2.Frame{Src: pk.to, Dst: o.To.Addr, ID: 1}
					if o.NACK {
						buf = packet.AppendNACK(buf[:0], &f, rocev2.DefaultPKey, o.To.QP, o.Cum, o.Trig)
					} else {
						buf = packet.AppendINC(buf[:0], &f, rocev2.DefaultPKey, &o.Data)
					}
					net.send(pk.to, o.To.Addr, buf)
				}
				continue
			}
			c := byAddr[pk.to]
			switch p.Kind {
			case packet.KindINC:
				i := int(p.Hdr.Msg)
				if !c.done[i] {
					c.done[i] = true
					for k := range per {
						c.result[i*per+k] = math.Float32frombits(binary.LittleEndian.Uint32(p.Payload[4*k:]))
					}
				}
				c.snd.Ack(i, clock())
			case packet.KindNACK:
				c.snd.NACK(int(p.PSN()), int(p.Trigger()), clock())
			}
		}
	}
	for _, c := range clients {
		if !c.snd.Done() {
			st := c.snd.Stats()
			missing := -1
			for i, d := range c.done {
				if !d {
					missing = i
					break
				}
			}
			t.Fatalf("rank %d not done after %v: first missing message %d, %+v", c.rank, limit, missing, st)
		}
		for i := range msgs {
			for k := range per {
				want := val(0, i, k) + val(1, i, k) + val(2, i, k) + val(3, i, k)
				if c.result[i*per+k] != want {
					t.Fatalf("rank %d message %d: %g, want %g", c.rank, i, c.result[i*per+k], want)
				}
			}
		}
	}
	var tot aggregator.Counters
	for _, sw := range sws {
		_, c := sw.Stats()
		tot.Duplicates += c.Duplicates
		tot.Served += c.Served
		tot.PartialResends += c.PartialResends
	}
	retx, timeouts := 0, 0
	for _, c := range clients {
		retx += c.snd.Stats().Retransmits
		timeouts += c.snd.Stats().Timeouts
	}
	t.Logf("seed %d: %v simulated, %d of %d packets lost, %d retransmissions (%d timeouts), %d reports; switches: %d duplicates, %d served, %d partials re-sent",
		seed, net.now, net.lost, net.total, retx, timeouts, reports, tot.Duplicates, tot.Served, tot.PartialResends)
	if reports > 0 {
		t.Errorf("%d packets reached 8 timeouts at %.0f%% loss", reports, loss*100)
	}
}
