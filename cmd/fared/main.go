// Command fared is the FARE link-state routing daemon.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fared/fared/internal/buildinfo"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/fib"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfgPath := flag.String("c", "/etc/fared/fared.yaml", "configuration file")
	socket := flag.String("socket", "", "control socket (default: the config's socket, else "+config.DefaultSocket+"); $FARED_SOCKET steers farectl only")
	check := flag.Bool("check", false, "validate the configuration and exit")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flush := flag.Bool("flush", false, "remove every route and nexthop object fared owns (its nexthop id range, any protocol number) from the kernel and exit; fared must not be running")
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
		for _, w := range cfg.MissingInterfaces(ifaceExists) {
			fmt.Fprintln(os.Stderr, w)
		}
		fmt.Printf("%s: ok\n", *cfgPath)
		return 0
	}
	if *flush {
		sock := *socket
		if sock == "" {
			sock = cfg.Socket
		}
		if c, err := net.DialTimeout("unix", sock, 200*time.Millisecond); err == nil {
			c.Close()
			fmt.Fprintf(os.Stderr, "fared: a fared is serving %s: stop it before --flush (it would put its routes back)\n", sock)
			return 1
		}
		st, err := fib.Flush(0, daemon.FIBConfig(cfg, modules))
		if err != nil {
			fmt.Fprintln(os.Stderr, "fared:", err)
			return 1
		}
		fmt.Printf("removed %d routes and %d nexthop objects\n", st.Routes, st.Nexthops)
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

func ifaceExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}
