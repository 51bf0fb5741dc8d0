// Command fared is the FARE link-state routing daemon.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/fared/fared/api"
	"github.com/fared/fared/config"
	"github.com/fared/fared/isis"
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

	var inst *isis.Instance
	if cfg.ISIS != nil {
		inst, err = isis.New(cfg, isis.Options{Logger: log})
		if err != nil {
			log.Error("cannot start IS-IS", "err", err)
			return 1
		}
	}
	started := time.Now()
	srv, err := api.Listen(sock, api.Backend{ISIS: inst, Status: func() any {
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

	errc := make(chan error, 1)
	if inst != nil {
		go func() { errc <- inst.Run(ctx) }()
	} else {
		go func() { <-ctx.Done(); errc <- nil }()
	}
	err = <-errc
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("instance stopped", "err", err)
		return 1
	}
	log.Info("fared stopped")
	return 0
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
}
