package qos

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/loop"
	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/policy"
)

// routes:
//
//	GET  /v1/qos/status | pfc | watchdog | ecn | flows | ipcc | ecn-tuning
//	POST /v1/qos/pfc/restore {"interface": "eth1"}
func (m *Module) routes(r *api.Router) {
	r.Handle("GET status", m.query(m.status))
	r.Handle("GET pfc", m.query(m.pfc))
	r.Handle("GET watchdog", m.query(m.watchdog))
	r.Handle("GET ecn", m.query(m.ecn))
	r.Handle("GET flows", m.query(m.flows))
	r.Handle("GET ipcc", m.query(m.ipccView))
	r.Handle("GET ecn-tuning", m.query(m.tuningView))
	r.Handle("POST pfc/restore", func(r *http.Request) (any, error) {
		var req wire.QoSRestoreRequest
		if err := api.Decode(r, &req); err != nil {
			return nil, err
		}
		if req.Interface == "" {
			return nil, api.Errorf("interface: required")
		}
		if m.config().Iface(req.Interface) == nil {
			return nil, api.NotFound(fmt.Errorf("interface %s is not a qos interface", req.Interface))
		}
		res, err := askRestore(r, m, req.Interface)
		if err != nil {
			return nil, err
		}
		if res.err != nil {
			return nil, api.Unprocessable(res.err)
		}
		return wire.QoSRestore{Interface: req.Interface, Restored: res.ok, Mode: res.mode}, nil
	})
}

func askRestore(r *http.Request, m *Module, iface string) (restoreRes, error) {
	return loop.Ask(r.Context(), m.loop, func(reply chan<- restoreRes) any { return restoreReq{iface, reply} })
}

// query runs f in the module's loop (f copies what it returns).
func (m *Module) query(f func() any) api.Handler {
	return func(r *http.Request) (any, error) {
		var v any
		if err := m.loop.Query(r.Context(), func() {
			if m.ctl == nil {
				return
			}
			v = f()
		}); err != nil {
			return nil, err
		}
		if v == nil {
			return nil, errors.New("qos module is starting")
		}
		return v, nil
	}
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (m *Module) counters() *model.Counters {
	if c := m.ctl.Counters(); c != nil {
		return c
	}
	return &model.Counters{Ifaces: map[string]*model.IfaceCounters{}}
}

func (m *Module) status() any {
	q := m.config()
	out := wire.QoSStatus{Backend: m.be.Name(), PollSeconds: q.Poll.Seconds(), Applied: m.ctl.Applied() != nil && m.lastErr == nil, Polls: m.ctl.Polls()}
	if m.lastErr != nil {
		out.LastError = m.lastErr.Error()
	}
	rep := m.ctl.Report()
	for _, i := range m.ctl.Configured().Ifaces {
		st := wire.QoSIfaceStatus{Name: i.Name}
		for _, f := range model.Features {
			s, ok := rep.Get(i.Name, f)
			if !ok {
				s = model.Support{Feature: f, Reason: "not reported (backend not applied yet)"}
			}
			st.Features = append(st.Features, wire.QoSFeature{Feature: string(f), Supported: s.OK, Reason: s.Reason})
		}
		out.Interfaces = append(out.Interfaces, st)
	}
	out.ECNOverlay = m.overlayView(q)
	return out
}

func (m *Module) modes() map[string]string {
	modes := map[string]string{}
	for _, v := range m.ctl.Watchdog().Ifaces() {
		modes[v.Iface] = string(v.Mode)
	}
	return modes
}

func (m *Module) pfc() any {
	c := m.counters()
	applied := m.ctl.Applied()
	modes := m.modes()
	out := wire.QoSPFC{}
	for _, i := range m.ctl.Configured().Ifaces {
		pi := wire.QoSPFCIface{Name: i.Name, Mode: modes[i.Name]}
		enabled := model.Prios(0)
		if applied != nil {
			if a := applied.Iface(i.Name); a != nil {
				enabled = a.PFC
			}
		}
		ic := c.Ifaces[i.Name]
		for p := 0; p < model.NumPrio; p++ {
			pp := wire.QoSPFCPrio{Priority: p, Configured: i.PFCConfigured.Has(p), Enabled: enabled.Has(p),
				XOFFBytes: i.Thresholds[p].XOFF, XONBytes: i.Thresholds[p].XON, Headroom: i.Thresholds[p].Headroom}
			if ic != nil {
				pc := ic.Prio[p]
				pp.PauseRx, pp.PauseTx, pp.XOFFOnsets = pc.PauseRx, pc.PauseTx, pc.XOFFOnsets
				if pc.PausedKnown {
					x := pc.Paused
					pp.XOFF = &x
				}
			}
			pi.Priorities = append(pi.Priorities, pp)
		}
		out.Interfaces = append(out.Interfaces, pi)
	}
	return out
}

func (m *Module) watchdog() any {
	q := m.config()
	wd := m.ctl.Watchdog()
	out := wire.QoSWatchdog{Enabled: q.Watchdog.Enabled, DetectionSeconds: q.Watchdog.Detection.Seconds(),
		RestorationSeconds: q.Watchdog.Restoration.Seconds(), PollSeconds: q.Poll.Seconds(), Action: string(q.Watchdog.Action),
		Limit: q.Watchdog.Limit, WindowSeconds: q.Watchdog.Window.Seconds()}
	for _, v := range wd.Ifaces() {
		out.Interfaces = append(out.Interfaces, wire.QoSWatchdogIface{Name: v.Iface, Mode: string(v.Mode), Detections: v.Detections,
			Recoveries: v.Recoveries, LimitHits: v.LimitHits, InWindow: v.InWindow, RecoversAt: ts(v.Until)})
	}
	for _, v := range wd.Queues() {
		out.Queues = append(out.Queues, wire.QoSWatchdogQueue{Interface: v.Iface, Priority: v.Prio, Mode: string(v.Mode),
			XOFFSince: ts(v.XOFFSince), Detections: v.Detections, LastDetect: ts(v.LastDetect)})
	}
	for _, e := range wd.Events() {
		we := wire.QoSWatchdogEvent{At: ts(e.At), Kind: string(e.Kind), Interface: e.Iface, Priority: e.Prio}
		if e.Kind == policy.EvDetected {
			we.LatencySeconds = e.At.Sub(e.Since).Seconds()
		}
		out.Events = append(out.Events, we)
	}
	return out
}

func (m *Module) ecn() any {
	c := m.counters()
	d := m.ctl.Configured()
	out := wire.QoSECN{}
	for _, p := range d.Profiles {
		wp := wire.QoSProfile{Name: p.Name, ECN: string(p.ECN), Mark: "enqueue"}
		if p.Dequeue {
			wp.Mark = "dequeue"
		}
		for col, w := range p.Colors {
			if w.Enable {
				wp.Colors = append(wp.Colors, wire.QoSWRED{Color: model.Color(col).String(), Min: w.Min, Max: w.Max, Probability: w.Prob})
			}
		}
		out.Profiles = append(out.Profiles, wp)
	}
	for _, i := range d.Ifaces {
		for p := 0; p < model.NumPrio; p++ {
			if i.Queues[p].Profile == "" {
				continue
			}
			qq := wire.QoSECNQueue{Interface: i.Name, Priority: p, Profile: i.Queues[p].Profile}
			if ic := c.Ifaces[i.Name]; ic != nil {
				qq.Marks, qq.Drops, qq.Depth = ic.Prio[p].Marks, ic.Prio[p].Drops, ic.Prio[p].Depth
			}
			out.Queues = append(out.Queues, qq)
		}
	}
	return out
}

func (m *Module) flows() any {
	c := m.counters()
	d := m.ctl.Configured()
	out := wire.QoSFlows{}
	if e := d.Elephant; e != nil {
		out.Rule = &wire.QoSElephantRule{RateBps: float64(e.Rate) * 8, Size: e.Size, Priority: int(e.Prio), Color: e.Color.String()}
	}
	for _, i := range d.Ifaces {
		fi := wire.QoSFlowsIface{Name: i.Name}
		if ic := c.Ifaces[i.Name]; ic != nil {
			fi.ElephantBytes, fi.MiceBytes = ic.ElephantBytes, ic.MiceBytes
			for _, cl := range ic.Classes {
				fi.Classes = append(fi.Classes, wire.QoSClass{Name: cl.Name, Priority: cl.Prio, Bytes: cl.Bytes, Packets: cl.Packets, Backlog: cl.Backlog, Drops: cl.Drops})
			}
			for _, f := range ic.Flows {
				fi.Flows = append(fi.Flows, wire.QoSFlow{Key: f.Key, Elephant: f.Elephant})
			}
			sort.Slice(fi.Flows, func(a, b int) bool { return fi.Flows[a].Key < fi.Flows[b].Key })
		}
		out.Interfaces = append(out.Interfaces, fi)
	}
	return out
}

func wred(w model.WRED) wire.QoSWRED {
	p := w.Prob
	return wire.QoSWRED{Color: "green", Min: w.Min, Max: w.Max, Probability: p}
}

func (m *Module) ipccView() any {
	r := m.ipcc
	out := wire.QoSIPCC{Enabled: r.cfg != nil, Runtime: r.note, Queues: []wire.QoSIPCCQueue{}, Flows: []wire.QoSIPCCFlow{}}
	if r.cfg == nil {
		out.Runtime = "off (no ipcc section)"
		return out
	}
	c := r.cfg.IPCCConfig
	out.Priorities = c.Prios.List()
	out.PollSeconds, out.IntervalSeconds = c.Poll.Seconds(), c.CNPInterval.Seconds()
	out.Low, out.High, out.Few, out.More = c.Low, c.High, c.Few, c.More
	// The caps in force (the policy derives the unset ones).
	eff := c.WithBounds()
	out.MaxFlows, out.MaxFlowsPerPort, out.MaxFlowsPerSource = eff.MaxFlows, eff.MaxFlowsPerPort, eff.MaxFlowsPerSource
	var (
		st     policy.IPCCStats
		flows  []policy.IPCCFlow
		queues []policy.IPCCQueue
	)
	switch {
	case r.rt != nil:
		s := r.rt.Snapshot()
		st, flows, queues = s.Stats, s.Flows, s.Queues
		out.Capture, out.Watched = s.Capture, s.Watched
		out.Captured, out.Overflow, out.NoRoute, out.Sent, out.SendErrors = s.Captured, s.Overflow, s.NoRoute, s.Sent, s.SendErrs
		out.BadPackets, out.LastError = s.Errors, s.LastErr
		out.RouteCacheEntries, out.RouteLookups, out.RouteCacheEvicted, out.RouteCacheExpired = s.Routes.Entries, s.Routes.Lookups, s.Routes.Evicted, s.Routes.Expired
	case r.sim != nil:
		st, flows, queues = r.sim.Policy.Stats(), r.sim.Policy.Flows(), r.sim.Policy.Queues()
		out.Sent = r.sim.Sent
		out.Watched = c.Ifaces
	default:
		return out
	}
	out.Observed, out.Learned, out.Ambiguous, out.Unmatched = st.Observed, st.Learned, st.Ambiguous, st.Unmatched
	out.CNPs, out.NoQP, out.RateLimit, out.Expired, out.Polls = st.CNPs, st.NoQP, st.RateLimit, st.Expired, st.Polls
	out.FlowCount, out.FlowsEvicted, out.RefusedTableFull, out.RefusedPortCap, out.RefusedSourceCap = st.Flows, st.Evicted, st.TableFull, st.RefusedPortCap, st.RefusedSourceCap
	out.PortMismatch, out.QPConflict, out.QPReplaced = st.PortMismatch, st.QPConflict, st.QPReplaced
	for _, q := range queues {
		out.Queues = append(out.Queues, wire.QoSIPCCQueue{Interface: q.Key.Iface, Priority: q.Key.Prio, Depth: q.Depth, Trend: q.Trend,
			Use: q.Use, Count: q.Count, Flows: q.Flows, CNPs: q.CNPs, Congested: q.Congested})
	}
	for _, f := range flows {
		out.Flows = append(out.Flows, wire.QoSIPCCFlow{Src: f.Src.String(), Dst: f.Dst.String(), DestQP: f.DestQP, SrcQP: f.SrcQP,
			Learned: f.Learned, In: f.In, Out: f.Out, Priority: f.Prio, Packets: f.Packets, Bytes: f.Bytes, CNPs: f.CNPs, LastSeen: ts(f.LastSeen)})
	}
	return out
}

func (m *Module) tuningView() any {
	q := m.config()
	out := wire.QoSTuning{Queues: []wire.QoSTunedQueue{}, Decisions: []wire.QoSTuningDecision{}}
	t := m.ctl.Tuner()
	if q.Tuning == nil || t == nil {
		return out
	}
	c := t.Config()
	out.Enabled, out.Algorithm, out.IntervalSeconds, out.UtilTarget = true, c.Algorithm, c.Interval.Seconds(), c.UtilTarget
	out.MinThreshold, out.MaxThreshold = c.MinThreshold, c.MaxThreshold
	for _, v := range t.Queues() {
		out.Queues = append(out.Queues, wire.QoSTunedQueue{Interface: v.Iface, Priority: v.Prio, Model: v.Model, Base: wred(v.Base),
			Applied: wred(v.Applied), Utilisation: v.Last.Util, MiceShare: v.Last.MiceShare, Marks: v.Last.Marks,
			MeanDepth: v.Last.MeanDepth, Reason: v.Reason})
	}
	for _, d := range t.Decisions() {
		out.Decisions = append(out.Decisions, wire.QoSTuningDecision{At: ts(d.At), Interface: d.Iface, Priority: d.Prio,
			Before: wred(d.Before), After: wred(d.After), Reason: d.Reason})
	}
	return out
}
