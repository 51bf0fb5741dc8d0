package packet

import "encoding/binary"

// The LSP checksum (ISO 10589 7.3.11, algorithm of ISO 8473 annex C /
// RFC 1008) covers the PDU from the LSP ID to the end. Remaining lifetime is
// outside it so that every router can age an LSP without recomputing it.
const (
	lspCksumStart = 12 // LSP ID
	lspCksumField = 24 // checksum, big endian
	lspLifetime   = 10
)

// fletcherSums returns C0 and C1 (mod 255) over b. Sums are kept in uint64
// and reduced every 4096 bytes, far from overflow, to avoid a modulo per byte.
func fletcherSums(b []byte) (c0, c1 uint64) {
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

// fletcherChecksum computes the checksum for b with the two checksum bytes
// at b[pos:pos+2] taken as zero, such that both running sums over the
// whole of b are 0 mod 255 once they are written. Neither byte is ever 0
// (0 would mean "not computed").
func fletcherChecksum(b []byte, pos int) uint16 {
	saved0, saved1 := b[pos], b[pos+1]
	b[pos], b[pos+1] = 0, 0
	c0, c1 := fletcherSums(b)
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

// lspPDULen is the LSP's own length field if it is usable on raw.
func lspPDULen(raw []byte) (int, bool) {
	if len(raw) < 27 {
		return 0, false
	}
	n := int(binary.BigEndian.Uint16(raw[8:10]))
	if n < 27 || n > len(raw) {
		return 0, false
	}
	return n, true
}

// LSPChecksumOK verifies the checksum of a whole raw LSP PDU (bytes past
// its PDU length field are ignored). A checksum of 0 is accepted only on a
// purge (remaining lifetime 0), which ISO 10589 lets carry none.
func LSPChecksumOK(raw []byte) bool {
	n, ok := lspPDULen(raw)
	if !ok {
		return false
	}
	if binary.BigEndian.Uint16(raw[lspCksumField:]) == 0 {
		return binary.BigEndian.Uint16(raw[lspLifetime:]) == 0
	}
	c0, c1 := fletcherSums(raw[lspCksumStart:n])
	return c0 == 0 && c1 == 0
}

// LSPChecksum computes the checksum a raw LSP PDU should carry, ignoring
// what its checksum field holds now. It returns 0 if raw is not an LSP long
// enough for its own PDU length field.
func LSPChecksum(raw []byte) uint16 {
	n, ok := lspPDULen(raw)
	if !ok {
		return 0
	}
	return fletcherChecksum(raw[lspCksumStart:n], lspCksumField-lspCksumStart)
}

// SetLSPLifetime patches the remaining lifetime of a raw LSP in place. The
// checksum does not cover it, so the LSP stays valid. Too-short buffers are
// left alone.
func SetLSPLifetime(raw []byte, lifetime uint16) {
	if len(raw) >= lspLifetime+2 {
		binary.BigEndian.PutUint16(raw[lspLifetime:], lifetime)
	}
}

// LSPLifetime reads the remaining lifetime of a raw LSP (0 if too short).
func LSPLifetime(raw []byte) uint16 {
	if len(raw) < lspLifetime+2 {
		return 0
	}
	return binary.BigEndian.Uint16(raw[lspLifetime:])
}
