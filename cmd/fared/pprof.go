package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
)

// FARED_PPROF turns on Go's profiling endpoints (/debug/pprof/) for
// performance work: a TCP address ("127.0.0.1:6060") or, with a leading
// "/" or "unix:", a unix socket path, which stays reachable from outside
// the network namespace fared runs in (curl --unix-socket PATH
// http://x/debug/pprof/heap > heap.pb.gz; go tool pprof heap.pb.gz). Off
// unless set: the endpoints expose the daemon's memory and cost CPU while
// a profile runs. It is an environment variable rather than a flag or a
// config key so that a harness starting fared (bench/undertest) passes it
// through without knowing of it.
func init() {
	addr := os.Getenv("FARED_PPROF")
	if addr == "" {
		return
	}
	network := "tcp"
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, addr = "unix", p
	} else if strings.HasPrefix(addr, "/") {
		network = "unix"
	}
	if network == "unix" {
		_ = os.Remove(addr) // a stale socket of an earlier run
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fared: FARED_PPROF=%s: %v (profiling off)\n", os.Getenv("FARED_PPROF"), err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	fmt.Fprintf(os.Stderr, "fared: profiling endpoints on %s %s (FARED_PPROF)\n", network, addr)
	go func() { _ = http.Serve(ln, mux) }()
}
