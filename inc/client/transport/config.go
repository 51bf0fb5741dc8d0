package transport

import (
	"math"
	"time"

	"github.com/fared/fared/internal/setting"
)

// Config is the IRN configuration of a flow.
type Config struct {
	// Window, when set, is the cap on packets in flight, overriding
	// BDP-FC's computed one (tests, an operator's measurement). A packet
	// is sent only while (its index − the lowest unacknowledged) < cap.
	Window int
	// BDP-FC (IRN §3.2): the cap is ⌈bottleneck bandwidth × RTT / MTU⌉,
	// held within [MinWindow, MaxWindow]. BandwidthBps is the path's
	// bottleneck in bits/s (the client takes its tree's from the manager;
	// this is the value when the manager knows none), RTT the round trip
	// of the longest path, MTU the payload bytes of one packet (RoCE's
	// path MTU counts payload).
	BandwidthBps uint64
	RTT          time.Duration
	MTU          int
	// RTOLow applies while at most NLow packets are in flight (a lost
	// single packet must not wait long), RTOHigh otherwise.
	RTOLow, RTOHigh time.Duration
	NLow            int
	// ReportAfter: after this many timeouts while one packet is the
	// lowest unacknowledged, the flow reports it (the draft's "N
	// timeouts": the client tells the manager).
	ReportAfter int
	// Reorder: a packet unacknowledged while Reorder packets sent after
	// it are acknowledged is taken as lost (IRN: "a packet is considered
	// lost only if another packet with a higher sequence number has been
	// selectively acked"; a small threshold tolerates the reordering of
	// INC results, which complete in the order of the slowest rank).
	Reorder int
}

// DefaultConfig suits user-space endpoints on a small fabric of veths:
// BDP-FC for a 10 Gb/s bottleneck (when the manager knows none) and a
// 25 µs round trip with 1 KB packets (31 packets), RTO_low 5 ms for up to
// 3 packets in flight, RTO_high 30 ms (user-space endpoints sharing CPUs
// are scheduled late: the microsecond timeouts of a NIC would fire on
// every hiccup), a reordering threshold of 3, and a report to the manager
// after 8 timeouts of one packet (with the back-off, about 1.4 s of
// silence).
var DefaultConfig = Config{BandwidthBps: 10e9, RTT: 25 * time.Microsecond, MTU: 1024,
	RTOLow: 5 * time.Millisecond, RTOHigh: 30 * time.Millisecond, NLow: 3, ReportAfter: 8, Reorder: 3}

// BDP-FC's bounds. The floor is one more than the default Reorder
// threshold: a hole is found by selective acks only when Reorder packets
// can follow it in flight. The ceiling bounds the out-of-order state a
// receiver keeps (IRN's second reason for the cap) and lets a full window
// of the largest packets (9 KB) sit in the 8 MB socket buffer an Endpoint
// asks for (4.7 MB), so a receiver that is scheduled late drops nothing.
const (
	MinWindow = 4
	MaxWindow = 512
)

// WithDefaults is c with DefaultConfig's value in every field not set
// (zero or negative).
func (c Config) WithDefaults() Config {
	d := DefaultConfig
	setting.Fill(&c, d)
	return c
}

// Cap is the flow's cap on packets in flight: Window when set, otherwise
// BDP-FC's (BDPWindow).
func (c Config) Cap() int {
	if c.Window > 0 {
		return c.Window
	}
	d := c.WithDefaults()
	return BDPWindow(d.BandwidthBps, d.RTT, d.MTU)
}

// BDPWindow is ⌈bps/8 × rtt / mtu⌉ packets, within [MinWindow, MaxWindow].
func BDPWindow(bps uint64, rtt time.Duration, mtu int) int {
	if mtu <= 0 {
		return MinWindow
	}
	// In floats: bits/s × ns overflows 64 bits. The tolerance keeps an
	// exact multiple of the MTU from rounding up on float error.
	pkts := math.Ceil(float64(bps)/8*rtt.Seconds()/float64(mtu) - 1e-9)
	return int(min(max(pkts, MinWindow), MaxWindow))
}
