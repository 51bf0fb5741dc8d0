package spf

import (
	"fmt"
	"sync"
	"time"

	"github.com/fared/fared/internal/setting"
)

// DelayState is a state of the RFC 8405 back-off state machine.
type DelayState int

// RFC 8405 §5 states.
const (
	Quiet DelayState = iota
	ShortWait
	LongWait
)

func (s DelayState) String() string {
	switch s {
	case Quiet:
		return "QUIET"
	case ShortWait:
		return "SHORT_WAIT"
	case LongWait:
		return "LONG_WAIT"
	}
	return "?"
}

// DelayConfig holds the RFC 8405 parameters. Zero fields take the defaults of
// DefaultDelayConfig (for InitialDelay that is zero itself).
type DelayConfig struct {
	InitialDelay time.Duration // INITIAL_SPF_DELAY
	ShortDelay   time.Duration // SHORT_SPF_DELAY
	LongDelay    time.Duration // LONG_SPF_DELAY
	TimeToLearn  time.Duration // TIME_TO_LEARN_INTERVAL
	Holddown     time.Duration // HOLDDOWN_INTERVAL
}

// DefaultDelayConfig returns fared's defaults: no initial delay, then
// 200 ms / 5 s, time to learn 500 ms, holddown 10 s.
//
// The first event after a quiet spell is computed at once. RFC 8405 meant
// INITIAL_SPF_DELAY as a very short delay for a single failure and
// SHORT_SPF_DELAY for the further reports of a correlated one (a node, an
// SRLG); it leaves the values to the operator (§6). In a CLOS with BFD and
// local repair (rib.Manager.NeighborDown) an adjacent failure is repaired
// without SPF, and a remote link failure is settled by the first LSP that
// reports it: the two-way check drops the link as soon as one end does. A
// delay in QUIET would only add to that failure's loss window (50 ms of
// 52 ms on a spine link losing carrier, 50 of 178 ms on a silent one with
// BFD 50 ms x 3: bench/README.md), while the other LSPs of a failure still
// fall into SHORT_WAIT.
func DefaultDelayConfig() DelayConfig {
	return DelayConfig{
		ShortDelay:  200 * time.Millisecond,
		LongDelay:   5 * time.Second,
		TimeToLearn: 500 * time.Millisecond,
		Holddown:    10 * time.Second,
	}
}

// Validate checks the one constraint RFC 8405 §6 makes a MUST:
// HOLDDOWN_INTERVAL longer than TIME_TO_LEARN_INTERVAL (after defaults).
// Otherwise a quiet spell shorter than TIME_TO_LEARN would end SHORT_WAIT
// (transition 6) before LONG_WAIT could ever be learnt. The ordering
// INITIAL <= SHORT <= LONG is only RECOMMENDED and is not checked.
func (c DelayConfig) Validate() error {
	c = c.withDefaults()
	if c.Holddown <= c.TimeToLearn {
		return fmt.Errorf("holddown %v must be longer than time-to-learn %v (RFC 8405 §6)", c.Holddown, c.TimeToLearn)
	}
	return nil
}

func (c DelayConfig) withDefaults() DelayConfig {
	d := DefaultDelayConfig()
	setting.Fill(&c, d)
	return c
}

// Delay is the RFC 8405 SPF back-off state machine. It owns no timers: the
// LEARN and HOLDDOWN timers are deadlines evaluated lazily (in time order) on
// every call, and the SPF timer is the time Event returns, which the caller
// arms itself and acknowledges with Ran when the computation has run. All
// methods take the current time explicitly; the clock given to NewDelay is
// only used by State and Pending. Delay is safe for concurrent use.
//
// The caller must call Event for every IGP event, including those that
// arrive while an SPF run is already pending: RFC 8405 §5 restarts the
// HOLDDOWN_TIMER on every event in every state (transitions 1, 2 and 4),
// so skipping Event while the SPF timer is armed ends the back-off early.
// Event then returns the deadline already armed, so re-arming with it
// changes nothing else.
type Delay struct {
	mu       sync.Mutex
	cfg      DelayConfig
	clock    func() time.Time
	state    DelayState
	spfAt    time.Time // SPF_TIMER deadline; zero when not armed
	learnAt  time.Time // LEARN_TIMER deadline; zero when not armed
	holdAt   time.Time // HOLDDOWN_TIMER deadline; zero when not armed
	lastTran int       // last RFC transition number applied (tests, show)
}

// NewDelay starts in QUIET. now may be nil (time.Now).
func NewDelay(cfg DelayConfig, now func() time.Time) *Delay {
	if now == nil {
		now = time.Now
	}
	return &Delay{cfg: cfg.withDefaults(), clock: now}
}

// advance applies the timer expirations due at or before now, earliest first.
func (d *Delay) advance(now time.Time) {
	for {
		learnDue := !d.learnAt.IsZero() && !d.learnAt.After(now)
		holdDue := !d.holdAt.IsZero() && !d.holdAt.After(now)
		switch {
		case learnDue && (!holdDue || !d.holdAt.Before(d.learnAt)):
			// Transition 3: LEARN_TIMER expiration in SHORT_WAIT.
			d.learnAt = time.Time{}
			if d.state == ShortWait {
				d.state = LongWait
				d.lastTran = 3
			}
		case holdDue:
			d.holdAt = time.Time{}
			switch d.state {
			case ShortWait:
				// Transition 6: deactivate LEARN_TIMER, go QUIET.
				d.learnAt = time.Time{}
				d.state = Quiet
				d.lastTran = 6
			case LongWait:
				// Transition 5.
				d.state = Quiet
				d.lastTran = 5
			}
		default:
			return
		}
	}
}

// Event records an IGP event (a change that needs SPF) at now and returns
// when SPF must run: the already armed SPF_TIMER if there is one, otherwise
// now plus the delay of the current state (RFC 8405 transitions 1, 2, 4).
func (d *Delay) Event(now time.Time) (runAt time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	var delay time.Duration
	switch d.state {
	case Quiet: // Transition 1
		delay = d.cfg.InitialDelay
		d.learnAt = now.Add(d.cfg.TimeToLearn)
		d.holdAt = now.Add(d.cfg.Holddown)
		d.state = ShortWait
		d.lastTran = 1
	case ShortWait: // Transition 2
		delay = d.cfg.ShortDelay
		d.holdAt = now.Add(d.cfg.Holddown)
		d.lastTran = 2
	case LongWait: // Transition 4
		delay = d.cfg.LongDelay
		d.holdAt = now.Add(d.cfg.Holddown)
		d.lastTran = 4
	}
	if d.spfAt.IsZero() {
		d.spfAt = now.Add(delay)
	}
	return d.spfAt
}

// Ran records that the SPF_TIMER fired and SPF was computed at now
// (transitions 7, 8, 9 in QUIET, SHORT_WAIT, LONG_WAIT: the state does not
// change).
func (d *Delay) Ran(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	d.spfAt = time.Time{}
	d.lastTran = 7 + int(d.state)
}

// Short is SHORT_SPF_DELAY (after defaults).
func (d *Delay) Short() time.Duration { return d.cfg.ShortDelay }

// State returns the state at the clock's current time.
func (d *Delay) State() DelayState {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(d.clock())
	return d.state
}

// Pending returns the armed SPF_TIMER deadline, if any.
func (d *Delay) Pending() (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.spfAt, !d.spfAt.IsZero()
}

// DelayView is the back-off state at one time: the state and the armed
// timers' deadlines (zero when not armed).
type DelayView struct {
	State                      DelayState
	SPFAt, LearnAt, HolddownAt time.Time
}

// View returns the state and timer deadlines at the clock's current time.
func (d *Delay) View() DelayView {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(d.clock())
	return DelayView{State: d.state, SPFAt: d.spfAt, LearnAt: d.learnAt, HolddownAt: d.holdAt}
}
