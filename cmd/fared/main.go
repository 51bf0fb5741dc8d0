// Command fared is the FARE link-state routing daemon.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/fared/fared/internal/buildinfo"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfgPath := flag.String("c", "/etc/fared/fared.yaml", "configuration file")
	socket := flag.String("socket", "", "control socket (default: the config's socket, else "+config.DefaultSocket+"); $FARED_SOCKET steers farectl only")
	check := flag.Bool("check", false, "validate the configuration and exit")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("fared", buildinfo.Version())
		return 0
	}

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
	level := new(slog.LevelVar)
	level.Set(cfg.LogLevel)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	d := daemon.New(cfg, modules, daemon.Options{Socket: *socket, Log: log, Level: level, Version: buildinfo.Version()})

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-hup:
				d.Reload(ctx) // logs its outcome
			case <-ctx.Done():
				return
			}
		}
	}()
	if err := d.Run(ctx); err != nil {
		log.Error("fared stopped", "err", err)
		return 1
	}
	log.Info("fared stopped")
	return 0
}
