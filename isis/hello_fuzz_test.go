package isis

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/fared/fared/isis/packet"
)

// FuzzHelloBuild feeds random neighbour sets (up to ~1000 MACs, some Up)
// and random IPv4 and IPv6 link-local address lists, on random MTUs, into
// the circuit's own hello builders (lanHello, p2pHello: what sendLANHello
// and sendP2PHello transmit). Nothing may panic; the hello must decode and
// fit the MTU; what it lists must be real neighbours and addresses, in
// order, without duplicates; a neighbour is left out only when the hello
// is full, and then never an Up one before an Initializing one.
func FuzzHelloBuild(f *testing.F) {
	f.Add(uint16(43), uint16(1), uint16(1), uint8(1), uint16(1500), []byte{1, 2, 3})
	f.Add(uint16(999), uint16(7), uint16(64), uint8(16), uint16(1500), []byte{0xff, 0})
	f.Add(uint16(300), uint16(300), uint16(299), uint8(99), uint16(9000), []byte{})
	f.Add(uint16(60), uint16(2), uint16(0), uint8(0), uint16(0), []byte{5})
	f.Add(uint16(50), uint16(50), uint16(3), uint8(3), uint16(64), []byte{5})
	lan := helloCircuit(f, "lan", 1500)
	p2p := helloCircuit(f, "p2p", 1500)
	f.Fuzz(func(t *testing.T, nAdj, nUp, n4 uint16, n6 uint8, mtu uint16, seed []byte) {
		nAdj, n4, n6 = nAdj%1000, n4%300, n6%100
		at := func(i, k int) byte {
			if len(seed) == 0 {
				return byte(i>>(8*(k%2))) ^ byte(k)
			}
			return seed[(i+k)%len(seed)] ^ byte(i>>(8*(k%2)))
		}
		adjs := map[[6]byte]*adjacency{}
		up := map[[6]byte]bool{}
		for i := range int(nAdj) {
			m := [6]byte{at(i, 0) &^ 1, at(i, 1), at(i, 2), at(i, 3), byte(i >> 8), byte(i)}
			a := &adjacency{snpa: m, state: AdjInit, level: 2}
			if i < int(nUp%1000) {
				a.state = AdjUp
				up[m] = true
			}
			adjs[m] = a
		}
		var a4 []netip.Prefix
		for i := range int(n4) {
			a4 = append(a4, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, at(i, 4), byte(i >> 8), byte(i)}), 24))
		}
		var ll []netip.Addr
		for i := range int(n6) {
			ll = append(ll, netip.AddrFrom16([16]byte{0xfe, 0x80, 8: at(i, 5), 14: byte(i >> 8), 15: byte(i)}))
		}
		for _, c := range []*circuit{lan, p2p} {
			c.mtu, c.addrs4, c.ll6 = int(mtu), a4, ll
			c.addrs6 = []netip.Prefix{netip.MustParsePrefix("2001:db8::1/64")}
			clear(c.counters)
			clear(c.logged)
			var pdu packet.PDU
			if c == lan {
				c.lan[1].adjs = adjs
				pdu = c.lanHello(2)
			} else {
				c.p2p = &adjacency{sysID: packet.SystemID{9}, state: AdjUp, level: 2}
				pdu = c.p2pHello()
			}
			b := pdu.AppendTo(nil)
			p, err := packet.Decode(b)
			if err != nil {
				t.Fatalf("hello does not decode: %v", err)
			}
			limit := min(int(mtu), maxLLCPayload) - len(llc)
			if mtu == 0 {
				limit = c.in.icfg.LSPMTU
			}
			// Below ~128 bytes even the fixed TLVs do not fit: such a hello
			// is over the MTU (and fails to send), but it must not panic.
			if mtu == 0 || mtu >= 128 {
				if len(b) > limit {
					t.Fatalf("hello of %d bytes, limit %d", len(b), limit)
				}
				if mtu != 0 && len(b) < limit-1 {
					t.Fatalf("hello of %d bytes not padded to %d", len(b), limit)
				}
			}
			tl := packet.TLVsOf(p)
			got4, got6 := tl.IPv4Addrs(), tl.IPv6Addrs()
			if len(got4) > len(a4) || len(got6) > len(ll) {
				t.Fatalf("more addresses out than in")
			}
			for i, a := range got4 {
				if a != a4[i].Addr() {
					t.Fatalf("IPv4 address %d is %v, want %v", i, a, a4[i].Addr())
				}
			}
			for i, a := range got6 {
				if a != ll[i] {
					t.Fatalf("IPv6 address %d is %v, want %v", i, a, ll[i])
				}
			}
			cut4, cut6 := len(got4) < len(a4), len(got6) < len(ll)
			if c == p2p {
				continue
			}
			snpas := tl.SNPAs()
			listedUp := 0
			for i, m := range snpas {
				if adjs[m] == nil {
					t.Fatalf("lists %x, not a neighbour", m)
				}
				if i > 0 && bytes.Compare(snpas[i-1][:], m[:]) >= 0 {
					t.Fatalf("not in strictly increasing MAC order at %d", i)
				}
				if up[m] {
					listedUp++
				}
			}
			if len(snpas) < len(adjs) {
				// Left out only when full: not even room for a new TLV 6
				// of one entry (unless the addresses filled it first).
				if spare := limit - len(b) + padding(tl); spare >= 8 && !cut4 && !cut6 {
					t.Fatalf("%d of %d neighbours listed with %d bytes to spare", len(snpas), len(adjs), spare)
				}
				if listedUp < min(len(up), len(snpas)) {
					t.Fatalf("%d Up listed of %d, with %d slots", listedUp, len(up), len(snpas))
				}
			}
			if (len(snpas) < len(adjs) || cut4 || cut6) != (c.counters["tx_hello_truncated"] == 1) {
				t.Fatalf("truncation counter %d", c.counters["tx_hello_truncated"])
			}
		}
	})
}

// padding is the wire size of a hello's padding TLVs.
func padding(t packet.TLVs) int {
	n := 0
	for _, v := range t {
		if p, ok := v.(*packet.Padding); ok {
			n += 2 + p.Len
		}
	}
	return n
}
