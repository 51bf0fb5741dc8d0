package interop

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// isisTag is the IS-IS process tag of FRR nodes.
const isisTag = "fabric"

// frrBandwidth formats bits/s as the bytes/s float FRR's link-params want
// (100G -> "1.25e+10").
func frrBandwidth(bw float64) string {
	return strconv.FormatFloat(bw/8, 'e', -1, 64)
}

// frrSeconds rounds a duration up to whole seconds, at least 1: FRR's IS-IS
// timers are integers in seconds.
func frrSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

func frrLevel(level string) (isType, circuitType string) {
	switch level {
	case "1":
		return "level-1", "level-1"
	case "1-2":
		return "level-1-2", "level-1-2"
	}
	return "level-2-only", "level-2-only"
}

// NET returns the node's IS-IS network entity title.
func (n *Node) NET() string { return n.Area + "." + n.SystemID + ".00" }

// RenderZebra renders zebra.conf for an FRR node. Every interface gets
// explicit TE link parameters: 8.4.4 computes its default max-bw in 32 bits
// and overflows, and the reservable/unreserved values default to that
// garbage too, so all of them are set to the link bandwidth.
func RenderZebra(n *Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "! rendered by farelab for node %s\nhostname %s\n!\n", n.Name, n.Hostname)
	for _, f := range n.Interfaces {
		bw := frrBandwidth(f.Bandwidth)
		fmt.Fprintf(&b, "interface %s\n link-params\n  enable\n  max-bw %s\n  max-rsv-bw %s\n", f.Name, bw, bw)
		for c := 0; c < 8; c++ {
			fmt.Fprintf(&b, "  unrsv-bw %d %s\n", c, bw)
		}
		b.WriteString(" exit-link-params\nexit\n!\n")
	}
	return b.String()
}

// RenderISISd renders isisd.conf for an FRR node.
//
// The router block comes first and lsp-gen-interval is its first line on
// purpose: isisd schedules the LSP regeneration triggered by `is-type` with
// the lsp-gen-interval in force at that moment. With the default (30s)
// still in force, the first LSP with adjacencies and prefixes goes out
// only after 30 seconds.
func RenderISISd(n *Node, d Defaults) string {
	isType, circuitType := frrLevel(n.Level)
	var b strings.Builder
	fmt.Fprintf(&b, "! rendered by farelab for node %s\nhostname %s\nlog timestamp precision 3\n!\n", n.Name, n.Hostname)
	fmt.Fprintf(&b, "router isis %s\n", isisTag)
	fmt.Fprintf(&b, " lsp-gen-interval %d\n", frrSeconds(d.LSPGenInterval))
	b.WriteString(frrISISAuthRouter(n)) // before net/is-type: isisd's first LSP is signed too
	fmt.Fprintf(&b, " spf-interval %d\n", frrSeconds(d.SPFInterval))
	fmt.Fprintf(&b, " net %s\n", n.NET())
	fmt.Fprintf(&b, " is-type %s\n", isType)
	b.WriteString(" metric-style wide\n")
	if !n.NoTE {
		b.WriteString(" mpls-te on\n")
		fmt.Fprintf(&b, " mpls-te router-address %s\n", n.Loopback)
	}
	b.WriteString(" log-adjacency-changes\nexit\n!\n")
	// The loopback is passive with metric 0, like fared's originated
	// loopback prefix, so routes to either kind of node cost the same.
	fmt.Fprintf(&b, "interface lo\n ip router isis %s\n isis passive\n isis metric 0\nexit\n!\n", isisTag)
	b.WriteString(renderFRRPrefixes(n))
	for _, f := range n.Interfaces {
		ct := circuitType
		if f.Level != "" {
			_, ct = frrLevel(f.Level)
		}
		fmt.Fprintf(&b, "interface %s\n ip router isis %s\n isis circuit-type %s\n", f.Name, isisTag, ct)
		if f.Type == "p2p" {
			b.WriteString(" isis network point-to-point\n")
		}
		if f.Edge {
			b.WriteString(" isis passive\n") // toward a host
		}
		fmt.Fprintf(&b, " isis hello-interval %d\n", frrSeconds(d.HelloInterval))
		fmt.Fprintf(&b, " isis hello-multiplier %d\n", d.HelloMultiplier)
		fmt.Fprintf(&b, " isis metric %d\n", f.Metric)
		b.WriteString(frrISISAuthIface(n))
		b.WriteString(frrBFDIface(n, "isis"))
		if f.Type == "lan" && n.Priority >= 0 {
			fmt.Fprintf(&b, " isis priority %d\n", n.Priority)
		}
		b.WriteString("exit\n!\n")
	}
	return b.String()
}
