package config

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Area ids are 32-bit topology ids written as dotted quads (a routing
// protocol's areas; the `render:"area"` tag writes a uint32 field so, and
// the API's topology queries take either form).

// AreaString formats an area id as a dotted quad.
func AreaString(a uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], a)
	return netip.AddrFrom4(b).String()
}

// ParseArea parses an area id: dotted quad ("0.0.0.1") or a decimal
// number ("1").
func ParseArea(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
		return binary.BigEndian.Uint32(a.AsSlice()), nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid area %q (want a dotted quad like 0.0.0.0 or a number)", s)
	}
	return uint32(n), nil
}

// CanonArea writes an area id given either way as a dotted quad ("" stays
// ""): the form topologies are named by.
func CanonArea(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	a, err := ParseArea(s)
	if err != nil {
		return "", err
	}
	return AreaString(a), nil
}
