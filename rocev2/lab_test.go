package rocev2_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/internal/packetsock"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
)

func requireLab(t *testing.T, bins ...string) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root (network namespaces)"
	}
	for _, b := range append([]string{"ip", "nft"}, bins...) {
		if _, err := exec.LookPath(b); err != nil && why == "" {
			why = b + " not found"
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but the lab test %s", why)
	}
	t.Skip(why)
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// chain builds S — R1 — R2 — D: four namespaces, R1 and R2 forwarding
// IPv4 and IPv6. R1 also rewrites the DSCP of RoCEv2 packets, as a QoS
// remarking switch would. Everything is removed at cleanup.
func chain(t *testing.T) (ns map[string]string, src, dst netip.Addr, src6, dst6 netip.Addr) {
	prefix := fmt.Sprintf("rv%d", os.Getpid()%100000)
	ns = map[string]string{}
	for _, n := range []string{"s", "r1", "r2", "d"} {
		ns[n] = prefix + "-" + n
		run(t, "ip", "netns", "add", ns[n])
		name := ns[n]
		t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
		run(t, "ip", "-n", ns[n], "link", "set", "lo", "up")
	}
	links := [][2]string{{"s", "r1"}, {"r1", "r2"}, {"r2", "d"}}
	for i, l := range links {
		a, b := l[0], l[1]
		run(t, "ip", "link", "add", "x", "netns", ns[a], "type", "veth", "peer", "y", "netns", ns[b])
		run(t, "ip", "-n", ns[a], "link", "set", "x", "name", "to-"+b)
		run(t, "ip", "-n", ns[b], "link", "set", "y", "name", "to-"+a)
		for j, n := range []string{a, b} {
			peer := []string{b, a}[j]
			run(t, "ip", "-n", ns[n], "addr", "add", fmt.Sprintf("10.77.%d.%d/24", i+1, j+1), "dev", "to-"+peer)
			run(t, "ip", "-n", ns[n], "addr", "add", fmt.Sprintf("fd77:%d::%d/64", i+1, j+1), "dev", "to-"+peer, "nodad")
			run(t, "ip", "-n", ns[n], "link", "set", "to-"+peer, "up")
		}
	}
	for _, r := range []string{"r1", "r2"} {
		run(t, "ip", "netns", "exec", ns[r], "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
	}
	run(t, "ip", "-n", ns["s"], "route", "add", "default", "via", "10.77.1.2")
	run(t, "ip", "-n", ns["s"], "-6", "route", "add", "default", "via", "fd77:1::2")
	run(t, "ip", "-n", ns["r1"], "route", "add", "10.77.3.0/24", "via", "10.77.2.2")
	run(t, "ip", "-n", ns["r1"], "-6", "route", "add", "fd77:3::/64", "via", "fd77:2::2")
	run(t, "ip", "-n", ns["r2"], "route", "add", "10.77.1.0/24", "via", "10.77.2.1")
	run(t, "ip", "-n", ns["r2"], "-6", "route", "add", "fd77:1::/64", "via", "fd77:2::1")
	run(t, "ip", "-n", ns["d"], "route", "add", "default", "via", "10.77.3.1")
	run(t, "ip", "-n", ns["d"], "-6", "route", "add", "default", "via", "fd77:3::1")
	run(t, "ip", "netns", "exec", ns["r1"], "nft", "add table inet remark; "+
		"add chain inet remark fw { type filter hook forward priority 0; }; "+
		"add rule inet remark fw udp dport 4791 ip dscp set cs3; "+
		"add rule inet remark fw udp dport 4791 ip6 dscp set cs3")
	// IPv6 forwarding needs a moment after the routers switch it on
	// (the first packets meet "no route" at R1): wait until S reaches D.
	for _, a := range []string{"10.77.3.2", "fd77:3::2"} {
		deadline := time.Now().Add(10 * time.Second)
		for exec.Command("ip", "netns", "exec", ns["s"], "ping", "-c1", "-W1", a).Run() != nil {
			if time.Now().After(deadline) {
				t.Fatalf("S cannot reach %s", a)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return ns, netip.MustParseAddr("10.77.1.1"), netip.MustParseAddr("10.77.3.2"),
		netip.MustParseAddr("fd77:1::1"), netip.MustParseAddr("fd77:3::2")
}

// capture opens an AF_PACKET socket on D's interface: the frames exactly
// as they arrived, Ethernet header included.
func capture(t *testing.T, ns, iface string) int {
	var fd int
	err := nsenter.DoNamed(ns, func() error {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return err
		}
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(packetsock.Htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: packetsock.Htons(unix.ETH_P_ALL), Ifindex: ifi.Index})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	tv := unix.NsecToTimeval(int64(200 * time.Millisecond))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	return fd
}

// TestICRCAfterTwoForwardedHops: RoCEv2 packets of every header kind,
// sent over a raw socket, cross two kernel routers (TTL/hop limit drop by
// two, the IPv4 checksum changes, R1 rewrites the DSCP). The frames
// captured at the destination decode, their ICRC verifies, and tshark's
// InfiniBand dissector reads them without a malformed or expert error and
// with the values we put in.
func TestICRCAfterTwoForwardedHops(t *testing.T) {
	requireLab(t, "tshark")
	ns, src, dst, src6, dst6 := chain(t)
	fd := capture(t, ns["d"], "to-r2")
	sender, err := rawsock.OpenIn(ns["s"], rawsock.Config{NoReceive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	// D's own raw receiver: it absorbs UDP 4791 (no ICMP back to S) and
	// checks the raw-socket receive path.
	recv, err := rawsock.OpenIn(ns["d"], rawsock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()

	pkts := []rocev2.Packet{
		{BTH: rocev2.BTH{Opcode: rocev2.UCWriteOnlyImm, PKey: 0xFFFF, DestQP: 0x10, PSN: 1}, RETH: rocev2.RETH{VA: 0x1000, RKey: 7, Length: 1027},
			ImmDt: rocev2.ImmDt{Data: 0xabcd}, Payload: bytes.Repeat([]byte{0x5a}, 1027)},
		{BTH: rocev2.BTH{Opcode: rocev2.UCSendOnly, PKey: 0xFFFF, DestQP: 0x11, PSN: 2}, Payload: []byte("hello")},
		{BTH: rocev2.BTH{Opcode: rocev2.RCAcknowledge, PKey: 0xFFFF, DestQP: 0x12, PSN: 3}, AETH: rocev2.AETH{Syndrome: rocev2.SyndromeNAK, MSN: 9}},
		{BTH: rocev2.BTH{Opcode: rocev2.RCAcknowledge, PKey: 0xFFFF, DestQP: 0x13, PSN: 4}, AETH: rocev2.AETH{Syndrome: rocev2.SyndromeACK | 31, MSN: 10}},
		{BTH: rocev2.BTH{Opcode: rocev2.ServiceRC | rocev2.OpReadRequest, PKey: 0xFFFF, DestQP: 0x14, PSN: 5, AckReq: true}, RETH: rocev2.RETH{VA: 0x2000, RKey: 8, Length: 64}},
		{BTH: rocev2.BTH{Opcode: rocev2.UDSendOnlyImm, PKey: 0xFFFF, DestQP: 0x15, PSN: 6}, DETH: rocev2.DETH{QKey: 0x80010000, SrcQP: 3}, ImmDt: rocev2.ImmDt{Data: 1}, Payload: []byte{1, 2, 3, 4}},
		{BTH: rocev2.BTH{Opcode: rocev2.ServiceRC | rocev2.OpFetchAdd, PKey: 0xFFFF, DestQP: 0x16, PSN: 7}, AtomicETH: rocev2.AtomicETH{VA: 0x3000, RKey: 9, SwapAdd: 1}},
		{BTH: rocev2.BTH{Opcode: rocev2.ServiceRC | rocev2.OpAtomicAcknowledge, PKey: 0xFFFF, DestQP: 0x17, PSN: 8}, AtomicAckETH: rocev2.AtomicAckETH{Orig: 5}},
		rocev2.NewCNP(0x18),
	}
	type sent struct {
		ip  []byte
		qp  uint32
		v6  bool
		ttl uint8
	}
	var want []sent
	for i, p := range pkts {
		for _, v6 := range []bool{false, true} {
			f := rocev2.Frame{Src: src, Dst: dst, TOS: 0x02, TTL: 64, ID: uint16(100 + i), SrcPort: uint16(49152 + i)}
			if v6 {
				f = rocev2.Frame{Src: src6, Dst: dst6, TOS: 0x02, TTL: 64, Flow: 0x1234, SrcPort: uint16(49152 + i)}
			}
			ip := f.Append(nil, &p)
			if err := sender.Send(ip); err != nil {
				t.Fatalf("send %s: %v", p.BTH.Opcode, err)
			}
			want = append(want, sent{ip: ip, qp: p.BTH.DestQP, v6: v6})
		}
	}

	// Collect the RoCEv2 frames that arrive at D (poll with a deadline).
	var frames [][]byte
	deadline := time.Now().Add(5 * time.Second)
	buf := make([]byte, 9000)
	for len(frames) < len(want) && time.Now().Before(deadline) {
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			continue
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		fr := append([]byte(nil), buf[:n]...)
		et := binary.BigEndian.Uint16(fr[12:])
		ip := fr[14:]
		switch {
		case et == 0x0800 && ip[9] == 17 && binary.BigEndian.Uint16(ip[22:]) == rocev2.UDPPort,
			et == 0x86dd && ip[6] == 17 && binary.BigEndian.Uint16(ip[42:]) == rocev2.UDPPort:
			frames = append(frames, fr)
		}
	}
	if len(frames) != len(want) {
		t.Fatalf("captured %d RoCEv2 frames, sent %d", len(frames), len(want))
	}
	for i, fr := range frames {
		ip := fr[14:]
		f, p, err := rocev2.DecodeIP(ip)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		w := want[i]
		if p.BTH.DestQP != w.qp {
			t.Fatalf("frame %d: QP %#x, want %#x (reordered?)", i, p.BTH.DestQP, w.qp)
		}
		if f.TTL != 62 {
			t.Errorf("frame %d: TTL %d after two hops, want 62", i, f.TTL)
		}
		if f.TOS>>2 != 24 {
			t.Errorf("frame %d: DSCP %d, want CS3 (24) after R1's remark", i, f.TOS>>2)
		}
		if bytes.Equal(ip, w.ip) {
			t.Errorf("frame %d: identical to what was sent: the hops changed nothing", i)
		}
		if !w.v6 && bytes.Equal(ip[10:12], w.ip[10:12]) {
			t.Errorf("frame %d: IPv4 checksum unchanged", i)
		}
		if !bytes.Equal(ip[len(ip)-4:], w.ip[len(w.ip)-4:]) {
			t.Errorf("frame %d: ICRC changed in transit", i)
		}
	}

	// The raw receive socket at D got the IPv4 ones, IP header included.
	recv.SetReadDeadline(time.Now().Add(2 * time.Second))
	for i := 0; i < len(want)/2; i++ {
		n, err := recv.Recv(buf)
		if err != nil {
			t.Fatalf("raw receive %d: %v", i, err)
		}
		if _, p, err := rocev2.DecodeIP(buf[:n]); err != nil || p.BTH.DestQP != want[2*i].qp {
			t.Fatalf("raw receive %d: QP %#x, %v", i, p.BTH.DestQP, err)
		}
	}

	// tshark reads the same frames as InfiniBand over UDP.
	pcap := filepath.Join(os.Getenv("ROCEV2_PCAP_DIR"), "rocev2.pcap")
	if os.Getenv("ROCEV2_PCAP_DIR") == "" {
		pcap = filepath.Join(t.TempDir(), "rocev2.pcap")
	}
	if err := rocev2.WritePCAP(pcap, frames); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tshark", "-n", "-r", pcap, "-d", "udp.port==4791,infiniband", "-T", "fields", "-E", "separator=|",
		"-e", "frame.number", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn",
		"-e", "infiniband.invariant.crc", "-e", "infiniband.reth.dmalen", "-e", "infiniband.aeth.msn",
		"-e", "_ws.malformed", "-e", "_ws.expert", "-e", "infiniband.vendor").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Running as user") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 10 {
			t.Fatalf("tshark line %q", line)
		}
		i := lines
		lines++
		_, p, _ := rocev2.DecodeIP(frames[i][14:])
		if f[1] != fmt.Sprint(uint8(p.BTH.Opcode)) || f[2] != fmt.Sprintf("0x%06x", p.BTH.DestQP) || f[3] != fmt.Sprint(p.BTH.PSN) {
			t.Errorf("frame %d: tshark opcode/qp/psn %s/%s/%s, we sent %d/%d/%d", i+1, f[1], f[2], f[3], p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN)
		}
		// tshark shows the ICRC as the big-endian reading of the four
		// bytes. Wireshark 4.0 does not know the CNP opcode (0x81): it
		// shows the 16 reserved bytes and the ICRC as vendor data.
		tail := frames[i][len(frames[i])-4:]
		if p.BTH.Opcode == rocev2.CNP {
			if want := fmt.Sprintf("%032x%x", 0, tail); !slices.Contains(strings.Split(f[9], ","), want) {
				t.Errorf("CNP %d: tshark vendor data %q, want %q", i+1, f[9], want)
			}
		} else if icrc := fmt.Sprintf("0x%08x", binary.BigEndian.Uint32(tail)); f[4] != icrc {
			t.Errorf("frame %d: tshark ICRC %s, frame has %s", i+1, f[4], icrc)
		}
		if p.HasRETH && f[5] != fmt.Sprint(p.RETH.Length) || p.HasAETH && f[6] != fmt.Sprint(p.AETH.MSN) {
			t.Errorf("frame %d: tshark RETH length %q AETH MSN %q", i+1, f[5], f[6])
		}
		if f[7] != "" || f[8] != "" {
			t.Errorf("frame %d (%s): tshark malformed=%q expert=%q", i+1, p.BTH.Opcode, f[7], f[8])
		}
	}
	if lines != len(frames) {
		t.Fatalf("tshark printed %d frames, want %d:\n%s", lines, len(frames), out)
	}
	// The detailed view has no "Malformed" anywhere either.
	out, _ = exec.Command("tshark", "-n", "-r", pcap, "-d", "udp.port==4791,infiniband", "-V").CombinedOutput()
	if bytes.Contains(out, []byte("Malformed")) || !bytes.Contains(out, []byte("InfiniBand")) {
		t.Errorf("tshark -V:\n%s", out)
	}
}
