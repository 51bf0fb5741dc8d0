// Package tlv holds the value checks iNOF's two TLV codecs share: l2's
// host–switch messages and record's BGP attribute. docs/inof.md gives
// both the same rules for fixed-size values and for text, and the same
// messages say what is wrong.
package tlv

import "fmt"

// Fixed returns what is wrong with v as an n-byte value, or "".
func Fixed(v []byte, n int) string {
	if len(v) != n {
		return fmt.Sprintf("length %d, want %d", len(v), n)
	}
	return ""
}

// Text returns v as text of 1..max bytes without control characters, or
// what is wrong with it.
func Text(v []byte, max int) (string, string) {
	if len(v) == 0 || len(v) > max {
		return "", fmt.Sprintf("length %d, want 1..%d", len(v), max)
	}
	for i, c := range v {
		if c < 0x20 || c == 0x7F {
			return "", fmt.Sprintf("control character 0x%02x at value byte %d", c, i)
		}
	}
	return string(v), ""
}
