// Package fletcher is the checksum of ISO 8473 annex C (RFC 1008 §7), used
// by IS-IS LSPs (ISO 10589 §7.3.11) and OSPF LSAs (RFC 2328 §12.1.7): a
// Fletcher checksum mod 255 whose two bytes sit inside the checked data.
package fletcher

// Sums returns C0 and C1 (mod 255) over b. A buffer that carries a correct
// checksum sums to (0, 0). Sums are kept in uint64 and reduced every 4096
// bytes, far from overflow, to avoid a modulo per byte.
func Sums(b []byte) (c0, c1 uint64) {
	for len(b) > 0 {
		n := min(len(b), 4096)
		for _, v := range b[:n] {
			c0 += uint64(v)
			c1 += c0
		}
		c0 %= 255
		c1 %= 255
		b = b[n:]
	}
	return c0, c1
}

// Checksum computes the checksum for b with the two checksum bytes at
// b[pos:pos+2] taken as zero, such that both running sums over the whole
// of b are 0 mod 255 once they are written. Neither byte is ever 0 (0
// would mean "not computed"). b is left as it was.
func Checksum(b []byte, pos int) uint16 {
	saved0, saved1 := b[pos], b[pos+1]
	b[pos], b[pos+1] = 0, 0
	c0, c1 := Sums(b)
	b[pos], b[pos+1] = saved0, saved1
	// X sits at 1-based position n = pos+1 of L bytes:
	// X = (L-n)*C0 - C1, Y = C1 - (L-n+1)*C0, all mod 255.
	k := uint64(len(b)-pos-1) % 255
	x := (k*c0 + 255 - c1) % 255
	y := (c1 + 255*2 - ((k+1)%255)*c0%255) % 255
	if x == 0 {
		x = 255
	}
	if y == 0 {
		y = 255
	}
	return uint16(x)<<8 | uint16(y)
}
