package undertest

import (
	"testing"
	"time"
)

// summary844 is `show isis summary` of FRR 8.4.4 (Debian) as captured in
// a side-by-side run: an L2-only router.
const summary844 = `vrf             : default
Process Id      : 29260
System Id       : 0000.0000.0009
Up time         : 00:00:15 ago
Number of areas : 1
Area fabric:
  Net: 49.0001.0000.0000.0009.00
  TX counters per PDU type:
    P2P IIH: 179
     L2 LSP: 296
    L2 CSNP: 20
    L2 PSNP: 10
   LSP RXMT: 0
  RX counters per PDU type:
    P2P IIH: 160
     L2 LSP: 390
    L2 CSNP: 70
    L2 PSNP: 42
  Level-2:
    LSP0 regenerated: 4
         LSPs purged: 0
    SPF:
      minimum interval  : 1
    IPv4 route computation:
      last run elapsed  : 00:01:12 ago
      last run duration : 258 usec
      run count         : 3
`

func TestParseISISSummary(t *testing.T) {
	s, err := ParseISISSummary(summary844)
	if err != nil {
		t.Fatal(err)
	}
	if s.Duration != 258*time.Microsecond || s.Runs != 3 || s.Elapsed != 72*time.Second {
		t.Errorf("%+v", s)
	}
	if _, err := ParseISISSummary("Area fabric:\n"); err == nil {
		t.Error("no Level-2 section accepted")
	}
}
