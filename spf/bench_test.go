package spf_test

import (
	"testing"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/spf"
)

// BenchmarkRoutes3Stage is route selection alone (spf.Routes) on the
// 64-spine × 512-leaf fabric of the fare benchmarks: 576 nodes, 512
// prefixes. The SPF run is outside the loop.
func BenchmarkRoutes3Stage(b *testing.B) {
	g := closgen.ThreeStage{Spines: 64, Leaves: 512, Seed: 42}.Graph()
	r := spf.Run(g)
	b.ReportAllocs()
	for b.Loop() {
		spf.Routes(r)
	}
}

// BenchmarkRoutes5Stage: 6,144 nodes, 4,096 prefixes.
func BenchmarkRoutes5Stage(b *testing.B) {
	g := closgen.FiveStage{Pods: 64, Leaves: 64, Spines: 16, Super: 64, Seed: 42}.Graph()
	r := spf.Run(g)
	b.ReportAllocs()
	for b.Loop() {
		spf.Routes(r)
	}
}
