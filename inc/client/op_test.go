package client

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/fared/fared/inc/packet"
	"github.com/fared/fared/inc/protos"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		err  bool
	}{
		{"4096", 4096, false}, {"1KB", 1024, false}, {"1kib", 1024, false}, {"64MB", 64 << 20, false}, {"1.5K", 1536, false},
		{" 2M ", 2 << 20, false}, {"1G", 1 << 30, false}, {"100B", 100, false},
		{"", 0, true}, {"-1", 0, true}, {"3GB", 0, true}, {"lots", 0, true},
	} {
		got, err := ParseSize(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// An Op's empty fields take fareinc's defaults; a malformed one says which
// field is wrong.
func TestOpParse(t *testing.T) {
	p, err := Op{Size: "64KB"}.parse()
	if err != nil || p.size != 64<<10 || p.dt != packet.FP32 || p.op != packet.Sum || p.pattern != Ints || p.timeout != 60*time.Second || p.mode != "inc" {
		t.Fatalf("defaults: %+v %v", p, err)
	}
	for _, c := range []struct {
		op   Op
		want string
	}{
		{Op{Size: "1x"}, "size"},
		{Op{Size: "1K", DType: "int8"}, "int8"},
		{Op{Size: "1K", Op: "avg"}, "avg"},
		{Op{Size: "1K", Pattern: "rand"}, "pattern"},
		{Op{Size: "6", DType: "fp32"}, "whole number of fp32"},
		{Op{Size: "1K", Timeout: "soon"}, "soon"},
	} {
		if _, err := c.op.parse(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.op, err, c.want)
		}
	}
}

// stubManager answers GetTree with a ready group of one rank.
type stubManager struct{ protos.ManagerClient }

func (stubManager) GetTree(context.Context, *protos.GetTreeRequest, ...grpc.CallOption) (*protos.TreeAssignment, error) {
	return &protos.TreeAssignment{State: protos.GroupState_GROUP_STATE_READY, Generation: 1, Size: 1,
		Members: []*protos.Member{{Address: "10.0.0.1"}}}, nil
}

// TestWorkerVerifiesByDefault: a worker's JSON line without "verify"
// checks the result, as fareinc allreduce does, and says so; with
// "verify": false no check runs and the output has no "verified" key
// (a false there would read as a failure).
func TestWorkerVerifiesByDefault(t *testing.T) {
	c := &Client{cfg: Config{Rank: 0, Size: 1}, log: slog.New(slog.DiscardHandler), mgr: stubManager{}}
	run := func(line string) (Op, map[string]any) {
		t.Helper()
		var op Op
		if err := json.Unmarshal([]byte(line), &op); err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		failed := c.Run(context.Background(), op, func(r Result) {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			out = append(out, m)
		})
		if failed || len(out) != 1 || out[0]["error"] != nil {
			t.Fatalf("%s: failed %v, %v", line, failed, out)
		}
		return op, out[0]
	}
	op, res := run(`{"cmd":"allreduce","size":"1KB","mode":"ring"}`)
	if !op.Verify || res["verified"] != true {
		t.Errorf(`without "verify": op.Verify %v, output %v; want a check and "verified": true`, op.Verify, res)
	}
	op, res = run(`{"cmd":"allreduce","size":"1KB","mode":"ring","verify":false}`)
	if _, ok := res["verified"]; op.Verify || ok {
		t.Errorf(`with "verify": false: op.Verify %v, output %v; want no check and no "verified" key`, op.Verify, res)
	}
	if op, _ = run(`{"cmd":"allreduce","size":"1KB","mode":"ring","verify":true}`); !op.Verify {
		t.Error(`"verify": true decoded as false`)
	}
	// A wrong result is reported as such: "verified": false next to the error.
	ok := false
	b, _ := json.Marshal(Result{Verified: &ok, Error: "wrong result: x"})
	if !strings.Contains(string(b), `"verified":false`) {
		t.Errorf("a failed check: %s", b)
	}
}
