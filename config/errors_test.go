package config_test

import (
	"testing"

	"github.com/fared/fared/config/configtest"
)

// Each case has one or more lines marked "# <-"; the errors must be exactly
// want, in order, at the marked lines.
func TestErrors(t *testing.T) {
	configtest.Errors(t, []configtest.ErrorCase{
		// top level
		{"router-id: 10.255.0.1\nrouterid: 1.2.3.4 # <-\n", []string{`unknown key "routerid"`}},
		{"# comment\nhostname: a # <-\n", []string{`missing required key "router-id"`}},
		{"router-id: 2001:db8::1 # <-\n", []string{`router-id: invalid IPv4 address "2001:db8::1"`}},
		{"router-id: 10.0.0.256 # <-\n", []string{`router-id: invalid IPv4 address "10.0.0.256"`}},
		{"router-id: 0.0.0.0 # <-\n", []string{`router-id: must not be 0.0.0.0`}},
		{"router-id: [10.0.0.1] # <-\n", []string{`router-id: expected a string, got a list`}},
		{"router-id: 10.0.0.1\nrouter-id: 10.0.0.2 # <-\n", []string{`duplicate key "router-id" (first at line 1)`}},
		{"router-id: 10.0.0.1\nsystem-id: 0000.0000.001 # <-\n", []string{`system-id: invalid system id "0000.0000.001" (want 6 bytes of dotted hex, e.g. 0000.0000.0001)`}},
		{"router-id: 10.0.0.1\nlog-level: verbose # <-\n", []string{`log-level: must be debug, info, warn or error, got "verbose"`}},
		{"router-id: 10.0.0.1\nhostname: \"\" # <-\n", []string{`hostname: must be 1..255 bytes long`}},
		{"router-id: 10.0.0.1\nhostname: true # <-\n", []string{`hostname: expected a string, got "true"`}},
		{"router-id: 10.0.0.1\nsocket: # <-\n", []string{`socket: expected a string, got no value`}},
		{"router-id: 10.0.0.1\nisis # <-\n", []string{`invalid YAML: could not find expected ':'`}},
		{"- router-id # <-\n", []string{`expected a mapping of keys (hostname, router-id, ...) at the top level`}},
		{"router-id: 10.0.0.1\nfib: {metric: -1} # <-\nlog-level: loud # <-\n", []string{`metric: -1 out of range 0..4294967295`, `log-level: must be debug, info, warn or error, got "loud"`}},
	})
}
