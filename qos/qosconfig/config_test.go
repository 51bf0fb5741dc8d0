package qosconfig_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/qosconfig"
)

func init() {
	config.Register(config.Section{Key: qosconfig.Key, Parse: qosconfig.Parse})
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

func parse(t *testing.T, text string) (*qosconfig.Config, error) {
	t.Helper()
	c, err := config.Parse("fared.yaml", []byte(text))
	if err != nil {
		return nil, err
	}
	return qosconfig.From(c), nil
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
	checkRejected(t, good, true, []badEdit{
		{"priority range", "priorities: [3, 4]", "priorities: [3, 9]", "fared.yaml:7: priorities: 9 out of range 0..7"},
		{"xoff bytes", "xoff: 400K", "xoff: lots", `fared.yaml:8: xoff: invalid byte count "lots"`},
		{"probability", "probability: 5", "probability: 101", "fared.yaml:25: probability: 101 out of range 0..100"},
		{"kmax above xoff", "max: 300K", "max: 450K", "fared.yaml:29: interface Ethernet0 queue 3: ecn-profile roce max threshold 450000 is not below the queue's PFC xoff 400000 (ECN must act before PFC)"},
		{"kmax equal xoff", "max: 300K", "max: 400K", "ecn-profile roce max threshold 400000 is not below the queue's PFC xoff 400000"},
		{"overlapping groups", "      - name: uplinks\n", "      - name: other\n        interfaces: [Ethernet4, Ethernet8]\n      - name: uplinks\n", "fared.yaml:23: port group uplinks: interface Ethernet4 is already in port group other (groups must not overlap)"},
		{"group unknown iface", "interfaces: [Ethernet0, Ethernet4]", "interfaces: [Ethernet0, Ethernet12]", "fared.yaml:21: port group uplinks: interface Ethernet12 is not in qos.interfaces"},
		{"remap lossless on one port only", "to-priority: 2", "to-priority: 4", "fared.yaml:22: port group uplinks: remap to priority 4, which has PFC on Ethernet0 but not on Ethernet4"},
		{"lossy remap back into PFC", "dscp-map: {26: 3, ", "dscp-map: {26: 3, 30: 4, ", "fared.yaml:22: port group uplinks: remap to dscp 30, lossy priority 2: dscp-map puts dscp 30 in PFC priority 4"},
		{"detection not multiple", "detection-time: 200ms", "detection-time: 250ms", "fared.yaml:13: watchdog: detection-time 250ms must be a multiple of poll-interval 100ms"},
		{"sonic detection range", "detection-time: 200ms", "detection-time: 6s", "SONiC's PFC_WD takes 100..5000 ms"},
		{"unknown profile", "3: {ecn: roce,", "3: {ecn: nope,", `fared.yaml:29: interface Ethernet0 queue 3: no ecn-profile "nope"`},
		{"xon above xoff", "xon: 350K", "xon: 450K", "pfc: priority 3: xon 450000 must not exceed xoff 400000"},
		{"unknown key", "    limit: 3\n", "    limit: 3\n    limt: 4\n", `fared.yaml:17: unknown key "limt"`},
		{"elephant equals mice", "mice-priority: 3", "mice-priority: 1", "flows: elephants and mice must use different priorities (both 1)"},
		{"duplicate interface", "    - name: Ethernet8\n", "    - name: Ethernet8\n    - name: Ethernet8\n", "fared.yaml:42: interface Ethernet8: listed twice (first at line 41)"},
	})
}

// badEdit makes a good configuration bad: from replaced by to; want is
// (part of) the error parse must give.
type badEdit struct{ name, from, to, want string }

// checkRejected parses base with each edit and checks the error; located:
// it must also start with file:line.
func checkRejected(t *testing.T, base string, located bool, edits []badEdit) {
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.from) {
				t.Fatalf("test bug: %q not in the config", tc.from)
			}
			_, err := parse(t, strings.Replace(base, tc.from, tc.to, 1))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
			if located && !strings.HasPrefix(err.Error(), "fared.yaml:") {
				t.Errorf("error without file:line: %v", err)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	for in, want := range map[string]uint64{"400000": 400000, "400K": 400000, "1.5M": 1500000, "64KiB": 65536, "2MB": 2000000, "1Gi": 1 << 30} {
		if got, err := qosconfig.Bytes(in); err != nil || got != want {
			t.Errorf("Bytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1T"} {
		if _, err := qosconfig.Bytes(bad); err == nil {
			t.Errorf("Bytes(%q) accepted", bad)
		}
	}
}

const tuned = `router-id: 10.0.0.1
qos:
  backend: linux
  poll-interval: 100us
  dscp-map: {26: 3}
  pfc: {priorities: [3], xoff: 150K, xon: 120K, headroom: 60K}
  ecn-profiles:
    roce: {green: {min: 20K, max: 100K, probability: 10}}
  queues: {3: {ecn: roce}}
  flows: {mode: classify, elephant-rate: 1G, elephant-size: 100K}
  ecn-tuning:
    algorithm: ai-ecn
    interval: 1ms
    min-threshold: 1K
    max-threshold: 140K
    utilisation-target: 0.85
    models:
      elephants: {min: 2K, max: 10K, probability: 50}
  ipcc:
    interfaces: [eth1]
    capture: [eth0, eth1]
    poll: 1ms
    low: 20K
    high: 200K
    few: 1
    more: 4
  interfaces:
    - name: eth0
    - name: eth1
`

func TestTuningAndIPCC(t *testing.T) {
	q, err := parse(t, tuned)
	if err != nil {
		t.Fatal(err)
	}
	tu := q.Tuning
	if tu == nil || tu.Algorithm != "ai-ecn" || tu.Prios != model.PriosOf(3) || tu.Interval != time.Millisecond ||
		tu.MinThreshold != 1000 || tu.MaxThreshold != 140000 || tu.UtilTarget != 0.85 {
		t.Fatalf("ecn-tuning %+v", tu)
	}
	if m := tu.Models["elephants"]; m != (model.WRED{Enable: true, Min: 2000, Max: 10000, Prob: 50}) {
		t.Errorf("model %+v", m)
	}
	if e := q.Desired().Elephant; e == nil || !e.ClassifyOnly || e.Rate != 1e9/8 {
		t.Errorf("classify-only flows %+v", e)
	}
	ic := q.IPCC
	if ic == nil || len(ic.Ifaces) != 1 || ic.Ifaces[0] != "eth1" || len(ic.Capture) != 2 || ic.Prios != model.PriosOf(3) ||
		ic.Poll != time.Millisecond || ic.CNPInterval != 50*time.Microsecond || ic.Low != 20000 || ic.High != 200000 ||
		ic.Few != 1 || ic.More != 4 || ic.CNPDSCP != 48 {
		t.Errorf("ipcc %+v", ic)
	}
	// The bounds' defaults: caps derived by the policy from max-flows.
	if ic.MaxFlows != 65536 || ic.MaxFlowsPerPort != 0 || ic.MaxFlowsPerSource != 0 || ic.PSNWindow != 1024 ||
		ic.RouteCache != 16384 || ic.RouteTTL != time.Second {
		t.Errorf("ipcc bounds %+v", ic)
	}
	caps, err := parse(t, strings.Replace(tuned, "    more: 4\n", "    more: 4\n    max-flows: 1000\n    max-flows-per-port: 300\n    max-flows-per-source: 20\n    psn-window: 256\n    route-cache: 500\n    route-cache-ttl: 250ms\n", 1))
	if err != nil {
		t.Fatal(err)
	}
	if c := caps.IPCC; c.MaxFlows != 1000 || c.MaxFlowsPerPort != 300 || c.MaxFlowsPerSource != 20 || c.PSNWindow != 256 ||
		c.RouteCache != 500 || c.RouteTTL != 250*time.Millisecond {
		t.Errorf("ipcc bounds %+v", c)
	}
	checkRejected(t, tuned, false, []badEdit{
		{"kmax limit at xoff", "max-threshold: 140K", "max-threshold: 150K", "fared.yaml:11: ecn-tuning: max-threshold 150000 is not below priority 3's PFC xoff 150000 (ECN must act before PFC)"},
		{"no limit on a lossless queue", "    max-threshold: 140K\n", "", "fared.yaml:11: ecn-tuning: max-threshold is required on PFC priority 3"},
		{"interval", "interval: 1ms", "interval: 150us", "fared.yaml:11: ecn-tuning: interval 150µs must be a multiple of poll-interval 100µs"},
		{"algorithm", "algorithm: ai-ecn", "algorithm: magic", `fared.yaml:12: algorithm: must be ai-ecn or adaptive-red, got "magic"`},
		{"unknown model", "elephants: {min", "whales: {min", `fared.yaml:18: ecn-tuning models: unknown model "whales"`},
		{"model above limit", "max: 10K, probability: 50", "max: 145K, probability: 50", "ecn-tuning: model elephants max 145000 above max-threshold 140000"},
		{"target", "utilisation-target: 0.85", "utilisation-target: 1.5", "fared.yaml:16: utilisation-target: 1.5 out of range (0, 1]"},
		{"ipcc low >= high", "high: 200K", "high: 10K", "fared.yaml:20: ipcc: low 20000 must be below high 10000"},
		{"ipcc few > more", "few: 1", "few: 5", "ipcc: few 5 above more 4"},
		{"ipcc interface", "interfaces: [eth1]", "interfaces: [eth9]", "fared.yaml:19: ipcc: interface eth9 is not in qos.interfaces"},
		{"ipcc port cap above table", "    more: 4\n", "    more: 4\n    max-flows: 1000\n    max-flows-per-port: 2000\n", "fared.yaml:28: ipcc: max-flows-per-port 2000 above max-flows 1000"},
		{"ipcc source cap above port cap", "    more: 4\n", "    more: 4\n    max-flows-per-port: 100\n    max-flows-per-source: 200\n", "fared.yaml:28: ipcc: max-flows-per-source 200 above max-flows-per-port 100"},
		{"ipcc source cap above derived port cap", "    more: 4\n", "    more: 4\n    max-flows: 400\n    max-flows-per-source: 101\n", "fared.yaml:28: ipcc: max-flows-per-source 101 above max-flows-per-port 100"},
		{"ipcc psn window", "    more: 4\n", "    more: 4\n    psn-window: 8\n", "fared.yaml:27: psn-window: 8 out of range"},
		{"ipcc route cache", "    more: 4\n", "    more: 4\n    route-cache: 0\n", "fared.yaml:27: route-cache: 0 out of range"},
		{"ipcc route cache ttl", "    more: 4\n", "    more: 4\n    route-cache-ttl: 2h\n", "fared.yaml:27: route-cache-ttl: 2h out of range"},
		{"classify needs a rate", "{mode: classify, elephant-rate: 1G, ", "{mode: classify, ", `flows: missing required key "elephant-rate"`},
	})
}
