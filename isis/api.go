package isis

import (
	"errors"
	"net/http"

	"github.com/fared/fared/api"
	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
)

// Routes serves the IS-IS API:
//
//	GET  /v1/isis/neighbors
//	GET  /v1/isis/interfaces
//	GET  /v1/isis/database?level=L&lsp=ID&detail=true
//	GET  /v1/isis/levels
//	GET  /v1/isis/leaks
//	POST /v1/isis/bandwidth {"interface": "eth0", "bandwidth": "40G"}
func (m *module) Routes(r *api.Router) {
	in := m.in
	r.Handle("GET neighbors", func(r *http.Request) (any, error) { return answer(in.Neighbors(r.Context())) })
	r.Handle("GET interfaces", func(r *http.Request) (any, error) { return answer(in.Interfaces(r.Context())) })
	r.Handle("GET levels", func(r *http.Request) (any, error) { return answer(in.Levels(r.Context())) })
	r.Handle("GET leaks", func(r *http.Request) (any, error) { return answer(in.Leaks(r.Context())) })
	r.Handle("GET database", func(r *http.Request) (any, error) {
		q := DatabaseQuery{LSPID: api.Query(r, "lsp")}
		var err error
		if q.Level, err = levelQuery(r); err != nil {
			return nil, err
		}
		if q.Detail, err = api.BoolQuery(r, "detail"); err != nil {
			return nil, err
		}
		return answer(in.Database(r.Context(), q))
	})
	r.Handle("POST bandwidth", func(r *http.Request) (any, error) {
		var req apiwire.BandwidthRequest
		if err := api.Decode(r, &req); err != nil {
			return nil, err
		}
		if req.Interface == "" {
			return nil, api.Errorf("interface: required")
		}
		bw, err := config.ParseBandwidth(req.Bandwidth)
		if err != nil {
			return nil, api.Errorf("bandwidth: %q is not a positive bandwidth (e.g. 40G)", req.Bandwidth)
		}
		if err := in.SetBandwidth(r.Context(), req.Interface, bw); err != nil {
			return answer[any](nil, err)
		}
		return map[string]any{"interface": req.Interface, "bandwidth": bw.String()}, nil
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

// answer maps the instance's errors to HTTP: an unknown name is 404, a
// loop that is not answering (stopping) 503.
func answer[T any](v T, err error) (any, error) {
	var nf ErrNotFound
	if errors.As(err, &nf) {
		return nil, api.NotFound(err)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}
