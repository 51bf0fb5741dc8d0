package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fared/fared/inc/packet"
)

// Op is one allreduce request: fareinc's flags, or one JSON line of its
// worker's stdin ({"cmd":"allreduce","size":"64KB",...}). Empty fields
// take their defaults (fp32, sum, int, inc, 60s); a JSON line without
// "verify" verifies, as fareinc allreduce does by default (UnmarshalJSON).
type Op struct {
	Cmd     string `json:"cmd"`
	Size    string `json:"size"` // ParseSize
	DType   string `json:"dtype"`
	Op      string `json:"op"`
	Pattern string `json:"pattern"`
	Mode    string `json:"mode"` // inc or ring
	Iters   int    `json:"iters"`
	Verify  bool   `json:"verify"`
	Timeout string `json:"timeout"`
}

// Result is one iteration of an Op: fareinc prints one JSON line each.
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
	// Verified is set only when a check ran (Op.Verify): true when the
	// result was exact, false when it was wrong (then Error says how).
	// Without a check the JSON has no "verified" key.
	Verified   *bool  `json:"verified,omitempty"`
	TreeID     uint32 `json:"tree_id,omitempty"`
	Generation uint64 `json:"generation,omitempty"`
	Error      string `json:"error,omitempty"`
}

// opParams is an Op parsed, defaults applied.
type opParams struct {
	size    int
	dt      packet.DType
	op      packet.Op
	pattern Pattern
	timeout time.Duration
	mode    string
}

// UnmarshalJSON decodes an Op; "verify" absent means true.
func (o *Op) UnmarshalJSON(b []byte) error {
	type plain Op // without this method
	p := plain{Verify: true}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*o = Op(p)
	return nil
}

func (o Op) parse() (opParams, error) {
	var p opParams
	var err error
	if p.size, err = ParseSize(o.Size); err != nil {
		return p, err
	}
	if p.dt, err = packet.ParseDType(orDefault(o.DType, "fp32")); err != nil {
		return p, err
	}
	if p.op, err = packet.ParseOp(orDefault(o.Op, "sum")); err != nil {
		return p, err
	}
	if p.pattern = Pattern(orDefault(o.Pattern, "int")); p.pattern != Ints && p.pattern != Fractions {
		return p, fmt.Errorf("pattern %q: int or frac", p.pattern)
	}
	if p.size%p.dt.Size() != 0 {
		return p, fmt.Errorf("size %d is not a whole number of %s elements", p.size, p.dt)
	}
	if p.timeout, err = time.ParseDuration(orDefault(o.Timeout, "60s")); err != nil {
		return p, err
	}
	p.mode = orDefault(o.Mode, "inc")
	return p, nil
}

// Run executes op on the group (Iters times, at least once), checking
// each result when op.Verify, and hands emit a Result per iteration, or
// one with the error when op is malformed. It reports whether any failed.
func (c *Client) Run(ctx context.Context, op Op, emit func(Result)) (failed bool) {
	rank, ranks := c.cfg.Rank, c.cfg.Size
	p, err := op.parse()
	if err != nil {
		emit(Result{Rank: rank, Ranks: ranks, Error: err.Error()})
		return true
	}
	buf := make([]byte, p.size)
	for it := range max(op.Iters, 1) {
		Fill(buf, p.dt, p.pattern, rank)
		octx, cancel := context.WithTimeout(ctx, p.timeout)
		var st Stats
		switch p.mode {
		case "inc":
			st, err = c.AllReduce(octx, buf, p.dt, p.op)
		case "ring":
			st, err = c.RingAllReduce(octx, buf, p.dt, p.op)
		default:
			err = fmt.Errorf("mode %q: inc or ring", p.mode)
		}
		cancel()
		res := Result{Mode: p.mode, Rank: rank, Ranks: ranks, Bytes: p.size, DType: p.dt.String(), Op: p.op.String(), Iter: it,
			Seconds: st.Duration.Seconds(), Packets: st.Packets, Sent: st.Sent, Retransmits: st.Retransmits, Timeouts: st.Timeouts,
			NACKs: st.NACKs, Reports: st.Reports, Refused: st.Refused}
		if a, terr := c.Tree(ctx); terr == nil {
			res.TreeID, res.Generation = a.TreeId, a.Generation
		}
		if err == nil && st.Duration > 0 {
			res.AlgBW = float64(p.size) * 8 / st.Duration.Seconds() / 1e9
			res.BusBW = res.AlgBW * 2 * float64(ranks-1) / float64(ranks)
		}
		if err == nil && op.Verify {
			verr := Check(buf, p.dt, p.op, p.pattern, ranks)
			if verr != nil {
				err = fmt.Errorf("wrong result: %w", verr)
			}
			ok := verr == nil
			res.Verified = &ok
		}
		if err != nil {
			res.Error = err.Error()
			failed = true
		}
		c.tally(st, err)
		emit(res)
	}
	return failed
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
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
