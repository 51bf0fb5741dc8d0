package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/fared/fared/config"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/ospf"
)

// RegisterOSPF adds the OSPF endpoints to mux:
//
//	GET  /v1/ospf/neighbors
//	GET  /v1/ospf/interfaces
//	GET  /v1/ospf/database?area=A&type=T&detail=true
//	GET  /v1/ospf/lsdb?area=A
//	GET  /v1/ospf/summaries
//	POST /v1/ospf/bandwidth {"interface": "eth0", "bandwidth": "40G"}
func RegisterOSPF(mux *http.ServeMux, inst *ospf.Instance) {
	for p, h := range OSPFHandlers(inst) {
		mux.HandleFunc(p, h)
	}
}

// OSPFHandlers returns the OSPF endpoints keyed by mux pattern, for
// Backend.Extra.
func OSPFHandlers(inst *ospf.Instance) map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"GET " + Version + "/ospf/neighbors": func(w http.ResponseWriter, r *http.Request) {
			v, err := inst.Neighbors(r.Context())
			ospfReply(w, v, err)
		},
		"GET " + Version + "/ospf/interfaces": func(w http.ResponseWriter, r *http.Request) {
			v, err := inst.Interfaces(r.Context())
			ospfReply(w, v, err)
		},
		"GET " + Version + "/ospf/database": func(w http.ResponseWriter, r *http.Request) {
			q := ospf.DatabaseQuery{Area: r.URL.Query().Get("area"), Type: r.URL.Query().Get("type")}
			if d := r.URL.Query().Get("detail"); d != "" {
				var err error
				if q.Detail, err = strconv.ParseBool(d); err != nil {
					Error(w, http.StatusBadRequest, fmt.Errorf("detail: %q is not a boolean", d))
					return
				}
			}
			v, err := inst.Database(r.Context(), q)
			ospfReply(w, v, err)
		},
		"GET " + Version + "/ospf/summaries": func(w http.ResponseWriter, r *http.Request) {
			v, err := inst.Summaries(r.Context())
			ospfReply(w, v, err)
		},
		"GET " + Version + "/ospf/lsdb": func(w http.ResponseWriter, r *http.Request) {
			area := r.URL.Query().Get("area")
			if area != "" {
				a, err := config.ParseArea(area)
				if err != nil {
					Error(w, http.StatusBadRequest, err)
					return
				}
				area = config.AreaString(a)
			}
			out := []lsdb.View{}
			for _, g := range inst.LSDB() {
				if area == "" || g.Area == area {
					out = append(out, g.View())
				}
			}
			JSON(w, out)
		},
		"POST " + Version + "/ospf/bandwidth": func(w http.ResponseWriter, r *http.Request) {
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
			if err := inst.SetBandwidth(r.Context(), req.Interface, bw); err != nil {
				ospfReply(w, nil, err)
				return
			}
			JSON(w, map[string]any{"interface": req.Interface, "bandwidth": bw.String()})
		},
	}
}

func ospfReply(w http.ResponseWriter, v any, err error) {
	var nf ospf.ErrNotFound
	var bq ospf.ErrBadQuery
	switch {
	case errors.As(err, &nf):
		Error(w, http.StatusNotFound, err)
	case errors.As(err, &bq):
		Error(w, http.StatusBadRequest, err)
	case err != nil:
		Error(w, http.StatusServiceUnavailable, err)
	default:
		JSON(w, v)
	}
}
