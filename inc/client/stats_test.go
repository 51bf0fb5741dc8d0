package client

import (
	"context"
	"log/slog"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fared/fared/inc/protos"
)

// TestTotals: every operation Run executes is added to the totals the
// heartbeats carry: completed ones with their bytes, failed ones counted
// as such, the transport's retransmissions and timeouts either way.
func TestTotals(t *testing.T) {
	c := &Client{cfg: Config{Rank: 0, Size: 1}, log: slog.New(slog.DiscardHandler), mgr: stubManager{}}
	ctx := context.Background()
	var errs []string
	emit := func(r Result) {
		if r.Error != "" {
			errs = append(errs, r.Error)
		}
	}
	// Two ring operations of 1 KB (a group of one rank: nothing on the
	// wire) complete; an INC one fails at once, the stub's tree having no
	// switch address; a malformed request is no operation.
	c.Run(ctx, Op{Size: "1KB", Mode: "ring", Iters: 2, Verify: true}, emit)
	c.Run(ctx, Op{Size: "2KB", Mode: "inc"}, emit)
	c.Run(ctx, Op{Size: "lots"}, emit)
	if len(errs) != 2 {
		t.Fatalf("errors %q, want the INC failure and the malformed size", errs)
	}
	want := &protos.ClientStats{Bytes: 2048, Operations: 3, FailedOperations: 1}
	if got := c.totals.proto(); !proto.Equal(got, want) {
		t.Fatalf("after Run: %v, want %v", got, want)
	}
	c.tally(Stats{Bytes: 4096, Retransmits: 5, Timeouts: 2}, nil)
	c.tally(Stats{Bytes: 4096, Retransmits: 7, Timeouts: 7}, context.DeadlineExceeded)
	want = &protos.ClientStats{Bytes: 6144, Operations: 5, FailedOperations: 2, Retransmissions: 12, Timeouts: 9}
	if got := c.totals.proto(); !proto.Equal(got, want) {
		t.Fatalf("after two more: %v, want %v", got, want)
	}
}
