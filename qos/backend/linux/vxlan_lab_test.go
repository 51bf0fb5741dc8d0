package linux

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/packetsock"
	"github.com/fared/fared/internal/testns"
	"github.com/fared/fared/qos/model"
)

// The ECN overlay lab: two VTEPs and an underlay router between them,
//
//	VTEP a (vx0 10.200.0.1, u0 10.78.1.1) -- m (ua, ub; forwards) -- VTEP b (u0 10.78.2.1, vx0 10.200.0.2)
//
// with a VXLAN tunnel (VNI 42) between a and b across m. nftables in m
// stands in for a marking switch (`ip ecn set ce` on the tunnel's UDP).
// Inner packets are UDP datagrams with IP_TOS set; AF_PACKET sockets see
// the outer headers leaving a and the decapsulated inner ones on b's vx0.

type vxlanLab struct {
	a, m, b *testns.NS
	capA    *packetsock.Socket // a's u0: outer headers leaving a
	capB    *packetsock.Socket // b's vx0: inner headers after decapsulation
	capBU   *packetsock.Socket // b's u0: outer headers leaving b
	seq     int
}

func newVXLANLab(t *testing.T) *vxlanLab {
	t.Helper()
	requireLab(t, "nft")
	l := &vxlanLab{a: testns.New(t, "fxa"), m: testns.New(t, "fxm"), b: testns.New(t, "fxb")}
	l.a.IP("link", "add", "u0", "type", "veth", "peer", "name", "ua", "netns", l.m.Name)
	l.b.IP("link", "add", "u0", "type", "veth", "peer", "name", "ub", "netns", l.m.Name)
	for _, s := range []struct {
		ns         *testns.NS
		dev, addr  string
		gw, remote string
	}{{l.a, "u0", "10.78.1.1/24", "10.78.1.2", "10.78.2.1"}, {l.b, "u0", "10.78.2.1/24", "10.78.2.2", "10.78.1.1"}} {
		// Only the probes cross the tunnel: no IPv6 neighbour or
		// listener traffic, and a listener on port 9 (no ICMP back).
		s.ns.Sysctl("net.ipv6.conf.all.disable_ipv6", "1")
		s.ns.Sysctl("net.ipv6.conf.default.disable_ipv6", "1")
		sinkUDP(t, s.ns.Handle)
		s.ns.IP("addr", "add", s.addr, "dev", s.dev)
		s.ns.IP("link", "set", s.dev, "up")
		s.ns.IP("route", "add", "default", "via", s.gw)
		local := strings.TrimSuffix(s.addr, "/24")
		s.ns.IP("link", "add", "vx0", "type", "vxlan", "id", "42", "local", local, "remote", s.remote, "dstport", "4789")
	}
	l.a.IP("addr", "add", "10.200.0.1/24", "dev", "vx0")
	l.b.IP("addr", "add", "10.200.0.2/24", "dev", "vx0")
	// Static neighbours: the probes must not wait for (or race) ARP
	// across the tunnel.
	macA, macB := linkMAC(t, l.a, "vx0"), linkMAC(t, l.b, "vx0")
	l.a.IP("neigh", "add", "10.200.0.2", "lladdr", macB, "dev", "vx0", "nud", "permanent")
	l.b.IP("neigh", "add", "10.200.0.1", "lladdr", macA, "dev", "vx0", "nud", "permanent")
	for _, ns := range []*testns.NS{l.a, l.b} {
		ns.IP("link", "set", "vx0", "up")
	}
	l.m.IP("addr", "add", "10.78.1.2/24", "dev", "ua")
	l.m.IP("addr", "add", "10.78.2.2/24", "dev", "ub")
	l.m.IP("link", "set", "ua", "up")
	l.m.IP("link", "set", "ub", "up")
	l.m.Sysctl("net.ipv4.ip_forward", "1")
	l.capA, l.capB, l.capBU = capture(t, l.a, "u0"), capture(t, l.b, "vx0"), capture(t, l.b, "u0")
	return l
}

func linkMAC(t *testing.T, ns *testns.NS, dev string) string {
	t.Helper()
	var mac string
	ns.Do(func() {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			t.Fatal(err)
		}
		mac = ifi.HardwareAddr.String()
	})
	return mac
}

func capture(t *testing.T, ns *testns.NS, dev string) *packetsock.Socket {
	t.Helper()
	var s *packetsock.Socket
	ns.Do(func() {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = packetsock.Open(ifi, unix.ETH_P_ALL, packetsock.Options{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { s.Close() })
	return s
}

// mark makes m's forward chain set the ECN field of the tunnel's packets
// to ecn ("ce", "ect1"), or removes the marking ("").
func (l *vxlanLab) mark(t *testing.T, ecn string) {
	t.Helper()
	rules := "table ip fxmark {}\ndelete table ip fxmark\n"
	if ecn != "" {
		rules += "table ip fxmark {\n chain cemark {\n  type filter hook forward priority 0;\n  udp dport 4789 ip ecn set " + ecn + "\n }\n}\n"
	}
	cmd := exec.Command("ip", "netns", "exec", l.m.Name, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v\n%s", err, out)
	}
}

// send sends one UDP datagram with the TOS byte tos from ns's overlay
// address to dst:9, carrying a token the captures look for.
func (l *vxlanLab) send(t *testing.T, ns *testns.NS, dst string, tos int) []byte {
	t.Helper()
	l.seq++
	token := []byte(fmt.Sprintf("fared-ecn-overlay-%d", l.seq))
	ns.Do(func() {
		c, err := net.Dial("udp4", dst+":9")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		raw, _ := c.(*net.UDPConn).SyscallConn()
		raw.Control(func(fd uintptr) {
			if err := unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, tos); err != nil {
				t.Fatal(err)
			}
		})
		if _, err := c.Write(token); err != nil {
			t.Fatal(err)
		}
	})
	return token
}

// seen is one probe as a capture saw it.
type seen struct {
	outer, inner byte // TOS bytes; outer 0 on a capture of inner frames
	found        bool
}

// await reads s until a frame carrying token arrives or the deadline
// passes. A frame is inner (IPv4/UDP to port 9) or outer (IPv4/UDP to
// 4789 around a VXLAN header and an inner frame).
func await(t *testing.T, s *packetsock.Socket, token []byte, within time.Duration) seen {
	t.Helper()
	buf := make([]byte, 9000)
	deadline := time.Now().Add(within)
	for {
		if err := s.SetReadDeadline(deadline); err != nil {
			t.Fatal(err)
		}
		n, err := s.Read(buf)
		if err != nil {
			return seen{} // deadline: not seen
		}
		if v, ok := parseProbe(buf[:n], token); ok {
			return v
		}
	}
}

// parseProbe finds token in an Ethernet frame, directly or inside VXLAN.
func parseProbe(f, token []byte) (seen, bool) {
	tos, udp, ok := ipv4UDP(f)
	if !ok {
		return seen{}, false
	}
	switch binary.BigEndian.Uint16(udp[2:4]) {
	case 9:
		return seen{inner: tos, found: true}, bytes.Equal(udp[8:], token)
	case 4789:
		if len(udp) < 16 {
			return seen{}, false
		}
		itos, iudp, ok := ipv4UDP(udp[16:])
		if !ok || !bytes.Equal(iudp[8:], token) {
			return seen{}, false
		}
		return seen{outer: tos, inner: itos, found: true}, true
	}
	return seen{}, false
}

// ipv4UDP returns the TOS byte and the UDP datagram of an Ethernet frame
// carrying IPv4/UDP.
func ipv4UDP(f []byte) (byte, []byte, bool) {
	if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:14]) != unix.ETH_P_IP {
		return 0, nil, false
	}
	ip := f[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || ip[9] != unix.IPPROTO_UDP || len(ip) < ihl+8 {
		return 0, nil, false
	}
	return ip[1], ip[ihl:], true
}

func ecnName(tos byte) string {
	return [...]string{"Not-ECT", "ECT(1)", "ECT(0)", "CE"}[tos&3]
}

func overlayReport(t *testing.T, ns string, o *model.Overlay) model.TunnelECN {
	t.Helper()
	be := openBackend(t, ns)
	rep, err := be.ApplyOverlay(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep) != 1 || rep[0].Name != "vx0" {
		t.Fatalf("overlay report in %s: %+v (want vx0 alone)", ns, rep)
	}
	return rep[0]
}

// TestVXLANECNOverlay: RFC 6040 across a real VXLAN tunnel. fared sets
// tos inherit on a's device and reports both; inner ECT is copied to the
// outer header at encapsulation (with and without tos inherit); a CE the
// underlay hop marks on the outer header reaches the inner packet at b;
// a CE over a Not-ECT inner packet is dropped and counted.
func TestVXLANECNOverlay(t *testing.T) {
	l := newVXLANLab(t)
	const dscp26 = 26 << 2
	inherit := &model.Overlay{Decap: model.DecapStandard, DSCP: model.DSCPInherit}
	keep := &model.Overlay{Decap: model.DecapStandard, DSCP: model.DSCPKeep}

	// fared's check on b, which keeps its tos: fixed 0, nothing changed.
	rb := overlayReport(t, l.b.Name, keep)
	if rb.DSCP != "fixed" || rb.Fixed != 0 || len(rb.Changed) != 0 || !rb.Conforms || rb.VNI != 42 || rb.Remote != "10.78.1.1" || rb.Local != "10.78.2.1" {
		t.Errorf("b's report %+v", rb)
	}
	// fared sets tos inherit on a; iproute2 reads it back.
	ra := overlayReport(t, l.a.Name, inherit)
	if ra.DSCP != model.DSCPInherit || len(ra.Changed) != 1 || ra.Changed[0] != "tos inherit" || !ra.Conforms ||
		ra.Encap != model.EncapCopyFromInner || ra.Decap != model.DecapStandard || ra.ECNDrops != 0 {
		t.Errorf("a's report %+v", ra)
	}
	if out := l.a.IP("-d", "link", "show", "vx0"); !strings.Contains(out, "tos inherit") || !strings.Contains(out, "id 42") {
		t.Errorf("ip -d link show vx0 after fared set tos inherit:\n%s", out)
	}
	if again := overlayReport(t, l.a.Name, inherit); len(again.Changed) != 0 {
		t.Errorf("second apply changed %v (already inherit)", again.Changed)
	}

	probe := func(from *testns.NS, dst string, tos int, outerCap, innerCap *packetsock.Socket) (seen, seen) {
		token := l.send(t, from, dst, tos)
		return await(t, outerCap, token, 2*time.Second), await(t, innerCap, token, 2*time.Second)
	}
	// No marking: ECT(0) with DSCP 26 leaves a with both in the outer
	// header (tos inherit) and arrives at b unchanged.
	out, in := probe(l.a, "10.200.0.2", dscp26|2, l.capA, l.capB)
	if !out.found || out.outer != dscp26|2 || !in.found || in.inner != dscp26|2 {
		t.Fatalf("ECT(0) no marking: outer %#x (%v) inner at b %#x (%v); want both %#x", out.outer, out.found, in.inner, in.found, dscp26|2)
	}
	// b keeps tos 0: the outer DSCP is 0, the ECN field still copied.
	token := l.send(t, l.b, "10.200.0.1", dscp26|2)
	if o := await(t, l.capBU, token, 2*time.Second); !o.found || o.outer != 2 {
		t.Errorf("b (tos 0) sent outer TOS %#x (%v), want 0x02: DSCP fixed 0, ECT(0) copied", o.outer, o.found)
	}
	// An inner CE leaves as outer ECT(0) (the kernel's RFC 3168 reset)
	// and is still CE after decapsulation.
	out, in = probe(l.a, "10.200.0.2", dscp26|3, l.capA, l.capB)
	if out.outer != dscp26|2 || in.inner != dscp26|3 {
		t.Errorf("inner CE: outer %s, inner at b %s (%v); want ECT(0), CE", ecnName(out.outer), ecnName(in.inner), in.found)
	}

	// The underlay marks CE: the decapsulated inner packet carries it.
	l.mark(t, "ce")
	out, in = probe(l.a, "10.200.0.2", dscp26|2, l.capA, l.capB)
	if !in.found || in.inner != dscp26|3 {
		t.Fatalf("outer marked CE: inner at b %#x %s (seen %v), want %#x CE", in.inner, ecnName(in.inner), in.found, dscp26|3)
	}
	if out.outer != dscp26|2 {
		t.Errorf("outer leaving a %s, want ECT(0) (m marks after)", ecnName(out.outer))
	}
	t.Logf("ECT(0) inner, CE marked in the underlay: inner at b tos %#x (%s)", in.inner, ecnName(in.inner))

	// RFC 6040: a CE over a Not-ECT inner packet is dropped; vxlan
	// counts it in rx_frame_errors, which fared reports.
	before := overlayReport(t, l.b.Name, keep).ECNDrops
	_, in = probe(l.a, "10.200.0.2", dscp26, l.capA, l.capB)
	if in.found {
		t.Errorf("Not-ECT inner under an outer CE was delivered (tos %#x); RFC 6040 drops it", in.inner)
	}
	if after := overlayReport(t, l.b.Name, keep).ECNDrops; after != before+1 {
		t.Errorf("ecn drops %d -> %d, want one more", before, after)
	}

	// An outer ECT(1) over an ECT(0) inner packet gives ECT(1) (RFC 6040
	// §4.2's table), as docs/qos.md says of this kernel.
	l.mark(t, "ect1")
	if _, in = probe(l.a, "10.200.0.2", dscp26|2, l.capA, l.capB); in.inner != dscp26|1 {
		t.Errorf("outer ECT(1) over inner ECT(0): inner at b %s (%v), want ECT(1)", ecnName(in.inner), in.found)
	}
}
