// Package testvec reads the byte vectors of codec tests: packets written
// as hex the way a spec or a capture prints them, spaced and split over
// lines into fields, so that a vector reads like its layout.
package testvec

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Hex is the bytes of s, hex digits with any white space between them;
// a malformed vector fails the test.
func Hex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
