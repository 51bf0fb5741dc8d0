// Command fared is the FARE link-state routing daemon.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fared/fared/api"
	"github.com/fared/fared/config"
	"github.com/fared/fared/fib"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/lsdb"
	"github.com/fared/fared/ospf"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfgPath := flag.String("c", "/etc/fared/fared.yaml", "configuration file")
	socket := flag.String("socket", "", "control socket (default: config 'socket', $FARED_SOCKET, "+config.DefaultSocket+")")
	check := flag.Bool("check", false, "validate the configuration and exit")
	flag.Parse()

	cfg, err := config.Load(*cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Fprintln(os.Stderr, "fared: configuration rejected, not starting")
		return 1
	}
	if *check {
		fmt.Printf("%s: ok\n", *cfgPath)
		return 0
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(log)

	sock := *socket
	if sock == "" {
		sock = os.Getenv("FARED_SOCKET")
	}
	if sock == "" {
		sock = cfg.Socket
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()

	var kernel *fib.FIB
	if cfg.FIB.Enabled {
		fc := fib.Config{Protocol: fibProtocol(cfg), Metric: cfg.FIB.Metric, KeepOnShutdown: cfg.FIB.OnShutdown == "keep"}
		if r := cfg.FIB.Resilient; r != nil {
			fc.Resilient = &fib.Resilient{Buckets: r.Buckets, IdleTimer: r.IdleTimer, UnbalancedTimer: r.UnbalancedTimer}
		}
		kernel, err = fib.Open(fc)
		if err != nil {
			log.Error("cannot open the kernel FIB", "err", err)
			return 1
		}
		// Keep what a previous run installed until the first computation
		// after convergence replaces it.
		if err := kernel.Adopt(); err != nil {
			log.Error("cannot read back the kernel FIB", "err", err)
			return 1
		}
		log.Info("kernel FIB", "capabilities", fmt.Sprintf("%+v", kernel.Capabilities()), "on_shutdown", cfg.FIB.OnShutdown)
		warnCompatMode(log)
	}

	// One routing table for every protocol; the hooks below run only once
	// the instances' Run has started, after routes is set.
	var inst *isis.Instance
	var oinst *ospf.Instance
	var routes *rib.Manager
	var ready []func() bool
	if cfg.ISIS != nil {
		inst, err = isis.New(cfg, isis.Options{Logger: log, OnGraph: func(level int, g *lsdb.Graph) {
			routes.Submit(g, fmt.Sprintf("isis L%d lsdb", level))
		}})
		if err != nil {
			log.Error("cannot start IS-IS", "err", err)
			return 1
		}
		ready = append(ready, inst.Converged)
	}
	if cfg.OSPF != nil {
		oinst, err = newOSPF(cfg, log, func(g *lsdb.Graph, trigger string) { routes.Submit(g, trigger) })
		if err != nil {
			log.Error("cannot start OSPF", "err", err)
			return 1
		}
		ready = append(ready, oinst.Converged)
	}
	if inst != nil || oinst != nil {
		// ECMP-only and the SPF timers come from IS-IS when it runs, else
		// from OSPF (docs/config.md).
		ecmp, t := false, config.SPF{}
		if cfg.ISIS != nil {
			ecmp, t = cfg.ISIS.ECMPOnly, cfg.ISIS.SPF
		} else {
			ecmp, t = cfg.OSPF.ECMPOnly, cfg.OSPF.SPF
		}
		rc := rib.Config{ECMPOnly: ecmp, Log: log, Delay: spf.DelayConfig{InitialDelay: t.InitialDelay, ShortDelay: t.ShortDelay,
			LongDelay: t.LongDelay, TimeToLearn: t.TimeToLearn, Holddown: t.Holddown}}
		if kernel != nil {
			rc.FIB = kernel
		}
		rc.Ready = func() bool {
			for _, f := range ready {
				if !f() {
					return false
				}
			}
			return true
		}
		routes = rib.New(rc)
	}
	reload := func() ([]string, error) {
		nc, err := config.Load(cfg.File)
		if err != nil {
			log.Error("reload rejected, keeping the running configuration", "err", err)
			return nil, err
		}
		var warn []string
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		defer rcancel()
		if inst != nil {
			w, err := inst.Reconfigure(rctx, nc)
			if err != nil {
				return nil, err
			}
			warn = append(warn, w...)
			if nc.ISIS != nil {
				routes.SetECMPOnly(nc.ISIS.ECMPOnly)
			}
		}
		if oinst != nil {
			w, err := oinst.Reconfigure(rctx, nc)
			if err != nil {
				return nil, err
			}
			warn = append(warn, w...)
			if inst == nil && nc.OSPF != nil {
				routes.SetECMPOnly(nc.OSPF.ECMPOnly)
			}
		}
		log.Info("configuration reloaded", "config", cfg.File, "warnings", len(warn))
		return warn, nil
	}
	var extra map[string]http.HandlerFunc
	if oinst != nil {
		extra = api.OSPFHandlers(oinst)
	}

	started := time.Now()
	srv, err := api.Listen(sock, api.Backend{ISIS: inst, RIB: routes, Protocol: fibProtocol(cfg), Extra: extra, Reload: reload, Status: func() any {
		return map[string]any{
			"version":   version(),
			"hostname":  cfg.Hostname,
			"router_id": cfg.RouterID.String(),
			"config":    cfg.File,
			"uptime":    time.Since(started).Round(time.Second).String(),
		}
	}}, log)
	if err != nil {
		log.Error("cannot serve the control API", "err", err)
		return 1
	}
	defer srv.Close()
	log.Info("fared started", "config", cfg.File, "socket", sock, "system_id", fmt.Sprintf("%x", cfg.SystemID), "hostname", cfg.Hostname)

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-hup:
				reload()
			case <-ctx.Done():
				return
			}
		}
	}()
	if kernel != nil && (inst != nil || oinst != nil) {
		// Link and address changes reach IS-IS at once; the monitor also
		// drops the nexthops of a dead link before IS-IS notices.
		evs := make(chan fib.LinkEvent, 64)
		go func() {
			if err := kernel.Monitor(ctx, evs); err != nil && ctx.Err() == nil {
				log.Error("netlink monitor stopped", "err", err)
			}
		}()
		go func() {
			for {
				select {
				case ev := <-evs:
					if inst != nil {
						inst.Notify(ev.Name)
					}
					if oinst != nil {
						oinst.Notify(ev.Name)
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	if routes != nil {
		go routes.Run(ctx)
	}

	errc := make(chan error, 2)
	running := 0
	if inst != nil {
		running++
		go func() { errc <- inst.Run(ctx) }()
	}
	if oinst != nil {
		running++
		go func() { errc <- oinst.Run(ctx) }()
	}
	if running == 0 {
		running++
		go func() { <-ctx.Done(); errc <- nil }()
	}
	for ; running > 0; running-- {
		if e := <-errc; e != nil {
			if err == nil {
				err = e
			}
			cancel() // one protocol failed: stop the others too
		}
	}
	if kernel != nil {
		if cerr := kernel.Close(); cerr != nil {
			log.Error("closing the kernel FIB", "err", cerr)
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("instance stopped", "err", err)
		return 1
	}
	log.Info("fared stopped")
	return 0
}

// fibProtocol is the kernel protocol of our routes and nexthops: isis,
// or ospf for an OSPF-only daemon (one FIB holds all of fared's routes).
func fibProtocol(cfg *config.Config) uint8 {
	if cfg.ISIS == nil && cfg.OSPF != nil {
		return unix.RTPROT_OSPF
	}
	return unix.RTPROT_ISIS
}

// warnCompatMode: with net.ipv4.nexthop_compat_mode=1 (the kernel default)
// every group replace also makes the kernel announce each route using the
// group, which defeats "reweight touches no route" for listeners.
func warnCompatMode(log *slog.Logger) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/nexthop_compat_mode")
	if err == nil && len(b) > 0 && b[0] == '1' {
		log.Warn("net.ipv4.nexthop_compat_mode=1: the kernel will announce every route of a reweighted group; set it to 0")
	}
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
}
