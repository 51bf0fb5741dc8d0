package sonic

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
)

// startRedis runs a real redis-server (Debian's) on a unix socket in a
// temporary directory, stopped at cleanup. In CI a missing server fails.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but redis-server is not installed (apt-get install redis-server)")
		}
		t.Skip("redis-server not installed")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir, "--databases", "16")
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := client(sock, 0)
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer on " + sock)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return sock
}

func desired() *model.Desired {
	d := &model.Desired{Poll: 200 * time.Millisecond}
	d.DSCP[26] = 3
	d.DSCP[46] = 5
	roce := model.Profile{Name: "roce", ECN: model.ECNGreen}
	roce.Colors[model.Green] = model.WRED{Enable: true, Min: 100000, Max: 300000, Prob: 5}
	d.Profiles = []model.Profile{roce}
	for _, n := range []string{"Ethernet0", "Ethernet4"} {
		i := model.Iface{Name: n, PFCConfigured: model.PriosOf(3, 4), PFC: model.PriosOf(3, 4),
			Watchdog: model.WatchdogParams{Enabled: true, Detection: 200 * time.Millisecond, Restoration: 400 * time.Millisecond, Action: model.ActionDrop}}
		for q := range i.Queues {
			i.Queues[q] = model.Queue{Sched: model.Strict, Weight: 1}
			i.Thresholds[q] = model.PFCThresholds{XOFF: 400000, XON: 350000, Headroom: 90000}
		}
		i.Queues[3] = model.Queue{Profile: "roce", Sched: model.DWRR, Weight: 50}
		d.Ifaces = append(d.Ifaces, i)
	}
	return d
}

func hgetall(t *testing.T, c *redis.Client, key string) map[string]string {
	t.Helper()
	m, err := c.HGetAll(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func keys(t *testing.T, c *redis.Client) []string {
	k, err := c.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(k)
	return k
}

// TestApplyTables: after Apply, every CONFIG_DB table holds exactly the
// fields SONiC's orchagent reads, with the values written out by hand
// here from SONiC's schema.
func TestApplyTables(t *testing.T) {
	sock := startRedis(t)
	ctx := context.Background()
	cfg := client(sock, 4)
	defer cfg.Close()
	// The platform's own state: fared must leave it alone.
	cfg.HSet(ctx, "PORT|Ethernet0", "speed", "100000")
	cfg.HSet(ctx, "PORT|Ethernet4", "speed", "100000")
	cfg.HSet(ctx, "PORT_QOS_MAP|Ethernet4", "dot1p_to_tc_map", "AZURE")

	b := New(Config{Addr: sock, ConfigDB: 4, CountersDB: 2})
	defer b.Close()
	if _, err := b.Apply(ctx, desired()); err != nil {
		t.Fatal(err)
	}
	dscp := map[string]string{}
	for v := 0; v < 64; v++ {
		dscp[fmt.Sprint(v)] = "0"
	}
	dscp["26"], dscp["46"] = "3", "5"
	ident := map[string]string{"0": "0", "1": "1", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7"}
	want := map[string]map[string]string{
		"DSCP_TO_TC_MAP|FARED":            dscp,
		"TC_TO_QUEUE_MAP|FARED":           ident,
		"TC_TO_PRIORITY_GROUP_MAP|FARED":  ident,
		"MAP_PFC_PRIORITY_TO_QUEUE|FARED": ident,
		"WRED_PROFILE|roce": {"wred_green_enable": "true", "green_min_threshold": "100000", "green_max_threshold": "300000",
			"green_drop_probability": "5", "wred_yellow_enable": "false", "wred_red_enable": "false", "ecn": "ecn_green"},
		"SCHEDULER|fared.strict":  {"type": "STRICT"},
		"SCHEDULER|fared.dwrr.50": {"type": "DWRR", "weight": "50"},
		"PFC_WD|GLOBAL":           {"POLL_INTERVAL": "200"},
		"PORT_QOS_MAP|Ethernet0": {"dscp_to_tc_map": "FARED", "tc_to_queue_map": "FARED", "tc_to_pg_map": "FARED",
			"pfc_to_queue_map": "FARED", "pfc_enable": "3,4", "pfcwd_sw_enable": "3,4"},
		"PORT_QOS_MAP|Ethernet4": {"dscp_to_tc_map": "FARED", "tc_to_queue_map": "FARED", "tc_to_pg_map": "FARED",
			"pfc_to_queue_map": "FARED", "pfc_enable": "3,4", "pfcwd_sw_enable": "3,4", "dot1p_to_tc_map": "AZURE"},
		"BUFFER_PROFILE|fared_pg_lossless_p3_400000_350000_90000": {"pool": "ingress_lossless_pool", "size": "400000", "xon": "350000", "xoff": "90000", "static_th": "490000"},
		"BUFFER_PROFILE|fared_pg_lossless_p4_400000_350000_90000": {"pool": "ingress_lossless_pool", "size": "400000", "xon": "350000", "xoff": "90000", "static_th": "490000"},
	}
	for _, p := range []string{"Ethernet0", "Ethernet4"} {
		want["PORT|"+p] = map[string]string{"speed": "100000"}
		want["PFC_WD|"+p] = map[string]string{"action": "drop", "detection_time": "200", "restoration_time": "400"}
		want["BUFFER_PG|"+p+"|3"] = map[string]string{"profile": "fared_pg_lossless_p3_400000_350000_90000"}
		want["BUFFER_PG|"+p+"|4"] = map[string]string{"profile": "fared_pg_lossless_p4_400000_350000_90000"}
		for q := 0; q < 8; q++ {
			want[fmt.Sprintf("QUEUE|%s|%d", p, q)] = map[string]string{"scheduler": "fared.strict"}
		}
		want["QUEUE|"+p+"|3"] = map[string]string{"scheduler": "fared.dwrr.50", "wred_profile": "roce"}
	}
	check := func(want map[string]map[string]string) {
		t.Helper()
		var wk []string
		for k := range want {
			wk = append(wk, k)
		}
		sort.Strings(wk)
		if got := keys(t, cfg); !reflect.DeepEqual(got, wk) {
			t.Errorf("CONFIG_DB keys:\n got %v\nwant %v", got, wk)
		}
		for k, w := range want {
			if got := hgetall(t, cfg, k); !reflect.DeepEqual(got, w) {
				t.Errorf("HGETALL %s:\n got %v\nwant %v", k, got, w)
			}
		}
	}
	check(want)

	// A second Apply: the watchdog took PFC off Ethernet0, queue 3 lost
	// its profile, the profile is gone. Only fared's own fields and keys
	// change; the platform's stay.
	d := desired()
	d.Ifaces[0].PFC = 0
	d.Ifaces[0].Queues[3].Profile = ""
	d.Ifaces[1].Queues[3].Profile = ""
	d.Profiles = nil
	if _, err := b.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	delete(want, "WRED_PROFILE|roce")
	want["PORT_QOS_MAP|Ethernet0"]["pfc_enable"] = ""
	want["PORT_QOS_MAP|Ethernet0"]["pfcwd_sw_enable"] = ""
	want["QUEUE|Ethernet0|3"] = map[string]string{"scheduler": "fared.dwrr.50"}
	want["QUEUE|Ethernet4|3"] = map[string]string{"scheduler": "fared.dwrr.50"}
	check(want)

	// An Apply of the same state writes nothing (orchagent would
	// reprogram on every notification).
	cfg.ConfigSet(ctx, "notify-keyspace-events", "KEA")
	sub := cfg.PSubscribe(ctx, "__keyspace@4__:*")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	cfg.HSet(ctx, "MARKER|x", "a", "b") // a write we know arrives
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(msg.Channel, "MARKER|x") {
		t.Errorf("an unchanged Apply wrote %s", msg.Channel)
	}
}

// counters is a synthetic COUNTERS_DB for one port's queue 3, in SAI's
// names, as syncd's flex counters write them.
type counters struct {
	c                   *redis.Client
	pfcRx, on2off, pkts uint64
	paused              bool
}

func (s *counters) setup(t *testing.T) {
	ctx := context.Background()
	s.c.HSet(ctx, "COUNTERS_PORT_NAME_MAP", "Ethernet0", "oid:0x1000000000001")
	s.c.HSet(ctx, "COUNTERS_QUEUE_NAME_MAP", "Ethernet0:3", "oid:0x15000000000003")
	s.write(t)
}

func (s *counters) write(t *testing.T) {
	ctx := context.Background()
	if err := s.c.HSet(ctx, "COUNTERS:oid:0x1000000000001", "SAI_PORT_STAT_PFC_3_RX_PKTS", s.pfcRx,
		"SAI_PORT_STAT_PFC_3_ON2OFF_RX_PKTS", s.on2off, "SAI_PORT_STAT_PFC_3_TX_PKTS", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.c.HSet(ctx, "COUNTERS:oid:0x15000000000003", "SAI_QUEUE_STAT_PACKETS", s.pkts,
		"SAI_QUEUE_ATTR_PAUSE_STATUS", fmt.Sprint(s.paused), "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES", 12345)
}

// TestWatchdogFromCounters: synthetic COUNTERS_DB values drive fared's
// watchdog through detect -> recover -> limit, and CONFIG_DB's
// pfc_enable follows: off during recovery, back after it, off for good
// at the limit, back after restore.
func TestWatchdogFromCounters(t *testing.T) {
	sock := startRedis(t)
	ctx := context.Background()
	cfg, cnt := client(sock, 4), client(sock, 2)
	defer cfg.Close()
	defer cnt.Close()
	sc := &counters{c: cnt}
	sc.setup(t)

	d := desired()
	d.Ifaces = d.Ifaces[:1]
	d.Ifaces[0].PFCConfigured, d.Ifaces[0].PFC = model.PriosOf(3), model.PriosOf(3)
	poll := 200 * time.Millisecond
	wd := policy.WatchdogConfig{Enabled: true, Poll: poll, Detection: 400 * time.Millisecond,
		Restoration: time.Second, Action: model.ActionDrop, Limit: 2, Window: time.Minute}
	b := New(Config{Addr: sock, ConfigDB: 4, CountersDB: 2})
	defer b.Close()
	ctl := policy.NewController(b, d, wd)
	if err := ctl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pfc := func() string { return hgetall(t, cfg, "PORT_QOS_MAP|Ethernet0")["pfc_enable"] }
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	step := func(storm bool) []policy.Event {
		t.Helper()
		now = now.Add(poll)
		if storm {
			sc.pfcRx += 30 // PAUSE frames keep coming; no XON, no new onset
			sc.paused = true
		} else {
			sc.paused = false
			sc.pkts += 1000
		}
		sc.write(t)
		ev, err := ctl.Poll(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	kinds := func(ev []policy.Event) string {
		var s []string
		for _, e := range ev {
			s = append(s, string(e.Kind))
		}
		return strings.Join(s, ",")
	}
	step(false)
	// Storm begins: the first paused poll starts the timer; two polls
	// later (400 ms) the queue is deadlocked.
	sc.on2off++
	for i, want := range []string{"", "", "detected"} {
		if got := kinds(step(true)); got != want {
			t.Fatalf("storm poll %d: events %q, want %q", i, got, want)
		}
	}
	if pfc() != "" {
		t.Fatalf("recovering: pfc_enable %q, want empty (PFC off)", pfc())
	}
	// Recovery lasts the restoration time (5 polls); the storm goes on
	// but detection is off.
	for i := 0; i < 4; i++ {
		if ev := step(true); len(ev) != 0 {
			t.Fatalf("events during recovery: %v", ev)
		}
	}
	if got := kinds(step(true)); got != "recovered" {
		t.Fatalf("end of recovery: %q", got)
	}
	if pfc() != "3" {
		t.Fatalf("after recovery: pfc_enable %q, want 3", pfc())
	}
	// Still stormed: the second deadlock reaches the limit (2).
	var got []string
	for i := 0; i < 3; i++ {
		if k := kinds(step(true)); k != "" {
			got = append(got, k)
		}
	}
	if strings.Join(got, ";") != "detected,limit" {
		t.Fatalf("second deadlock: %v, want detected,limit", got)
	}
	for i := 0; i < 20; i++ {
		step(i%2 == 0)
		if pfc() != "" {
			t.Fatalf("limited: pfc_enable %q came back without restore", pfc())
		}
	}
	if ok, err := ctl.Restore(ctx, now, "Ethernet0"); err != nil || !ok {
		t.Fatalf("restore: %v %v", ok, err)
	}
	if pfc() != "3" {
		t.Fatalf("after restore: pfc_enable %q, want 3", pfc())
	}
}
