package policy

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/fared/fared/qos/model"
)

// Controller runs the policies of one node against its backend: it
// applies the configured state, polls the counters, steps the watchdog
// and applies what the watchdog overrides. It is not safe for concurrent
// use: the module calls it from its loop, qos-sim from the simulation's
// event loop.
type Controller struct {
	be      model.Backend
	base    *model.Desired // from the configuration
	wd      *Watchdog
	applied *model.Desired // last applied successfully; nil before the first
	report  model.Report
	last    *model.Counters
	polls   uint64
	tuner   *ECNTuner // nil: static ECN thresholds
}

// NewController returns a controller; Start applies the configuration.
func NewController(be model.Backend, d *model.Desired, wd WatchdogConfig) *Controller {
	return &Controller{be: be, base: d, wd: NewWatchdog(wd, pfcOf(d))}
}

func pfcOf(d *model.Desired) map[string]model.Prios {
	m := map[string]model.Prios{}
	for _, i := range d.Ifaces {
		m[i.Name] = i.PFCConfigured
	}
	return m
}

// Backend returns the backend the controller drives.
func (c *Controller) Backend() model.Backend { return c.be }

// Start applies the configured state.
func (c *Controller) Start(ctx context.Context) error { return c.apply(ctx) }

// desired is the configuration with the watchdog's overrides.
func (c *Controller) desired() *model.Desired {
	d := c.base.Clone()
	for name, o := range c.wd.Overrides() {
		i := d.Iface(name)
		if i == nil {
			continue
		}
		if o.PFCOff {
			i.PFC = 0
		}
		i.Drop = o.Drop
	}
	if c.tuner != nil {
		c.tuner.Overlay(d)
	}
	return d
}

// SetTuner puts an ECN tuner (AI ECN, Adaptive RED) on the controller,
// or removes it (nil). It takes effect at the next Poll.
func (c *Controller) SetTuner(t *ECNTuner) { c.tuner = t }

// Tuner is the ECN tuner, or nil.
func (c *Controller) Tuner() *ECNTuner { return c.tuner }

func (c *Controller) apply(ctx context.Context) error {
	d := c.desired()
	if c.applied != nil && reflect.DeepEqual(d, c.applied) {
		return nil
	}
	r, err := c.be.Apply(ctx, d)
	if r != nil {
		c.report = r
	}
	if err != nil {
		return fmt.Errorf("%s backend: %w", c.be.Name(), err)
	}
	c.applied = d
	return nil
}

// Poll reads the counters at now, steps the policies and applies what
// changed. It returns the watchdog's events.
func (c *Controller) Poll(ctx context.Context, now time.Time) ([]Event, error) {
	cs, err := c.be.Counters(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s backend counters: %w", c.be.Name(), err)
	}
	c.last = cs
	c.polls++
	ev := c.wd.Step(now, cs)
	if c.tuner != nil {
		c.tuner.Step(now, cs, c.base)
	}
	return ev, c.apply(ctx)
}

// Reapply applies the desired state even if it did not change (a device
// was recreated and lost what was applied).
func (c *Controller) Reapply(ctx context.Context) error {
	c.applied = nil
	return c.apply(ctx)
}

// Restore gives an interface its PFC and detection back after the limit.
func (c *Controller) Restore(ctx context.Context, now time.Time, iface string) (bool, error) {
	changed, err := c.wd.Restore(now, iface)
	if err != nil || !changed {
		return changed, err
	}
	return true, c.apply(ctx)
}

// Reconfigure replaces the configuration; the watchdog keeps its states.
func (c *Controller) Reconfigure(ctx context.Context, d *model.Desired, wd WatchdogConfig) error {
	c.base = d
	c.wd.Reconfigure(wd, pfcOf(d))
	return c.apply(ctx)
}

// Applied is the state last applied (nil before the first success).
func (c *Controller) Applied() *model.Desired { return c.applied }

// Configured is the state from the configuration.
func (c *Controller) Configured() *model.Desired { return c.base }

// Report is what the backend said about features at the last Apply.
func (c *Controller) Report() model.Report { return c.report }

// Counters is the last snapshot polled (nil before the first poll).
func (c *Controller) Counters() *model.Counters { return c.last }

// Polls counts counter snapshots taken.
func (c *Controller) Polls() uint64 { return c.polls }

// Watchdog exposes the watchdog's views.
func (c *Controller) Watchdog() *Watchdog { return c.wd }
