// Package api is fared's control API server: JSON over HTTP on a unix
// socket. It knows no module: the core registers its routes with Handle,
// and each module mounts its own under /v1/<module>/ with Mount. Handlers
// only read immutable snapshots or ask a module's goroutine for copies;
// they never touch live protocol state.
//
// The JSON shapes live in api/wire, the client in api/client.
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
	"strings"
	"sync"
	"time"

	"github.com/fared/fared/api/wire"
	"github.com/fared/fared/internal/guard"
)

// Handler answers one request with a value to encode as JSON, or an error
// whose HTTP status comes from Status (400, 404, 422), else 503.
type Handler func(r *http.Request) (any, error)

// StatusError carries the HTTP status of an error answer.
type StatusError struct {
	Code int
	Err  error
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// BadRequest marks err as the caller's mistake (400).
func BadRequest(err error) error { return &StatusError{http.StatusBadRequest, err} }

// NotFound marks err as "no such thing" (404).
func NotFound(err error) error { return &StatusError{http.StatusNotFound, err} }

// Unprocessable marks a well-formed request that cannot be carried out,
// such as a reload of a config with errors (422).
func Unprocessable(err error) error { return &StatusError{http.StatusUnprocessableEntity, err} }

// Errorf is BadRequest(fmt.Errorf(...)).
func Errorf(format string, args ...any) error { return BadRequest(fmt.Errorf(format, args...)) }

// Status is the HTTP status for err.
func Status(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return http.StatusServiceUnavailable
}

// Server serves the API on a unix socket.
type Server struct {
	log   *slog.Logger
	guard *guard.Guard // the core's routes
	http  *http.Server
	ln    net.Listener
	path  string
	mux   *http.ServeMux

	mu      sync.RWMutex
	modules map[string]*http.ServeMux // mounted modules
	known   map[string]bool           // modules this daemon can run
}

// Perm is who may use the control socket: it is created mode 0660,
// owned by fared's user and Group (a gid; -1 keeps fared's own group), as
// FRR's vty sockets are by frrvty. Whoever can write to it can reload the
// configuration and change the routing: nobody else may connect.
type Perm struct{ Group int }

// SocketMode is the control socket's mode.
const SocketMode = 0o660

// Listen creates the socket (and its directory) and starts serving.
// known names the modules the daemon has (configured or not), so that a
// request for one that is not configured says so.
func Listen(path string, log *slog.Logger, known []string, perm Perm) (*Server, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	// A stale socket from a killed daemon would make Listen fail; a live
	// daemon on it would answer, so refuse in that case.
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("api: another daemon is serving %s", path)
	}
	ln, err := listenPrivate(path, perm)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	s := &Server{log: log, guard: guard.New("core", log), ln: ln, path: path, mux: http.NewServeMux(), modules: map[string]*http.ServeMux{}, known: map[string]bool{}}
	for _, k := range known {
		s.known[k] = true
	}
	s.mux.HandleFunc(wire.Version+"/{module}/", s.dispatch)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		Error(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	s.http = &http.Server{Handler: s.mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("api stopped", "err", err)
		}
	}()
	return s, nil
}

// listenPrivate binds the socket under a temporary name, gives it its
// mode and group, and only then renames it to path: there is no moment in
// which path exists with the umask's mode (under umask 000, world-writable).
func listenPrivate(path string, perm Perm) (net.Listener, error) {
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	os.Remove(tmp)
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false) // Close removes path, not the temporary name
	fail := func(err error) (net.Listener, error) {
		ln.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Chmod(tmp, SocketMode); err != nil {
		return fail(err)
	}
	if perm.Group >= 0 {
		if err := os.Chown(tmp, -1, perm.Group); err != nil {
			return fail(fmt.Errorf("socket group %d: %w", perm.Group, err))
		}
	}
	os.Remove(path)
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	return ln, nil
}

// SetGroup changes the socket's group (a reload of socket-group).
func (s *Server) SetGroup(gid int) error {
	return os.Chown(s.path, -1, gid)
}

// Handle registers a core route: pattern is "METHOD /path" below /v1
// ("GET /route"). Core routes take precedence over module routes of the
// same path.
func (s *Server) Handle(pattern string, h Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("api: pattern needs a method: " + pattern)
	}
	s.mux.HandleFunc(method+" "+wire.Version+path, serve(h, s.guard))
}

// Router registers one module's routes.
type Router struct {
	module string
	mux    *http.ServeMux
	guard  *guard.Guard
}

// Handle registers pattern "METHOD path" of the module, path relative to
// /v1/<module>/ ("GET neighbors" is GET /v1/isis/neighbors).
func (r *Router) Handle(pattern string, h Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("api: pattern needs a method: " + pattern)
	}
	r.mux.HandleFunc(method+" "+wire.Version+"/"+r.module+"/"+strings.TrimPrefix(path, "/"), serve(h, r.guard))
}

// Mount gives a module a fresh set of routes under /v1/<module>/: register
// adds them, and they go live together when it returns, replacing what a
// previous instance of the module mounted.
func (s *Server) Mount(module string, register func(*Router)) {
	m := http.NewServeMux()
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		Error(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	register(&Router{module: module, mux: m, guard: guard.New(module, s.log.With("module", module))})
	s.mu.Lock()
	s.modules[module] = m
	s.known[module] = true
	s.mu.Unlock()
}

// Unmount removes a module's routes (its section was removed).
func (s *Server) Unmount(module string) {
	s.mu.Lock()
	delete(s.modules, module)
	s.mu.Unlock()
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("module")
	s.mu.RLock()
	m, known := s.modules[name], s.known[name]
	s.mu.RUnlock()
	switch {
	case m != nil:
		m.ServeHTTP(w, r)
	case known:
		Error(w, http.StatusNotFound, fmt.Errorf("%s is not configured on this daemon", name))
	default:
		Error(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	}
}

// serve answers with h. A panic in h is the module's bug, not the
// caller's: it is recovered through the module's guard (counted, logged
// once) and answered 500, and the daemon runs on.
func serve(h Handler, g *guard.Guard) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer g.Recover("api "+r.Pattern, nil, func(any) {
			Error(w, http.StatusInternalServerError, errors.New("internal error (a bug; logged by the daemon)"))
		})
		v, err := h(r)
		if err != nil {
			Error(w, Status(err), err)
			return
		}
		JSON(w, v)
	}
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
	enc.SetEscapeHTML(false) // "->" and "<" stay readable in reports
	enc.Encode(v)
}

// Error writes a JSON error with the given status.
func Error(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(wire.ErrorBody{Error: err.Error()})
}

// Decode reads a JSON request body into v, refusing unknown fields; a bad
// body is the caller's mistake (400).
func Decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return BadRequest(fmt.Errorf("body: %v", err))
	}
	return nil
}

// Query returns the query parameter name, or "".
func Query(r *http.Request, name string) string { return r.URL.Query().Get(name) }

// BoolQuery parses an optional boolean query parameter (strconv.ParseBool).
func BoolQuery(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, Errorf("%s: %q is not a boolean", name, s)
	}
	return b, nil
}
