package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Metrics is the metrics section: the Prometheus exposition listener
// (docs/metrics.md). Without the section fared opens no listener.
type Metrics struct {
	// Listen is the TCP address, host:port ("127.0.0.1:9342",
	// "[::1]:9342", ":9342" for every address). Required.
	Listen string
	// Path is the URL path of the exposition (default /metrics).
	Path string
}

// DefaultMetricsPath is the exposition's path when the section sets none.
const DefaultMetricsPath = "/metrics"

func (p *Walker) metrics(k, v *yaml.Node) *Metrics {
	if !p.IsMapping(k, v) {
		return nil
	}
	m := &Metrics{Path: DefaultMetricsPath}
	seen := p.Mapping(v, map[string]Field{
		"listen": p.Str(&m.Listen, checkListen),
		"path": p.Str(&m.Path, func(s string) string {
			if !strings.HasPrefix(s, "/") || strings.ContainsAny(s, " \t?#") {
				return fmt.Sprintf("%q: must be a URL path starting with / (no spaces, ? or #)", s)
			}
			return ""
		}),
	})
	if seen["listen"] == nil {
		p.Errf(k, "metrics: missing required key \"listen\" (host:port, e.g. 127.0.0.1:9342)")
	}
	return m
}

// checkListen accepts host:port with a numeric port 1..65535; the host may
// be empty (every address), an IP literal or a name resolved at bind time.
func checkListen(s string) string {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Sprintf("%q: want host:port (e.g. 127.0.0.1:9342, [::1]:9342, :9342): %v", s, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("%q: port %q must be a number 1..65535", s, port)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Sprintf("%q: host %q is neither an address nor a name", s, host)
	}
	return ""
}
