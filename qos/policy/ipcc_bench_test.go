package policy

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time of the calling thread.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// The figure "an IPCC Step over a full table" (issue 25). The benchmarks
// use only the policy's public API, so they run unchanged on the code
// before and after the flow table was bounded:
//
//	go test ./qos/policy -run '^$' -bench IPCC -benchmem
//
// Besides ns/op (wall time, which other processes on a shared machine
// inflate), they report cpu-ns/op: the CPU time the benchmark's thread
// spent in Step (CLOCK_THREAD_CPUTIME_ID, the goroutine locked to it).
//
// benchTable fills a default-sized table (65,536 flows, every sender QP
// learnt from an ACK) as 4,096 sources of 16 flows each, arriving on 4
// ports (16,384 each, the default per-port cap) and leaving through one
// watched queue.
const benchFlows = 65536

var benchPorts = [4]string{"in0", "in1", "in2", "in3"}

func benchKey(i int) (src, dst netip.Addr, qp uint32, port string) {
	src = netip.AddrFrom4([4]byte{10, 1, byte(i >> 12), byte(i >> 4)})
	dst = netip.AddrFrom4([4]byte{10, 2, 0, byte(i & 0xF)})
	return src, dst, 0x1000 + uint32(i&0xF), benchPorts[(i>>4)&3]
}

func benchTable(b *testing.B, now time.Time) *IPCC {
	b.Helper()
	c := DefaultIPCC()
	c.FlowTimeout = time.Hour // nothing expires during the benchmark
	p := NewIPCC(c)
	for i := 0; i < benchFlows; i++ {
		src, dst, qp, port := benchKey(i)
		p.Observe(now, IPCCPacket{Src: src, Dst: dst, DestQP: qp, PSN: 1, In: port, Out: "out", Prio: 3, Size: 1000})
		p.Observe(now, IPCCPacket{Src: dst, Dst: src, DestQP: 0x8000 + qp, PSN: 1, AETH: true, In: "out", Out: port, Prio: 3, Size: 64})
	}
	if n := p.Stats().Flows; n != benchFlows {
		b.Fatalf("table holds %d flows, want %d", n, benchFlows)
	}
	return p
}

// BenchmarkIPCCStepFullTable is one poll of a full table in which 8
// flows sent since the last poll and the watched queue is congested
// (growing, high): the table is full of flows that are not currently
// sending, as a spoofed-flow flood or many idle connections leave it.
func BenchmarkIPCCStepFullTable(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	now := t0
	p := benchTable(b, now)
	q := QueueKey{"out", 3}
	depth := uint64(200_000)
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(100 * time.Microsecond)
		for j := 0; j < 8; j++ {
			src, dst, qp, port := benchKey((i*8 + j) % benchFlows)
			p.Observe(now, IPCCPacket{Src: src, Dst: dst, DestQP: qp, PSN: 2, In: port, Out: "out", Prio: 3, Size: 1000})
		}
		depth += 1000
		m := map[QueueKey]uint64{q: depth}
		c0 := threadCPU(b)
		p.Step(now, m)
		cpu += threadCPU(b) - c0
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkIPCCStepFullTableAllActive is one poll after every flow of a
// full table sent a packet (the worst case for both: the policy must
// rank all 65,536 active flows). Only the Step is timed; the 65,536
// Observes before it are not.
func BenchmarkIPCCStepFullTableAllActive(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu time.Duration
	now := t0
	p := benchTable(b, now)
	q := QueueKey{"out", 3}
	depth := uint64(200_000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		now = now.Add(100 * time.Microsecond)
		for j := 0; j < benchFlows; j++ {
			src, dst, qp, port := benchKey(j)
			p.Observe(now, IPCCPacket{Src: src, Dst: dst, DestQP: qp, PSN: uint32(i + 2), In: port, Out: "out", Prio: 3, Size: 1000})
		}
		depth += 1000
		m := map[QueueKey]uint64{q: depth}
		b.StartTimer()
		c0 := threadCPU(b)
		p.Step(now, m)
		cpu += threadCPU(b) - c0
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkIPCCFullTableMemory reports the heap a full table holds
// (bytes per flow and MiB for the table).
func BenchmarkIPCCFullTableMemory(b *testing.B) {
	var keep *IPCC
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		keep = benchTable(b, t0)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/benchFlows, "B/flow")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB/table")
	}
	runtime.KeepAlive(keep)
}
