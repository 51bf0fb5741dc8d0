package qosconfig_test

import (
	"reflect"
	"testing"

	"github.com/fared/fared/qos/model"
)

const overlayLinux = `router-id: 10.0.0.1
qos:
  backend: linux
  ecn-overlay:
    tunnels: [vx100, vx200]
    dscp: keep
  interfaces:
    - name: eth0
`

func TestOverlayParse(t *testing.T) {
	q, err := parse(t, overlayLinux)
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Overlay{Tunnels: []string{"vx100", "vx200"}, Decap: model.DecapStandard, DSCP: model.DSCPKeep}
	if got := q.Overlay.Model(); !reflect.DeepEqual(got, want) {
		t.Errorf("overlay %+v, want %+v", got, want)
	}
	// Defaults: every tunnel, RFC 6040 decap, DSCP inherited (linux).
	q, err = parse(t, "router-id: 10.0.0.1\nqos:\n  ecn-overlay: {}\n  interfaces: [{name: eth0}]\n")
	if err != nil {
		t.Fatal(err)
	}
	want = &model.Overlay{Decap: model.DecapStandard, DSCP: model.DSCPInherit}
	if got := q.Overlay.Model(); !reflect.DeepEqual(got, want) {
		t.Errorf("default overlay %+v, want %+v", got, want)
	}
	// On SONiC the decap mode is the TUNNEL table's, and there is no dscp.
	q, err = parse(t, "router-id: 10.0.0.1\nqos:\n  backend: sonic\n  ecn-overlay: {decap: copy-from-outer}\n  interfaces: [{name: Ethernet0}]\n")
	if err != nil {
		t.Fatal(err)
	}
	want = &model.Overlay{Decap: model.DecapCopyFromOuter}
	if got := q.Overlay.Model(); !reflect.DeepEqual(got, want) {
		t.Errorf("sonic overlay %+v, want %+v", got, want)
	}
	// Absent: nil.
	if q, err = parse(t, "router-id: 10.0.0.1\nqos:\n  interfaces: [{name: eth0}]\n"); err != nil || q.Overlay.Model() != nil {
		t.Errorf("no section: %v, %+v", err, q.Overlay)
	}
}

// TestOverlayBad: lines counted by hand in overlayLinux (1 is router-id).
func TestOverlayBad(t *testing.T) {
	checkRejected(t, overlayLinux, true, []badEdit{
		{"decap on linux", "    dscp: keep\n", "    dscp: keep\n    decap: copy-from-outer\n", "fared.yaml:7: ecn-overlay: decap copy-from-outer: the Linux kernel's vxlan decapsulates by RFC 6040 only (standard)"},
		{"decap value", "    dscp: keep\n", "    dscp: keep\n    decap: copy\n", `fared.yaml:7: decap: must be standard or copy-from-outer, got "copy"`},
		{"dscp value", "dscp: keep", "dscp: copy", `fared.yaml:6: dscp: must be inherit or keep, got "copy"`},
		{"dscp on sonic", "backend: linux", "backend: sonic", "fared.yaml:6: ecn-overlay: dscp is for Linux vxlan devices"},
		{"sim", "backend: linux", "backend: sim\n  sim: {scenario: s.yaml, node: s1}", "fared.yaml:5: ecn-overlay: the sim backend has no tunnels"},
		{"twice", "[vx100, vx200]", "[vx100, vx100]", "fared.yaml:5: ecn-overlay: tunnel vx100 listed twice (first at line 5)"},
		{"unknown key", "    dscp: keep\n", "    dscp: keep\n    mode: rfc6040\n", `fared.yaml:7: unknown key "mode"`},
		{"not a mapping", "  ecn-overlay:\n    tunnels: [vx100, vx200]\n    dscp: keep\n", "  ecn-overlay: true\n", "fared.yaml:4: ecn-overlay: expected a mapping"},
	})
}
