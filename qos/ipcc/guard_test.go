package ipcc

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/internal/guard"
	"github.com/fared/fared/qos/policy"
	"github.com/fared/fared/rocev2"
)

// TestPanicsRecovered: a panic while handling one captured packet (the
// reader), one packet in the loop or one poll is recovered by the guard
// the runtime was given: counted, logged once per site, and the next
// packet is handled.
func TestPanicsRecovered(t *testing.T) {
	var log bytes.Buffer
	g := guard.New("qos-ipcc-test", slog.New(slog.NewTextHandler(&log, nil)))
	r := New(Config{Policy: policy.DefaultIPCC(), Guard: g, Log: slog.New(slog.DiscardHandler)})
	f := rocev2.Frame{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), ID: 1}
	cnp := rocev2.NewCNP(5)
	pkt := f.Append(nil, &cnp)

	// The reader: a delivery that panics (a bug after decoding).
	var got []capPkt
	r.rx("eth0", pkt, t0, func(c capPkt) { panic("bug in delivery") })
	r.rx("eth0", pkt, t0, func(c capPkt) { got = append(got, c) })
	if guard.Count("qos-ipcc-test") != 1 || len(got) != 1 || got[0].p.BTH.DestQP != 5 {
		t.Fatalf("after a panic in rx: count %d, delivered %d", guard.Count("qos-ipcc-test"), len(got))
	}

	// The loop: no policy yet (Run makes it), so observe and poll panic.
	r.routes = newRouteCache(10, time.Second, func(netip.Addr) string { return "eth1" })
	r.observe(got[0])
	r.poll(t0, nil, nil)
	if n := guard.Count("qos-ipcc-test"); n != 3 {
		t.Fatalf("count %d after panics in observe and poll, want 3", n)
	}
	// The runtime carries on once it has its policy.
	r.pol = policy.NewIPCC(policy.DefaultIPCC())
	r.observe(got[0])
	r.poll(t0.Add(time.Millisecond), nil, nil)
	if st := r.Snapshot().Stats; st.Observed != 1 || st.Polls != 1 || guard.Count("qos-ipcc-test") != 3 {
		t.Fatalf("after recovery: stats %+v, count %d", st, guard.Count("qos-ipcc-test"))
	}
	for _, site := range []string{"site=\"ipcc rx\"", "site=\"ipcc observe\"", "site=\"ipcc poll\""} {
		if strings.Count(log.String(), site) != 1 {
			t.Errorf("site %s logged %d times, want once:\n%s", site, strings.Count(log.String(), site), log.String())
		}
	}
}
