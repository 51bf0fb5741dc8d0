// Command fareinc is the INC client: it joins a collective group at a
// fared aggregation manager and runs allreduce in the fabric (or as a
// ring between the members, the baseline), checking the result.
//
//	fareinc allreduce --manager 10.255.0.5:7791 --group G --rank R --ranks 8 --size 64MB --dtype fp32
//	fareinc worker    --manager ... --group G --rank R --ranks 8   (JSON commands on stdin, one result per line)
//	fareinc token     --key-file KEY --group G [--ttl 24h]         (mint a join token)
//
// Credentials (docs/inc.md, "Control-plane trust"): the manager's CA
// (--ca or FAREINC_CA) and a join token for the group (--token,
// --token-file, FAREINC_TOKEN or FAREINC_TOKEN_FILE). farelab sets the
// environment for its hosts.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/inc/client"
	"github.com/fared/fared/inc/client/transport"
)

type opts struct {
	manager, group string
	ca, token      string
	tokenFile      string
	plaintext      bool
	rank, ranks    int
	qpn            uint32
	payload        int
	window         int
	rtt            time.Duration
	rtoLow, rtoHi  time.Duration
	reportAfter    int
	verbose        bool
	// allreduce
	op client.Op
}

func main() {
	if err := root().Execute(); err != nil {
		os.Exit(1)
	}
}

func root() *cobra.Command {
	var o opts
	r := &cobra.Command{Use: "fareinc", Short: "INC client: allreduce in the fabric or over a ring", SilenceUsage: true}
	pf := r.PersistentFlags()
	pf.StringVar(&o.manager, "manager", "", "aggregation manager address:port (required)")
	pf.StringVar(&o.group, "group", "", "group name (required)")
	pf.IntVar(&o.rank, "rank", 0, "this client's rank")
	pf.IntVar(&o.ranks, "ranks", 0, "ranks in the group (required)")
	pf.Uint32Var(&o.qpn, "qpn", 0, "QP number (0: random)")
	pf.IntVar(&o.payload, "payload", 1024, "payload bytes per packet (the path MTU: 1024 or 4096)")
	pf.IntVar(&o.window, "window", 0, "IRN cap on packets in flight, overriding BDP-FC's (0: the tree's bottleneck × --rtt / payload, within 4..512; at most the tree's slots)")
	pf.DurationVar(&o.rtt, "rtt", 0, "IRN BDP-FC: the fabric's round trip (0: default 25µs)")
	pf.DurationVar(&o.rtoLow, "rto-low", 0, "IRN RTO_low (0: default)")
	pf.DurationVar(&o.rtoHi, "rto-high", 0, "IRN RTO_high (0: default)")
	pf.IntVar(&o.reportAfter, "report-after", 0, "timeouts of one packet before reporting to the manager (0: default 8)")
	pf.BoolVarP(&o.verbose, "verbose", "v", false, "log to stderr")
	pf.StringVar(&o.ca, "ca", "", "the INC CA certificate that signs the manager's (default $"+envCA+")")
	pf.StringVar(&o.token, "token", "", "join token for the group (default $"+envToken+")")
	pf.StringVar(&o.tokenFile, "token-file", "", "file holding the join token (default $"+envTokenFile+")")
	pf.BoolVar(&o.plaintext, "plaintext", false, "no TLS: only to a manager on loopback (one without tls)")
	r.AddCommand(tokenCommand(&o), tokenKeyCommand(), allreduceCommand(&o), workerCommand(&o))
	return r
}

// allreduceCommand: fareinc allreduce, one Op from the flags.
func allreduceCommand(o *opts) *cobra.Command {
	ar := &cobra.Command{Use: "allreduce", Short: "Join, run allreduce, check, leave", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return joined(cmd, o, func(ctx context.Context, c *client.Client) error {
				enc := json.NewEncoder(cmd.OutOrStdout())
				o.op.Cmd = "allreduce"
				if c.Run(ctx, o.op, func(r client.Result) { enc.Encode(r) }) {
					return errors.New("allreduce failed")
				}
				return nil
			})
		}}
	f := ar.Flags()
	f.StringVar(&o.op.Size, "size", "1MB", "bytes (K/KB/KiB, M/MB, G: powers of 1024; a plain number is bytes)")
	f.StringVar(&o.op.DType, "dtype", "fp32", "fp16, fp32 or fp64")
	f.StringVar(&o.op.Op, "op", "sum", "sum, min or max")
	f.StringVar(&o.op.Pattern, "pattern", "int", "test data: int (exact sums) or frac")
	f.StringVar(&o.op.Mode, "mode", "inc", "inc (in the fabric) or ring (the baseline)")
	f.IntVar(&o.op.Iters, "iters", 1, "repetitions")
	f.BoolVar(&o.op.Verify, "verify", true, "check the result against the exact reduction")
	f.StringVar(&o.op.Timeout, "timeout", "60s", "per operation")
	return ar
}

// workerCommand: fareinc worker, one Op (or tree, quit) per stdin line.
func workerCommand(o *opts) *cobra.Command {
	return &cobra.Command{Use: "worker", Short: "Join, then run the JSON commands read from stdin (allreduce, tree, quit)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return joined(cmd, o, func(ctx context.Context, c *client.Client) error {
				return work(ctx, c, cmd.InOrStdin(), json.NewEncoder(cmd.OutOrStdout()))
			})
		}}
}

// work says it joined, then runs the commands it reads until quit or
// the end of its input.
func work(ctx context.Context, c *client.Client, in io.Reader, enc *json.Encoder) error {
	enc.Encode(map[string]any{"joined": true, "client": c.ID(), "qpn": c.QPN()})
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var op client.Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			enc.Encode(client.Result{Error: "bad command: " + err.Error()})
			continue
		}
		switch op.Cmd {
		case "quit":
			return nil
		case "tree":
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			a, err := c.Current(tctx)
			cancel()
			if err != nil {
				enc.Encode(client.Result{Error: err.Error()})
			} else {
				enc.Encode(a)
			}
		case "allreduce":
			c.Run(ctx, op, func(r client.Result) { enc.Encode(r) })
		default:
			enc.Encode(client.Result{Error: fmt.Sprintf("unknown command %q", op.Cmd)})
		}
	}
	return nil
}

// joined joins the group (until SIGINT or SIGTERM), runs f, and leaves.
func joined(cmd *cobra.Command, o *opts, f func(ctx context.Context, c *client.Client) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := join(ctx, o)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(ctx, c)
}

func join(ctx context.Context, o *opts) (*client.Client, error) {
	for _, f := range []struct{ name, v string }{{"manager", o.manager}, {"group", o.group}, {"ranks", strconv.Itoa(o.ranks)}} {
		if f.v == "" || f.v == "0" {
			return nil, fmt.Errorf("--%s is required", f.name)
		}
	}
	creds, err := credentials(o)
	if err != nil {
		return nil, err
	}
	out := io.Discard
	if o.verbose {
		out = os.Stderr
	}
	host, _ := os.Hostname()
	jctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return client.Join(jctx, client.Config{Manager: o.manager, Group: o.group, Rank: o.rank, Size: o.ranks, QPN: o.qpn, Host: host,
		Payload: o.payload, Transport: transport.Config{Window: o.window, RTT: o.rtt, RTOLow: o.rtoLow, RTOHigh: o.rtoHi, ReportAfter: o.reportAfter},
		Log: slog.New(slog.NewTextHandler(out, nil)), Creds: creds})
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
