// Package policy holds the QoS policies as pure state machines over
// (configuration, counter snapshot, clock), and the Controller that runs
// them against a model.Backend. Nothing here knows which backend it
// drives: the same code runs on Linux, SONiC and the software data plane.
package policy

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fared/fared/qos/model"
)

// WatchdogConfig is the PFC deadlock watchdog's configuration.
type WatchdogConfig struct {
	Enabled     bool
	Poll        time.Duration // precision: the watchdog sees the data plane every Poll
	Detection   time.Duration // a queue XOFF this long is deadlocked (a multiple of Poll)
	Restoration time.Duration // the auto-recover timer
	Action      model.Action
	Limit       int           // deadlocks within Window that keep PFC off until restored; 0 = none
	Window      time.Duration // of the limit
}

// IfaceMode is the watchdog's state of an interface.
type IfaceMode string

const (
	// Normal: PFC and detection on.
	Normal IfaceMode = "normal"
	// Recovering: the auto-recover timer runs; PFC and detection are off
	// on the interface and received PAUSEs are ignored.
	Recovering IfaceMode = "recovering"
	// Limited: the deadlock limit was reached; PFC and detection stay off
	// until an operator restores them.
	Limited IfaceMode = "limited"
)

// EventKind names what the watchdog did.
type EventKind string

const (
	EvDetected  EventKind = "detected"
	EvRecovered EventKind = "recovered" // the auto-recover timer ended
	EvLimit     EventKind = "limit"     // the limit was reached
	EvRestored  EventKind = "restored"  // an operator restored the interface
)

// Event is one watchdog action.
type Event struct {
	At    time.Time
	Kind  EventKind
	Iface string
	Prio  int // -1 for interface-wide events
	// Since is when the deadlocked queue's continuous XOFF was first
	// seen (detections only).
	Since time.Time
}

func (e Event) String() string {
	s := fmt.Sprintf("%s %s %s", e.At.Format("15:04:05.000000"), e.Kind, e.Iface)
	if e.Prio >= 0 {
		s += fmt.Sprintf(" priority %d", e.Prio)
	}
	return s
}

type qkey struct {
	iface string
	prio  int
}

// queueState is detection state of one (interface, priority).
type queueState struct {
	// since is the first poll of the current run of polls in which the
	// queue stayed XOFF without resuming; zero when not XOFF.
	since      time.Time
	detections int
	last       time.Time // of the last detection
}

type ifaceState struct {
	mode       IfaceMode
	until      time.Time   // end of the recovery timer
	stuck      model.Prios // priorities detected in this recovery
	recent     []time.Time // detections within the limit window
	detections int
	recoveries int
	limitHits  int
}

// Watchdog is the PFC deadlock detector, recoverer and limiter of one
// node. Step it with each counter snapshot; it says, through Overrides,
// what to change in the desired state.
//
// Detection follows the seed (and SONiC's pfcwd condition): between two
// polls a queue is "stormed" when the peer had its priority paused at
// both polls, no new pause onset happened in between (it never resumed)
// and PAUSE frames kept arriving. The timer starts at the first poll of
// such a run; when it has lasted the detection time the queue is
// deadlocked. Since the detection time is a whole number of polls and
// the run's first poll is at most one poll after the XOFF began, a
// deadlock is reported within [detection, detection + poll) of its
// start.
type Watchdog struct {
	cfg    WatchdogConfig
	pfc    map[string]model.Prios // configured PFC per interface
	q      map[qkey]*queueState
	ifs    map[string]*ifaceState
	last   *model.Counters
	events []Event
}

// MaxEvents bounds the event log.
const MaxEvents = 1000

// NewWatchdog returns a watchdog over the interfaces' configured PFC
// priorities.
func NewWatchdog(cfg WatchdogConfig, pfc map[string]model.Prios) *Watchdog {
	w := &Watchdog{cfg: cfg, q: map[qkey]*queueState{}, ifs: map[string]*ifaceState{}}
	w.Reconfigure(cfg, pfc)
	return w
}

// Reconfigure takes new settings; interface states (recovering, limited)
// and counts carry over for interfaces that remain.
func (w *Watchdog) Reconfigure(cfg WatchdogConfig, pfc map[string]model.Prios) {
	w.cfg = cfg
	w.pfc = map[string]model.Prios{}
	for k, v := range pfc {
		w.pfc[k] = v
		if w.ifs[k] == nil {
			w.ifs[k] = &ifaceState{mode: Normal}
		}
	}
	for k := range w.ifs {
		if _, ok := pfc[k]; !ok {
			delete(w.ifs, k)
		}
	}
	for k := range w.q {
		if !w.pfc[k.iface].Has(k.prio) {
			delete(w.q, k)
		}
	}
}

// Step advances the watchdog to now with a fresh counter snapshot and
// returns what it did.
func (w *Watchdog) Step(now time.Time, c *model.Counters) []Event {
	var out []Event
	emit := func(e Event) {
		out = append(out, e)
		w.events = append(w.events, e)
		if len(w.events) > MaxEvents {
			w.events = w.events[len(w.events)-MaxEvents:]
		}
	}
	prev := w.last
	w.last = c
	for _, name := range sortedKeys(w.ifs) {
		st := w.ifs[name]
		// The recovery timer ends: PFC and detection come back.
		if st.mode == Recovering && !now.Before(st.until) {
			st.mode = Normal
			st.stuck = 0
			st.recoveries++
			emit(Event{At: now, Kind: EvRecovered, Iface: name, Prio: -1})
			w.resetQueues(name)
		}
		if !w.cfg.Enabled || st.mode != Normal {
			continue
		}
		cur := c.Ifaces[name]
		if cur == nil {
			continue
		}
		var old *model.IfaceCounters
		if prev != nil {
			old = prev.Ifaces[name]
		}
		for _, p := range w.pfc[name].List() {
			k := qkey{name, p}
			qs := w.q[k]
			if qs == nil {
				qs = &queueState{}
				w.q[k] = qs
			}
			n := cur.Prio[p]
			if !n.PausedKnown || !n.Paused {
				qs.since = time.Time{}
				continue
			}
			stormed := false
			if old != nil {
				o := old.Prio[p]
				stormed = o.Paused && n.XOFFOnsets == o.XOFFOnsets && n.PauseRx > o.PauseRx
			}
			if !stormed || qs.since.IsZero() {
				// A run of stuck polls may start here.
				qs.since = now
				continue
			}
			if now.Sub(qs.since) < w.cfg.Detection {
				continue
			}
			qs.detections++
			qs.last = now
			st.stuck |= 1 << p
			emit(Event{At: now, Kind: EvDetected, Iface: name, Prio: p, Since: qs.since})
		}
		if st.stuck == 0 {
			continue
		}
		// Deadlocked: recover the interface, or stop for good at the
		// limit.
		st.detections++
		st.recent = append(st.recent, now)
		cut := 0
		for cut < len(st.recent) && now.Sub(st.recent[cut]) >= w.cfg.Window {
			cut++
		}
		st.recent = st.recent[cut:]
		if w.cfg.Limit > 0 && len(st.recent) >= w.cfg.Limit {
			st.mode = Limited
			st.limitHits++
			emit(Event{At: now, Kind: EvLimit, Iface: name, Prio: -1})
		} else {
			st.mode = Recovering
			st.until = now.Add(w.cfg.Restoration)
		}
		w.resetQueues(name)
	}
	return out
}

func (w *Watchdog) resetQueues(iface string) {
	for k, qs := range w.q {
		if k.iface == iface {
			qs.since = time.Time{}
		}
	}
}

// Restore brings an interface out of the limit (or ends its recovery):
// PFC and detection are on again. It fails for an interface the watchdog
// does not know.
func (w *Watchdog) Restore(now time.Time, iface string) (bool, error) {
	st := w.ifs[iface]
	if st == nil {
		return false, fmt.Errorf("interface %s is not a qos interface", iface)
	}
	if st.mode == Normal {
		return false, nil
	}
	st.mode = Normal
	st.stuck = 0
	st.recent = nil
	w.resetQueues(iface)
	e := Event{At: now, Kind: EvRestored, Iface: iface, Prio: -1}
	w.events = append(w.events, e)
	return true, nil
}

// Override is what the watchdog changes on an interface.
type Override struct {
	PFCOff bool        // PFC (sending and honouring PAUSE) off on the interface
	Drop   model.Prios // queues whose packets are dropped (action drop)
}

// Overrides returns the interfaces the watchdog has taken PFC away from.
func (w *Watchdog) Overrides() map[string]Override {
	out := map[string]Override{}
	for name, st := range w.ifs {
		switch st.mode {
		case Recovering:
			o := Override{PFCOff: true}
			if w.cfg.Action == model.ActionDrop {
				o.Drop = st.stuck
			}
			out[name] = o
		case Limited:
			out[name] = Override{PFCOff: true}
		}
	}
	return out
}

// QueueView is one watched queue, for the API.
type QueueView struct {
	Iface       string
	Prio        int
	Mode        IfaceMode
	XOFFSince   time.Time // zero: not XOFF
	Detections  int
	LastDetect  time.Time
	RecoverEnds time.Time // zero unless recovering
}

// IfaceView is one interface's watchdog state, for the API.
type IfaceView struct {
	Iface      string
	Mode       IfaceMode
	Detections int
	Recoveries int
	LimitHits  int
	InWindow   int
	Until      time.Time
}

// Queues returns every watched queue.
func (w *Watchdog) Queues() []QueueView {
	var out []QueueView
	for _, name := range sortedKeys(w.ifs) {
		st := w.ifs[name]
		for _, p := range w.pfc[name].List() {
			v := QueueView{Iface: name, Prio: p, Mode: st.mode}
			if qs := w.q[qkey{name, p}]; qs != nil {
				v.XOFFSince, v.Detections, v.LastDetect = qs.since, qs.detections, qs.last
			}
			if st.mode == Recovering {
				v.RecoverEnds = st.until
			}
			out = append(out, v)
		}
	}
	return out
}

// Ifaces returns every interface's state.
func (w *Watchdog) Ifaces() []IfaceView {
	var out []IfaceView
	for _, name := range sortedKeys(w.ifs) {
		st := w.ifs[name]
		v := IfaceView{Iface: name, Mode: st.mode, Detections: st.detections, Recoveries: st.recoveries,
			LimitHits: st.limitHits, InWindow: len(st.recent)}
		if st.mode == Recovering {
			v.Until = st.until
		}
		out = append(out, v)
	}
	return out
}

// Events returns the event log (oldest first).
func (w *Watchdog) Events() []Event { return append([]Event(nil), w.events...) }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
