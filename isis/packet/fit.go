package packet

import (
	"fmt"
	"net/netip"
)

// Per-TLV capacities of the fixed-size lists (255 value bytes each).
const (
	MaxSNPAsPerTLV      = MaxTLVValue / 6  // TLV 6: 42 MACs
	MaxLSPEntriesPerTLV = MaxTLVValue / 16 // TLV 9: 15 entries
	MaxIPv4PerTLV       = MaxTLVValue / 4  // TLV 132: 63 addresses
	MaxIPv6PerTLV       = MaxTLVValue / 16 // TLV 232: 15 addresses
)

// valueLen is a TLV's encoded value size (before any splitting), without
// encoding where it is cheap.
func valueLen(v TLV) int {
	// The reachability TLVs (22, 135, 236 and the MT ones) measure their
	// entries; pointer and value TLVs alike have the method.
	if x, ok := v.(interface{ valueLen() int }); ok {
		return x.valueLen()
	}
	switch x := v.(type) {
	case *Padding:
		return max(x.Len, 0)
	case Padding:
		return max(x.Len, 0)
	case *Unknown:
		return len(x.Value)
	case Unknown:
		return len(x.Value)
	case *ISNeighbors:
		return 6 * len(x.SNPAs)
	case ISNeighbors:
		return 6 * len(x.SNPAs)
	}
	var buf [MaxTLVValue + 1]byte
	return len(v.AppendValue(buf[:0]))
}

// areaOK: an area address is 1..254 bytes on the wire (a length byte and
// the address in a 255-byte value); decoders reject an empty one.
func areaOK(a []byte) bool { return len(a) > 0 && len(a) < MaxTLVValue }

// chunks cuts a fixed-size list into TLVs of at most per items.
func chunks[T any](items []T, per int, mk func([]T) TLV) []TLV {
	var out []TLV
	for len(items) > 0 {
		n := min(per, len(items))
		out = append(out, mk(items[:n:n]))
		items = items[n:]
	}
	return out
}

// split turns a TLV whose value exceeds 255 bytes into TLVs of the same
// type that each fit, keeping the order of entries. What cannot be sent at
// all (one entry larger than a TLV, a non-list TLV too long) is left out
// and counted in dropped; a hostname is cut to 255 bytes instead.
func split(v TLV) (parts []TLV, dropped int) {
	if parts, dropped, ok := splitMT(v); ok {
		return parts, dropped
	}
	switch x := deref(v).(type) {
	case AreaAddresses:
		var ok [][]byte
		for _, a := range x.Areas {
			if areaOK(a) {
				ok = append(ok, a)
			} else {
				dropped++
			}
		}
		return pack(ok, func(a *[]byte) int { return 1 + len(*a) }, func(s [][]byte) TLV { return &AreaAddresses{Areas: s} }), dropped
	case ISNeighbors:
		return chunks(x.SNPAs, MaxSNPAsPerTLV, func(s [][6]byte) TLV { return &ISNeighbors{SNPAs: s} }), 0
	case Padding:
		var out []TLV
		for n := x.Len; n > 0; n -= MaxTLVValue {
			out = append(out, &Padding{Len: min(n, MaxTLVValue)})
		}
		return out, 0
	case LSPEntries:
		return chunks(x.Entries, MaxLSPEntriesPerTLV, func(s []LSPEntry) TLV { return &LSPEntries{Entries: s} }), 0
	case ProtocolsSupported:
		return chunks(x.NLPIDs, MaxTLVValue, func(s []uint8) TLV { return &ProtocolsSupported{NLPIDs: s} }), 0
	case IPv4Addresses:
		return chunks(x.Addrs, MaxIPv4PerTLV, func(s []netip.Addr) TLV { return &IPv4Addresses{Addrs: s} }), 0
	case IPv6Addresses:
		return chunks(x.Addrs, MaxIPv6PerTLV, func(s []netip.Addr) TLV { return &IPv6Addresses{Addrs: s} }), 0
	case ExtISReach:
		return packCount(x.Neighbors, (*ExtISNeighbor).wireLen, func(s []ExtISNeighbor) TLV { return &ExtISReach{Neighbors: s} })
	case ExtIPReach:
		return packCount(x.Prefixes, (*ExtIPPrefix).wireLen, func(s []ExtIPPrefix) TLV { return &ExtIPReach{Prefixes: s} })
	case IPv6Reach:
		return packCount(x.Prefixes, (*IPv6Prefix).wireLen, func(s []IPv6Prefix) TLV { return &IPv6Reach{Prefixes: s} })
	case Hostname:
		// RFC 5301 §3: the name is 1..255 bytes; a longer one is cut.
		return []TLV{&Hostname{Name: x.Name[:MaxTLVValue]}}, 0
	}
	return nil, 1
}

// Fit returns the TLVs exactly as AppendTo sends them: every oversized
// list split into instances that fit, unencodable entries left out. err
// names what was left out (nil if nothing was), so callers can count and
// log it; the TLVs are usable either way.
func (t TLVs) Fit() (TLVs, error) {
	out := make(TLVs, 0, len(t))
	var errs []string
	for _, v := range t {
		if a, ok := deref(v).(AreaAddresses); ok {
			for _, x := range a.Areas {
				if !areaOK(x) {
					errs = append(errs, fmt.Sprintf("TLV %d: area address of %d bytes left out", v.Type(), len(x)))
				}
			}
		}
		if valueLen(v) <= MaxTLVValue {
			out = append(out, v)
			continue
		}
		parts, dropped := split(v)
		out = append(out, parts...)
		if _, ok := deref(v).(AreaAddresses); !ok && dropped > 0 {
			errs = append(errs, fmt.Sprintf("TLV %d: %d entries cannot fit a TLV and are left out", v.Type(), dropped))
		}
		if _, ok := deref(v).(Hostname); ok {
			errs = append(errs, fmt.Sprintf("TLV %d: cut to 255 bytes", v.Type()))
		}
	}
	if errs != nil {
		return out, fmt.Errorf("isis: %v", errs)
	}
	return out, nil
}
