package ospf

import (
	"errors"
	"net/http"

	"github.com/fared/fared/api"
	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
	"github.com/fared/fared/lsdb"
)

// Routes serves the OSPF API:
//
//	GET  /v1/ospf/neighbors
//	GET  /v1/ospf/interfaces
//	GET  /v1/ospf/database?area=A&type=T&detail=true
//	GET  /v1/ospf/lsdb?area=A
//	GET  /v1/ospf/summaries
//	POST /v1/ospf/bandwidth {"interface": "eth0", "bandwidth": "40G"} (or "clear": true)
//	POST /v1/ospf/clear-neighbor {"router_id": "10.0.0.1"} (all without one)
func (in *Instance) Routes(r *api.Router) {
	r.Handle("GET neighbors", func(r *http.Request) (any, error) { return answer(in.Neighbors(r.Context())) })
	r.Handle("GET interfaces", func(r *http.Request) (any, error) { return answer(in.Interfaces(r.Context())) })
	r.Handle("GET summaries", func(r *http.Request) (any, error) { return answer(in.Summaries(r.Context())) })
	r.Handle("GET database", func(r *http.Request) (any, error) {
		q := DatabaseQuery{Area: api.Query(r, "area"), Type: api.Query(r, "type")}
		var err error
		if q.Detail, err = api.BoolQuery(r, "detail"); err != nil {
			return nil, err
		}
		return answer(in.Database(r.Context(), q))
	})
	r.Handle("GET lsdb", func(r *http.Request) (any, error) {
		area := api.Query(r, "area")
		if area != "" {
			a, err := config.ParseArea(area)
			if err != nil {
				return nil, api.BadRequest(err)
			}
			area = config.AreaString(a)
		}
		out := []lsdb.View{}
		for _, g := range in.LSDB() {
			if area == "" || g.Area == area {
				out = append(out, g.View())
			}
		}
		return out, nil
	})
	r.Handle("POST bandwidth", func(r *http.Request) (any, error) {
		var req apiwire.BandwidthRequest
		if err := api.Decode(r, &req); err != nil {
			return nil, err
		}
		if req.Interface == "" {
			return nil, api.Errorf("interface: required")
		}
		var bw config.Bandwidth
		if !req.Clear {
			var err error
			if bw, err = config.ParseBandwidth(req.Bandwidth); err != nil {
				return nil, api.Errorf("bandwidth: %q is not a positive bandwidth (e.g. 40G); to drop an override use clear", req.Bandwidth)
			}
		}
		if err := in.SetBandwidth(r.Context(), req.Interface, bw); err != nil {
			return answer[any](nil, err)
		}
		out := apiwire.BandwidthOverride{Interface: req.Interface, Cleared: req.Clear}
		if !req.Clear {
			out.Bandwidth = bw.String()
		}
		return out, nil
	})
	r.Handle("POST clear-neighbor", func(r *http.Request) (any, error) {
		var req apiwire.OSPFClearRequest
		if err := api.Decode(r, &req); err != nil {
			return nil, err
		}
		n, err := in.ClearNeighbors(r.Context(), req.RouterID)
		return answer(apiwire.Cleared{Cleared: n}, err)
	})
}

// answer maps the instance's errors to HTTP: a bad query is 400, an
// unknown name 404, a loop that is not answering (stopping) 503.
func answer[T any](v T, err error) (any, error) {
	var nf ErrNotFound
	var bq ErrBadQuery
	switch {
	case errors.As(err, &nf):
		return nil, api.NotFound(err)
	case errors.As(err, &bq):
		return nil, api.BadRequest(err)
	case err != nil:
		return nil, err
	}
	return v, nil
}
