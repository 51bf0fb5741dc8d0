package main

import (
	"io"
	"testing"

	"github.com/fared/fared/api/wire"
)

func TestDaemonPrinters(t *testing.T) {
	testPrinters(t, []printerCase{
		{name: "status", print: func(w io.Writer) error {
			return printStatus(w, wire.Status{Version: "1.2.3", Hostname: "l1", RouterID: "10.255.0.5", Config: "/etc/fared/fared.yaml", Uptime: "1h2m3s",
				Modules: []string{"inof", "isis"}, Forwarding: wire.Forwarding{IPv4: true}, Warnings: []string{"net.ipv6.conf.all.forwarding=0"},
				Panics: map[string]uint64{"isis": 2, "inof": 1}})
		}, want: `version    1.2.3
hostname   l1
router-id  10.255.0.5
config     /etc/fared/fared.yaml
uptime     1h2m3s
modules    inof, isis
forwarding ipv4 on, ipv6 off
WARNING    net.ipv6.conf.all.forwarding=0
BUG        inof: 1 panics recovered (inputs dropped; the log has the first of each with its stack)
BUG        isis: 2 panics recovered (inputs dropped; the log has the first of each with its stack)
`},
		{name: "reload", print: func(w io.Writer) error {
			return printReload(w, wire.Reload{Reloaded: true, Started: []string{"qos"}, Stopped: []string{"inc"}, Modules: map[string]wire.ModuleReload{
				"isis": {},
				"qos":  {Changed: []string{"interfaces"}},
				"inof": {Changed: []string{"zones"}, Warnings: []string{"router-id: needs a restart"}},
				"ospf": {Error: "interface o3-1: no such interface"},
			}})
		}, want: `configuration reloaded
  qos: started (section added)
  inc: stopped (section removed)
  inof:
    changed  zones
    NOT applied  router-id: needs a restart
  isis: unchanged
  ospf:
    error  interface o3-1: no such interface
  qos:
    changed  interfaces
`},
		{name: "running-config", print: func(w io.Writer) error {
			return printRunningConfig(w, wire.RunningConfig{File: "/etc/fared/fared.yaml", YAML: "hostname: l1\n"})
		}, want: `# running configuration of fared (from /etc/fared/fared.yaml, with defaults)
hostname: l1
`},
		{name: "log level", print: func(w io.Writer) error { return printLogLevel(w, wire.LogLevel{Level: "debug"}) }, want: `log level debug
`},
	})
}
