package packet

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fared/fared/internal/testvec"
)

// FRR's bfdd packets decode to what tshark read from the same capture,
// and re-encode byte for byte.
func TestFRRGoldens(t *testing.T) {
	states := map[string]State{"AdminDown": AdminDown, "Down": Down, "Init": Init, "Up": Up}
	rows := captured(t, "testdata/frr-bfdd-8.4.4.txt")
	for _, r := range rows {
		fs, b := r.fields, r.packet
		want := Control{State: states[fs[1]], Diag: Diag(r.num(t, 2)), Poll: fs[3] == "1", Final: fs[4] == "1",
			DetectMult: uint8(r.num(t, 5)), MyDisc: r.num(t, 6), YourDisc: r.num(t, 7),
			DesiredMinTx: r.num(t, 8), RequiredMinRx: r.num(t, 9), RequiredMinEchoRx: r.num(t, 10)}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", fs[0], err)
		}
		if got != want {
			t.Errorf("%s: decoded %v\nwant %v", fs[0], got, want)
		}
		if enc := got.AppendTo(nil); !bytes.Equal(enc, b) {
			t.Errorf("%s: re-encoded %x, want %x", fs[0], enc, b)
		}
	}
	if len(rows) != 6 {
		t.Fatalf("%d vectors", len(rows))
	}
}

// BIRD's authenticated packets decode to what tshark read from the same
// capture, verify with BIRD's key and no other, and re-encode (and sign)
// byte for byte.
func TestBIRDAuthGoldens(t *testing.T) {
	const key = "fared-and-bird"
	rows := captured(t, "testdata/bird-2.0.12-auth.txt")
	for _, r := range rows {
		fs, b := r.fields, r.packet
		c, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", fs[0], err)
		}
		if c.Auth.Type.String() != fs[0] || uint32(c.Auth.Type) != r.num(t, 1) || c.Auth.Len() != int(r.num(t, 2)) || uint32(c.Auth.KeyID) != r.num(t, 3) ||
			c.Auth.Seq != r.num(t, 4) || c.MyDisc != r.num(t, 5) || c.YourDisc != r.num(t, 6) || c.DesiredMinTx != r.num(t, 7) ||
			c.RequiredMinRx != r.num(t, 8) || uint32(c.DetectMult) != r.num(t, 9) || c.State != Up {
			t.Errorf("%s: decoded %v", fs[0], c)
		}
		if !Verify(b, []byte(key)) || Verify(b, []byte(key+"!")) || Verify(b, []byte(key[:len(key)-1])) {
			t.Errorf("%s: does not verify with BIRD's key alone", fs[0])
		}
		if got := c.AppendTo(nil); !bytes.Equal(got, b) {
			t.Errorf("%s: re-encoded %x\nwant         %x", fs[0], got, b)
		}
		if c.Auth.Type.Crypto() {
			c.Auth.Value = [20]byte{}
			w := c.AppendTo(nil)
			if err := Sign(w, []byte(key)); err != nil || !bytes.Equal(w, b) {
				t.Errorf("%s: signed %x\nwant   %x (%v)", fs[0], w, b, err)
			}
		}
	}
	if len(rows) != 5 {
		t.Fatalf("%d vectors", len(rows))
	}
}

// capture is one packet of a capture file: the fields tshark decoded and
// the packet's bytes (the last field, in hex).
type capture struct {
	fields []string
	packet []byte
}

// num is field i as a number (decimal or 0x hex).
func (c capture) num(t *testing.T, i int) uint32 {
	t.Helper()
	n, err := strconv.ParseUint(c.fields[i], 0, 32)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(n)
}

// captured reads a capture file: a packet a line, blank lines and
// # comments skipped.
func captured(t *testing.T, path string) []capture {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []capture
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		rows = append(rows, capture{fields: fs, packet: testvec.Hex(t, fs[len(fs)-1])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}
