package testvec

import (
	"bytes"
	"testing"
)

func TestHex(t *testing.T) {
	got := Hex(t, "01 02\n\t0a0B ff")
	if want := []byte{1, 2, 10, 11, 255}; !bytes.Equal(got, want) {
		t.Fatalf("% x, want % x", got, want)
	}
}
