package isis

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fared/fared/bfd"
	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
)

type repairLog struct {
	mu   sync.Mutex
	down []string
	up   []string
}

func (r *repairLog) NeighborDown(ifindex int, gws ...netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = append(r.down, fmt.Sprint(ifindex, gws))
}

func (r *repairLog) NeighborUp(ifindex int, gws ...netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.up = append(r.up, fmt.Sprint(ifindex, gws))
}

func (r *repairLog) downs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.down)
}

// startMemBFD is startMemCfg with a BFD manager and a repair hook.
func startMemBFD(t *testing.T, n int, cfg *config.Config, ifs []memIf, m *bfd.Manager, rep Repairer) *memNode {
	t.Helper()
	opt := memOptions(t, n, ifs, nil)
	opt.BFD, opt.Repair = m, rep
	return runMem(t, cfg, opt)
}

func bfdUp(ctx context.Context, m *bfd.Manager) error {
	s, _, err := m.Sessions(ctx)
	if err != nil {
		return err
	}
	if len(s) != 1 || s[0].State != "Up" {
		return fmt.Errorf("sessions %+v", s)
	}
	return nil
}

// BFD takes the adjacency down while hellos still flow (the hold time is
// 3 s), local repair hears of it at once, and the session follows the
// adjacency when it forms again.
func TestBFDTakesAdjacencyDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a1, a2 := netip.MustParseAddr("10.254.0.0"), netip.MustParseAddr("10.254.0.1")
	net := bfd.NewMemNet()
	m1, m2 := bfd.New(bfd.Options{IO: net.IO(a1, 12)}), bfd.New(bfd.Options{IO: net.IO(a2, 12)})
	go m1.Run(ctx)
	go m2.Run(ctx)
	w := &wire{}
	ifs1 := []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.PrefixFrom(a1, 31)}}
	ifs2 := []memIf{{name: "e0", typ: "p2p", w: w, addr: netip.PrefixFrom(a2, 31)}}
	// 300 ms detection: short enough for a quick test, long enough that a
	// loaded machine (CI runs packages in parallel) does not expire it.
	sec := "  bfd: {interval: 100ms, multiplier: 3}\n"
	var rep repairLog
	r1 := startMemBFD(t, 1, testConfig(t, 1, "2", ifs1, sec), ifs1, m1, &rep)
	r2 := startMemBFD(t, 2, testConfig(t, 2, "2", ifs2, sec), ifs2, m2, nil)
	igptest.Poll(t, 10*time.Second, "adjacency up", func() error {
		if err := neighborsUp(r1, 1); err != nil {
			return err
		}
		return neighborsUp(r2, 1)
	})
	igptest.Poll(t, 10*time.Second, "BFD up", func() error {
		if err := bfdUp(ctx, m1); err != nil {
			return err
		}
		return bfdUp(ctx, m2)
	})
	if d := rep.downs(); len(d) != 0 {
		t.Fatalf("local repair before any failure: %v", d)
	}
	net.Mute(a2, true) // r2's BFD falls silent; its hellos do not
	igptest.Poll(t, 10*time.Second, "local repair of r2 on r1", func() error {
		if d := rep.downs(); !slices.Contains(d, "12 [10.254.0.1]") {
			return fmt.Errorf("repairs %v", d)
		}
		return nil
	})
	// Hellos may re-form the adjacency before this reads it (a new
	// adjacency is Up with no flaps), so ask the circuit's counter.
	ifs, err := r1.in.Interfaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ifs) != 1 || ifs[0].Counters["adjacency_down"] == 0 {
		t.Fatalf("adjacency never went down: %+v", ifs)
	}
	// Hellos bring it back; BFD comes Up again once r2 speaks.
	net.Mute(a2, false)
	igptest.Poll(t, 15*time.Second, "adjacency and BFD back", func() error {
		if err := neighborsUp(r1, 1); err != nil {
			return err
		}
		return bfdUp(ctx, m1)
	})
}
