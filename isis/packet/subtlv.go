package packet

import (
	"encoding/binary"
	"math"
	"net/netip"
)

// SubTLV is one sub-TLV of TLV 22, 135 or 236, kept raw and in wire order.
type SubTLV struct {
	Type  uint8
	Value []byte
}

// TLV 22 sub-TLVs (RFC 5305, 5307, 6119, 8570).
const (
	SubAdminGroup     = 3  // 4 bytes
	SubLinkIDs        = 4  // link local/remote identifiers, 8 bytes (RFC 5307)
	SubIPv4IfAddr     = 6  // 4 bytes
	SubIPv4NbrAddr    = 8  // 4 bytes
	SubMaxLinkBW      = 9  // float32 bytes/s
	SubMaxResvBW      = 10 // float32 bytes/s
	SubUnreservedBW   = 11 // 8 × float32, one per priority
	SubIPv6IfAddr     = 12 // 16 bytes (RFC 6119)
	SubIPv6NbrAddr    = 13 // 16 bytes (RFC 6119)
	SubTEMetric       = 18 // 24 bits
	SubLinkDelay      = 33 // RFC 8570: A bit + 24-bit microseconds
	SubMinMaxDelay    = 34
	SubDelayVariation = 35
	SubLinkLoss       = 36
	SubResidualBW     = 37 // float32 bytes/s
	SubAvailableBW    = 38
	SubUtilizedBW     = 39
)

// Prefix sub-TLVs of TLV 135/236 (RFC 5130, 7794, 8667).
const (
	SubPrefixTag32        = 1
	SubPrefixTag64        = 2
	SubPrefixSID          = 3
	SubPrefixAttrFlags    = 4
	SubIPv4SourceRouterID = 11
	SubIPv6SourceRouterID = 12
)

// DefaultPathBandwidthSubTLV is the default codepoint of the FARE Path
// Bandwidth prefix sub-TLV (draft-xu-lsr-fare; unassigned, so configurable).
const DefaultPathBandwidthSubTLV = 200

// isSubTLVLen is the required length of the fixed-size TLV 22 sub-TLVs, -1
// for the rest. A wrong length makes the TLV malformed, as the
// RFCs that define them require.
func isSubTLVLen(t uint8) int {
	switch t {
	case SubAdminGroup, SubIPv4IfAddr, SubIPv4NbrAddr, SubMaxLinkBW, SubMaxResvBW,
		SubResidualBW, SubAvailableBW, SubUtilizedBW, SubLinkDelay, SubDelayVariation, SubLinkLoss:
		return 4
	case SubLinkIDs, SubMinMaxDelay:
		return 8
	case SubUnreservedBW:
		return 32
	case SubIPv6IfAddr, SubIPv6NbrAddr:
		return 16
	case SubTEMetric:
		return 3
	}
	return -1
}

// Float32Of reads a 4-byte IEEE 754 big-endian float.
func Float32Of(v []byte) (float32, bool) {
	if len(v) != 4 {
		return 0, false
	}
	return math.Float32frombits(binary.BigEndian.Uint32(v)), true
}

// FloatSubTLV builds a 4-byte float sub-TLV (bandwidths, bytes/s).
func FloatSubTLV(t uint8, v float32) SubTLV {
	return SubTLV{Type: t, Value: binary.BigEndian.AppendUint32(make([]byte, 0, 4), math.Float32bits(v))}
}

// AddrSubTLV builds an address sub-TLV: 4 bytes for IPv4, 16 for IPv6.
func AddrSubTLV(t uint8, a netip.Addr) SubTLV {
	if a.Is4() || a.Is4In6() {
		v := a.Unmap().As4()
		return SubTLV{Type: t, Value: v[:]}
	}
	v := a.As16()
	return SubTLV{Type: t, Value: v[:]}
}

// FindSubTLV returns the first sub-TLV of type t.
func FindSubTLV(subs []SubTLV, t uint8) (SubTLV, bool) {
	for _, s := range subs {
		if s.Type == t {
			return s, true
		}
	}
	return SubTLV{}, false
}

func floatSub(subs []SubTLV, t uint8) (float32, bool) {
	s, ok := FindSubTLV(subs, t)
	if !ok {
		return 0, false
	}
	return Float32Of(s.Value)
}

func addrSub(subs []SubTLV, t uint8, n int) (netip.Addr, bool) {
	s, ok := FindSubTLV(subs, t)
	if !ok || len(s.Value) != n {
		return netip.Addr{}, false
	}
	a, _ := netip.AddrFromSlice(s.Value)
	return a, true
}

// MaxLinkBandwidth is sub-TLV 9, bytes/s.
func MaxLinkBandwidth(subs []SubTLV) (float32, bool) { return floatSub(subs, SubMaxLinkBW) }

// IPv4IfAddr is sub-TLV 6.
func IPv4IfAddr(subs []SubTLV) (netip.Addr, bool) { return addrSub(subs, SubIPv4IfAddr, 4) }

// IPv4NbrAddr is sub-TLV 8.
func IPv4NbrAddr(subs []SubTLV) (netip.Addr, bool) { return addrSub(subs, SubIPv4NbrAddr, 4) }

// IPv6IfAddr is sub-TLV 12.
func IPv6IfAddr(subs []SubTLV) (netip.Addr, bool) { return addrSub(subs, SubIPv6IfAddr, 16) }

// IPv6NbrAddr is sub-TLV 13.
func IPv6NbrAddr(subs []SubTLV) (netip.Addr, bool) { return addrSub(subs, SubIPv6NbrAddr, 16) }

// TEMetric is sub-TLV 18 (24 bits).
func TEMetric(subs []SubTLV) (uint32, bool) {
	s, ok := FindSubTLV(subs, SubTEMetric)
	if !ok || len(s.Value) != 3 {
		return 0, false
	}
	return uint32(s.Value[0])<<16 | uint32(s.Value[1])<<8 | uint32(s.Value[2]), true
}

// PathBandwidth is the FARE Path Bandwidth prefix sub-TLV with codepoint
// code (RFC 7794 layout, 4-byte float, bytes/s).
func PathBandwidth(subs []SubTLV, code uint8) (float32, bool) { return floatSub(subs, code) }
