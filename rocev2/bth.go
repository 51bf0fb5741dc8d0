package rocev2

import "encoding/binary"

// BTHLen is the length of the Base Transport Header.
const BTHLen = 12

// DefaultPKey is the default partition key (full membership).
const DefaultPKey = 0xFFFF

// P_Key layout: the top bit is the membership type (1 full, 0 limited),
// the low 15 bits the partition.
const (
	PKeyFull      = 0x8000
	PKeyPartition = 0x7FFF
)

// ValidPKey reports whether k names a partition: a partition of 0 (0x0000
// or 0x8000) is the invalid P_Key.
func ValidPKey(k uint16) bool { return k&PKeyPartition != 0 }

// PKeyMatch reports whether a packet carrying P_Key pkt may reach a QP
// whose P_Key is own, by IBTA's partition key matching (Vol. 1, 10.9.3):
// both are valid, their partitions (low 15 bits) are equal, and at least
// one of the two is a full member (two limited members of a partition
// may not talk to each other). Receivers drop a packet that does not
// match, before its other checks.
func PKeyMatch(pkt, own uint16) bool {
	return ValidPKey(pkt) && pkt&PKeyPartition == own&PKeyPartition && (pkt|own)&PKeyFull != 0
}

// BTH is the Base Transport Header.
//
//	byte 0     opcode
//	byte 1     SE(7) M(6) PadCnt(5-4) TVer(3-0)
//	bytes 2-3  P_Key
//	byte 4     FECN(7) BECN(6) reserved(5-0)   -- masked to 0xFF in the ICRC
//	bytes 5-7  DestQP
//	byte 8     AckReq(7) reserved(6-0)
//	bytes 9-11 PSN
type BTH struct {
	Opcode    Opcode
	Solicited bool  // SE
	MigReq    bool  // M
	PadCount  uint8 // 0-3 bytes of pad at the end of the payload
	Version   uint8 // TVer, 0
	PKey      uint16
	FECN      bool
	BECN      bool
	DestQP    uint32 // 24 bits
	AckReq    bool
	PSN       uint32 // 24 bits
}

// DecodeBTH parses the first 12 bytes of b. It checks only what the BTH
// itself can tell: length, opcode and version.
func DecodeBTH(b []byte) (BTH, error) {
	if len(b) < BTHLen {
		return BTH{}, errf(KindTruncated, "BTH", 0, "%d bytes, need %d", len(b), BTHLen)
	}
	h := BTH{
		Opcode:    Opcode(b[0]),
		Solicited: b[1]&0x80 != 0,
		MigReq:    b[1]&0x40 != 0,
		PadCount:  b[1] >> 4 & 3,
		Version:   b[1] & 0x0F,
		PKey:      binary.BigEndian.Uint16(b[2:]),
		FECN:      b[4]&0x80 != 0,
		BECN:      b[4]&0x40 != 0,
		DestQP:    uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7]),
		AckReq:    b[8]&0x80 != 0,
		PSN:       uint32(b[9])<<16 | uint32(b[10])<<8 | uint32(b[11]),
	}
	if !h.Opcode.Known() {
		return h, errf(KindUnknownOpcode, "BTH", 0, "opcode 0x%02x", b[0])
	}
	if h.Version != 0 {
		return h, errf(KindBadVersion, "BTH", 1, "transport version %d, want 0", h.Version)
	}
	return h, nil
}

// AppendTo appends the 12-byte header. DestQP and PSN keep their low 24
// bits; reserved bits are zero.
func (h *BTH) AppendTo(b []byte) []byte {
	b1 := h.PadCount&3<<4 | h.Version&0x0F
	if h.Solicited {
		b1 |= 0x80
	}
	if h.MigReq {
		b1 |= 0x40
	}
	var b4, b8 byte
	if h.FECN {
		b4 |= 0x80
	}
	if h.BECN {
		b4 |= 0x40
	}
	if h.AckReq {
		b8 |= 0x80
	}
	return append(b, byte(h.Opcode), b1, byte(h.PKey>>8), byte(h.PKey),
		b4, byte(h.DestQP>>16), byte(h.DestQP>>8), byte(h.DestQP),
		b8, byte(h.PSN>>16), byte(h.PSN>>8), byte(h.PSN))
}

// PSNMask keeps the 24 bits of a packet sequence number.
const PSNMask = 0xFFFFFF

// PSNDiff returns a-b in the 24-bit sequence space, in [-2^23, 2^23).
func PSNDiff(a, b uint32) int32 {
	d := (a - b) & PSNMask
	if d >= 1<<23 {
		return int32(d) - 1<<24
	}
	return int32(d)
}
