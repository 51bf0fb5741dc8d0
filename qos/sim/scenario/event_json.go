package scenario

import (
	"encoding/json"
	"time"
)

// nodeEventJSON is a watchdog event as qos-sim -j prints it: snake_case
// like every other field (docs/api.md), with the names first published
// (policy.Event's Go field names) kept as deprecated aliases.
type nodeEventJSON struct {
	Node      string  `json:"node"`
	At        string  `json:"at"`         // RFC 3339, simulated time from Epoch
	AtSeconds float64 `json:"at_seconds"` // simulated seconds since the start
	Kind      string  `json:"kind"`
	Interface string  `json:"interface"`
	Priority  int     `json:"priority"`        // -1: the whole interface
	Since     string  `json:"since,omitempty"` // detections: XOFF first seen

	// Deprecated aliases, kept for existing scripts.
	OldAt    time.Time `json:"At"`
	OldKind  string    `json:"Kind"`
	OldIface string    `json:"Iface"`
	OldPrio  int       `json:"Prio"`
	OldSince time.Time `json:"Since"`
}

// MarshalJSON writes the snake_case fields and the deprecated aliases.
func (e NodeEvent) MarshalJSON() ([]byte, error) {
	j := nodeEventJSON{
		Node: e.Node, At: e.At.Format(time.RFC3339Nano), AtSeconds: e.At.Sub(Epoch).Seconds(),
		Kind: string(e.Kind), Interface: e.Iface, Priority: e.Prio,
		OldAt: e.At, OldKind: string(e.Kind), OldIface: e.Iface, OldPrio: e.Prio, OldSince: e.Since,
	}
	if !e.Since.IsZero() {
		j.Since = e.Since.Format(time.RFC3339Nano)
	}
	return json.Marshal(j)
}
