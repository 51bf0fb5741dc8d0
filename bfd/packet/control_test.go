package packet

import (
	"bytes"
	"errors"
	"testing"

	"github.com/fared/fared/internal/testvec"
)

// golden is worked out by hand from the figure in RFC 5880 §4.1: version 1,
// diag 3 (0x20|0x03), state Up with P set (0xc0|0x20), mult 3, length 24,
// my 0x11223344, your 0x55667788, tx 50000 us (0xc350), rx 1 s
// (0x0f4240), echo 0.
const golden = "23e0031811223344556677880000c350000f424000000000"

func TestGolden(t *testing.T) {
	b := testvec.Hex(t, golden)
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := Control{Diag: DiagNeighborDown, State: Up, Poll: true, DetectMult: 3, MyDisc: 0x11223344, YourDisc: 0x55667788,
		DesiredMinTx: 50000, RequiredMinRx: 1000000}
	if c != want {
		t.Fatalf("decoded %+v\nwant    %+v", c, want)
	}
	if got := want.AppendTo(nil); !bytes.Equal(got, b) {
		t.Fatalf("encoded %x\nwant    %x", got, b)
	}
}

func TestRoundTripFlags(t *testing.T) {
	for _, c := range []Control{
		{State: Down, DetectMult: 1, MyDisc: 1, DesiredMinTx: 1000000, RequiredMinRx: 1000000},
		{State: Init, Final: true, CPI: true, Demand: true, DetectMult: 255, MyDisc: 0xffffffff, YourDisc: 7, RequiredMinEchoRx: 9},
		{State: AdminDown, Diag: DiagAdminDown, DetectMult: 3, MyDisc: 2},
	} {
		b := c.AppendTo([]byte{0xaa})[1:]
		if len(b) != Len {
			t.Fatalf("%v: %d bytes", c, len(b))
		}
		got, err := Decode(b)
		if err != nil || got != c {
			t.Fatalf("round trip of %v: %v, %v", c, got, err)
		}
	}
}

func TestDiscard(t *testing.T) {
	base := testvec.Hex(t, golden)
	mod := mutator(base)
	checkDiscards(t, []discard{
		{"short", base[:23], KindTruncated, 0},
		{"version 0", mod(func(b []byte) []byte { b[0] &= 0x1f; return b }), KindVersion, 0},
		{"A bit without a section", mod(func(b []byte) []byte { b[1] |= 0x04; return b }), KindLength, 3},
		{"length 23", mod(func(b []byte) []byte { b[3] = 23; return b }), KindLength, 3},
		{"length past the payload", mod(func(b []byte) []byte { b[3] = 25; return b }), KindLength, 3},
		{"mult 0", mod(func(b []byte) []byte { b[2] = 0; return b }), KindMultiplier, 2},
		{"multipoint", mod(func(b []byte) []byte { b[1] |= 0x01; return b }), KindMultipoint, 1},
		{"my disc 0", mod(func(b []byte) []byte { copy(b[4:8], []byte{0, 0, 0, 0}); return b }), KindMyDisc, 4},
		{"your disc 0 when Up", mod(func(b []byte) []byte { copy(b[8:12], []byte{0, 0, 0, 0}); return b }), KindYourDisc, 8},
	})
	// RFC 5880 §6.8.6 discards only a Length longer than the payload:
	// trailing bytes past Length are not an error.
	if _, err := Decode(append(bytes.Clone(base), 0, 0, 0)); err != nil {
		t.Errorf("trailing bytes: %v", err)
	}
	// Your Discriminator zero is fine in Down.
	b := mod(func(b []byte) []byte { copy(b[8:12], []byte{0, 0, 0, 0}); b[1] = byte(Down) << 6; return b })
	if _, err := Decode(b); err != nil {
		t.Errorf("your disc 0 in Down: %v", err)
	}
}

// FuzzDecode: no input panics Decode; what decodes re-encodes to the
// bytes it came from (its Length bytes), but for the reserved byte of a
// keyed section (ignored on receipt, sent as zero) and the M bit (refused);
// a packet with a section verifies with no key but, at most, the one in
// it (a simple password).
func FuzzDecode(f *testing.F) {
	for _, h := range []string{golden, goldenSHA1, goldenMD5, "2044031d11223344000000000000c3500000c3500000000001050270770000"} {
		f.Add(testvec.Hex(f, h))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset >= max(len(b), Len) {
				t.Fatalf("error %v: no offset inside the packet", err)
			}
			return
		}
		n := int(b[3])
		want := bytes.Clone(b[:n])
		if c.Auth.Type.Crypto() {
			want[Len+3] = 0
		}
		got := c.AppendTo(nil)
		if c.Auth.Type != 0 || n == Len {
			if !bytes.Equal(got, want) {
				t.Fatalf("re-encoded %x from %x", got, b)
			}
		}
		if c.Auth.Type != 0 && Verify(b, []byte("fuzz-key")) && string(c.Auth.Password()) != "fuzz-key" {
			t.Fatalf("a fuzzed section verified with a key: %x", b)
		}
	})
}

// discard is a malformed packet and where Decode must find it wrong.
type discard struct {
	name string
	b    []byte
	kind ErrKind
	off  int
}

// mutator makes malformed packets: each call changes a copy of base.
func mutator(base []byte) func(f func(b []byte) []byte) []byte {
	return func(f func(b []byte) []byte) []byte { return f(bytes.Clone(base)) }
}

// checkDiscards: Decode refuses each packet with its kind at its offset.
func checkDiscards(t *testing.T, cases []discard) {
	t.Helper()
	for _, tc := range cases {
		_, err := Decode(tc.b)
		var de *DecodeError
		if !errors.As(err, &de) || de.Kind != tc.kind || de.Offset != tc.off {
			t.Errorf("%s: got %v, want kind %s at offset %d", tc.name, err, tc.kind, tc.off)
		}
	}
}
