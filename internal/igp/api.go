package igp

import (
	"context"
	"errors"
	"net/http"

	"github.com/fared/fared/api"
	apiwire "github.com/fared/fared/api/wire"
	"github.com/fared/fared/config"
)

// ErrNotFound marks a query for something that does not exist (API: 404).
type ErrNotFound struct{ What string }

func (e ErrNotFound) Error() string { return e.What + " not found" }

// ErrBadQuery marks a malformed query (API: 400).
type ErrBadQuery struct{ Err error }

func (e ErrBadQuery) Error() string { return e.Err.Error() }

// Answer maps an instance's errors to HTTP: an unknown name is 404, a bad
// query 400, a loop that is not answering (stopping) 503.
func Answer[T any](v T, err error) (any, error) {
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

// BandwidthRoute serves POST bandwidth: set or clear an interface's
// run-time bandwidth override.
func BandwidthRoute(r *http.Request, set func(ctx context.Context, iface string, bw config.Bandwidth) error) (any, error) {
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
	if err := set(r.Context(), req.Interface, bw); err != nil {
		return Answer[any](nil, err)
	}
	out := apiwire.BandwidthOverride{Interface: req.Interface, Cleared: req.Clear}
	if !req.Clear {
		out.Bandwidth = bw.String()
	}
	return out, nil
}
