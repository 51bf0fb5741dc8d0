package packet

import (
	"encoding/binary"

	"github.com/fared/fared/internal/fletcher"
)

// The LSP checksum (ISO 10589 7.3.11, algorithm of ISO 8473 annex C /
// RFC 1008) covers the PDU from the LSP ID to the end. Remaining lifetime is
// outside it so that every router can age an LSP without recomputing it.
const (
	lspCksumStart = 12 // LSP ID
	lspCksumField = 24 // checksum, big endian
	lspLifetime   = 10
)

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
	c0, c1 := fletcher.Sums(raw[lspCksumStart:n])
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
	return fletcher.Checksum(raw[lspCksumStart:n], lspCksumField-lspCksumStart)
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
