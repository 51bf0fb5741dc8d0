package conf_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/conf"
	"github.com/fared/fared/qos/model"
)

func init() {
	config.Register(config.Section{Key: conf.Key, Parse: conf.Parse})
}

const good = `router-id: 10.0.0.1
qos:
  backend: sonic
  poll-interval: 100ms
  dscp-map: {26: 3, 46: 5, 48: 6}
  pfc:
    priorities: [3, 4]
    xoff: 400K
    xon: 350K
    headroom: 90K
    per-priority: {4: {xoff: 600K}}
  watchdog:
    detection-time: 200ms
    restoration-time: 1s
    action: forward
    limit: 3
    limit-window: 1m
  prevention:
    port-groups:
      - name: uplinks
        interfaces: [Ethernet0, Ethernet4]
        remap: [{dscp: 26, to-dscp: 30, to-priority: 2}]
  ecn-profiles:
    roce:
      green: {min: 100K, max: 300K, probability: 5}
      ecn: green
      mark: dequeue
  queues:
    3: {ecn: roce, scheduler: dwrr, weight: 50}
  flows:
    elephant-rate: 10G
    elephant-size: 1MB
    elephant-priority: 1
    elephant-color: yellow
    mice-priority: 3
  interfaces:
    - name: Ethernet0
      rate: 100G
    - name: Ethernet4
      pfc: [3]
    - name: Ethernet8
`

func parse(t *testing.T, text string) (*conf.Config, error) {
	t.Helper()
	c, err := config.Parse("fared.yaml", []byte(text))
	if err != nil {
		return nil, err
	}
	return conf.From(c), nil
}

func TestParseGood(t *testing.T) {
	q, err := parse(t, good)
	if err != nil {
		t.Fatal(err)
	}
	d := q.Desired()
	if q.Backend != "sonic" || q.Poll != 100*time.Millisecond {
		t.Errorf("backend %s poll %v", q.Backend, q.Poll)
	}
	if d.DSCP[26] != 3 || d.DSCP[46] != 5 || d.DSCP[0] != 0 {
		t.Errorf("dscp map %v", d.DSCP)
	}
	e0, e4, e8 := d.Iface("Ethernet0"), d.Iface("Ethernet4"), d.Iface("Ethernet8")
	if e0 == nil || e4 == nil || e8 == nil {
		t.Fatalf("interfaces %v", d.Ifaces)
	}
	if e0.PFC != model.PriosOf(3, 4) || e4.PFC != model.PriosOf(3) || e0.Rate != 100e9 {
		t.Errorf("pfc %q %q rate %d", e0.PFC, e4.PFC, e0.Rate)
	}
	if th := e0.Thresholds[3]; th != (model.PFCThresholds{XOFF: 400000, XON: 350000, Headroom: 90000}) {
		t.Errorf("prio 3 thresholds %+v", th)
	}
	if th := e0.Thresholds[4]; th.XOFF != 600000 || th.XON != 350000 {
		t.Errorf("prio 4 thresholds %+v (per-priority xoff, common xon)", th)
	}
	if q := e0.Queues[3]; q.Profile != "roce" || q.Sched != model.DWRR || q.Weight != 50 {
		t.Errorf("queue 3 %+v", q)
	}
	if e0.Group != "uplinks" || e4.Group != "uplinks" || e8.Group != "" {
		t.Errorf("groups %q %q %q", e0.Group, e4.Group, e8.Group)
	}
	if len(d.Remaps) != 1 || d.Remaps[0] != (model.Remap{Group: "uplinks", From: 26, To: 30, Prio: 2}) {
		t.Errorf("remaps %+v", d.Remaps)
	}
	p := d.Profile("roce")
	if p == nil || !p.Dequeue || p.ECN != model.ECNGreen || p.Colors[model.Green] != (model.WRED{Enable: true, Min: 100000, Max: 300000, Prob: 5}) {
		t.Errorf("profile %+v", p)
	}
	if e := d.Elephant; e == nil || e.Rate != 10e9/8 || e.Size != 1e6 || e.Prio != 1 || e.Color != model.Yellow {
		t.Errorf("elephant %+v", e)
	}
	w := q.WatchdogConfig()
	if !w.Enabled || w.Detection != 200*time.Millisecond || w.Restoration != time.Second || w.Action != model.ActionForward || w.Limit != 3 || w.Window != time.Minute {
		t.Errorf("watchdog %+v", w)
	}
}

// TestBadConfig: each mistake is reported as fared.yaml:LINE: what. The
// lines were counted by hand in the config above (line 1 is router-id).
func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"priority range", "priorities: [3, 4]", "priorities: [3, 9]", "fared.yaml:7: priorities: 9 out of range 0..7"},
		{"xoff bytes", "xoff: 400K", "xoff: lots", `fared.yaml:8: xoff: invalid byte count "lots"`},
		{"probability", "probability: 5", "probability: 101", "fared.yaml:25: probability: 101 out of range 0..100"},
		{"kmax above xoff", "max: 300K", "max: 450K", "fared.yaml:29: interface Ethernet0 queue 3: ecn-profile roce max threshold 450000 is not below the queue's PFC xoff 400000 (ECN must act before PFC)"},
		{"kmax equal xoff", "max: 300K", "max: 400K", "ecn-profile roce max threshold 400000 is not below the queue's PFC xoff 400000"},
		{"overlapping groups", "      - name: uplinks\n", "      - name: other\n        interfaces: [Ethernet4, Ethernet8]\n      - name: uplinks\n", "fared.yaml:23: port group uplinks: interface Ethernet4 is already in port group other (groups must not overlap)"},
		{"group unknown iface", "interfaces: [Ethernet0, Ethernet4]", "interfaces: [Ethernet0, Ethernet12]", "fared.yaml:21: port group uplinks: interface Ethernet12 is not in qos.interfaces"},
		{"remap to lossless", "to-priority: 2", "to-priority: 4", "port group uplinks: remap to priority 4, which has PFC on Ethernet0"},
		{"detection not multiple", "detection-time: 200ms", "detection-time: 250ms", "fared.yaml:13: watchdog: detection-time 250ms must be a multiple of poll-interval 100ms"},
		{"sonic detection range", "detection-time: 200ms", "detection-time: 6s", "SONiC's PFC_WD takes 100..5000 ms"},
		{"unknown profile", "3: {ecn: roce,", "3: {ecn: nope,", `fared.yaml:29: interface Ethernet0 queue 3: no ecn-profile "nope"`},
		{"xon above xoff", "xon: 350K", "xon: 450K", "pfc: priority 3: xon 450000 must not exceed xoff 400000"},
		{"unknown key", "    limit: 3\n", "    limit: 3\n    limt: 4\n", `fared.yaml:17: unknown key "limt"`},
		{"elephant equals mice", "mice-priority: 3", "mice-priority: 1", "flows: elephants and mice must use different priorities (both 1)"},
		{"duplicate interface", "    - name: Ethernet8\n", "    - name: Ethernet8\n    - name: Ethernet8\n", "fared.yaml:42: interface Ethernet8: listed twice (first at line 41)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.from) {
				t.Fatalf("test bug: %q not in the config", tc.from)
			}
			_, err := parse(t, strings.Replace(good, tc.from, tc.to, 1))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "fared.yaml:") {
				t.Errorf("error without file:line: %v", err)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	for in, want := range map[string]uint64{"400000": 400000, "400K": 400000, "1.5M": 1500000, "64KiB": 65536, "2MB": 2000000, "1Gi": 1 << 30} {
		if got, err := conf.Bytes(in); err != nil || got != want {
			t.Errorf("Bytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1T"} {
		if _, err := conf.Bytes(bad); err == nil {
			t.Errorf("Bytes(%q) accepted", bad)
		}
	}
}
