package packet

import (
	"encoding/binary"

	"github.com/fared/fared/internal/fletcher"
)

// Packet checksum (RFC 2328 A.3.1): the 16-bit one's complement of the one's
// complement sum of the whole packet, the 64-bit authentication field
// excluded, for AuType 0 and 1. Cryptographic authentication (AuType 2)
// leaves it 0.
const (
	pktChecksumOff = 12
	pktAuthOff     = 16
	pktAuthEnd     = 24
)

// onesSum adds b as big-endian 16-bit words (an odd last byte padded with
// zero) to sum, without folding.
func onesSum(sum uint64, b []byte) uint64 {
	for len(b) >= 8 {
		sum += uint64(binary.BigEndian.Uint16(b)) + uint64(binary.BigEndian.Uint16(b[2:])) +
			uint64(binary.BigEndian.Uint16(b[4:])) + uint64(binary.BigEndian.Uint16(b[6:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	return sum
}

func fold(sum uint64) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// packetSum is the folded sum over pkt (at least 24 bytes) without its
// authentication field, the checksum field included as it is.
func packetSum(pkt []byte) uint16 {
	return fold(onesSum(onesSum(0, pkt[:pktAuthOff]), pkt[pktAuthEnd:]))
}

// PacketChecksum computes the checksum a whole OSPF packet (its checksum
// field taken as zero) should carry. pkt must be at least 24 bytes.
func PacketChecksum(pkt []byte) uint16 {
	s := onesSum(0, pkt[:pktChecksumOff])
	s = onesSum(s, pkt[pktChecksumOff+2:pktAuthOff])
	s = onesSum(s, pkt[pktAuthEnd:])
	return ^fold(s)
}

// LSA checksum (RFC 2328 §12.1.7): the Fletcher checksum of ISO 8473 annex
// C over the whole LSA except the LS age, so that LSAs age without being
// recomputed.
const (
	lsaCksumStart = 2  // options, right after the age
	lsaCksumField = 16 // checksum, big endian
)

// lsaLen is the LSA's own length field if it is usable on raw.
func lsaLen(raw []byte) (int, bool) {
	if len(raw) < LSAHeaderLen {
		return 0, false
	}
	n := int(binary.BigEndian.Uint16(raw[18:]))
	if n < LSAHeaderLen || n > len(raw) {
		return 0, false
	}
	return n, true
}

// LSAChecksumOK verifies the Fletcher checksum of a raw LSA (bytes past its
// length field are ignored). A zero checksum never verifies.
func LSAChecksumOK(raw []byte) bool {
	n, ok := lsaLen(raw)
	if !ok || binary.BigEndian.Uint16(raw[lsaCksumField:]) == 0 {
		return false
	}
	c0, c1 := fletcher.Sums(raw[lsaCksumStart:n])
	return c0 == 0 && c1 == 0
}

// LSAChecksum computes the checksum a raw LSA should carry, ignoring what
// its checksum field holds now; 0 if raw is shorter than its length field
// or than an LSA header.
func LSAChecksum(raw []byte) uint16 {
	n, ok := lsaLen(raw)
	if !ok {
		return 0
	}
	return fletcher.Checksum(raw[lsaCksumStart:n], lsaCksumField-lsaCksumStart)
}

// SetLSAAge patches the LS age of a raw LSA in place. The checksum does not
// cover it. Buffers shorter than 2 bytes are left alone.
func SetLSAAge(raw []byte, age uint16) {
	if len(raw) >= 2 {
		binary.BigEndian.PutUint16(raw, age)
	}
}

// LSAAge reads the LS age of a raw LSA (0 if too short).
func LSAAge(raw []byte) uint16 {
	if len(raw) < 2 {
		return 0
	}
	return binary.BigEndian.Uint16(raw)
}
