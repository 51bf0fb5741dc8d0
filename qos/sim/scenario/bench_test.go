package scenario

import (
	"testing"
	"time"
)

// BenchmarkSim16Port64Flow runs bench16.yaml (one 16-port 100G switch,
// 64 DCQCN flows, PFC, ECN, elephant separation, the watchdog polling)
// and reports simulated seconds per wall second.
func BenchmarkSim16Port64Flow(b *testing.B) {
	s, err := Load("testdata/bench16.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var sim time.Duration
	var events uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := s.Run()
		if err != nil {
			b.Fatal(err)
		}
		sim += s.Duration
		events += out.Results.Events
	}
	b.ReportMetric(sim.Seconds()/b.Elapsed().Seconds(), "sim-s/wall-s")
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
