// Package sonic is the QoS backend of SONiC switches: it writes the
// desired state into CONFIG_DB (Redis db 4, keys "TABLE|key") with
// SONiC's own table and field names (orchagent's qosorch, bufferorch and
// pfcwdorch read them), and reads PFC and queue counters from COUNTERS_DB
// (db 2) for fared's watchdog. docs/qos.md has the mapping.
package sonic

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fared/fared/qos/model"
)

// Names of the objects fared owns in CONFIG_DB.
const (
	MapName  = "FARED"                 // DSCP_TO_TC_MAP, TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, MAP_PFC_PRIORITY_TO_QUEUE
	Pool     = "ingress_lossless_pool" // the platform's lossless pool (fared does not size pools)
	profPre  = "fared_pg_lossless_"    // BUFFER_PROFILE per priority
	schedPre = "fared."                // SCHEDULER per (type, weight)
)

// Config is how to reach the switch's Redis.
type Config struct {
	Addr       string // unix socket path (starts with /) or host:port
	ConfigDB   int
	CountersDB int
}

// Backend drives one SONiC switch.
type Backend struct {
	cfg, cnt *redis.Client
	qos      written // the QoS tables (Apply)
	overlay  written // the tunnels' ECN fields (ApplyOverlay)
}

// written is what fared wrote into a set of CONFIG_DB keys: the fields of
// each key (owned), and the keys that did not exist before fared wrote
// them (created: fared may delete those whole, and only its own fields
// of the others).
//
// inOperators marks fields fared sets in the operator's own entries (a
// tunnel's ECN mode): fared writes only into keys that exist (a field
// alone must not create an entry that lacks the rest), and a field it no
// longer wants gets back the value it had before fared wrote it (prior)
// rather than vanishing (tunneldecaporch needs ecn_mode present).
type written struct {
	owned       map[string]map[string]bool
	created     map[string]bool
	inOperators bool
	prior       map[string]map[string]string
}

func client(addr string, db int) *redis.Client {
	o := &redis.Options{Addr: addr, DB: db, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second}
	if strings.HasPrefix(addr, "/") {
		o.Network = "unix"
	}
	return redis.NewClient(o)
}

// New connects (lazily: the first command dials).
func New(c Config) *Backend {
	return &Backend{cfg: client(c.Addr, c.ConfigDB), cnt: client(c.Addr, c.CountersDB),
		qos:     written{owned: map[string]map[string]bool{}, created: map[string]bool{}},
		overlay: written{owned: map[string]map[string]bool{}, created: map[string]bool{}, inOperators: true, prior: map[string]map[string]string{}}}
}

// Name is "sonic".
func (b *Backend) Name() string { return "sonic" }

// Close closes the Redis connections.
func (b *Backend) Close() error {
	e1, e2 := b.cfg.Close(), b.cnt.Close()
	if e1 != nil {
		return e1
	}
	return e2
}

// Interfaces lists the switch's ports (CONFIG_DB PORT table).
func (b *Backend) Interfaces(ctx context.Context) ([]string, error) {
	var out []string
	iter := b.cfg.Scan(ctx, 0, "PORT|*", 1000).Iterator()
	for iter.Next(ctx) {
		out = append(out, strings.TrimPrefix(iter.Val(), "PORT|"))
	}
	sort.Strings(out)
	return out, iter.Err()
}

func itoa[T ~int | ~uint8 | ~uint64](v T) string { return strconv.FormatUint(uint64(v), 10) }

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func schedName(q model.Queue) string {
	if q.Sched == model.Strict || q.Sched == "" {
		return schedPre + "strict"
	}
	return fmt.Sprintf("%s%s.%d", schedPre, q.Sched, q.Weight)
}

// Tables renders d as CONFIG_DB hashes: key "TABLE|key" -> field ->
// value. It is what Apply writes, exposed for tests and dry runs.
func Tables(d *model.Desired) map[string]map[string]string {
	t := map[string]map[string]string{}
	dscp := map[string]string{}
	for v := 0; v < 64; v++ {
		dscp[itoa(v)] = itoa(d.DSCP[v])
	}
	ident := map[string]string{}
	for p := 0; p < model.NumPrio; p++ {
		ident[itoa(p)] = itoa(p)
	}
	t["DSCP_TO_TC_MAP|"+MapName] = dscp
	t["TC_TO_QUEUE_MAP|"+MapName] = ident
	t["TC_TO_PRIORITY_GROUP_MAP|"+MapName] = ident
	t["MAP_PFC_PRIORITY_TO_QUEUE|"+MapName] = ident
	for _, p := range d.Profiles {
		h := map[string]string{"ecn": string(p.ECN)}
		for c, w := range p.Colors {
			col := model.Color(c).String()
			h["wred_"+col+"_enable"] = strconv.FormatBool(w.Enable)
			if w.Enable {
				h[col+"_min_threshold"] = itoa(w.Min)
				h[col+"_max_threshold"] = itoa(w.Max)
				h[col+"_drop_probability"] = itoa(w.Prob)
			}
		}
		t["WRED_PROFILE|"+p.Name] = h
	}
	var poll time.Duration
	for _, i := range d.Ifaces {
		qm := map[string]string{
			"dscp_to_tc_map":   MapName,
			"tc_to_queue_map":  MapName,
			"tc_to_pg_map":     MapName,
			"pfc_to_queue_map": MapName,
			"pfc_enable":       i.PFC.String(),
		}
		if i.Watchdog.Enabled {
			qm["pfcwd_sw_enable"] = i.PFC.String()
		}
		t["PORT_QOS_MAP|"+i.Name] = qm
		for q := 0; q < model.NumPrio; q++ {
			qc := i.Queues[q]
			sn := schedName(qc)
			s := map[string]string{"type": strings.ToUpper(string(qc.Sched))}
			if qc.Sched == "" || qc.Sched == model.Strict {
				s["type"] = "STRICT"
			} else {
				s["weight"] = itoa(qc.Weight)
			}
			t["SCHEDULER|"+sn] = s
			qh := map[string]string{"scheduler": sn}
			if qc.Profile != "" {
				qh["wred_profile"] = qc.Profile
			}
			t[fmt.Sprintf("QUEUE|%s|%d", i.Name, q)] = qh
		}
		for _, p := range i.PFCConfigured.List() {
			th := i.Thresholds[p]
			name := fmt.Sprintf("%sp%d_%d_%d_%d", profPre, p, th.XOFF, th.XON, th.Headroom)
			t["BUFFER_PROFILE|"+name] = map[string]string{
				"pool":      Pool,
				"size":      itoa(th.XOFF),
				"xon":       itoa(th.XON),
				"xoff":      itoa(th.Headroom),
				"static_th": itoa(th.XOFF + th.Headroom),
			}
			t[fmt.Sprintf("BUFFER_PG|%s|%d", i.Name, p)] = map[string]string{"profile": name}
		}
		if w := i.Watchdog; w.Enabled && i.PFCConfigured != 0 {
			t["PFC_WD|"+i.Name] = map[string]string{
				"action":           string(w.Action),
				"detection_time":   ms(w.Detection),
				"restoration_time": ms(w.Restoration),
			}
			poll = d.Poll
		}
	}
	if poll > 0 {
		t["PFC_WD|GLOBAL"] = map[string]string{"POLL_INTERVAL": ms(poll)}
	}
	return t
}

// Apply writes the tables (sync) and reports what the switch supports.
func (b *Backend) Apply(ctx context.Context, d *model.Desired) (model.Report, error) {
	rep := model.Report{}
	if err := b.sync(ctx, Tables(d), &b.qos); err != nil {
		return rep, err
	}
	ports, _ := b.cnt.HGetAll(ctx, "COUNTERS_PORT_NAME_MAP").Result()
	for _, i := range d.Ifaces {
		for _, f := range []model.Feature{model.FeatPFC, model.FeatETS, model.FeatDSCPMap, model.FeatECN} {
			rep.Set(i.Name, f, true, "CONFIG_DB")
		}
		rep.Set(i.Name, model.FeatFastECN, false, "CONFIG_DB's WRED_PROFILE has no dequeue-marking field")
		rep.Set(i.Name, model.FeatPrevention, false, "CONFIG_DB has no rule that matches both ingress and egress port group")
		rep.Set(i.Name, model.FeatFlows, false, "CONFIG_DB has no per-flow rate meter for large-flow separation")
		if _, ok := ports[i.Name]; ok {
			rep.Set(i.Name, model.FeatCounters, true, "COUNTERS_DB")
			rep.Set(i.Name, model.FeatWatchdog, true, "COUNTERS_DB pause status, PFC and ON2OFF counters; SONiC's pfcwd acts in hardware (PFC_WD)")
		} else {
			rep.Set(i.Name, model.FeatCounters, false, "no COUNTERS_PORT_NAME_MAP entry (flex counters off?)")
			rep.Set(i.Name, model.FeatWatchdog, false, "no COUNTERS_DB counters for the port")
		}
	}
	return rep, nil
}

// sync writes want: changed fields are set, fields and keys fared wrote
// before (w) but no longer wants are removed, so each hash holds exactly
// what want says and unchanged state causes no write (orchagent
// reprograms the ASIC on every notification).
func (b *Backend) sync(ctx context.Context, want map[string]map[string]string, w *written) error {
	keys := slices.Sorted(maps.Keys(want))
	cur := make([]*redis.MapStringStringCmd, len(keys))
	pipe := b.cfg.Pipeline()
	for i, k := range keys {
		cur[i] = pipe.HGetAll(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return fmt.Errorf("CONFIG_DB read: %w", err)
	}
	tx := b.cfg.TxPipeline()
	writes := 0
	for i, k := range keys {
		have := cur[i].Val()
		if len(have) == 0 && w.inOperators {
			delete(want, k)
			continue
		}
		if len(have) == 0 && w.owned[k] == nil {
			w.created[k] = true
		}
		var set []any
		var del []string
		for f, v := range want[k] {
			w.remember(k, f, have)
			if have[f] != v {
				set = append(set, f, v)
			}
		}
		for f := range w.owned[k] {
			if _, ok := want[k][f]; !ok {
				if _, there := have[f]; there {
					del = append(del, f)
				}
			}
		}
		writes += w.release(ctx, tx, k, del)
		if len(set) > 0 {
			tx.HSet(ctx, k, set...)
			writes++
		}
	}
	var stale []string
	for k, fields := range w.owned {
		if _, ok := want[k]; ok {
			continue
		}
		if w.created[k] {
			stale = append(stale, k)
			continue
		}
		writes += w.release(ctx, tx, k, slices.Collect(maps.Keys(fields)))
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		tx.Del(ctx, stale...)
		writes++
	}
	if writes > 0 {
		if _, err := tx.Exec(ctx); err != nil {
			return fmt.Errorf("CONFIG_DB write: %w", err)
		}
	}
	owned := map[string]map[string]bool{}
	for k, h := range want {
		owned[k] = map[string]bool{}
		for f := range h {
			owned[k][f] = true
		}
	}
	for k := range w.created {
		if owned[k] == nil {
			delete(w.created, k)
		}
	}
	w.owned = owned
	return nil
}

// remember keeps the value an operator's field had before fared first
// wrote it.
func (w *written) remember(k, f string, have map[string]string) {
	if !w.inOperators || w.owned[k][f] {
		return
	}
	if v, ok := have[f]; ok {
		if w.prior[k] == nil {
			w.prior[k] = map[string]string{}
		}
		w.prior[k][f] = v
	}
}

// release queues the removal of fared's fields of key k: deleted, or
// given back their prior values. It returns the number of commands.
func (w *written) release(ctx context.Context, tx redis.Pipeliner, k string, fields []string) int {
	sort.Strings(fields)
	var del []string
	var back []any
	for _, f := range fields {
		if v, ok := w.prior[k][f]; ok {
			back = append(back, f, v)
			delete(w.prior[k], f)
		} else {
			del = append(del, f)
		}
	}
	n := 0
	if len(del) > 0 {
		tx.HDel(ctx, k, del...)
		n++
	}
	if len(back) > 0 {
		tx.HSet(ctx, k, back...)
		n++
	}
	return n
}

func num(m map[string]string, f string) uint64 {
	v, _ := strconv.ParseUint(m[f], 10, 64)
	return v
}

// Counters reads PFC and queue counters of every port COUNTERS_DB names.
func (b *Backend) Counters(ctx context.Context) (*model.Counters, error) {
	ports, err := b.cnt.HGetAll(ctx, "COUNTERS_PORT_NAME_MAP").Result()
	if err != nil {
		return nil, fmt.Errorf("COUNTERS_DB: %w", err)
	}
	queues, err := b.cnt.HGetAll(ctx, "COUNTERS_QUEUE_NAME_MAP").Result()
	if err != nil {
		return nil, fmt.Errorf("COUNTERS_DB: %w", err)
	}
	names := slices.Sorted(maps.Keys(ports))
	pipe := b.cnt.Pipeline()
	pc := map[string]*redis.MapStringStringCmd{}
	qc := map[string]*redis.MapStringStringCmd{}
	for _, n := range names {
		pc[n] = pipe.HGetAll(ctx, "COUNTERS:"+ports[n])
		for q := 0; q < model.NumPrio; q++ {
			k := fmt.Sprintf("%s:%d", n, q)
			if oid, ok := queues[k]; ok {
				qc[k] = pipe.HGetAll(ctx, "COUNTERS:"+oid)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, fmt.Errorf("COUNTERS_DB: %w", err)
	}
	out := &model.Counters{At: time.Now(), Ifaces: map[string]*model.IfaceCounters{}}
	for _, n := range names {
		ic := &model.IfaceCounters{Name: n}
		pm := pc[n].Val()
		for q := 0; q < model.NumPrio; q++ {
			c := &ic.Prio[q]
			c.PauseRx = num(pm, fmt.Sprintf("SAI_PORT_STAT_PFC_%d_RX_PKTS", q))
			c.PauseTx = num(pm, fmt.Sprintf("SAI_PORT_STAT_PFC_%d_TX_PKTS", q))
			c.XOFFOnsets = num(pm, fmt.Sprintf("SAI_PORT_STAT_PFC_%d_ON2OFF_RX_PKTS", q))
			cmd := qc[fmt.Sprintf("%s:%d", n, q)]
			if cmd == nil {
				continue
			}
			qm := cmd.Val()
			if s, ok := qm["SAI_QUEUE_ATTR_PAUSE_STATUS"]; ok {
				c.Paused, c.PausedKnown = s == "true", true
			}
			c.TxPackets = num(qm, "SAI_QUEUE_STAT_PACKETS")
			c.TxBytes = num(qm, "SAI_QUEUE_STAT_BYTES")
			c.Drops = num(qm, "SAI_QUEUE_STAT_DROPPED_PACKETS")
			c.Depth = num(qm, "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES")
			c.Marks = num(qm, "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS")
		}
		out.Ifaces[n] = ic
	}
	return out, nil
}
