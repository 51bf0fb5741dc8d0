package linux

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/testns"
	"github.com/fared/fared/qos/model"
)

// Lab tests: two network namespaces joined by a veth pair, real traffic
// from sockets opened inside them, the real kernel's HTB, u32, nftables
// and dcbnl. Names carry a per-run suffix; everything is removed at
// cleanup, failed test or not.

func requireLab(t *testing.T, tools ...string) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root (network namespaces)"
	}
	for _, b := range append([]string{"ip"}, tools...) {
		if _, err := exec.LookPath(b); err != nil && why == "" {
			why = b + " not found"
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but the lab test " + why)
	}
	t.Skip(why)
}

type lab struct {
	a, b   string // namespace names
	ha, hb netns.NsHandle
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newLab: namespaces qa<id> and qb<id>, veth "a0" (10.77.0.1/30) in qa
// and "b0" (10.77.0.2/30) in qb.
func newLab(t *testing.T) *lab {
	t.Helper()
	na, nb := testns.New(t, "fqa"), testns.New(t, "fqb")
	l := &lab{a: na.Name, b: nb.Name, ha: na.Handle, hb: nb.Handle}
	na.IP("link", "add", "a0", "type", "veth", "peer", "name", "b0", "netns", l.b)
	na.IP("addr", "add", "10.77.0.1/30", "dev", "a0")
	nb.IP("addr", "add", "10.77.0.2/30", "dev", "b0")
	na.IP("link", "set", "a0", "up")
	nb.IP("link", "set", "b0", "up")
	return l
}

// sender is a UDP socket in qa sending to qb with a DSCP.
type sender struct {
	c *net.UDPConn
}

func (l *lab) sender(t *testing.T, sport int, dscp uint8) *sender {
	t.Helper()
	var c *net.UDPConn
	testns.In(t, l.ha, func() {
		var err error
		c, err = net.DialUDP("udp4", &net.UDPAddr{IP: net.IPv4(10, 77, 0, 1), Port: sport}, &net.UDPAddr{IP: net.IPv4(10, 77, 0, 2), Port: 9})
		if err != nil {
			t.Fatal(err)
		}
	})
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	raw.Control(func(fd uintptr) {
		if err := unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, int(dscp)<<2); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { c.Close() })
	return &sender{c}
}

// send sends n datagrams of size bytes of payload at rate bytes/s (0:
// as fast as possible), and stops by itself.
func (s *sender) send(t *testing.T, n, size int, rate float64) {
	t.Helper()
	buf := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		if rate > 0 {
			due := start.Add(time.Duration(float64(i*size) / rate * 1e9))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
		if _, err := s.c.Write(buf); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
}

// sink drops what arrives at qb's UDP port 9 (so no ICMP goes back).
func (l *lab) sink(t *testing.T) { sinkUDP(t, l.hb) }

// sinkUDP drops what arrives at port 9 in namespace h until the test ends.
func sinkUDP(t *testing.T, h netns.NsHandle) {
	testns.In(t, h, func() {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{Port: 9})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		go func() {
			buf := make([]byte, 65536)
			for {
				if _, _, err := c.ReadFrom(buf); err != nil {
					return
				}
			}
		}()
	})
}

// dcbStrace runs `dcb ARGS` in ns under strace and returns the bytes of
// the RTM_SETDCB message it sent (strace's hex dump of fd writes).
func dcbStrace(t *testing.T, ns string, args ...string) []byte {
	t.Helper()
	argv := append([]string{"-f", "-e", "trace=sendto,sendmsg", "-e", "write=3,4", "-xx", "ip", "netns", "exec", ns, "dcb"}, args...)
	out, _ := exec.Command("strace", argv...).CombinedOutput() // dcb fails (EOPNOTSUPP): expected
	var msg []byte
	in := false
	// " | 00000  2c 00 00 00 4f 00 05 00  3e 5b 04 6b 00 00 00 00  ,...O... |":
	// 16 bytes in hex from column 10, 49 columns wide, then ASCII.
	dump := regexp.MustCompile(`^ \| [0-9a-f]{5}  `)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, "sendto(") || strings.Contains(line, "sendmsg("):
			if msg != nil {
				break
			}
			in = strings.Contains(line, "nlmsg_type=0x4f")
		case in && dump.MatchString(line):
			for _, h := range strings.Fields(line[10:min(len(line), 10+49)]) {
				v, _ := hex.DecodeString(h)
				msg = append(msg, v...)
			}
		case in:
			in = false
		}
	}
	if len(msg) == 0 {
		t.Fatalf("no RTM_SETDCB (0x4f) message in strace output:\n%s", out)
	}
	if !strings.Contains(string(out), "Operation not supported") {
		t.Errorf("dcb on a veth did not get EOPNOTSUPP:\n%s", out)
	}
	return msg
}

// TestDCBAppMatchesIproute2: fared's RTM_SETDCB for a DSCP APP entry is
// byte for byte what iproute2's `dcb app add ... dscp-prio` sends (as
// strace saw it reach the kernel), sequence number aside; and the
// kernel refuses both on a veth.
func TestDCBAppMatchesIproute2(t *testing.T) {
	requireLab(t, "strace", "dcb")
	l := newLab(t)
	theirs := dcbStrace(t, l.a, "app", "add", "dev", "a0", "dscp-prio", "26:3")
	req := Request(DCB_CMD_IEEE_SET, "a0", &IEEE{Apps: []App{{Selector: AppSelDSCP, Priority: 3, Protocol: 26}}})
	req.Seq = binary.NativeEndian.Uint32(theirs[8:12])
	ours := req.Serialize()
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("RTM_SETDCB differs from iproute2's:\n ours   % x\n theirs % x", ours, theirs)
	}
	// Several entries, as `dcb app add dev a0 dscp-prio 26:3 46:5` sends.
	theirs = dcbStrace(t, l.a, "app", "add", "dev", "a0", "dscp-prio", "26:3", "46:5")
	req = Request(DCB_CMD_IEEE_SET, "a0", &IEEE{Apps: []App{{AppSelDSCP, 3, 26}, {AppSelDSCP, 5, 46}}})
	req.Seq = binary.NativeEndian.Uint32(theirs[8:12])
	if ours = req.Serialize(); !bytes.Equal(ours, theirs) {
		t.Fatalf("two entries:\n ours   % x\n theirs % x", ours, theirs)
	}
	// The kernel's own answer to fared: not supported on a veth.
	b := openBackend(t, l.a)
	if err := b.probeDCB("a0"); err != ErrDCBUnsupported {
		t.Fatalf("probe on veth: %v, want ErrDCBUnsupported", err)
	}
}

// shapedLab is the lab of the classification tests: a sink in qb and the
// backend on a0, removed at the end of the test.
func shapedLab(t *testing.T) (*lab, *Backend) {
	t.Helper()
	requireLab(t, "nft")
	l := newLab(t)
	l.sink(t)
	return l, openBackend(t, l.a, "a0")
}

// openBackend opens the backend in the namespace ns for the test. At its
// end the qdiscs and the nft table on ifaces are removed and then the
// backend is closed, before the lab's namespaces go.
func openBackend(t *testing.T, ns string, ifaces ...string) *Backend {
	t.Helper()
	b, err := New(Options{Netns: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if len(ifaces) > 0 {
		t.Cleanup(func() { b.Remove(context.Background(), ifaces) })
	}
	return b
}

// uapi mirrors of include/uapi/linux/dcbnl.h, written from the header
// with explicit padding, encoded with encoding/binary: an independent
// construction of the layouts fared's codec writes by hand.
type uapiPFC struct {
	PfcCap, PfcEn, Mbc uint8
	_                  uint8
	Delay              uint16
	_                  [2]uint8
	Requests           [8]uint64
	Indications        [8]uint64
}

type uapiETS struct {
	Willing, EtsCap, Cbs                    uint8
	TcTxBw, TcRxBw, TcTsa, PrioTc, TcRecoBw [8]uint8
	TcRecoTsa, RecoPrioTc                   [8]uint8
}

func nla(typ uint16, payload []byte) []byte {
	b := make([]byte, 4, 4+len(payload)+3)
	binary.NativeEndian.PutUint16(b, uint16(4+len(payload)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, payload...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestDCBPFCETSLayout: `dcb pfc set` and `dcb ets set` read before they
// write and stop at EOPNOTSUPP on a veth, so for PFC and ETS the
// reference is the uapi struct layout: 136 bytes of ieee_pfc, 59 of
// ieee_ets, nested in DCB_ATTR_IEEE.
func TestDCBPFCETSLayout(t *testing.T) {
	pfc := PFC{Cap: 8, Enable: 0x18, MBC: 1, Delay: 0x1234}
	pfc.Requests[3], pfc.Indications[4] = 7, 9
	var u bytes.Buffer
	binary.Write(&u, binary.NativeEndian, uapiPFC{PfcCap: 8, PfcEn: 0x18, Mbc: 1, Delay: 0x1234,
		Requests: [8]uint64{3: 7}, Indications: [8]uint64{4: 9}})
	if u.Len() != SizeofPFC || !bytes.Equal(pfc.AppendTo(nil), u.Bytes()) {
		t.Fatalf("ieee_pfc:\n ours % x\n uapi % x", pfc.AppendTo(nil), u.Bytes())
	}
	if back, err := DecodePFC(u.Bytes()); err != nil || back != pfc {
		t.Fatalf("DecodePFC: %+v %v", back, err)
	}
	ets := ETS{Willing: 0, ETSCap: 8, TCTSA: [8]uint8{3: TSAETS, 4: TSAETS}, TCTxBW: [8]uint8{3: 60, 4: 40},
		PrioTC: [8]uint8{0, 1, 2, 3, 4, 5, 6, 7}}
	u.Reset()
	binary.Write(&u, binary.NativeEndian, uapiETS{EtsCap: 8, TcTsa: [8]uint8{3: 2, 4: 2}, TcTxBw: [8]uint8{3: 60, 4: 40},
		PrioTc: [8]uint8{0, 1, 2, 3, 4, 5, 6, 7}})
	if u.Len() != SizeofETS || !bytes.Equal(ets.AppendTo(nil), u.Bytes()) {
		t.Fatalf("ieee_ets:\n ours % x\n uapi % x", ets.AppendTo(nil), u.Bytes())
	}
	if back, err := DecodeETS(u.Bytes()); err != nil || back != ets {
		t.Fatalf("DecodeETS: %+v %v", back, err)
	}
	// The whole message, built from the layouts by hand.
	req := Request(DCB_CMD_IEEE_SET, "eth1", &IEEE{ETS: &ets, PFC: &pfc})
	req.Seq = 42
	var pfcB, etsB bytes.Buffer
	binary.Write(&pfcB, binary.NativeEndian, uapiPFC{PfcCap: 8, PfcEn: 0x18, Mbc: 1, Delay: 0x1234, Requests: [8]uint64{3: 7}, Indications: [8]uint64{4: 9}})
	binary.Write(&etsB, binary.NativeEndian, uapiETS{EtsCap: 8, TcTsa: [8]uint8{3: 2, 4: 2}, TcTxBw: [8]uint8{3: 60, 4: 40}, PrioTc: [8]uint8{0, 1, 2, 3, 4, 5, 6, 7}})
	body := []byte{0, DCB_CMD_IEEE_SET, 0, 0}
	body = append(body, nla(DCB_ATTR_IFNAME, []byte("eth1\x00"))...)
	inner := append(nla(DCB_ATTR_IEEE_ETS, etsB.Bytes()), nla(DCB_ATTR_IEEE_PFC, pfcB.Bytes())...)
	body = append(body, nla(unix.NLA_F_NESTED|DCB_ATTR_IEEE, inner)...)
	hdr := make([]byte, 16)
	binary.NativeEndian.PutUint32(hdr, uint32(16+len(body)))
	binary.NativeEndian.PutUint16(hdr[4:], RTM_SETDCB)
	binary.NativeEndian.PutUint16(hdr[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(hdr[8:], 42)
	if want, got := append(hdr, body...), req.Serialize(); !bytes.Equal(got, want) {
		t.Fatalf("RTM_SETDCB with ETS and PFC:\n ours % x\n want % x", got, want)
	}
}

func qosDesired(elephant *model.Elephant) *model.Desired {
	d := &model.Desired{Elephant: elephant}
	d.DSCP[26] = 3
	d.DSCP[46] = 5
	i := model.Iface{Name: "a0", Rate: 1e9, PFCConfigured: model.PriosOf(3), PFC: model.PriosOf(3)}
	for q := range i.Queues {
		i.Queues[q] = model.Queue{Sched: model.Strict, Weight: 1}
	}
	d.Ifaces = []model.Iface{i}
	return d
}

func classOf(c *model.Counters, iface string, p int) model.Class {
	for _, cl := range c.Ifaces[iface].Classes {
		if cl.Prio == p {
			return cl
		}
	}
	return model.Class{}
}

// TestDSCPClassification: on a real veth, UDP with DSCP 26 lands in HTB
// class 1:13, DSCP 46 in 1:15, the rest in the default 1:10; the class
// counters read over netlink count exactly what was sent. DCB is
// reported unsupported on the veth, and Apply still succeeds.
func TestDSCPClassification(t *testing.T) {
	l, b := shapedLab(t)
	ctx := context.Background()
	rep, err := b.Apply(ctx, qosDesired(nil))
	if err != nil {
		t.Fatalf("Apply on a veth failed instead of reporting: %v", err)
	}
	if s, _ := rep.Get("a0", model.FeatPFC); s.OK || !strings.Contains(s.Reason, "not supported") {
		t.Errorf("pfc on veth reported %+v, want unsupported with the kernel's reason", s)
	}
	if s, _ := rep.Get("a0", model.FeatECN); s.OK {
		t.Errorf("ecn reported supported in a kernel without RED: %+v", s)
	}
	const size = 1000
	l.sender(t, 40001, 26).send(t, 300, size, 0)
	l.sender(t, 40002, 46).send(t, 200, size, 0)
	l.sender(t, 40003, 0).send(t, 100, size, 0)
	c, err := b.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// On the wire: 1000 payload + 8 UDP + 20 IP + 14 Ethernet.
	frame := uint64(size + 8 + 20 + 14)
	for _, w := range []struct {
		prio int
		pkts uint64
	}{{3, 300}, {5, 200}} {
		cl := classOf(c, "a0", w.prio)
		if cl.Packets != w.pkts || cl.Bytes != w.pkts*frame {
			t.Errorf("class %s: %d packets %d bytes, want %d and %d", cl.Name, cl.Packets, cl.Bytes, w.pkts, w.pkts*frame)
		}
	}
	if def := classOf(c, "a0", 0); def.Packets < 100 {
		t.Errorf("default class 1:10: %d packets, want the 100 best-effort datagrams (plus ARP)", def.Packets)
	}
	for _, p := range []int{1, 2, 4, 6, 7} {
		if cl := classOf(c, "a0", p); cl.Packets != 0 {
			t.Errorf("class %s got %d packets", cl.Name, cl.Packets)
		}
	}
}

// TestElephantsInKernel: with the large-flow rule (1 MB/s, 1.2 MB) a UDP
// flow at 20 MB/s becomes an elephant and leaves in class 1:11 once it
// has sent its allowance; twenty 20 KB mice never do. Also measures how
// long the kernel takes to classify the elephant.
func TestElephantsInKernel(t *testing.T) {
	l, b := shapedLab(t)
	ctx := context.Background()
	const rate, size = 1_000_000, 1_200_000
	if _, err := b.Apply(ctx, qosDesired(&model.Elephant{Rate: rate, Size: size, Prio: 1, Color: model.Yellow, Idle: 10 * time.Second})); err != nil {
		t.Fatal(err)
	}
	const payload = 1000
	l3 := uint64(payload + 8 + 20) // what nft_limit counts (skb->len at postrouting)
	frame := l3 + 14               // what HTB counts
	for i := 0; i < 20; i++ {
		l.sender(t, 41000+i, 26).send(t, 20, payload, 0)
	}
	c, err := b.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if el := classOf(c, "a0", 1); el.Bytes != 0 {
		t.Fatalf("mice put %d bytes in the elephant class", el.Bytes)
	}
	if mice := classOf(c, "a0", 3); mice.Packets != 400 {
		t.Fatalf("mice class 1:13: %d packets, want 400", mice.Packets)
	}
	// The elephant: 8000 datagrams at 20 MB/s, paced; poll the class
	// while it runs.
	const n = 8000
	var sendRate float64 = 20e6
	el := l.sender(t, 42000, 26)
	done := make(chan struct{})
	start := time.Now()
	go func() { el.send(t, n, payload, sendRate); close(done) }()
	var delay time.Duration
	for delay == 0 {
		c, err := b.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if classOf(c, "a0", 1).Bytes > 0 {
			delay = time.Since(start)
		}
		select {
		case <-done:
			if delay == 0 {
				t.Fatal("the elephant finished without being classified")
			}
		default:
		}
	}
	<-done
	c, err = b.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	elBytes := classOf(c, "a0", 1).Bytes
	headBytes := classOf(c, "a0", 3).Bytes - 400*frame // the elephant's packets before classification
	if elBytes+headBytes != n*frame {
		t.Fatalf("elephant: %d + %d bytes counted, %d sent", elBytes, headBytes, n*frame)
	}
	// Before classification it spends the bucket (size) plus the refill
	// at `rate` while it runs: at least size, at most size + rate x delay.
	head := headBytes / frame * l3
	if lo, hi := uint64(size)-l3, uint64(size)+uint64(float64(rate)*delay.Seconds())+l3; head < lo || head > hi {
		t.Errorf("elephant sent %d bytes as a mouse, want between %d and %d", head, lo, hi)
	}
	var elephants []string
	for _, f := range c.Ifaces["a0"].Flows {
		elephants = append(elephants, f.Key)
	}
	if len(elephants) != 1 || !strings.Contains(elephants[0], "42000") {
		t.Errorf("nft elephants set: %v, want only the flow from port 42000", elephants)
	}
	// Theory: the bucket empties after size / (sending rate - rate).
	theory := time.Duration(float64(size) / (sendRate - rate) * float64(time.Second))
	t.Logf("elephant classified after %v (token bucket theory %v, polling adds up to a poll); %d bytes in 1:11, %d as mouse in 1:13; set %v",
		delay.Round(100*time.Microsecond), theory.Round(100*time.Microsecond), elBytes, headBytes, elephants)
}

// TestPreventionForwarding: a Linux router r with two uplinks u1, u2 in
// one port group. A DSCP 26 flow that enters u1 and leaves u2 is
// high-risk: nftables rewrites it to DSCP 30 and puts it in priority 2's
// HTB class on u2; the receiver sees DSCP 30, not 34: the second-bounce
// rule (30 -> 34, priority 1) applies to a packet that arrives with DSCP
// 30, not to the one the first rule just remapped. Traffic from the
// router itself (not forwarded through the group) keeps DSCP 26 and class
// 1:13.
func TestPreventionForwarding(t *testing.T) {
	requireLab(t, "nft")
	nx, nr, ny := testns.New(t, "fqx"), testns.New(t, "fqr"), testns.New(t, "fqy")
	x, rt, y := nx.Name, nr.Name, ny.Name
	run(t, "ip", "-n", x, "link", "add", "x0", "type", "veth", "peer", "name", "u1", "netns", rt)
	run(t, "ip", "-n", y, "link", "add", "y0", "type", "veth", "peer", "name", "u2", "netns", rt)
	for _, c := range [][]string{
		{x, "addr", "add", "10.78.1.2/24", "dev", "x0"}, {x, "link", "set", "x0", "up"}, {x, "route", "add", "default", "via", "10.78.1.1"},
		{y, "addr", "add", "10.78.2.2/24", "dev", "y0"}, {y, "link", "set", "y0", "up"}, {y, "route", "add", "default", "via", "10.78.2.1"},
		{rt, "addr", "add", "10.78.1.1/24", "dev", "u1"}, {rt, "link", "set", "u1", "up"},
		{rt, "addr", "add", "10.78.2.1/24", "dev", "u2"}, {rt, "link", "set", "u2", "up"},
	} {
		run(t, append([]string{"ip", "-n", c[0]}, c[1:]...)...)
	}
	run(t, "ip", "netns", "exec", rt, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	b := openBackend(t, rt, "u1", "u2")
	ctx := context.Background()
	d := &model.Desired{Remaps: []model.Remap{{Group: "uplinks", From: 26, To: 30, Prio: 2}, {Group: "uplinks", From: 30, To: 34, Prio: 1}}}
	d.DSCP[26], d.DSCP[30], d.DSCP[34] = 3, 2, 1
	for _, n := range []string{"u1", "u2"} {
		i := model.Iface{Name: n, Rate: 1e9, Group: "uplinks", PFCConfigured: model.PriosOf(3), PFC: model.PriosOf(3)}
		for q := range i.Queues {
			i.Queues[q] = model.Queue{Sched: model.Strict, Weight: 1}
		}
		d.Ifaces = append(d.Ifaces, i)
	}
	if _, err := b.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	hx, hy, hr := nx.Handle, ny.Handle, nr.Handle
	// The receiver reads each datagram's TOS byte.
	var rc *net.UDPConn
	testns.In(t, hy, func() {
		var err error
		if rc, err = net.ListenUDP("udp4", &net.UDPAddr{Port: 9}); err != nil {
			t.Fatal(err)
		}
	})
	defer rc.Close()
	raw, _ := rc.SyscallConn()
	raw.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1) })
	send := func(ns netns.NsHandle, n, dscp int) {
		var c *net.UDPConn
		testns.In(t, ns, func() {
			var err error
			if c, err = net.ListenUDP("udp4", &net.UDPAddr{}); err != nil {
				t.Fatal(err)
			}
		})
		defer c.Close()
		rc, _ := c.SyscallConn()
		rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, dscp<<2) })
		for i := 0; i < n; i++ {
			if _, err := c.WriteToUDP(make([]byte, 200), &net.UDPAddr{IP: net.IPv4(10, 78, 2, 2), Port: 9}); err != nil {
				t.Fatal(err)
			}
		}
	}
	recvTOS := func(n int) map[int]int {
		got := map[int]int{}
		buf, oob := make([]byte, 2048), make([]byte, 128)
		rc.SetReadDeadline(time.Now().Add(5 * time.Second))
		for i := 0; i < n; i++ {
			_, oobn, _, _, err := rc.ReadMsgUDP(buf, oob)
			if err != nil {
				t.Fatalf("received %d of %d: %v", i, n, err)
			}
			msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
			for _, m := range msgs {
				if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) > 0 {
					got[int(m.Data[0])>>2]++
				}
			}
		}
		return got
	}
	// pass sends n datagrams of DSCP dscp from ns, checks that the
	// receiver sees them with DSCP want and that u2's class of priority
	// prio has sent total packets, and returns the counters.
	pass := func(what string, ns netns.NsHandle, n, dscp, want, prio int, total uint64) *model.Counters {
		send(ns, n, dscp)
		if got := recvTOS(n); got[want] != n {
			t.Fatalf("%s: receiver saw DSCPs %v, want %d x DSCP %d", what, got, n, want)
		}
		c, err := b.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cl := classOf(c, "u2", prio); cl.Packets != total {
			t.Errorf("%s: u2 class of priority %d sent %d packets, want %d", what, prio, cl.Packets, total)
		}
		return c
	}
	// Resolve neighbours (ARP) first.
	run(t, "ip", "netns", "exec", x, "ping", "-c", "1", "-W", "2", "10.78.2.2")
	c := pass("forwarded u1 -> u2", hx, 100, 26, 30, 2, 100)
	frame := uint64(200 + 8 + 20 + 14)
	if cl := classOf(c, "u2", 2); cl.Bytes != 100*frame {
		t.Errorf("u2 class 1:12: %d bytes, want %d", cl.Bytes, 100*frame)
	}
	if cl := classOf(c, "u2", 3); cl.Packets != 0 {
		t.Errorf("u2 class 1:13 got %d packets of the remapped flow", cl.Packets)
	}
	// A packet that arrives with DSCP 30 (remapped at an earlier
	// bounce) takes the second-bounce rule.
	pass("second bounce", hx, 20, 30, 34, 1, 20)
	// The router's own traffic does not enter through the group.
	pass("router's own packets", hr, 50, 26, 26, 3, 50)
}
