// Package api is fared's control API: JSON over HTTP on a unix socket.
// Handlers only read immutable snapshots or ask the protocol goroutine for
// copies; they never touch live protocol state.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fared/fared/isis"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/rib"
)

// Version is the API's path prefix.
const Version = "/v1"

// Backend is what the daemon exposes to the API.
type Backend struct {
	ISIS *isis.Instance
	// Status returns daemon-level information (version, uptime, config).
	Status func() any
	RIB    *rib.Manager
	// Protocol is the kernel route protocol of our routes (fib dump).
	Protocol uint8
	// Reload re-reads the config file (as SIGHUP does).
	Reload func() ([]string, error)
	// Extra handlers registered by later subsystems.
	Extra map[string]http.HandlerFunc
}

// Server serves the API on a unix socket.
type Server struct {
	b    Backend
	log  *slog.Logger
	http *http.Server
	ln   net.Listener
	path string
}

// Listen creates the socket (and its directory) and starts serving.
func Listen(path string, b Backend, log *slog.Logger) (*Server, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	// A stale socket from a killed daemon would make Listen fail; a live
	// daemon on it would answer, so refuse in that case.
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("api: another daemon is serving %s", path)
	}
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	s := &Server{b: b, log: log, ln: ln, path: path}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Version+"/status", s.status)
	mux.HandleFunc("GET "+Version+"/isis/neighbors", s.isisNeighbors)
	mux.HandleFunc("GET "+Version+"/isis/interfaces", s.isisInterfaces)
	mux.HandleFunc("GET "+Version+"/isis/database", s.isisDatabase)
	mux.HandleFunc("GET "+Version+"/isis/levels", s.isisLevels)
	mux.HandleFunc("GET "+Version+"/isis/leaks", s.isisLeaks)
	mux.HandleFunc("GET "+Version+"/lsdb", s.lsdb)
	mux.HandleFunc("GET "+Version+"/route", s.routes)
	mux.HandleFunc("GET "+Version+"/fare", s.fare)
	mux.HandleFunc("GET "+Version+"/spf/log", s.spfLog)
	mux.HandleFunc("GET "+Version+"/fib", s.fibDump)
	mux.HandleFunc("GET "+Version+"/fib/capabilities", s.fibCaps)
	mux.HandleFunc("POST "+Version+"/isis/bandwidth", s.setBandwidth)
	mux.HandleFunc("POST "+Version+"/reload", s.reload)
	for p, h := range b.Extra {
		mux.HandleFunc(p, h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		Error(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("api stopped", "err", err)
		}
	}()
	return s, nil
}

// Close stops serving and removes the socket.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	os.Remove(s.path)
	return err
}

// JSON writes v with status 200.
func JSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// ErrorBody is the JSON shape of every error answer.
type ErrorBody struct {
	Error string `json:"error"`
}

// Error writes a JSON error with the given status.
func Error(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(ErrorBody{Error: err.Error()})
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	if s.b.Status == nil {
		JSON(w, map[string]any{})
		return
	}
	JSON(w, s.b.Status())
}

func (s *Server) needISIS(w http.ResponseWriter) bool {
	if s.b.ISIS == nil {
		Error(w, http.StatusNotFound, errors.New("IS-IS is not configured"))
		return false
	}
	return true
}

func (s *Server) isisNeighbors(w http.ResponseWriter, r *http.Request) {
	if !s.needISIS(w) {
		return
	}
	v, err := s.b.ISIS.Neighbors(r.Context())
	reply(w, v, err)
}

func (s *Server) isisInterfaces(w http.ResponseWriter, r *http.Request) {
	if !s.needISIS(w) {
		return
	}
	v, err := s.b.ISIS.Interfaces(r.Context())
	reply(w, v, err)
}

func (s *Server) isisLevels(w http.ResponseWriter, r *http.Request) {
	if !s.needISIS(w) {
		return
	}
	v, err := s.b.ISIS.Levels(r.Context())
	reply(w, v, err)
}

func (s *Server) isisLeaks(w http.ResponseWriter, r *http.Request) {
	if !s.needISIS(w) {
		return
	}
	v, err := s.b.ISIS.Leaks(r.Context())
	reply(w, v, err)
}

func (s *Server) isisDatabase(w http.ResponseWriter, r *http.Request) {
	if !s.needISIS(w) {
		return
	}
	q := isis.DatabaseQuery{LSPID: r.URL.Query().Get("lsp")}
	var err error
	if q.Level, err = levelParam(r); err != nil {
		Error(w, http.StatusBadRequest, err)
		return
	}
	if d := r.URL.Query().Get("detail"); d != "" {
		if q.Detail, err = strconv.ParseBool(d); err != nil {
			Error(w, http.StatusBadRequest, fmt.Errorf("detail: %q is not a boolean", d))
			return
		}
	}
	v, err := s.b.ISIS.Database(r.Context(), q)
	reply(w, v, err)
}

func levelParam(r *http.Request) (int, error) {
	s := r.URL.Query().Get("level")
	if s == "" {
		return 0, nil
	}
	l, err := strconv.Atoi(s)
	if err != nil || l < 1 || l > 2 {
		return 0, fmt.Errorf("level: %q is not 1 or 2", s)
	}
	return l, nil
}

func (s *Server) lsdb(w http.ResponseWriter, r *http.Request) {
	if !s.needISIS(w) {
		return
	}
	l, err := levelParam(r)
	if err != nil {
		Error(w, http.StatusBadRequest, err)
		return
	}
	out := []lsdb.View{}
	for _, g := range s.b.ISIS.LSDB() {
		if l == 0 || g.Level == l {
			out = append(out, g.View())
		}
	}
	JSON(w, out)
}

func reply(w http.ResponseWriter, v any, err error) {
	var nf isis.ErrNotFound
	switch {
	case errors.As(err, &nf):
		Error(w, http.StatusNotFound, err)
	case err != nil:
		Error(w, http.StatusServiceUnavailable, err)
	default:
		JSON(w, v)
	}
}
