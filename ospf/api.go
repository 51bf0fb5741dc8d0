package ospf

import (
	"net/http"

	"github.com/fared/fared/api"
	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/internal/igp"
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
	r.Handle("GET neighbors", func(r *http.Request) (any, error) { return igp.Answer(in.Neighbors(r.Context())) })
	r.Handle("GET interfaces", func(r *http.Request) (any, error) { return igp.Answer(in.Interfaces(r.Context())) })
	r.Handle("GET summaries", func(r *http.Request) (any, error) { return igp.Answer(in.Summaries(r.Context())) })
	r.Handle("GET database", func(r *http.Request) (any, error) {
		q := DatabaseQuery{Area: api.Query(r, "area"), Type: api.Query(r, "type")}
		var err error
		if q.Detail, err = api.BoolQuery(r, "detail"); err != nil {
			return nil, err
		}
		return igp.Answer(in.Database(r.Context(), q))
	})
	r.Handle("GET lsdb", func(r *http.Request) (any, error) {
		area, err := config.CanonArea(api.Query(r, "area"))
		if err != nil {
			return nil, api.BadRequest(err)
		}
		out := []apiwire.Topology{}
		for _, g := range in.LSDB() {
			if area == "" || g.Area == area {
				out = append(out, daemon.WireTopology(g))
			}
		}
		return out, nil
	})
	r.Handle("POST bandwidth", func(r *http.Request) (any, error) { return igp.BandwidthRoute(r, in.SetBandwidth) })
	r.Handle("POST clear-neighbor", func(r *http.Request) (any, error) {
		var req apiwire.OSPFClearRequest
		if err := api.Decode(r, &req); err != nil {
			return nil, err
		}
		n, err := in.ClearNeighbors(r.Context(), req.RouterID)
		return igp.Answer(apiwire.Cleared{Cleared: n}, err)
	})
}
