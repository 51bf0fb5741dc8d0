package packet

import (
	"net/netip"
	"slices"
)

// visit calls f for every TLV of type T in t, whether it is held as *T (as
// Decode produces) or as a T value (as callers may build).
func visit[T any, PT interface {
	*T
	TLV
}](t TLVs, f func(*T)) {
	for _, v := range t {
		switch x := v.(type) {
		case PT:
			if x != nil {
				f((*T)(x))
			}
		case T:
			f(&x)
		}
	}
}

// gather appends, in order, the items that items reads from every TLV of
// type T in t.
func gather[T any, PT interface {
	*T
	TLV
}, E any](t TLVs, items func(*T) []E) []E {
	var out []E
	visit[T, PT](t, func(x *T) { out = append(out, items(x)...) })
	return out
}

// first is the first TLV of type T in t, for TLVs whose later copies are
// ignored.
func first[T any, PT interface {
	*T
	TLV
}](t TLVs) (T, bool) {
	var r T
	found := false
	visit[T, PT](t, func(x *T) {
		if !found {
			r, found = *x, true
		}
	})
	return r, found
}

// Areas gathers the area addresses of every TLV 1.
func (t TLVs) Areas() [][]byte {
	return gather(t, func(x *AreaAddresses) [][]byte { return x.Areas })
}

// Hostname is the first TLV 137.
func (t TLVs) Hostname() (string, bool) {
	h, found := first[Hostname](t)
	return h.Name, found
}

// NLPIDs gathers TLV 129.
func (t TLVs) NLPIDs() []uint8 {
	return gather(t, func(x *ProtocolsSupported) []uint8 { return x.NLPIDs })
}

// IPv4Addrs gathers TLV 132.
func (t TLVs) IPv4Addrs() []netip.Addr {
	return gather(t, func(x *IPv4Addresses) []netip.Addr { return x.Addrs })
}

// IPv6Addrs gathers TLV 232.
func (t TLVs) IPv6Addrs() []netip.Addr {
	return gather(t, func(x *IPv6Addresses) []netip.Addr { return x.Addrs })
}

// TERouterID is the first TLV 134.
func (t TLVs) TERouterID() (netip.Addr, bool) {
	var a netip.Addr
	visit(t, func(x *TERouterID) {
		if !a.IsValid() {
			a = x.Addr
		}
	})
	return a, a.IsValid()
}

// ThreeWay is the first TLV 240.
func (t TLVs) ThreeWay() (ThreeWay, bool) { return first[ThreeWay](t) }

// SNPAs gathers TLV 6 (LAN neighbours' MACs).
func (t TLVs) SNPAs() [][6]byte {
	return gather(t, func(x *ISNeighbors) [][6]byte { return x.SNPAs })
}

// LSPEntries gathers TLV 9.
func (t TLVs) LSPEntries() []LSPEntry {
	return gather(t, func(x *LSPEntries) []LSPEntry { return x.Entries })
}

// ExtISNeighbors gathers the neighbours of every TLV 22, in order.
func (t TLVs) ExtISNeighbors() []ExtISNeighbor {
	return gather(t, func(x *ExtISReach) []ExtISNeighbor { return x.Neighbors })
}

// ExtIPPrefixes gathers the prefixes of every TLV 135, in order.
func (t TLVs) ExtIPPrefixes() []ExtIPPrefix {
	return gather(t, func(x *ExtIPReach) []ExtIPPrefix { return x.Prefixes })
}

// IPv6Prefixes gathers the prefixes of every TLV 236, in order.
func (t TLVs) IPv6Prefixes() []IPv6Prefix {
	return gather(t, func(x *IPv6Reach) []IPv6Prefix { return x.Prefixes })
}

// PurgeOriginator is the first TLV 13 (RFC 6232: later ones are ignored).
func (t TLVs) PurgeOriginator() (PurgeOriginator, bool) { return first[PurgeOriginator](t) }

// TLVsOf is the TLV list of a PDU.
func TLVsOf(p PDU) TLVs {
	switch x := p.(type) {
	case *LSP:
		return x.TLVs
	case *LANHello:
		return x.TLVs
	case *P2PHello:
		return x.TLVs
	case *CSNP:
		return x.TLVs
	case *PSNP:
		return x.TLVs
	}
	return nil
}

// withTLVs is a shallow copy of the PDU carrying tlvs instead of its own.
func (p *LSP) withTLVs(tlvs TLVs) PDU      { c := *p; c.TLVs = tlvs; return &c }
func (p *LANHello) withTLVs(tlvs TLVs) PDU { c := *p; c.TLVs = tlvs; return &c }
func (p *P2PHello) withTLVs(tlvs TLVs) PDU { c := *p; c.TLVs = tlvs; return &c }
func (p *CSNP) withTLVs(tlvs TLVs) PDU     { c := *p; c.TLVs = tlvs; return &c }
func (p *PSNP) withTLVs(tlvs TLVs) PDU     { c := *p; c.TLVs = tlvs; return &c }

// PrependTLVs is a shallow copy of p with tlvs before its own TLVs (an
// authentication TLV goes first, RFC 5304 §2); nil for an unknown PDU type.
func PrependTLVs(p PDU, tlvs ...TLV) PDU {
	x, ok := p.(interface{ withTLVs(TLVs) PDU })
	if !ok {
		return nil
	}
	return x.withTLVs(slices.Concat(TLVs(tlvs), TLVsOf(p)))
}
