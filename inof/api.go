package inof

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/inof/fabric"
	"github.com/fared/fared/inof/zones"
	"github.com/fared/fared/internal/loop"
)

func badRequest(err error) error { return api.BadRequest(err) }

// notFoundOr: removing what does not exist is a 404; the default zone's
// deletion is refused (422).
func notFoundOr(err error) error {
	if strings.Contains(err.Error(), "cannot be deleted") {
		return api.Unprocessable(err)
	}
	return api.NotFound(err)
}

func askReconf(ctx context.Context, r *switchRT, c *Config) ([]string, error) {
	return loop.Ask(ctx, r.lp, func(reply chan<- []string) any { return reconfEv{cfg: c, reply: reply} })
}

// query runs f in the module's loop. On an error (a timeout) the loop may
// still run f later: the caller must not read what f fills.
func (m *module) query(r *http.Request, f func()) error {
	lp, _ := m.loop()
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	return lp.Query(ctx, f)
}

// wireList converts items for an answer: never nil, so that an empty
// list is [] in JSON.
func wireList[E, W any](items []E, conv func(E) W) []W {
	out := make([]W, 0, len(items))
	for _, e := range items {
		out = append(out, conv(e))
	}
	return out
}

// answer is a GET handler's answer: what build makes in the module's
// loop, or the query's error (build's result then is not read).
func answer[T any](m *module, r *http.Request, build func() T) (any, error) {
	var out T
	if err := m.query(r, func() { out = build() }); err != nil {
		return nil, err
	}
	return out, nil
}

// Routes implements daemon.Module: below /v1/inof/.
func (m *module) Routes(rt *api.Router) {
	rt.Handle("GET hosts", m.getHosts)
	rt.Handle("GET zones", m.getZones)
	rt.Handle("POST zones/add", m.zoneEdit(true))
	rt.Handle("POST zones/del", m.zoneEdit(false))
	rt.Handle("GET peers", m.getPeers)
	rt.Handle("GET events", m.getEvents)
	rt.Handle("GET status", func(r *http.Request) (any, error) { return answer(m, r, m.status) })
	rt.Handle("POST register", m.register(true))
	rt.Handle("POST deregister", m.register(false))
	m.identityRoutes(rt)
}

// getHosts: a host's peers (the hosts its switches told it of), or a
// switch's hosts.
func (m *module) getHosts(r *http.Request) (any, error) {
	return answer(m, r, func() []wire.INOFHost {
		out := []wire.INOFHost{}
		if m.host != nil {
			for _, p := range m.host.ag.Peers() {
				h := wire.INOFHost{ID: p.Key.ID, Switch: p.Key.Switch.String(), SwitchName: p.SwitchName, Port: p.Key.Port,
					Role: p.Host.Role.String(), NQN: p.Host.NQN, Addresses: addrStrings(p.Host.Addrs),
					Zones: append([]string{}, p.Zones...), Via: p.Via, Since: p.Since.UTC().Format(time.RFC3339Nano)}
				if p.Source != 0 {
					h.Source = p.Source.String()
				}
				if len(p.Host.MAC) > 0 {
					h.MAC = p.Host.MAC.String()
				}
				out = append(out, h)
			}
			return out
		}
		return wireList(m.sw.sw.Hosts(), hostWire)
	})
}

func (m *module) getZones(r *http.Request) (any, error) {
	if m.host != nil {
		return nil, api.NotFound(errors.New("a host has no zone configuration (its switches have)"))
	}
	return answer(m, r, func() []wire.INOFZone {
		cfg, from, stamp, ok := m.sw.sw.Zones()
		if !ok {
			return []wire.INOFZone{}
		}
		return zonesView(cfg, from, stamp)
	})
}

// zoneEdit adds hosts to a zone (add) or removes them, on a reflector,
// and answers with the zones after the change.
func (m *module) zoneEdit(add bool) api.Handler {
	return func(r *http.Request) (any, error) {
		if m.sw == nil {
			return nil, api.Unprocessable(errNotReflector)
		}
		var q wire.INOFZoneRequest
		if err := api.Decode(r, &q); err != nil {
			return nil, err
		}
		if q.Name == "" {
			return nil, api.Errorf("name: required")
		}
		if add && len(q.Hosts) == 0 && q.Name == "default" {
			return nil, api.Errorf("the default zone always exists: name hosts to add")
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		err, aerr := loop.Ask(ctx, m.sw.lp, func(reply chan<- error) any {
			return zoneEv{add: add, req: zoneReq{q.Name, q.Hosts}, reply: reply}
		})
		if aerr != nil {
			return nil, aerr
		}
		if err != nil {
			if errors.Is(err, errNotReflector) {
				return nil, api.Unprocessable(err)
			}
			return nil, err
		}
		return answer(m, r, func() []wire.INOFZone {
			cfg, from, stamp, _ := m.sw.sw.Zones()
			return zonesView(cfg, from, stamp)
		})
	}
}

// getPeers: a host's links to its switches, or a switch's BGP peers.
func (m *module) getPeers(r *http.Request) (any, error) {
	if m.host != nil {
		return answer(m, r, func() []wire.INOFPeer {
			out := []wire.INOFPeer{}
			for _, l := range m.host.ag.Links() {
				p := wire.INOFPeer{Interface: l.Name, State: l.State, Port: l.Port, SwitchName: l.SwitchName}
				if l.Switch.IsValid() {
					p.Address = l.Switch.String()
					p.UptimeSeconds = time.Since(l.Since).Seconds()
				}
				out = append(out, p)
			}
			return out
		})
	}
	out := []wire.INOFPeer{}
	sp := m.sw.spAPI.Load()
	if sp == nil {
		return out, nil
	}
	ps, err := sp.Peers(r.Context())
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		out = append(out, wire.INOFPeer{Address: p.Address.String(), State: p.State, BFD: p.BFD,
			UptimeSeconds: p.Uptime.Seconds(), Received: p.Received, Reason: p.Reason, Flaps: p.Flaps})
	}
	return out, nil
}

func (m *module) getEvents(r *http.Request) (any, error) {
	return answer(m, r, func() []wire.INOFEvent {
		if m.host != nil {
			return wireList(m.host.ag.Events(), eventWire)
		}
		return wireList(m.sw.sw.Events(), switchEventWire)
	})
}

// register registers a host with its switches (on) or withdraws it.
func (m *module) register(on bool) api.Handler {
	return func(r *http.Request) (any, error) {
		if m.host == nil {
			return nil, api.Unprocessable(errors.New("only a host registers"))
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if _, err := loop.Ask(ctx, m.host.lp, func(reply chan<- struct{}) any { return registerEv{on: on, reply: reply} }); err != nil {
			return nil, err
		}
		return map[string]bool{"registered": on}, nil
	}
}

// identityRoutes: bindings, conflicts and their release (switches).
func (m *module) identityRoutes(rt *api.Router) {
	onSwitch := func() error {
		if m.sw == nil {
			return api.NotFound(errors.New("a host holds no bindings (its switches do)"))
		}
		return nil
	}
	rt.Handle("GET bindings", func(r *http.Request) (any, error) {
		if err := onSwitch(); err != nil {
			return nil, err
		}
		return answer(m, r, func() []wire.INOFBinding { return wireList(m.sw.sw.Bindings(), bindingWire) })
	})
	rt.Handle("GET conflicts", func(r *http.Request) (any, error) {
		if err := onSwitch(); err != nil {
			return nil, err
		}
		return answer(m, r, func() []wire.INOFConflict { return wireList(m.sw.sw.Conflicts(), conflictWire) })
	})
	release := func(r *http.Request, id string) (any, error) {
		if err := onSwitch(); err != nil {
			return nil, err
		}
		if err := zones.CheckHost(id); err != nil {
			return nil, api.BadRequest(fmt.Errorf("id: %w", err))
		}
		var ports []string
		var rerr error
		if err := m.query(r, func() { ports, rerr = m.sw.sw.Release(id) }); err != nil {
			return nil, err
		}
		var nb *fabric.ErrNoBinding
		var st *fabric.ErrStatic
		switch {
		case errors.As(rerr, &nb):
			return nil, api.NotFound(rerr)
		case errors.As(rerr, &st):
			return nil, api.Unprocessable(rerr)
		case rerr != nil:
			return nil, rerr
		}
		m.core.Log.Info("inof: binding released by the operator", "module", "inof", "host", id, "ports", ports)
		return wire.INOFRelease{ID: id, Ports: ports}, nil
	}
	rt.Handle("POST release", func(r *http.Request) (any, error) {
		var q wire.INOFRelease
		if err := api.Decode(r, &q); err != nil {
			return nil, err
		}
		if q.ID == "" {
			return nil, api.Errorf("id: required")
		}
		return release(r, q.ID)
	})
	rt.Handle("DELETE bindings/{id}", func(r *http.Request) (any, error) { return release(r, r.PathValue("id")) })
}

func conflictWire(c fabric.Conflict) wire.INOFConflict {
	return wire.INOFConflict{ID: c.ID, Port: c.Port, MAC: c.MAC, Reason: c.Reason, Against: c.Against,
		First: c.First.UTC().Format(time.RFC3339Nano), Last: c.Last.UTC().Format(time.RFC3339Nano), Count: c.Count}
}

func bindingWire(b fabric.BindingView) wire.INOFBinding {
	w := wire.INOFBinding{ID: b.ID, Port: b.Port, State: "absent", Pinned: b.Pinned, Static: b.Static,
		Since: b.Since.UTC().Format(time.RFC3339Nano)}
	if b.Live {
		w.State = "registered"
	}
	if len(b.MAC) > 0 {
		w.MAC = b.MAC.String()
	}
	if !b.Left.IsZero() && !b.Live {
		w.Left = b.Left.UTC().Format(time.RFC3339Nano)
	}
	if b.Expires > 0 {
		w.ExpiresIn = b.Expires.Seconds()
	}
	return w
}

// status is built inside the loop.
func (m *module) status() wire.INOFStatus {
	st := wire.INOFStatus{Role: m.role}
	if m.host != nil {
		st.ID = m.id
		st.Peers = len(m.host.ag.Peers())
		st.Counters = m.host.ag.Counters()
		if m.host.hook != nil {
			st.Counters["hook_coalesced"], st.Counters["hook_runs"] = m.host.hook.counts()
		}
		return st
	}
	s := m.sw.sw.Status()
	st.RouterID = m.rid.String()
	st.LocalHosts, st.Records, st.Zones, st.ZonesReady, st.Pending = s.Locals, s.Records, s.Zones, s.ZonesReady, s.Pending
	st.Unresponsive, st.Bindings = s.Unresponsive, s.Bindings
	for _, p := range slices.Sorted(maps.Keys(s.Ports)) {
		ps := s.Ports[p]
		st.Ports = append(st.Ports, wire.INOFPort{Port: p, Refused: ps.Refused, Conflicts: ps.Conflicts, ForeignMAC: ps.Foreign, AuthFailures: ps.AuthFailures})
	}
	if s.ZoneFrom.IsValid() {
		st.ZonesFrom = s.ZoneFrom.String()
	}
	st.Counters = m.sw.sw.Counters()
	return st
}

// Status implements daemon.StatusReporter.
func (m *module) Status() any {
	lp, _ := m.loop()
	var st wire.INOFStatus
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := lp.Query(ctx, func() { st = m.status() }); err != nil {
		return map[string]string{"error": err.Error()}
	}
	return st
}

func hostWire(v fabric.HostView) wire.INOFHost {
	r := v.Record
	h := wire.INOFHost{ID: r.Host.ID, Switch: r.Switch.String(), SwitchName: r.SwitchName, Port: r.Port, Role: r.Host.Role.String(),
		NQN: r.Host.NQN, Addresses: addrStrings(r.Host.Addrs), Zones: append([]string{}, v.Zones...), Source: v.Source.String()}
	if len(r.Host.MAC) > 0 {
		h.MAC = r.Host.MAC.String()
	}
	if !r.Since.IsZero() {
		h.Since = r.Since.UTC().Format(time.RFC3339Nano)
	}
	if v.Expires > 0 {
		h.ExpiresIn = v.Expires.Seconds()
	}
	h.Pinned, h.Unresponsive = r.Pinned, v.Unresponsive
	return h
}

func switchEventWire(e fabric.Event) wire.INOFEvent {
	w := wire.INOFEvent{Time: e.Time.UTC().Format(time.RFC3339Nano), Type: e.Type.String(), Host: e.Host,
		Zones: append([]string{}, e.Zones...), To: e.To, ToPort: e.ToPort, Addresses: []string{}}
	if e.Source != 0 {
		w.Source = e.Source.String()
	}
	if len(w.Zones) > 0 {
		w.Zone = w.Zones[0]
	}
	if p := e.Peer; p != nil {
		w.Role, w.NQN, w.Addresses = p.Host.Role.String(), p.Host.NQN, addrStrings(p.Host.Addrs)
		w.Switch, w.SwitchName, w.Port = p.Switch.String(), p.SwitchName, p.Port
		if len(p.Host.MAC) > 0 {
			w.MAC = p.Host.MAC.String()
		}
	}
	return w
}
