package manager

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/protos"
)

// BenchmarkStateAtCaps measures what the manager holds when hosts fill
// every cap: max-groups groups of max-group-size ranks, each with one rank
// joined (the rest claimed, not joined), spread over as many tokens as the
// per-token cap needs; joins past the caps are refused. Before the caps,
// 20,000 such groups of 4096 ranks cost +634 MiB (issue 25) and nothing
// refused them. Reported: heap held (MiB) and refused joins.
//
//	go test -run '^$' -bench StateAtCaps -benchtime 1x ./inc/manager/
func BenchmarkStateAtCaps(b *testing.B) {
	for _, size := range []int{64, 1024} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			for range b.N {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				now := time.Unix(1000, 0)
				s := NewState(Config{MaxGroupSize: size}, func() time.Time { return now }, nil, nil, nil)
				refused := 0
				for i := range 20000 {
					who := Caller{Token: auth.Claims{ID: fmt.Sprintf("t%d", i/32), Group: "*"}, Peer: "bench"}
					_, err := s.Join(&protos.JoinRequest{Group: fmt.Sprintf("g%d", i), Rank: 0, Size: uint32(size),
						Address: fmt.Sprintf("10.1.%d.%d", i/250%250+1, i%250+1), Qpn: uint32(1000 + i)}, who)
					if err != nil {
						refused++
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB")
				b.ReportMetric(float64(refused), "refused")
				b.ReportMetric(float64(len(s.groups)), "groups")
				runtime.KeepAlive(s)
			}
		})
	}
}
