package qosconfig_test

import (
	"strings"
	"testing"

	"github.com/fared/fared/qos/model"
)

// lossless is the good configuration with a lossless remap: dscp 26
// (priority 3) bouncing through the uplinks goes to dscp 30, priority 4,
// which has PFC on both uplinks; at a second bounce dscp 30 leaves the
// lossless class (dscp 31, priority 2). The remaps are on lines 23 and 24.
var lossless = strings.NewReplacer(
	"dscp-map: {26: 3, ", "dscp-map: {26: 3, 30: 4, 31: 2, ",
	"remap: [{dscp: 26, to-dscp: 30, to-priority: 2}]",
	"remap:\n          - {dscp: 26, to-dscp: 30, to-priority: 4}\n          - {dscp: 30, to-dscp: 31, to-priority: 2}",
	"      pfc: [3]\n", "      pfc: [3, 4]\n",
).Replace(good)

// TestLosslessRemap: a remap whose to-priority has PFC on the group's
// ports is accepted, and so is the lossy remap of its DSCP at a second
// bounce.
func TestLosslessRemap(t *testing.T) {
	q, err := parse(t, lossless)
	if err != nil {
		t.Fatal(err)
	}
	d := q.Desired()
	want := []model.Remap{{Group: "uplinks", From: 26, To: 30, Prio: 4}, {Group: "uplinks", From: 30, To: 31, Prio: 2}}
	if len(d.Remaps) != 2 || d.Remaps[0] != want[0] || d.Remaps[1] != want[1] {
		t.Errorf("remaps %+v, want %+v", d.Remaps, want)
	}
	if e4 := d.Iface("Ethernet4"); e4 == nil || !e4.PFC.Has(4) {
		t.Errorf("Ethernet4 %+v: priority 4 must be lossless", e4)
	}
	// Without the second-bounce rule: the strict remap-once.
	if _, err := parse(t, strings.Replace(lossless, "\n          - {dscp: 30, to-dscp: 31, to-priority: 2}", "", 1)); err != nil {
		t.Errorf("a single lossless remap refused: %v", err)
	}
}

// TestBadRemap: the remaps that cannot hold are refused at the remap's
// line (counted by hand in lossless: router-id is line 1, the two remaps
// are lines 23 and 24).
func TestBadRemap(t *testing.T) {
	checkRejected(t, lossless, true, []badEdit{
		{"same priority", "{dscp: 26, to-dscp: 30, to-priority: 4}", "{dscp: 26, to-dscp: 30, to-priority: 3}",
			"fared.yaml:23: port group uplinks: remap of dscp 26 to priority 3: dscp 26 is in priority 3 already (the remap must move it to another queue)"},
		{"next switch maps it back", "30: 4, ", "",
			"fared.yaml:23: port group uplinks: remap to dscp 30, lossless priority 4: dscp-map puts dscp 30 in priority 0, so the next switch would take it out of the second priority"},
		{"second lossless remap", "{dscp: 30, to-dscp: 31, to-priority: 2}", "{dscp: 30, to-dscp: 26, to-priority: 3}",
			"fared.yaml:24: port group uplinks: remap of dscp 30 to lossless priority 3: dscp 30 is on the second lossless priority 4 after the remap at line 23, and a lossless remap applies once"},
		{"remap onto itself", "{dscp: 26, to-dscp: 30, to-priority: 4}", "{dscp: 26, to-dscp: 26, to-priority: 4}",
			"fared.yaml:23: port group uplinks: remap of dscp 26 to lossless priority 4: dscp 26 is on the second lossless priority 4 after the remap at line 23"},
		{"lossy remap remapped again", "          - {dscp: 30, to-dscp: 31, to-priority: 2}\n", "          - {dscp: 30, to-dscp: 31, to-priority: 2}\n          - {dscp: 31, to-dscp: 32, to-priority: 1}\n",
			"fared.yaml:24: port group uplinks: remap to dscp 31, lossy priority 2, which the remap at line 25 remaps again (a packet that left the lossless class is not remapped again)"},
		{"lossless on one uplink only", "      pfc: [3, 4]\n", "      pfc: [3]\n",
			"fared.yaml:23: port group uplinks: remap to priority 4, which has PFC on Ethernet0 but not on Ethernet4"},
	})
}
