package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/rib"
)

// coreRoutes registers the API of the core: status and reload, and the
// protocol-neutral views of the rib (routes, FARE, SPF log, topologies)
// and of the kernel (fib, BFD sessions).
func (d *Daemon) coreRoutes() {
	s := d.srv
	s.Handle("GET /status", d.getStatus)
	s.Handle("POST /reload", d.postReload)
	s.Handle("GET /running-config", d.getRunningConfig)
	s.Handle("POST /log/level", d.postLogLevel)
	s.Handle("GET /route", d.getRoute)
	s.Handle("GET /fare", d.getFARE)
	s.Handle("GET /spf/log", d.getSPFLog)
	s.Handle("GET /lsdb", d.getLSDB)
	s.Handle("GET /fib", d.getFIB)
	s.Handle("GET /fib/capabilities", d.getFIBCapabilities)
	// BFD is a core service: its sessions belong to the modules that ask
	// for them, the speaker to the daemon.
	s.Handle("GET /bfd/sessions", d.getBFDSessions)
}

// getStatus serves GET /status.
func (d *Daemon) getStatus(r *http.Request) (any, error) {
	st := d.Status()
	if ms := d.moduleStatus(); len(ms) > 0 {
		st.ModuleStatus = ms
	}
	return st, nil
}

// postReload serves POST /reload.
func (d *Daemon) postReload(r *http.Request) (any, error) {
	res, err := d.Reload(r.Context())
	var re *ReloadError
	switch {
	case errors.As(err, &re):
		return nil, api.Unprocessable(err)
	case err != nil && !res.Reloaded:
		return nil, api.Unprocessable(err)
	case err != nil:
		return nil, err // applied with errors: 503 with the reason
	}
	return res, nil
}

// getRunningConfig serves GET /running-config.
func (d *Daemon) getRunningConfig(r *http.Request) (any, error) {
	cfg := d.Config()
	out, err := config.Render(cfg)
	if err != nil {
		return nil, err
	}
	return wire.RunningConfig{File: cfg.File, YAML: string(out)}, nil
}

// postLogLevel serves POST /log/level.
func (d *Daemon) postLogLevel(r *http.Request) (any, error) {
	var req wire.LogLevel
	if err := api.Decode(r, &req); err != nil {
		return nil, err
	}
	l, ok := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[strings.ToLower(req.Level)]
	if !ok {
		return nil, api.Errorf("level: %q is not debug, info, warn or error", req.Level)
	}
	if d.opt.Level == nil {
		return nil, api.Unprocessable(errors.New("this daemon's logger has a fixed level"))
	}
	old := d.opt.Level.Level()
	d.opt.Level.Set(l)
	d.log.Info("log level changed by the API", "from", old, "to", l)
	return wire.LogLevel{Level: strings.ToLower(l.String())}, nil
}

// getRoute serves GET /route.
func (d *Daemon) getRoute(r *http.Request) (any, error) {
	snap := d.core.RIB.Snapshot()
	if q := api.Query(r, "prefix"); q != "" {
		rt, err := lookup(snap, q)
		if err != nil {
			return nil, err
		}
		return []wire.Route{wireRoute(rt)}, nil
	}
	return each(snap.Routes, wireRoute), nil
}

// getFARE serves GET /fare.
func (d *Daemon) getFARE(r *http.Request) (any, error) {
	q := api.Query(r, "prefix")
	if q == "" {
		return nil, api.Errorf("prefix: required")
	}
	snap := d.core.RIB.Snapshot()
	rt, err := lookup(snap, q)
	if err != nil {
		return nil, err
	}
	return wire.FareView{Route: wireRoute(rt), WeightMax: snap.WeightMax}, nil
}

// getSPFLog serves GET /spf/log.
func (d *Daemon) getSPFLog(r *http.Request) (any, error) {
	snap := d.core.RIB.Snapshot()
	delays := d.core.RIB.Delays() // now, not as of the last computation
	v := wireSPFView(snap, delays)
	// "delay" predates per-protocol back-off: the first protocol's
	// (of the module table).
	for _, s := range routingSpecs(d.specs) {
		if dv, ok := v.Delays[s.Name]; ok {
			v.Delay = dv
			break
		}
	}
	return v, nil
}

// getLSDB serves GET /lsdb.
func (d *Daemon) getLSDB(r *http.Request) (any, error) {
	level, err := levelParam(r)
	if err != nil {
		return nil, err
	}
	area, err := config.CanonArea(api.Query(r, "area"))
	if err != nil {
		return nil, api.BadRequest(err)
	}
	proto := api.Query(r, "protocol")
	out := []wire.Topology{}
	for _, g := range d.core.RIB.Snapshot().Graphs {
		if (level == 0 || g.Level == level) && (area == "" || g.Area == area) && (proto == "" || g.Protocol == proto) {
			out = append(out, WireTopology(g))
		}
	}
	return out, nil
}

// getFIB serves GET /fib.
func (d *Daemon) getFIB(r *http.Request) (any, error) {
	caps, err := fib.Probe(d.opt.NetNS)
	if err != nil {
		return nil, err
	}
	routes, nhs, err := fib.Dump(d.opt.NetNS, d.core.Protocol)
	if err != nil {
		return nil, err
	}
	if routes == nil {
		routes = []fib.KernelRoute{}
	}
	if nhs == nil {
		nhs = []fib.KernelNexthop{}
	}
	var conflicts []fib.Conflict
	if d.core.FIB != nil {
		conflicts = d.core.FIB.Conflicts()
	}
	return wireFIBView(caps, routes, nhs, conflicts), nil
}

// getFIBCapabilities serves GET /fib/capabilities.
func (d *Daemon) getFIBCapabilities(r *http.Request) (any, error) {
	caps, err := fib.Probe(d.opt.NetNS)
	return wireCapabilities(caps), err
}

// getBFDSessions serves GET /bfd/sessions.
func (d *Daemon) getBFDSessions(r *http.Request) (any, error) {
	return d.core.BFD.View(r.Context())
}

// lookup answers 400 for a malformed prefix and 404 for an unknown one.
func lookup(snap *rib.Snapshot, q string) (*rib.Route, error) {
	if _, err := netip.ParsePrefix(q); err != nil {
		if _, err2 := netip.ParseAddr(q); err2 != nil {
			return nil, api.Errorf("prefix: %q is neither a prefix nor an address", q)
		}
	}
	rt, ok := snap.Lookup(q)
	if !ok {
		return nil, api.NotFound(fmt.Errorf("no route for %s", q))
	}
	return rt, nil
}

func levelParam(r *http.Request) (int, error) {
	s := api.Query(r, "level")
	if s == "" {
		return 0, nil
	}
	l, err := strconv.Atoi(s)
	if err != nil || l < 1 || l > 2 {
		return 0, api.Errorf("level: %q is not 1 or 2", s)
	}
	return l, nil
}
