package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/fared/fared/qos/policy"
	"github.com/fared/fared/qos/sim"
)

// Epoch is the wall time simulated time 0 stands for in counters.
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Instance is a built scenario: the network and the controller of every
// switch that has a qos section.
type Instance struct {
	S           *Scenario
	Net         *sim.Network
	Controllers map[string]*policy.Controller
	// IPCC runs on the switches whose qos has an ipcc section.
	IPCC map[string]*IPCCRun
	// Events are the watchdogs' events, in time order.
	Events []NodeEvent
	// Err is the first error a controller returned (the run goes on).
	Err error
}

// NodeEvent is one watchdog event on a switch.
type NodeEvent struct {
	Node string `json:"node"`
	policy.Event
}

// Start builds the network and starts the controllers: each applies its
// qos section through the sim backend and polls every poll-interval of
// simulated time. skip names switches left without a controller (fared's
// sim backend drives its own node).
func (s *Scenario) Start(skip ...string) (*Instance, error) {
	n, err := s.Build()
	if err != nil {
		return nil, err
	}
	in := &Instance{S: s, Net: n, Controllers: map[string]*policy.Controller{}, IPCC: map[string]*IPCCRun{}}
	ctx := context.Background()
	for _, sw := range s.Switches {
		if sw.QoS == nil || contains(skip, sw.Name) {
			continue
		}
		nd := n.Node(sw.Name)
		c := policy.NewController(nd.Backend(Epoch), sw.QoS.Desired(), sw.QoS.WatchdogConfig())
		if t := sw.QoS.Tuning; t != nil {
			tu, err := policy.NewECNTuner(t.TunerConfig)
			if err != nil {
				return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
			}
			c.SetTuner(tu)
		}
		if ic := sw.QoS.IPCC; ic != nil {
			in.IPCC[sw.Name] = StartIPCC(n, nd, ic.IPCCConfig, Epoch, ic.LearnCM)
		}
		if err := c.Start(ctx); err != nil {
			return nil, fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		in.Controllers[sw.Name] = c
		name := sw.Name
		n.Every(sw.QoS.Poll, sw.QoS.Poll, func(now time.Duration) bool {
			ev, err := c.Poll(ctx, Epoch.Add(now))
			if err != nil && in.Err == nil {
				in.Err = fmt.Errorf("switch %s: %w", name, err)
			}
			for _, e := range ev {
				in.Events = append(in.Events, NodeEvent{Node: name, Event: e})
			}
			return true
		})
	}
	return in, nil
}

// Output is what qos-sim prints.
type Output struct {
	Scenario    string       `json:"scenario"`
	Seed        uint64       `json:"seed"`
	WallSeconds float64      `json:"wall_seconds"`
	SimPerWall  float64      `json:"sim_seconds_per_wall_second"`
	Results     *sim.Results `json:"results"`
	Watchdog    []NodeEvent  `json:"watchdog_events"`
	// IPCC is each IPCC switch's counters.
	IPCC map[string]policy.IPCCStats `json:"ipcc,omitempty"`
	// Tuning is each tuned queue's last thresholds.
	Tuning map[string][]policy.TunedQueue `json:"ecn_tuning,omitempty"`
}

// Run runs the scenario for its duration.
func (s *Scenario) Run() (*Output, error) {
	in, err := s.Start()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	in.Net.RunUntil(s.Duration)
	wall := time.Since(t0).Seconds()
	out := &Output{Scenario: s.Name, Seed: s.Params.Seed, WallSeconds: wall, Results: in.Net.Collect(s.Split), Watchdog: in.Events}
	for name, r := range in.IPCC {
		if out.IPCC == nil {
			out.IPCC = map[string]policy.IPCCStats{}
		}
		out.IPCC[name] = r.Policy.Stats()
	}
	for name, c := range in.Controllers {
		if t := c.Tuner(); t != nil {
			if out.Tuning == nil {
				out.Tuning = map[string][]policy.TunedQueue{}
			}
			out.Tuning[name] = t.Queues()
		}
	}
	if wall > 0 {
		out.SimPerWall = s.Duration.Seconds() / wall
	}
	return out, in.Err
}

// Live runs the scenario against the wall clock for fared's sim backend:
// every other switch runs its own controller inside the simulation, and
// node is left to the caller's (fared's) policies through the returned
// backend. Each backend call first advances the simulation to
// (now - start) x speed.
func (s *Scenario) Live(node string, speed float64, now func() time.Time) (*LiveBackend, error) {
	var found bool
	for _, sw := range s.Switches {
		found = found || sw.Name == node
	}
	if !found {
		return nil, fmt.Errorf("scenario %s has no switch %q", s.Name, node)
	}
	in, err := s.Start(node)
	if err != nil {
		return nil, err
	}
	start := now()
	be := in.Net.Node(node).Backend(start)
	be.Advance = func() {
		in.Net.RunUntil(time.Duration(float64(now().Sub(start)) * speed))
	}
	return &LiveBackend{NodeBackend: be, Instance: in}, nil
}

// LiveBackend is a simulated switch driven in wall-clock time.
type LiveBackend struct {
	*sim.NodeBackend
	Instance *Instance
}

// Interfaces lists the node's ports.
func (l *LiveBackend) Interfaces(context.Context) ([]string, error) {
	var out []string
	for _, p := range l.Node.Ports {
		out = append(out, p.Name)
	}
	return out, nil
}
