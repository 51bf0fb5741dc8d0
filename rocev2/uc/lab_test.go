package uc

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/internal/logbuf"
	"github.com/fared/fared/rocev2"
	"github.com/fared/fared/rocev2/rawsock"
)

func requireRoot(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root (network namespaces)"
	} else if _, err := exec.LookPath("ip"); err != nil {
		why = "ip not found"
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but the lab test %s", why)
	}
	t.Skip(why)
}

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// pair builds two namespaces joined by a veth: A 10.99.1.1, B 10.99.1.2.
func pair(t *testing.T) (a, b string) {
	p := fmt.Sprintf("uc%d", os.Getpid()%100000)
	a, b = p+"-a", p+"-b"
	for _, n := range []string{a, b} {
		sh(t, "ip", "netns", "add", n)
		n := n
		t.Cleanup(func() { exec.Command("ip", "netns", "del", n).Run() })
		sh(t, "ip", "-n", n, "link", "set", "lo", "up")
	}
	sh(t, "ip", "link", "add", "x", "netns", a, "type", "veth", "peer", "y", "netns", b)
	sh(t, "ip", "-n", a, "addr", "add", "10.99.1.1/24", "dev", "x")
	sh(t, "ip", "-n", b, "addr", "add", "10.99.1.2/24", "dev", "y")
	sh(t, "ip", "-n", a, "link", "set", "x", "up")
	sh(t, "ip", "-n", b, "link", "set", "y", "up")
	return a, b
}

// TestSenderReceiver: the sender paces UC writes to the receiver, which
// acknowledges them to the sender's QP; a CNP halves the sender's rate;
// bad packets are counted by kind, logged once each, and the receiver
// goes on.
func TestSenderReceiver(t *testing.T) {
	requireRoot(t)
	na, nb := pair(t)
	A, B := netip.MustParseAddr("10.99.1.1"), netip.MustParseAddr("10.99.1.2")
	logs, log := logbuf.New()
	// Resolve neighbours first (the first burst would wait in ARP).
	sh(t, "ip", "netns", "exec", na, "ping", "-c1", "-W2", "10.99.1.2")
	recv, err := NewReceiver(ReceiverConfig{Netns: nb, QPs: []RecvQP{{QP: 0x21, PeerQP: 0x11}}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	send, err := NewSender(SenderConfig{Netns: na, Src: A, Dst: B, SrcQP: 0x11, DstQP: 0x21, Rate: 20e6, DSCP: 26, Duration: 2 * time.Second, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	rctx, rcancel := context.WithCancel(ctx)
	go func() { defer wg.Done(); recv.Run(rctx) }()
	go func() { defer wg.Done(); send.Run(ctx) }()
	defer func() { rcancel(); cancel(); wg.Wait() }()

	poll := func(what string, f func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !f(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: sender %+v receiver %+v", what, send.Stats(), recv.Stats())
			}
		}
	}
	poll("ACKs at the sender", func() bool { return send.Stats().ACKs >= 10 })

	// A CNP to the sender's QP, from B (as the receiver's or a switch's).
	inj, err := rawsock.OpenIn(nb, rawsock.Config{NoReceive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	cnp := rocev2.NewCNP(0x11)
	before := send.Stats().Rate
	if err := inj.Send((&rocev2.Frame{Src: B, Dst: A, TOS: 48 << 2, ID: 7}).Append(nil, &cnp)); err != nil {
		t.Fatal(err)
	}
	poll("the CNP at the sender", func() bool { return send.Stats().CNPs == 1 })
	st := send.Stats()
	var cut float64
	for _, s := range st.Samples {
		if s.Cause == "cnp" {
			cut = s.Rate
		}
	}
	// The cut is RC x (1 - alpha/2); alpha starts at 1 and has decayed
	// by (1 - 1/256) per whole 1 ms period before the CNP: the rate falls
	// to just above half (fast recovery then brings it back). How many
	// periods passed depends on how fast the machine delivered the first
	// ACKs, so the expectation is computed from when the CNP came (one
	// period more if a pacing tick ran the timer past the CNP's arrival
	// before the CNP was handled).
	k := math.Floor(float64(st.FirstCNP) / float64(time.Millisecond))
	want := func(k float64) float64 { return before * (1 - math.Pow(1-1.0/256, k)/2) }
	near := func(w float64) bool { return math.Abs(cut-w) <= 1e-6*w }
	if !near(want(k)) && !near(want(k+1)) || cut < before*0.5 || st.MinRate != cut || st.LastCNPFrom != B || st.FirstCNP == 0 {
		t.Errorf("rate %g before the CNP, %g at it (want %g), min %g; from %v at %v", before, cut, want(k), st.MinRate, st.LastCNPFrom, st.FirstCNP)
	}

	// Bad input to the receiver's QP: each kind counted, logged once.
	good := rocev2.Packet{BTH: rocev2.BTH{Opcode: rocev2.UCWriteOnly, PKey: 0xFFFF, DestQP: 0x21, PSN: 1}, Payload: make([]byte, 64)}
	f := rocev2.Frame{Src: A, Dst: B, ID: 9}
	trunc := f.Append(nil, &good)[:rocev2.IPv4HeaderLen+rocev2.UDPHeaderLen+9] // a 9-byte BTH
	trunc = fixLengths(trunc)
	badICRC := f.Append(nil, &good)
	badICRC[len(badICRC)-1] ^= 0xFF
	unknown := f.Append(nil, &good)
	unknown[rocev2.IPv4HeaderLen+rocev2.UDPHeaderLen] = 0x3F // reserved UC opcode
	for i := 0; i < 3; i++ {
		for _, b := range [][]byte{trunc, badICRC, unknown} {
			if err := inj.Send(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll("the bad packets counted", func() bool {
		e := recv.Stats().Errors
		return e["truncated"] == 3 && e["bad_icrc"] == 3 && e["unknown_opcode"] == 3
	})
	for _, k := range []string{"truncated", "bad_icrc", "unknown_opcode"} {
		if n := logs.Count("kind=" + k); n != 1 {
			t.Errorf("kind %s logged %d times, want once:\n%s", k, n, logs.String())
		}
	}
	// The receiver goes on.
	n := recv.Stats().QPs[0].Packets
	poll("more data after the bad packets", func() bool { return recv.Stats().QPs[0].Packets > n+5 })
	rs := recv.Stats().QPs[0]
	if rs.ACKs != rs.Packets || rs.From != A {
		t.Errorf("receiver %+v: one ACK per packet, from A", rs)
	}
	if st := send.Stats(); st.Packets == 0 || st.Errors["bad_icrc"] != 0 {
		t.Errorf("sender %+v", st)
	}
}

// fixLengths sets the IPv4 and UDP lengths and the IP checksum of a
// truncated packet so that only the BTH is short.
func fixLengths(ip []byte) []byte {
	n := len(ip)
	ip[2], ip[3] = byte(n>>8), byte(n)
	u := n - rocev2.IPv4HeaderLen
	ip[24], ip[25] = byte(u>>8), byte(u)
	ip[10], ip[11] = 0, 0
	var s uint32
	for i := 0; i < rocev2.IPv4HeaderLen; i += 2 {
		s += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	for s > 0xFFFF {
		s = s>>16 + s&0xFFFF
	}
	c := ^uint16(s)
	ip[10], ip[11] = byte(c>>8), byte(c)
	return ip
}
