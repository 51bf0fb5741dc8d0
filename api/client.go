package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/fared/fared/config"
)

// DefaultSocket is where fared listens unless told otherwise.
const DefaultSocket = config.DefaultSocket

// SocketPath resolves the socket: the explicit value, else $FARED_SOCKET,
// else the default.
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

// NewClient returns a client for the socket path.
func NewClient(socket string) *Client {
	return &Client{Socket: socket, hc: &http.Client{
		Timeout: 10 * time.Second,
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

// Post sends a JSON body and returns the raw JSON answer.
func (c *Client) Post(ctx context.Context, path string, body io.Reader) ([]byte, error) {
	return c.do(ctx, http.MethodPost, path, body)
}

func (c *Client) do(ctx context.Context, method, path string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://fared"+Version+path, body)
	if err != nil {
		return nil, err
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
		var e ErrorBody
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("fared: %s (HTTP %d)", e.Error, resp.StatusCode)
		}
		return nil, fmt.Errorf("fared: HTTP %d: %s", resp.StatusCode, b)
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
