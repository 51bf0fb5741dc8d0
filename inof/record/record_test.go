package record

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/internal/testvec"
)

var sw1 = netip.MustParseAddr("10.255.0.3")

func sampleHost() *Host {
	return &Host{Switch: sw1, SwitchName: "leaf1", Port: "h1-1", Source: l2.SourceAgent, State: StateUp,
		Host: l2.Host{ID: "h1", Role: l2.RoleInitiator, MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1},
			Addrs: []netip.Addr{netip.MustParseAddr("10.254.0.9")}},
		Zones: []string{"z1"}, Since: time.UnixMilli(1700000000123)}
}

// Built from docs/inof.md ("Records") by hand.
const hostHex = `01 01
	01 0004 0aff0003
	02 0005 6c65616631
	03 0004 68312d31
	04 0002 6831
	05 0001 01
	07 0006 020000000001
	08 0004 0afe0009
	0a 0001 01
	0b 0001 01
	0c 0002 7a31
	0d 0008 0000018bcfe5687b`

func TestHostGolden(t *testing.T) {
	want := testvec.Hex(t, hostHex)
	if got := AppendTo(nil, sampleHost()); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n got %x\nwant %x", got, want)
	}
	r, err := Decode(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, sampleHost()) {
		t.Fatalf("decoded %+v", r)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, r := range []Record{
		sampleHost(),
		&Host{Switch: sw1, Port: "p", Source: l2.SourceLLDP, State: StateLeft, Host: l2.Host{ID: "t", Role: l2.RoleTarget,
			NQN: "nqn.2014-08.org.example:t", Addrs: []netip.Addr{netip.MustParseAddr("fd00::7"), netip.MustParseAddr("10.0.0.7")}}},
		&Host{Switch: sw1, Port: "p", Source: l2.SourceAgent, State: StateBound, Pinned: true, Host: l2.Host{ID: "t", Role: l2.RoleTarget,
			MAC: net.HardwareAddr{2, 0, 0, 0, 0, 9}}},
		&Zone{Origin: sw1, Stamp: 1 << 60, Name: "z1", Chunk: 3, Members: []string{"h1", "h2"}},
		&Zone{Origin: sw1, Stamp: 5, Name: "empty"},
		&Manifest{Origin: sw1, Stamp: 77, Chunks: 4, AutoAdd: true},
	} {
		b := AppendTo(nil, r)
		if Len(r) != len(b) {
			t.Fatal("Len")
		}
		d, err := Decode(b)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if !reflect.DeepEqual(d, r) {
			t.Fatalf("decoded %+v, want %+v", d, r)
		}
		if d.Key() != r.Key() {
			t.Fatal("key")
		}
	}
}

// Keys: the origin switch and the port are part of a host's identity, so a
// dual-homed host is two records; the id is SHA-256 of the parts.
func TestKeys(t *testing.T) {
	h := &Host{Switch: sw1, Port: "leaf1-eth1", Host: l2.Host{ID: "h1"}}
	// printf 'host\0h1\0leaf1-eth1\0' | sha256sum
	if got := hexID(h.Key()); got != "411427c93e0a2de9af89453da08ceb84" {
		t.Fatalf("host id %s", got)
	}
	other := *h
	other.Switch = netip.MustParseAddr("10.255.0.4")
	port := *h
	port.Port = "leaf1-eth2"
	if h.Key() == other.Key() || h.Key() == port.Key() || other.Key().ID != h.Key().ID {
		t.Fatal("dual homing: keys must differ by switch (origin) and by port (id)")
	}
	// printf 'manifest\0' | sha256sum
	m := &Manifest{Origin: sw1}
	if got := hexID(m.Key()); got != "7aca5e95f94236861370a4de3ec5643c" {
		t.Fatalf("manifest id %s", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := testvec.Hex(t, hostHex)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "offset 0: 0 bytes"},
		{"version", mod(func(b []byte) []byte { b[0] = 9; return b }), "version 9"},
		{"kind", mod(func(b []byte) []byte { b[1] = 9; return b }), "offset 1: unknown kind 9"},
		{"truncated", good[:len(good)-3], "TLV 13 at offset 62: length 8 runs past the end (70)"},
		{"bad role", mod(func(b []byte) []byte { b[32] = 4; return b }), "TLV 5 at offset 29: role 04"},
		{"manifest tlv in host", append(mod(func(b []byte) []byte { return b }), 25, 0, 1, 1), "TLV 25 at offset 73: not allowed in a host record"},
		{"missing port", testvec.Hex(t, "01 01 01 0004 0aff0003 04 0002 6831 05 0001 01 0a 0001 01 0b 0001 01"), "TLV 3 at offset 26: required in a host record, missing"},
		{"repeated origin", testvec.Hex(t, "01 03 01 0004 0aff0003 01 0004 0aff0003"), "TLV 1 at offset 9: repeated"},
		{"bad source", mod(func(b []byte) []byte { b[52] = 3; return b }), "TLV 10 at offset 49: source 03"},
		{"bad state", mod(func(b []byte) []byte { b[56] = 5; return b }), "TLV 11 at offset 53: state 05, want one byte 1..4"},
		{"bad pinned", append(mod(func(b []byte) []byte { return b }), 14, 0, 1, 2), "TLV 14 at offset 73: pinned 02, want one byte 1"},
	} {
		_, err := Decode(c.b)
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Unknown TLV types are skipped.
	b := append(testvec.Hex(t, "01 03 01 0004 0aff0003 14 0008 0000000000000001 18 0004 00000000 19 0001 00"), 99, 0, 2, 7, 7)
	if r, err := Decode(b); err != nil || r.(*Manifest).Stamp != 1 {
		t.Fatalf("%v %v", r, err)
	}
}

func TestCommunities(t *testing.T) {
	h := sampleHost()
	c := h.Communities(65000)
	// FNV-1a of "z1": offset basis 2166136261, prime 16777619.
	want := uint32(2166136261)
	for _, ch := range []byte("z1") {
		want ^= uint32(ch)
		want *= 16777619
	}
	if len(c) != 2 || c[0] != (Community{65000, 2, 0x0aff0003}) || c[1] != (Community{65000, 1, want}) {
		t.Fatalf("%v", c)
	}
	if c[0].String() != "65000:2:184483843" {
		t.Fatal(c[0].String())
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(testvec.Hex(f, hostHex))
	f.Add(AppendTo(nil, &Zone{Origin: sw1, Stamp: 1, Name: "z", Members: []string{"a"}}))
	f.Add(AppendTo(nil, &Manifest{Origin: sw1, Stamp: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("%T", err)
			}
			return
		}
		enc := AppendTo(nil, r)
		r2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !bytes.Equal(AppendTo(nil, r2), enc) {
			t.Fatal("not idempotent")
		}
	})
}

func hexID(k Key) string { return hex.EncodeToString(k.ID[:]) }
