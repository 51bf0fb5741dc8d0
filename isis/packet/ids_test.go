package packet

import (
	"bytes"
	"testing"
)

func TestIDs(t *testing.T) {
	s, err := ParseSystemID("0000.0000.0001")
	if err != nil || s != sys(1) || s.String() != "0000.0000.0001" {
		t.Errorf("system id %v %v", s, err)
	}
	if s2, err := ParseSystemID("1921.6800.10ff"); err != nil || s2.String() != "1921.6800.10ff" {
		t.Errorf("%v %v", s2, err)
	}
	n := MakeNodeID(sys(1), 2)
	if n.String() != "0000.0000.0001.02" || n.SystemID() != sys(1) || n.Pseudo() != 2 {
		t.Errorf("node id %v", n)
	}
	if p, err := ParseNodeID("0000.0000.0001.02"); err != nil || p != n {
		t.Errorf("ParseNodeID %v %v", p, err)
	}
	l := MakeLSPID(sys(1), 2, 3)
	if l.String() != "0000.0000.0001.02-03" || l.NodeID() != n || l.Fragment() != 3 || l.Pseudo() != 2 || l.SystemID() != sys(1) {
		t.Errorf("LSP id %v", l)
	}
	for _, in := range []string{"0000.0000.0001.02-03", "0000.0000.0001.02.03"} {
		if p, err := ParseLSPID(in); err != nil || p != l {
			t.Errorf("ParseLSPID(%q) = %v %v", in, p, err)
		}
	}
	for _, bad := range []string{"", "0000.0000.001", "0000.0000.000g", ".0000.0000.0001", "0000..0000.0001", "0000.0000.0001.00-0"} {
		if _, err := ParseSystemID(bad); err == nil {
			t.Errorf("ParseSystemID(%q) accepted", bad)
		}
	}
	if _, err := ParseLSPID("0000.0000.0001.00"); err == nil {
		t.Error("ParseLSPID without fragment accepted")
	}
	a, b := MakeLSPID(sys(1), 0, 1), MakeLSPID(sys(2), 0, 0)
	if a.Compare(b) >= 0 || b.Compare(a) <= 0 || a.Compare(a) != 0 || a.Compare(b) != bytes.Compare(a[:], b[:]) {
		t.Error("LSPID.Compare")
	}
	if MakeNodeID(sys(1), 1).Compare(MakeNodeID(sys(1), 0)) <= 0 {
		t.Error("NodeID.Compare")
	}
}

func TestAreas(t *testing.T) {
	for in, want := range map[string][]byte{
		"49.0001":           {0x49, 0, 1},
		"49":                {0x49},
		"39.0840.f000.0001": {0x39, 0x08, 0x40, 0xf0, 0, 0, 1},
	} {
		got, err := ParseArea(in)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ParseArea(%q) = %x %v", in, got, err)
		}
		if FormatArea(got) != in {
			t.Errorf("FormatArea(%x) = %q", got, FormatArea(got))
		}
	}
	for _, bad := range []string{"", "4", "49.", "xx.0001", "49..0001", "49.0001.0203.0405.0607.0809.0a0b.0c"} {
		if _, err := ParseArea(bad); err == nil {
			t.Errorf("ParseArea(%q) accepted", bad)
		}
	}
	if FormatArea(nil) != "" || FormatArea([]byte{0x49, 0, 1, 2}) != "49.0001.02" {
		t.Error("FormatArea odd lengths")
	}
}

// Next counts up through the id's bytes with carry: where a CSNP series
// goes on after an End.
func TestLSPIDNext(t *testing.T) {
	for _, tc := range []struct{ in, want LSPID }{
		{LSPID{0, 0, 0, 0, 0, 1, 0, 0}, LSPID{0, 0, 0, 0, 0, 1, 0, 1}},
		{LSPID{0, 0, 0, 0, 0, 1, 0, 0xff}, LSPID{0, 0, 0, 0, 0, 1, 1, 0}},
		{LSPID{0, 0, 0, 0, 0, 0xff, 0xff, 0xff}, LSPID{0, 0, 0, 0, 1, 0, 0, 0}},
		{LSPID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, LSPID{}},
	} {
		if got := tc.in.Next(); got != tc.want {
			t.Errorf("%v.Next() = %v, want %v", tc.in, got, tc.want)
		}
	}
}
