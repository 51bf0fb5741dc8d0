package fib

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// benchRoutes returns n IPv4 /24s spread over 64 groups of 4 members out
// of 16 gateways on one link; shift changes every group's weights.
func benchRoutes(idx, n int, shift uint32) []Route {
	gws := make([]netip.Addr, 16)
	for i := range gws {
		gws[i] = netip.AddrFrom4([4]byte{10, 1, 0, byte(2 + i)})
	}
	groups := make([][]NextHop, 64)
	for g := range groups {
		for j, off := range []int{0, 1, 3, 7} {
			// g/16 varies the weights so 64 groups are distinct over 16 rotations.
			w := uint32(1+j) + uint32(g/16)*uint32(j) + shift*uint32(j*j+1)
			groups[g] = append(groups[g], NextHop{Gateway: gws[(g+off)%16], IfIndex: idx, Weight: w})
		}
	}
	rs := make([]Route, n)
	for i := range rs {
		a := uint32(20<<24) + uint32(i)<<8
		rs[i] = Route{
			Prefix:   netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), 0}), 24),
			NextHops: groups[i%64],
		}
	}
	return rs
}

// BenchmarkSync100k: 100,000 IPv4 prefixes over 64 groups into a fresh
// namespace, then a reweight of every group. Reports routes/s of the
// initial Sync and the messages the reweight cost.
func BenchmarkSync100k(b *testing.B) {
	for _, compat := range []string{"0", "1"} {
		b.Run("nexthop_compat_mode="+compat, func(b *testing.B) {
			n := newNS(b)
			n.sysctl("net.ipv4.nexthop_compat_mode", compat)
			// No dummy driver in this kernel: one veth, peer up, 10.1.0.1/24.
			idx := n.veths(1)[0].idx
			const N = 100000
			initial, reweighted := benchRoutes(idx, N, 0), benchRoutes(idx, N, 1)
			var syncTime, syncCPU, reweightTime time.Duration
			var reweightMsgs, syncMsgs int
			for b.Loop() {
				f := n.open(Config{})
				t0, c0 := time.Now(), cpuTime()
				st := mustSync(b, f, initial)
				syncTime += time.Since(t0)
				syncCPU += cpuTime() - c0
				syncMsgs = st.Messages
				if st.RoutesAdded != N || st.GroupsAdded != 64 {
					b.Fatalf("initial: %+v", st)
				}
				t0 = time.Now()
				st = mustSync(b, f, reweighted)
				reweightTime += time.Since(t0)
				reweightMsgs = st.Messages
				if st.GroupsReplaced != 64 || st.Messages != 64 {
					b.Fatalf("reweight: %+v", st)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(N)*float64(b.N)/syncTime.Seconds(), "routes/s")
			// Per CPU-second of this process (user+sys: the kernel inserts
			// routes inside our sendmsg), which a loaded test box does not skew.
			b.ReportMetric(float64(N)*float64(b.N)/syncCPU.Seconds(), "routes/cpu-s")
			b.ReportMetric(float64(syncMsgs), "sync-msgs")
			b.ReportMetric(float64(reweightMsgs), "reweight-msgs")
			b.ReportMetric(float64(reweightTime.Microseconds())/float64(b.N), "reweight-µs")
			fmt.Printf("compat=%s: initial Sync %v/op wall, %v/op cpu (%d msgs), reweight %v/op (%d msgs)\n", compat,
				syncTime/time.Duration(b.N), syncCPU/time.Duration(b.N), syncMsgs, reweightTime/time.Duration(b.N), reweightMsgs)
		})
	}
}

// cpuTime is user+system time of the process so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkNormalise: the validation and sharing pass of Sync on its own,
// for 100,000 routes over 64 interleaved groups (BenchmarkSync100k's
// table).
func BenchmarkNormalise(b *testing.B) {
	rs := benchRoutes(3, 100000, 0)
	f := &FIB{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.normalise(rs); err != nil {
			b.Fatal(err)
		}
	}
}
