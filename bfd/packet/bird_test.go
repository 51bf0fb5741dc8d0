package packet

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BIRD's authenticated packets decode to what tshark read from the same
// capture, verify with BIRD's key and no other, and re-encode (and sign)
// byte for byte.
func TestBIRDAuthGoldens(t *testing.T) {
	f, err := os.Open("testdata/bird-2.0.12-auth.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	num := func(s string) uint32 {
		n, err := strconv.ParseUint(s, 0, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(n)
	}
	const key = "fared-and-bird"
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		b, err := hex.DecodeString(fs[10])
		if err != nil {
			t.Fatal(err)
		}
		c, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", fs[0], err)
		}
		if c.Auth.Type.String() != fs[0] || uint32(c.Auth.Type) != num(fs[1]) || c.Auth.Len() != int(num(fs[2])) || uint32(c.Auth.KeyID) != num(fs[3]) ||
			c.Auth.Seq != num(fs[4]) || c.MyDisc != num(fs[5]) || c.YourDisc != num(fs[6]) || c.DesiredMinTx != num(fs[7]) ||
			c.RequiredMinRx != num(fs[8]) || uint32(c.DetectMult) != num(fs[9]) || c.State != Up {
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
		n++
	}
	if n != 5 {
		t.Fatalf("%d vectors", n)
	}
}
