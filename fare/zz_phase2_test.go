package fare

import (
	"testing"
	"time"

	"github.com/fared/fared/fare/fabric"
	"github.com/fared/fared/spf"
)

func TestZZSame(t *testing.T) {
	g := graph3()
	g2 := fabric.WithLinkBW(g, 100, 5)
	const N = 300
	a := time.Now()
	for i := 0; i < N; i++ {
		spf.SameTopology(g, g2)
	}
	t.Logf("SameTopology %v", time.Since(a)/N)
}
