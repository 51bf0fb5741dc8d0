package inc

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
)

const base = "router-id: 10.255.0.3\n"

func TestConfig(t *testing.T) {
	c, err := config.Parse("f.yaml", []byte(base+"inc:\n  role: switch\n  manager: 10.255.0.6:7791\n  slots: 128\n  address: 10.255.0.3\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := sectionOf(c)
	if s.Role != RoleSwitch || s.Manager != "10.255.0.6:7791" || s.Slots != 128 || s.Ranks != 64 || s.Address != netip.MustParseAddr("10.255.0.3") ||
		s.Listen != "0.0.0.0:7791" || s.Heartbeat != 300*time.Millisecond || !s.isSwitch() || s.isManager() {
		t.Fatalf("%+v", s)
	}
	c, err = config.Parse("f.yaml", []byte(base+"inc: {role: both, ordered: true, heartbeat: 100ms, dead-after: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := sectionOf(c); !s.isSwitch() || !s.isManager() || !s.Ordered || s.DeadAfter != time.Second {
		t.Fatalf("%+v", s)
	}
	if c, _ := config.Parse("f.yaml", []byte(base)); sectionOf(c) != nil || Spec.Configured(c) {
		t.Fatal("no inc section, yet configured")
	}
}

// TestConfigErrors: every mistake is reported at its line.
func TestConfigErrors(t *testing.T) {
	for in, want := range map[string]string{
		"inc: {slots: 4}\n":                                       "f.yaml:2: inc: role is required",
		"inc:\n  role: switch\n":                                  "f.yaml:3: inc: a switch needs manager",
		"inc:\n  role: spine\n":                                   `f.yaml:3: role: must be manager, switch or both, got "spine"`,
		"inc:\n  role: manager\n  manager: 10.0.0.1:1\n":          "f.yaml:4: inc: manager is for switches",
		"inc:\n  role: both\n  address: fd00::1\n":                "f.yaml:4: address: want an IPv4 address",
		"inc:\n  role: both\n  listen: nowhere\n":                 "f.yaml:4: listen: want address:port",
		"inc:\n  role: both\n  slots: 0\n":                        "f.yaml:4: slots: 0 out of range 1..65535",
		"inc:\n  role: both\n  colour: red\n":                     `f.yaml:4: unknown key "colour"`,
		"inc:\n  role: both\n  heartbeat: 1s\n  dead-after: 1s\n": "f.yaml:3: inc: dead-after (1s) must be longer than heartbeat (1s)",
	} {
		_, err := config.Parse("f.yaml", []byte(base+in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}
