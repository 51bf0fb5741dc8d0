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
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/inc/client"
	"github.com/fared/fared/inc/client/transport"
	"github.com/fared/fared/inc/packet"
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
	rtoLow, rtoHi  time.Duration
	reportAfter    int
	verbose        bool
	// allreduce
	op Op
}

// Op is one allreduce request (flags, or a worker's JSON line).
type Op struct {
	Cmd     string `json:"cmd"`
	Size    string `json:"size"`
	DType   string `json:"dtype"`
	Op      string `json:"op"`
	Pattern string `json:"pattern"`
	Mode    string `json:"mode"` // inc or ring
	Iters   int    `json:"iters"`
	Verify  bool   `json:"verify"`
	Timeout string `json:"timeout"`
}

// Result is one line of output.
type Result struct {
	Mode        string  `json:"mode"`
	Rank        int     `json:"rank"`
	Ranks       int     `json:"ranks"`
	Bytes       int     `json:"bytes"`
	DType       string  `json:"dtype"`
	Op          string  `json:"op"`
	Iter        int     `json:"iter"`
	Seconds     float64 `json:"seconds"`
	AlgBW       float64 `json:"algbw_gbps"` // bytes / time, Gb/s
	BusBW       float64 `json:"busbw_gbps"` // algbw × 2(N−1)/N (NCCL's allreduce convention)
	Packets     int     `json:"packets"`
	Sent        int     `json:"sent"`
	Retransmits int     `json:"retransmits"`
	Timeouts    int     `json:"timeouts"`
	NACKs       int     `json:"nacks"`
	Reports     int     `json:"timeout_reports"`
	Refused     int     `json:"refused"` // packets not from the parent (INC) or the ring neighbour with the key: dropped
	Verified    bool    `json:"verified"`
	TreeID      uint32  `json:"tree_id,omitempty"`
	Generation  uint64  `json:"generation,omitempty"`
	Error       string  `json:"error,omitempty"`
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
	pf.IntVar(&o.window, "window", 0, "IRN BDP cap: packets in flight (0: default 128, at most the tree's slots)")
	pf.DurationVar(&o.rtoLow, "rto-low", 0, "IRN RTO_low (0: default)")
	pf.DurationVar(&o.rtoHi, "rto-high", 0, "IRN RTO_high (0: default)")
	pf.IntVar(&o.reportAfter, "report-after", 0, "timeouts of one packet before reporting to the manager (0: default 8)")
	pf.BoolVarP(&o.verbose, "verbose", "v", false, "log to stderr")
	pf.StringVar(&o.ca, "ca", "", "the INC CA certificate that signs the manager's (default $"+envCA+")")
	pf.StringVar(&o.token, "token", "", "join token for the group (default $"+envToken+")")
	pf.StringVar(&o.tokenFile, "token-file", "", "file holding the join token (default $"+envTokenFile+")")
	pf.BoolVar(&o.plaintext, "plaintext", false, "no TLS: only to a manager on loopback (one without tls)")
	r.AddCommand(tokenCommand(&o), tokenKeyCommand())

	ar := &cobra.Command{Use: "allreduce", Short: "Join, run allreduce, check, leave", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, err := join(ctx, &o)
			if err != nil {
				return err
			}
			defer c.Close()
			o.op.Cmd = "allreduce"
			failed := run(ctx, c, &o, o.op, json.NewEncoder(cmd.OutOrStdout()))
			if failed {
				return errors.New("allreduce failed")
			}
			return nil
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
	r.AddCommand(ar)

	r.AddCommand(&cobra.Command{Use: "worker", Short: "Join, then run the JSON commands read from stdin (allreduce, tree, quit)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, err := join(ctx, &o)
			if err != nil {
				return err
			}
			defer c.Close()
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.Encode(map[string]any{"joined": true, "client": c.ID(), "qpn": c.QPN()})
			sc := bufio.NewScanner(cmd.InOrStdin())
			for sc.Scan() {
				var op Op
				if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
					enc.Encode(Result{Error: "bad command: " + err.Error()})
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
						enc.Encode(Result{Error: err.Error()})
					} else {
						enc.Encode(a)
					}
				case "allreduce":
					run(ctx, c, &o, op, enc)
				default:
					enc.Encode(Result{Error: fmt.Sprintf("unknown command %q", op.Cmd)})
				}
			}
			return nil
		}})
	return r
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
		Payload: o.payload, Transport: transport.Config{Window: o.window, RTOLow: o.rtoLow, RTOHigh: o.rtoHi, ReportAfter: o.reportAfter},
		Log: slog.New(slog.NewTextHandler(out, nil)), Creds: creds})
}

// run executes one allreduce request and writes a result per iteration;
// it reports whether any failed.
func run(ctx context.Context, c *client.Client, o *opts, op Op, enc *json.Encoder) (failed bool) {
	fail := func(err error) bool {
		enc.Encode(Result{Rank: o.rank, Ranks: o.ranks, Error: err.Error()})
		return true
	}
	size, err := ParseSize(op.Size)
	if err != nil {
		return fail(err)
	}
	dt, err := packet.ParseDType(firstNonEmpty(op.DType, "fp32"))
	if err != nil {
		return fail(err)
	}
	rop, err := packet.ParseOp(firstNonEmpty(op.Op, "sum"))
	if err != nil {
		return fail(err)
	}
	pat := client.Pattern(firstNonEmpty(op.Pattern, "int"))
	if pat != client.Ints && pat != client.Fractions {
		return fail(fmt.Errorf("pattern %q: int or frac", pat))
	}
	if size%dt.Size() != 0 {
		return fail(fmt.Errorf("size %d is not a whole number of %s elements", size, dt))
	}
	timeout, err := time.ParseDuration(firstNonEmpty(op.Timeout, "60s"))
	if err != nil {
		return fail(err)
	}
	mode := firstNonEmpty(op.Mode, "inc")
	buf := make([]byte, size)
	for it := range max(op.Iters, 1) {
		client.Fill(buf, dt, pat, o.rank)
		octx, cancel := context.WithTimeout(ctx, timeout)
		var st client.Stats
		switch mode {
		case "inc":
			st, err = c.AllReduce(octx, buf, dt, rop)
		case "ring":
			st, err = c.RingAllReduce(octx, buf, dt, rop)
		default:
			err = fmt.Errorf("mode %q: inc or ring", mode)
		}
		cancel()
		res := Result{Mode: mode, Rank: o.rank, Ranks: o.ranks, Bytes: size, DType: dt.String(), Op: rop.String(), Iter: it,
			Seconds: st.Duration.Seconds(), Packets: st.Packets, Sent: st.Sent, Retransmits: st.Retransmits, Timeouts: st.Timeouts,
			NACKs: st.NACKs, Reports: st.Reports, Refused: st.Refused}
		if a, terr := c.Tree(ctx); terr == nil {
			res.TreeID, res.Generation = a.TreeId, a.Generation
		}
		if err == nil && st.Duration > 0 {
			res.AlgBW = float64(size) * 8 / st.Duration.Seconds() / 1e9
			res.BusBW = res.AlgBW * 2 * float64(o.ranks-1) / float64(o.ranks)
		}
		if err == nil && op.Verify {
			if verr := client.Check(buf, dt, rop, pat, o.ranks); verr != nil {
				err = fmt.Errorf("wrong result: %w", verr)
			} else {
				res.Verified = true
			}
		}
		if err != nil {
			res.Error = err.Error()
			failed = true
		}
		enc.Encode(res)
	}
	return failed
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ParseSize parses "64MB", "1KiB", "1000": K, M, G are powers of 1024.
func ParseSize(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1
	for _, u := range []struct {
		suf string
		m   int
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 || n*float64(mult) > 1<<31 {
		return 0, fmt.Errorf("size %q: want bytes, e.g. 4096, 1KB, 64MB", s)
	}
	return int(n * float64(mult)), nil
}
