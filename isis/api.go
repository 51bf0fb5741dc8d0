package isis

import (
	"net/http"

	"github.com/fared/fared/api"
	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/igp"
)

// Routes serves the IS-IS API:
//
//	GET  /v1/isis/neighbors
//	GET  /v1/isis/interfaces
//	GET  /v1/isis/database?level=L&lsp=ID&detail=true
//	GET  /v1/isis/levels
//	GET  /v1/isis/leaks
//	GET  /v1/isis/flooding
//	POST /v1/isis/bandwidth {"interface": "eth0", "bandwidth": "40G"} (or "clear": true)
//	GET  /v1/isis/overload
//	POST /v1/isis/overload {"overload": "on"|"off"|"config"}
//	POST /v1/isis/clear-adjacency {"interface": "eth0"} (all without one)
func (in *Instance) Routes(r *api.Router) {
	r.Handle("GET neighbors", func(r *http.Request) (any, error) { return igp.Answer(in.Neighbors(r.Context())) })
	r.Handle("GET interfaces", func(r *http.Request) (any, error) { return igp.Answer(in.Interfaces(r.Context())) })
	r.Handle("GET levels", func(r *http.Request) (any, error) { return igp.Answer(in.Levels(r.Context())) })
	r.Handle("GET leaks", func(r *http.Request) (any, error) { return igp.Answer(in.Leaks(r.Context())) })
	r.Handle("GET flooding", func(r *http.Request) (any, error) { return igp.Answer(in.Flooding(r.Context())) })
	r.Handle("GET database", func(r *http.Request) (any, error) {
		q := DatabaseQuery{LSPID: api.Query(r, "lsp")}
		var err error
		if q.Level, err = levelQuery(r); err != nil {
			return nil, err
		}
		if q.Detail, err = api.BoolQuery(r, "detail"); err != nil {
			return nil, err
		}
		return igp.Answer(in.Database(r.Context(), q))
	})
	r.Handle("POST bandwidth", func(r *http.Request) (any, error) {
		return igp.BandwidthRoute(r, in.SetBandwidth)
	})
	r.Handle("GET overload", func(r *http.Request) (any, error) { return igp.Answer(in.Overload(r.Context())) })
	r.Handle("POST overload", func(r *http.Request) (any, error) {
		var req apiwire.ISISOverloadRequest
		if err := api.Decode(r, &req); err != nil {
			return nil, err
		}
		var on *bool
		switch req.Overload {
		case "on", "off":
			b := req.Overload == "on"
			on = &b
		case "config":
		default:
			return nil, api.Errorf("overload: %q is not on, off or config", req.Overload)
		}
		if _, err := in.SetOverload(r.Context(), on); err != nil {
			return nil, err
		}
		return igp.Answer(in.Overload(r.Context()))
	})
	r.Handle("POST clear-adjacency", func(r *http.Request) (any, error) {
		var req apiwire.ISISClearRequest
		if err := api.Decode(r, &req); err != nil {
			return nil, err
		}
		n, err := in.ClearAdjacencies(r.Context(), req.Interface)
		return igp.Answer(apiwire.Cleared{Cleared: n}, err)
	})
}

func levelQuery(r *http.Request) (int, error) {
	switch s := api.Query(r, "level"); s {
	case "":
		return 0, nil
	case "1", "2":
		return int(s[0] - '0'), nil
	default:
		return 0, api.Errorf("level: %q is not 1 or 2", s)
	}
}
