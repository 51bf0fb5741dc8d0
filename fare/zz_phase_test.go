package fare

import (
	"testing"
	"time"

	"github.com/fared/fared/spf"
)

func TestZZPhases(t *testing.T) {
	g := graph3()
	r := spf.Run(g)
	rs := spf.Routes(r)
	const N = 300
	var t1, t2, t3, t4 time.Duration
	for i := 0; i < N; i++ {
		a := time.Now()
		ne := len(r.EdgeParent)
		bw := make([]float64, ne)
		uk := make([]bool, ne)
		var an Anomalies
		edgeBandwidths(r, &an, bw, uk)
		b := time.Now()
		cc := &capCalc{}
		cc.reset(r, bw, uk)
		for _, rt := range rs {
			cc.caps(rt.Sources[0].Node)
		}
		c := time.Now()
		ComputeTable(r, rs, Options{})
		d := time.Now()
		spf.Routes(r)
		e := time.Now()
		t1 += b.Sub(a)
		t2 += c.Sub(b)
		t3 += d.Sub(c)
		t4 += e.Sub(d)
	}
	t.Logf("edgeBW %v caps %v computeTable %v routes %v", t1/N, t2/N, t3/N, t4/N)
}
