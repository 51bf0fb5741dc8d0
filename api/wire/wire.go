// Package wire holds the JSON shapes of fared's control API: what the
// daemon sends and farectl (or any script) reads. It imports nothing of the
// daemon, so a client links only these types.
//
// Field names are stable: scripts depend on them. A field may be added, or
// deprecated (kept, documented as such, and filled) in favour of a new
// one; it is never renamed or removed.
package wire

// Version is the API's path prefix.
const Version = "/v1"

// ErrorBody is the JSON shape of every error answer (4xx, 5xx).
type ErrorBody struct {
	Error string `json:"error"`
}

// Reload is the answer of POST /v1/reload: the new configuration was
// validated by every module first, then applied by each.
type Reload struct {
	Reloaded bool `json:"reloaded"`
	// Warnings gathers every module's warnings (kept for scripts written
	// before Modules existed).
	Warnings []string `json:"warnings"`
	// Modules reports per module what was applied ("changed"), what was
	// not ("warnings"), or why applying failed ("error").
	Modules map[string]ModuleReload `json:"modules"`
	// Started and Stopped list modules whose section was added or removed.
	Started []string `json:"started,omitempty"`
	Stopped []string `json:"stopped,omitempty"`
}

// ModuleReload is one module's part of a reload.
type ModuleReload struct {
	Changed  []string `json:"changed"`
	Warnings []string `json:"warnings"`
	Error    string   `json:"error,omitempty"`
}

// Status is GET /v1/status.
type Status struct {
	Version  string `json:"version"`
	Hostname string `json:"hostname"`
	RouterID string `json:"router_id"`
	Config   string `json:"config"`
	// Uptime is a Go duration string ("1h2m3s"); UptimeSeconds is the
	// same as a number.
	Uptime        string   `json:"uptime"`
	UptimeSeconds float64  `json:"uptime_seconds"`
	Modules       []string `json:"modules"`
	// Forwarding is the kernel's IPv4 and IPv6 forwarding switch: a router
	// with forwarding off drops transit traffic whatever its routes say.
	Forwarding Forwarding `json:"forwarding"`
	// Warnings are conditions an operator should fix (forwarding off,
	// nexthop_compat_mode on, ...).
	Warnings []string `json:"warnings,omitempty"`
	// ModuleStatus holds the summary of each module that gives one.
	ModuleStatus map[string]any `json:"module_status,omitempty"`
	// Panics counts, per module, the panics recovered on a network-facing
	// path since start (the input dropped, the module kept running; each
	// is a bug: docs/security.md). Absent while there are none.
	Panics map[string]uint64 `json:"panics,omitempty"`
}

// BandwidthRequest is the body of POST /v1/isis/bandwidth and
// /v1/ospf/bandwidth.
type BandwidthRequest struct {
	Interface string `json:"interface"`
	Bandwidth string `json:"bandwidth"` // bits/s with K/M/G/T
	// Clear drops the run-time override: the configured bandwidth (or
	// the interface speed) is in force again. Bandwidth is then ignored.
	Clear bool `json:"clear,omitempty"`
}

// BandwidthOverride answers POST /v1/isis/bandwidth and
// /v1/ospf/bandwidth. An override survives reloads that leave the
// interface's configured bandwidth unchanged.
type BandwidthOverride struct {
	Interface string `json:"interface"`
	// Bandwidth is the override now in force, "" after a clear.
	Bandwidth string `json:"bandwidth"`
	Cleared   bool   `json:"cleared,omitempty"`
}

// Forwarding is net.ipv4.ip_forward and net.ipv6.conf.all.forwarding.
type Forwarding struct {
	IPv4 bool `json:"ipv4"`
	IPv6 bool `json:"ipv6"`
}

// RunningConfig is GET /v1/running-config: the configuration in force,
// defaults included, as YAML that parses back to the same configuration.
type RunningConfig struct {
	File string `json:"file"`
	YAML string `json:"yaml"`
}

// LogLevel is the body and answer of POST /v1/log/level. The change lasts
// until the next reload, which applies the config's log-level.
type LogLevel struct {
	Level string `json:"level"` // debug, info, warn, error
}
