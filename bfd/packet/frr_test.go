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

// FRR's bfdd packets decode to what tshark read from the same capture,
// and re-encode byte for byte.
func TestFRRGoldens(t *testing.T) {
	f, err := os.Open("testdata/frr-bfdd-8.4.4.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	states := map[string]State{"AdminDown": AdminDown, "Down": Down, "Init": Init, "Up": Up}
	num := func(s string) uint32 {
		n, err := strconv.ParseUint(s, 0, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(n)
	}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		b, err := hex.DecodeString(fs[11])
		if err != nil {
			t.Fatal(err)
		}
		want := Control{State: states[fs[1]], Diag: Diag(num(fs[2])), Poll: fs[3] == "1", Final: fs[4] == "1",
			DetectMult: uint8(num(fs[5])), MyDisc: num(fs[6]), YourDisc: num(fs[7]),
			DesiredMinTx: num(fs[8]), RequiredMinRx: num(fs[9]), RequiredMinEchoRx: num(fs[10])}
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
		n++
	}
	if n != 6 {
		t.Fatalf("%d vectors", n)
	}
}
