package packet

import "net/netip"

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

// Areas gathers the area addresses of every TLV 1.
func (t TLVs) Areas() [][]byte {
	var out [][]byte
	visit(t, func(x *AreaAddresses) { out = append(out, x.Areas...) })
	return out
}

// Hostname is the first TLV 137.
func (t TLVs) Hostname() (string, bool) {
	var name string
	found := false
	visit(t, func(x *Hostname) {
		if !found {
			name, found = x.Name, true
		}
	})
	return name, found
}

// NLPIDs gathers TLV 129.
func (t TLVs) NLPIDs() []uint8 {
	var out []uint8
	visit(t, func(x *ProtocolsSupported) { out = append(out, x.NLPIDs...) })
	return out
}

// IPv4Addrs gathers TLV 132.
func (t TLVs) IPv4Addrs() []netip.Addr {
	var out []netip.Addr
	visit(t, func(x *IPv4Addresses) { out = append(out, x.Addrs...) })
	return out
}

// IPv6Addrs gathers TLV 232.
func (t TLVs) IPv6Addrs() []netip.Addr {
	var out []netip.Addr
	visit(t, func(x *IPv6Addresses) { out = append(out, x.Addrs...) })
	return out
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
func (t TLVs) ThreeWay() (ThreeWay, bool) {
	var r ThreeWay
	found := false
	visit(t, func(x *ThreeWay) {
		if !found {
			r, found = *x, true
		}
	})
	return r, found
}

// SNPAs gathers TLV 6 (LAN neighbours' MACs).
func (t TLVs) SNPAs() [][6]byte {
	var out [][6]byte
	visit(t, func(x *ISNeighbors) { out = append(out, x.SNPAs...) })
	return out
}

// LSPEntries gathers TLV 9.
func (t TLVs) LSPEntries() []LSPEntry {
	var out []LSPEntry
	visit(t, func(x *LSPEntries) { out = append(out, x.Entries...) })
	return out
}

// ExtISNeighbors gathers the neighbours of every TLV 22, in order.
func (t TLVs) ExtISNeighbors() []ExtISNeighbor {
	var out []ExtISNeighbor
	visit(t, func(x *ExtISReach) { out = append(out, x.Neighbors...) })
	return out
}

// ExtIPPrefixes gathers the prefixes of every TLV 135, in order.
func (t TLVs) ExtIPPrefixes() []ExtIPPrefix {
	var out []ExtIPPrefix
	visit(t, func(x *ExtIPReach) { out = append(out, x.Prefixes...) })
	return out
}

// IPv6Prefixes gathers the prefixes of every TLV 236, in order.
func (t TLVs) IPv6Prefixes() []IPv6Prefix {
	var out []IPv6Prefix
	visit(t, func(x *IPv6Reach) { out = append(out, x.Prefixes...) })
	return out
}

// PurgeOriginator is the first TLV 13 (RFC 6232: later ones are ignored).
func (t TLVs) PurgeOriginator() (PurgeOriginator, bool) {
	var r PurgeOriginator
	found := false
	visit(t, func(x *PurgeOriginator) {
		if !found {
			r, found = *x, true
		}
	})
	return r, found
}

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
