package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/fared/fared/config"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/rib"
)

// FIBView is `farectl fib`: what the kernel holds for our protocol, read
// back over netlink (not from fared's memory).
type FIBView struct {
	Capabilities fib.Capabilities    `json:"capabilities"`
	Routes       []fib.KernelRoute   `json:"routes"`
	Nexthops     []fib.KernelNexthop `json:"nexthops"`
}

func (s *Server) routes(w http.ResponseWriter, r *http.Request) {
	if s.b.RIB == nil {
		Error(w, http.StatusNotFound, errors.New("no routing table (no protocol configured)"))
		return
	}
	snap := s.b.RIB.Snapshot()
	if q := r.URL.Query().Get("prefix"); q != "" {
		rt, ok := lookup(w, snap, q)
		if !ok {
			return
		}
		JSON(w, []rib.Route{*rt})
		return
	}
	JSON(w, snap.Routes)
}

// lookup answers 400 for a malformed prefix and 404 for an unknown one.
func lookup(w http.ResponseWriter, snap *rib.Snapshot, q string) (*rib.Route, bool) {
	if _, err := netip.ParsePrefix(q); err != nil {
		if _, err2 := netip.ParseAddr(q); err2 != nil {
			Error(w, http.StatusBadRequest, fmt.Errorf("prefix: %q is neither a prefix nor an address", q))
			return nil, false
		}
	}
	rt, ok := snap.Lookup(q)
	if !ok {
		Error(w, http.StatusNotFound, fmt.Errorf("no route for %s", q))
		return nil, false
	}
	return rt, true
}

// FareView is `farectl fare PREFIX`.
type FareView struct {
	rib.Route
	WeightMax uint32 `json:"weight_max"`
}

func (s *Server) fare(w http.ResponseWriter, r *http.Request) {
	if s.b.RIB == nil {
		Error(w, http.StatusNotFound, errors.New("no routing table (no protocol configured)"))
		return
	}
	q := r.URL.Query().Get("prefix")
	if q == "" {
		Error(w, http.StatusBadRequest, errors.New("prefix: required"))
		return
	}
	snap := s.b.RIB.Snapshot()
	rt, ok := lookup(w, snap, q)
	if !ok {
		return
	}
	JSON(w, FareView{Route: *rt, WeightMax: snap.WeightMax})
}

// SPFView is `farectl spf log`.
type SPFView struct {
	Delay     any    `json:"delay"`
	Log       any    `json:"log"`
	LastSync  any    `json:"fib_last_sync"`
	FIBError  string `json:"fib_error,omitempty"`
	Anomalies any    `json:"fare_anomalies"`
}

func (s *Server) spfLog(w http.ResponseWriter, r *http.Request) {
	if s.b.RIB == nil {
		Error(w, http.StatusNotFound, errors.New("no routing table (no protocol configured)"))
		return
	}
	snap := s.b.RIB.Snapshot()
	JSON(w, SPFView{Delay: snap.Delay, Log: snap.Log, LastSync: snap.FIB, FIBError: snap.FIBError, Anomalies: snap.Anomalies})
}

func (s *Server) fibDump(w http.ResponseWriter, r *http.Request) {
	caps, err := fib.Probe(0)
	if err != nil {
		Error(w, http.StatusServiceUnavailable, err)
		return
	}
	routes, nhs, err := fib.Dump(0, s.b.Protocol)
	if err != nil {
		Error(w, http.StatusServiceUnavailable, err)
		return
	}
	if routes == nil {
		routes = []fib.KernelRoute{}
	}
	if nhs == nil {
		nhs = []fib.KernelNexthop{}
	}
	JSON(w, FIBView{Capabilities: caps, Routes: routes, Nexthops: nhs})
}

func (s *Server) fibCaps(w http.ResponseWriter, r *http.Request) {
	caps, err := fib.Probe(0)
	if err != nil {
		Error(w, http.StatusServiceUnavailable, err)
		return
	}
	JSON(w, caps)
}

// BandwidthRequest is the body of POST /v1/isis/bandwidth.
type BandwidthRequest struct {
	Interface string `json:"interface"`
	Bandwidth string `json:"bandwidth"` // bits/s with K/M/G/T
}

func (s *Server) setBandwidth(w http.ResponseWriter, r *http.Request) {
	if !s.needISIS(w) {
		return
	}
	var req BandwidthRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		Error(w, http.StatusBadRequest, fmt.Errorf("body: %v", err))
		return
	}
	if req.Interface == "" {
		Error(w, http.StatusBadRequest, errors.New("interface: required"))
		return
	}
	bw, err := config.ParseBandwidth(req.Bandwidth)
	if err != nil || bw <= 0 {
		Error(w, http.StatusBadRequest, fmt.Errorf("bandwidth: %q is not a positive bandwidth (e.g. 40G)", req.Bandwidth))
		return
	}
	if err := s.b.ISIS.SetBandwidth(r.Context(), req.Interface, bw); err != nil {
		reply(w, nil, err)
		return
	}
	JSON(w, map[string]any{"interface": req.Interface, "bandwidth": bw.String()})
}

func (s *Server) reload(w http.ResponseWriter, r *http.Request) {
	if s.b.Reload == nil {
		Error(w, http.StatusNotFound, errors.New("reload not supported"))
		return
	}
	warnings, err := s.b.Reload()
	if err != nil {
		Error(w, http.StatusUnprocessableEntity, err)
		return
	}
	if warnings == nil {
		warnings = []string{}
	}
	JSON(w, map[string]any{"reloaded": true, "warnings": warnings})
}
