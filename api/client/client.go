// Package client talks to a running fared over its control socket. It
// links only the API's wire types, never the daemon.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/fared/fared/api/wire"
)

// DefaultSocket is where fared listens unless its config or --socket says
// otherwise.
const DefaultSocket = "/run/fared/fared.sock"

// SocketPath resolves the socket a client uses: the explicit value (-s),
// else $FARED_SOCKET, else the default. The variable steers clients only;
// the daemon reads its socket from --socket or its config.
func SocketPath(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if s := os.Getenv("FARED_SOCKET"); s != "" {
		return s
	}
	return DefaultSocket
}

// Client talks to one fared over its unix socket.
type Client struct {
	Socket string
	hc     *http.Client
}

// New returns a client for the socket path.
func New(socket string) *Client {
	return &Client{Socket: socket, hc: &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		}},
	}}
}

// Get fetches path (e.g. "/isis/neighbors?level=2") and returns the raw JSON.
func (c *Client) Get(ctx context.Context, path string) ([]byte, error) {
	return c.do(ctx, http.MethodGet, path, nil)
}

// Post sends body (nil, raw bytes or a value to encode as JSON) and returns
// the raw JSON answer.
func (c *Client) Post(ctx context.Context, path string, body any) ([]byte, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case io.Reader:
		r = b
	case []byte:
		r = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(enc)
	}
	return c.do(ctx, http.MethodPost, path, r)
}

// Delete sends a DELETE of path (no body).
func (c *Client) Delete(ctx context.Context, path string) ([]byte, error) {
	return c.do(ctx, http.MethodDelete, path, nil)
}

// Error is an answer other than 200: fared's reason and the HTTP status.
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("fared: %s (HTTP %d)", e.Reason, e.Status) }

func (c *Client) do(ctx context.Context, method, path string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://fared"+wire.Version+path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach fared at %s: %w", c.Socket, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e wire.ErrorBody
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, &Error{Status: resp.StatusCode, Reason: e.Error}
		}
		return nil, &Error{Status: resp.StatusCode, Reason: string(bytes.TrimSpace(b))}
	}
	return b, nil
}

// GetJSON fetches path into v.
func (c *Client) GetJSON(ctx context.Context, path string, v any) error {
	b, err := c.Get(ctx, path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
