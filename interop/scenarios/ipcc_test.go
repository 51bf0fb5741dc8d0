package scenarios

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/nsenter"
	"github.com/fared/fared/internal/packetsock"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
	"github.com/fared/fared/rocev2/uc"
)

// IPCC for real: ha -- sw -- hb, three fared nodes (IS-IS carries the
// loopbacks). sw shapes its port toward hb to 20 Mb/s with HTB (the
// linux backend) and runs IPCC on it. Two software RoCEv2 UC senders on
// ha write to hb's loopback: QP 0x11 at 40 Mb/s, whose receiver
// acknowledges, and QP 0x12 at 10 Mb/s, whose receiver never does. The
// backlog builds in sw's HTB class; fared copies the packets (AF_PACKET),
// learns 0x11's sender QP from the ACKs and sends CNPs.
const ipccTopo = `name: ipcc
nodes:
  ha: {kind: fared}
  sw: {kind: fared}
  hb: {kind: fared}
links:
  - {a: ha, b: sw, bandwidth: 1G}
  - {a: sw, b: hb, bandwidth: 1G}
`

const ipccSection = `qos:
  backend: linux
  poll-interval: 100ms
  dscp-map: {26: 3, 48: 6}
  watchdog: {enabled: false}
  interfaces:
    - {name: ha-1, rate: 1G}
    - {name: hb-1, rate: 20M}
  ipcc:
    interfaces: [hb-1]
    capture: [ha-1, hb-1]
    priorities: [3]
    poll: 1ms
    low: 10K
    high: 60K
    few: 2
    more: 8
`

// capturer collects the RoCEv2 frames arriving on an interface of a
// namespace (AF_PACKET, Ethernet header included) until stopped.
type capturer struct {
	fd     int
	mu     sync.Mutex
	frames [][]byte
	done   chan struct{}
}

func captureOn(t *testing.T, ns, iface string) *capturer {
	t.Helper()
	var fd int
	err := nsenter.DoNamed(ns, func() error {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return err
		}
		proto := packetsock.Htons(unix.ETH_P_ALL)
		if fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto)); err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifi.Index})
	})
	if err != nil {
		t.Fatal(err)
	}
	tv := unix.NsecToTimeval(int64(100 * time.Millisecond))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	c := &capturer{fd: fd, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		b := make([]byte, 9216)
		for {
			n, from, err := unix.Recvfrom(fd, b, 0)
			if err == unix.EBADF {
				return
			}
			if err != nil {
				continue
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			if n < 14+28 || binary.BigEndian.Uint16(b[12:]) != 0x0800 || b[14+9] != 17 || binary.BigEndian.Uint16(b[14+22:]) != rocev2.UDPPort {
				continue
			}
			c.mu.Lock()
			c.frames = append(c.frames, append([]byte(nil), b[:n]...))
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.stop() })
	return c
}

func (c *capturer) stop() {
	unix.Close(c.fd)
	<-c.done
}

func (c *capturer) cnps() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for _, f := range c.frames {
		if f[14+28] == byte(rocev2.CNP) {
			out = append(out, f)
		}
	}
	return out
}

func TestIPCCLab(t *testing.T) {
	l := startLab(t, ipccTopo)
	ctx := ctxT(t)
	ha, hb := l.Node("ha"), l.Node("hb")
	A, B := ha.Loopback, hb.Loopback
	poll(t, ctx, 60*time.Second, "ha reaches hb's loopback over IS-IS", func() error {
		return exec.Command("ip", "netns", "exec", ha.Netns, "ping", "-c1", "-W1", "-I", A.String(), B.String()).Run()
	})
	addSection(t, ctx, l, "sw", ipccSection)
	var v wire.QoSIPCC
	poll(t, ctx, 10*time.Second, "ipcc running on linux", func() error {
		if err := l.FarectlJSON(ctx, "sw", &v, "qos", "ipcc"); err != nil {
			return err
		}
		if !v.Enabled || !strings.HasPrefix(v.Runtime, "linux") || v.Polls == 0 {
			return fmt.Errorf("%+v", v)
		}
		return nil
	})

	capA := captureOn(t, ha.Netns, "sw-1")
	recv, err := uc.NewReceiver(uc.ReceiverConfig{Netns: hb.Netns, QPs: []uc.RecvQP{{QP: 0x21, PeerQP: 0x11}, {QP: 0x22, PeerQP: 0x12, NoAck: true}}})
	if err != nil {
		t.Fatal(err)
	}
	learnt, err := uc.NewSender(uc.SenderConfig{Netns: ha.Netns, Src: A, Dst: B, SrcQP: 0x11, DstQP: 0x21, Rate: 40e6, DSCP: 26, ECT: true, Duration: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	silent, err := uc.NewSender(uc.SenderConfig{Netns: ha.Netns, Src: A, Dst: B, SrcQP: 0x12, DstQP: 0x22, Rate: 10e6, DSCP: 26, ECT: true, Duration: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stopTraffic := runTraffic(ctx, recv.Run, learnt.Run, silent.Run)
	defer stopTraffic()

	// The backlog builds in sw's HTB class 1:13 on hb-1 and fared's CNPs
	// cut the learnt sender's rate.
	poll(t, ctx, 15*time.Second, "CNPs from fared cut the sender's rate", func() error {
		st := learnt.Stats()
		if st.CNPs < 5 || st.MinRate > 0.5*40e6 {
			return fmt.Errorf("sender: %d CNPs, rate %.1f Mb/s, min %.1f Mb/s", st.CNPs, st.Rate/1e6, st.MinRate/1e6)
		}
		return nil
	})
	if err := l.FarectlJSON(ctx, "sw", &v, "qos", "ipcc"); err != nil {
		t.Fatal(err)
	}
	stopTraffic()
	capA.stop()
	st, sst, rst := learnt.Stats(), silent.Stats(), recv.Stats()
	t.Logf("sender 0x11: %d packets, %d ACKs, %d CNPs (first after %v), rate %.1f Mb/s, min %.1f Mb/s",
		st.Packets, st.ACKs, st.CNPs, st.FirstCNP, st.Rate/1e6, st.MinRate/1e6)
	t.Logf("sender 0x12: %d packets, %d CNPs; receiver: %+v", sst.Packets, sst.CNPs, rst.QPs)
	if st.LastCNPFrom != B {
		t.Errorf("CNP from %v, want hb's address %v (IPCC writes it as the flow's receiver)", st.LastCNPFrom, B)
	}
	if sst.CNPs != 0 {
		t.Errorf("the sender whose QP was never learnt got %d CNPs", sst.CNPs)
	}
	if st.ACKs == 0 || rst.QPs[1].ACKs != 0 {
		t.Errorf("ACKs: %d at the learnt sender, %d sent for the silent QP", st.ACKs, rst.QPs[1].ACKs)
	}
	// fared's view: both flows in the table with their ports and queue,
	// only 0x11's sender QP learnt, the watched queue congested.
	flows := map[uint32]wire.QoSIPCCFlow{}
	for _, f := range v.Flows {
		if f.Src == A.String() && f.Dst == B.String() {
			flows[f.DestQP] = f
		}
	}
	if f := flows[0x21]; !f.Learned || f.SrcQP != 0x11 || f.In != "ha-1" || f.Out != "hb-1" || f.Priority != 3 || f.CNPs == 0 {
		t.Errorf("flow to QP 0x21: %+v", f)
	}
	if f := flows[0x22]; f.Learned || f.CNPs != 0 || f.Packets == 0 || f.Out != "hb-1" {
		t.Errorf("flow to QP 0x22 (never acknowledged): %+v", f)
	}
	if v.NoQP == 0 || v.Sent == 0 || v.SendErrors != 0 {
		t.Errorf("ipcc counters: skipped for no QP %d, sent %d, send errors %d", v.NoQP, v.Sent, v.SendErrors)
	}
	var congested bool
	for _, q := range v.Queues {
		if q.Interface == "hb-1" && q.Priority == 3 && q.Congested > 0 && q.CNPs > 0 {
			congested = true
		}
	}
	if !congested {
		t.Errorf("queue hb-1/3 never congested: %+v", v.Queues)
	}

	// The CNPs on the wire at ha: fared's, to 0x11, decode, and their
	// ICRC verifies; tshark reads them as InfiniBand without errors.
	cnps := capA.cnps()
	if len(cnps) == 0 {
		t.Fatal("no CNP captured at ha")
	}
	for i, fr := range cnps {
		f, p, err := rocev2.DecodeIP(fr[14:])
		if err != nil {
			t.Fatalf("CNP %d on the wire: %v", i, err)
		}
		if p.BTH.DestQP != 0x11 || !p.BTH.BECN || p.BTH.PKey != 0xFFFF || f.Src != B || f.Dst != A || f.TOS>>2 != 48 {
			t.Fatalf("CNP %d: %+v from %v to %v TOS %#x", i, p.BTH, f.Src, f.Dst, f.TOS)
		}
	}
	checkTshark(t, cnps)
	t.Logf("%d CNPs captured at ha, every ICRC verified; fared: %d sent, %d skipped for an unknown QP", len(cnps), v.Sent, v.NoQP)

	// Bad input: three of each kind from ha toward hb through sw. fared
	// counts them by kind, logs each kind once, and keeps running.
	inj, err := rawsock.OpenIn(ha.Netns, rawsock.Config{NoReceive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	good := rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.UCWriteOnly, PKey: 0xFFFF, DestQP: 0x21, PSN: 1}, Payload: make([]byte, 64)}
	fr := rocev2.Frame{Src: A, Dst: B, TOS: 26 << 2, ID: 77}
	trunc := fr.Append(nil, &good)[:rocev2.IPv4HeaderLen+rocev2.UDPHeaderLen+9]
	fixIPv4Lengths(trunc)
	badICRC := fr.Append(nil, &good)
	badICRC[len(badICRC)-2] ^= 0x5A
	unknown := fr.Append(nil, &good)
	unknown[rocev2.IPv4HeaderLen+rocev2.UDPHeaderLen] = 0x3F
	for i := 0; i < 3; i++ {
		for _, b := range [][]byte{trunc, badICRC, unknown} {
			if err := inj.Send(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll(t, ctx, 10*time.Second, "fared counts the bad packets by kind", func() error {
		if err := l.FarectlJSON(ctx, "sw", &v, "qos", "ipcc"); err != nil {
			return err
		}
		b := v.BadPackets
		if b["truncated"] != 3 || b["bad_icrc"] != 3 || b["unknown_opcode"] != 3 {
			return fmt.Errorf("bad packets %v", b)
		}
		return nil
	})
	logText, err := os.ReadFile(l.FaredLog("sw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"truncated", "bad_icrc", "unknown_opcode"} {
		n := 0
		sc := bufio.NewScanner(bytes.NewReader(logText))
		for sc.Scan() {
			if strings.Contains(sc.Text(), "bad RoCEv2 packet") && strings.Contains(sc.Text(), "kind="+k) {
				n++
				if !strings.Contains(sc.Text(), "offset=") {
					t.Errorf("log line without the offset: %s", sc.Text())
				}
			}
		}
		if n != 1 {
			t.Errorf("kind %s logged %d times, want once", k, n)
		}
	}
	if d, err := l.Daemons("sw"); err != nil || d["fared"] == 0 {
		t.Fatalf("fared on sw is gone after the bad packets: %v %v", d, err)
	}
	var status wire.QoSStatus
	if err := l.FarectlJSON(ctx, "sw", &status, "qos", "status"); err != nil {
		t.Fatalf("fared does not answer after the bad packets: %v", err)
	}
	// The text view renders.
	if out, err := l.Farectl(ctx, "sw", "qos", "ipcc"); err != nil || !bytes.Contains(out, []byte("hb-1")) {
		t.Errorf("farectl qos ipcc: %v\n%s", err, out)
	}
}

// fixIPv4Lengths sets the IPv4 and UDP lengths and the header checksum of
// a cut packet, so only its BTH is short.
func fixIPv4Lengths(ip []byte) {
	n := len(ip)
	binary.BigEndian.PutUint16(ip[2:], uint16(n))
	binary.BigEndian.PutUint16(ip[24:], uint16(n-rocev2.IPv4HeaderLen))
	ip[10], ip[11] = 0, 0
	var s uint32
	for i := 0; i < rocev2.IPv4HeaderLen; i += 2 {
		s += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for s > 0xFFFF {
		s = s>>16 + s&0xFFFF
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(s))
}

// checkTshark writes the frames to a pcap and has tshark decode them as
// InfiniBand over UDP: no malformed packet, no expert warning.
func checkTshark(t *testing.T, frames [][]byte) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but tshark is not installed")
		}
		t.Log("tshark not installed: skipping its check")
		return
	}
	path := filepath.Join(t.TempDir(), "cnp.pcap")
	if err := rocev2.WritePCAP(path, frames); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tshark", "-n", "-r", path, "-d", "udp.port==4791,infiniband", "-T", "fields",
		"-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-e", "_ws.malformed", "-e", "_ws.expert").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, "Running as user") || line == "" {
			continue
		}
		lines++
		f := strings.Split(line, "\t")
		if len(f) < 2 || f[0] != "129" || f[1] != "0x000011" || (len(f) > 2 && strings.Join(f[2:], "") != "") {
			t.Fatalf("tshark: %q", line)
		}
	}
	if lines != len(frames) {
		t.Fatalf("tshark printed %d lines for %d frames:\n%s", lines, len(frames), out)
	}
}

// TestQoSSimTuningAndIPCC: fared plays switch S of aiecn-mix.yaml on the
// sim backend with AI ECN and IPCC in its qos section. farectl shows the
// tuned thresholds with their reasons (always below XOFF) and IPCC's flow
// table, learnt QPs and switch CNPs.
func TestQoSSimTuningAndIPCC(t *testing.T) {
	l, ctx := simSwitch(t, "qtune", "qt", simMix)
	var tu wire.QoSTuning
	poll(t, ctx, 30*time.Second, "AI ECN decisions on S's port r", func() error {
		if err := l.FarectlJSON(ctx, "qt", &tu, "qos", "ecn-tuning"); err != nil {
			return err
		}
		for _, d := range tu.Decisions {
			if d.Interface == "r" && d.Priority == 3 && d.Reason != "" {
				return nil
			}
		}
		return fmt.Errorf("%+v", tu)
	})
	if !tu.Enabled || tu.Algorithm != "ai-ecn" || tu.MaxThreshold != 140000 {
		t.Errorf("tuning %+v", tu)
	}
	for _, q := range tu.Queues {
		if q.Applied.Max >= 150000 || q.Applied.Min >= q.Applied.Max {
			t.Errorf("%s/%d applied %+v: not below XOFF 150K", q.Interface, q.Priority, q.Applied)
		}
	}
	var v wire.QoSIPCC
	poll(t, ctx, 30*time.Second, "IPCC CNPs from S", func() error {
		if err := l.FarectlJSON(ctx, "qt", &v, "qos", "ipcc"); err != nil {
			return err
		}
		if v.Sent == 0 || v.Learned < 4 {
			return fmt.Errorf("sent %d learnt %d runtime %q", v.Sent, v.Learned, v.Runtime)
		}
		return nil
	})
	if !strings.HasPrefix(v.Runtime, "sim") {
		t.Errorf("runtime %q", v.Runtime)
	}
	for _, noun := range []string{"ecn-tuning", "ipcc"} {
		if out, err := l.Farectl(ctx, "qt", "qos", noun); err != nil || len(out) == 0 {
			t.Errorf("farectl qos %s: %v\n%s", noun, err, out)
		}
	}
}

// runTraffic runs each of fs (senders, receivers) until the returned stop
// is called or ctx ends; stop waits for them, and may be called again.
func runTraffic(ctx context.Context, fs ...func(context.Context) error) (stop func()) {
	tctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, run := range fs {
		wg.Add(1)
		go func() { defer wg.Done(); run(tctx) }()
	}
	var once sync.Once
	return func() { once.Do(func() { cancel(); wg.Wait() }) }
}
