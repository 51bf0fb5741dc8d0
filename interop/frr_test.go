package interop

import (
	"slices"
	"testing"
)

func TestParseISISNeighbors(t *testing.T) {
	out := `Area fabric:
  System Id           Interface   L  State        Holdtime SNPA
 r2                  r2-1        2  Up            3        2020.2020.2020
 r2                  seg1        2  Up            2        fae7.8973.c1b7
 r3                  seg1        2  Initializing  2        42b0.708d.6718
`
	got := parseISISNeighbors(out)
	if len(got) != 3 || got[1] != (ISISAdj{SystemID: "r2", Interface: "seg1", Level: "2", State: "Up", SNPA: "fae7.8973.c1b7"}) || got[2].State != "Initializing" {
		t.Errorf("got %+v", got)
	}
}

// FRR 8.4.4's `show isis database`: own LSP starred, a purged one with
// holdtime 0, headers and the count line skipped.
func TestParseISISDatabase(t *testing.T) {
	out := `Area fabric:
IS-IS Level-2 link-state database:
LSP ID                  PduLen  SeqNumber   Chksum  Holdtime  ATT/P/OL
r1.00-00             *    120   0x00000003  0xabcd    1190    0/0/0
f1.00-00                   97   0x0000000a  0x1f2e       0    0/0/0
    2 LSPs
`
	got, err := ParseISISDatabase(out)
	want := []ISISLSPRow{{LSPID: "r1.00-00", Own: true, Seq: 3, Checksum: 0xabcd, Holdtime: 1190}, {LSPID: "f1.00-00", Seq: 10, Checksum: 0x1f2e}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
}
