package packet

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"net"
	"net/netip"
)

// tlvNames names TLVs for JSON, including ones this package keeps as
// Unknown but that routers commonly send (FRR sends 242 and 233).
var tlvNames = map[uint8]string{
	1: "area_addresses", 2: "is_reachability", 6: "is_neighbors", 8: "padding", 9: "lsp_entries",
	10: "authentication", 13: "purge_originator", 22: "extended_is_reachability", 128: "ip_internal_reachability",
	129: "protocols_supported", 130: "ip_external_reachability", 132: "ipv4_interface_addresses",
	134: "te_router_id", 135: "extended_ip_reachability", 137: "hostname", 211: "restart",
	222: "mt_is_reachability", 229: "multi_topology", 232: "ipv6_interface_addresses",
	233: "ipv6_global_interface_address", 235: "mt_ip_reachability", 236: "ipv6_reachability",
	237: "mt_ipv6_reachability", 240: "three_way_adjacency", 242: "router_capability",
}

// TLVName is the snake_case name of TLV type t ("unknown" if none).
func TLVName(t uint8) string {
	if n, ok := tlvNames[t]; ok {
		return n
	}
	return "unknown"
}

// DescribeTLV turns one TLV into a JSON-ready map for
// `farectl isis database --detail`: "type", "name", "length" (value bytes)
// and the decoded fields, sub-TLVs described with DescribeSubTLV.
// Unknown TLVs give {"type","name","length","hex"}. pathBWCode is the
// configured Path Bandwidth sub-TLV codepoint.
func DescribeTLV(t TLV, pathBWCode uint8) map[string]any {
	m := map[string]any{"type": int(t.Type()), "name": TLVName(t.Type()), "length": valueLen(t)}
	switch x := deref(t).(type) {
	case AreaAddresses:
		areas := make([]string, len(x.Areas))
		for i, a := range x.Areas {
			areas[i] = FormatArea(a)
		}
		m["areas"] = areas
	case ISNeighbors:
		macs := make([]string, len(x.SNPAs))
		for i, s := range x.SNPAs {
			macs[i] = macString(s)
		}
		m["snpas"] = macs
	case Padding:
	case Auth:
		// Never the password or the digest: the database view is not a
		// place for secrets.
		m["auth_type"] = int(x.AuthType)
		if x.AuthType == AuthTypeGeneric {
			m["key_id"] = x.KeyID
		}
	case LSPEntries:
		es := make([]map[string]any, len(x.Entries))
		for i, e := range x.Entries {
			es[i] = map[string]any{"lsp_id": e.ID.String(), "lifetime": e.Lifetime, "seq": e.Seq, "checksum": hex4(e.Checksum)}
		}
		m["entries"] = es
	case ExtISReach:
		m["neighbors"] = describeNeighbors(x.Neighbors, pathBWCode)
	case ProtocolsSupported:
		ps := make([]string, len(x.NLPIDs))
		for i, p := range x.NLPIDs {
			switch p {
			case NLPIDIPv4:
				ps[i] = "ipv4"
			case NLPIDIPv6:
				ps[i] = "ipv6"
			default:
				ps[i] = "0x" + hex.EncodeToString([]byte{p})
			}
		}
		m["protocols"] = ps
	case IPv4Addresses:
		m["addresses"] = addrStrings(x.Addrs)
	case IPv6Addresses:
		m["addresses"] = addrStrings(x.Addrs)
	case TERouterID:
		m["router_id"] = x.Addr.String()
	case Hostname:
		m["hostname"] = x.Name
	case ExtIPReach:
		m["prefixes"] = describeIPv4Prefixes(x.Prefixes, pathBWCode)
	case IPv6Reach:
		m["prefixes"] = describeIPv6Prefixes(x.Prefixes, pathBWCode)
	case MultiTopology:
		ts := make([]map[string]any, len(x.MTs))
		for i, mt := range x.MTs {
			ts[i] = describeMTID(mt)
		}
		m["topologies"] = ts
	case MTISReach:
		m["mt_id"] = int(x.MT.ID())
		m["neighbors"] = describeNeighbors(x.Neighbors, pathBWCode)
	case MTIPReach:
		m["mt_id"] = int(x.MT.ID())
		m["prefixes"] = describeIPv4Prefixes(x.Prefixes, pathBWCode)
	case MTIPv6Reach:
		m["mt_id"] = int(x.MT.ID())
		m["prefixes"] = describeIPv6Prefixes(x.Prefixes, pathBWCode)
	case PurgeOriginator:
		m["generator"] = x.Generator.String()
		if x.HasSender {
			m["received_from"] = x.Sender.String()
		}
	case ThreeWay:
		m["state"] = threeWayState(x.State)
		if x.HasExtCircuit {
			m["ext_circuit_id"] = x.ExtCircuitID
		}
		if x.HasNeighbor {
			m["neighbor_id"] = x.NeighborID.String()
			if !x.NoNeighborExtCircuit {
				m["neighbor_ext_circuit_id"] = x.NeighborExtCircuitID
			}
		}
	default:
		var buf [MaxTLVValue]byte
		m["hex"] = hex.EncodeToString(t.AppendValue(buf[:0]))
	}
	return m
}

// DescribeTLVs describes a PDU's TLVs in wire order; repeated TLVs stay
// separate entries.
func DescribeTLVs(t TLVs, pathBWCode uint8) []map[string]any {
	out := make([]map[string]any, len(t))
	for i, v := range t {
		out[i] = DescribeTLV(v, pathBWCode)
	}
	return out
}

// deref turns Decode's pointer TLVs into values so one switch serves both.
func deref(t TLV) TLV {
	switch x := t.(type) {
	case *AreaAddresses:
		return *x
	case *ISNeighbors:
		return *x
	case *Padding:
		return *x
	case *LSPEntries:
		return *x
	case *ExtISReach:
		return *x
	case *ProtocolsSupported:
		return *x
	case *IPv4Addresses:
		return *x
	case *IPv6Addresses:
		return *x
	case *TERouterID:
		return *x
	case *Hostname:
		return *x
	case *ExtIPReach:
		return *x
	case *IPv6Reach:
		return *x
	case *ThreeWay:
		return *x
	case *PurgeOriginator:
		return *x
	case *Auth:
		return *x
	case *MultiTopology:
		return *x
	case *MTISReach:
		return *x
	case *MTIPReach:
		return *x
	case *MTIPv6Reach:
		return *x
	case *Unknown:
		return *x
	}
	return t
}

func describeNeighbors(ns []ExtISNeighbor, code uint8) []map[string]any {
	out := make([]map[string]any, len(ns))
	for i, n := range ns {
		out[i] = map[string]any{"id": n.ID.String(), "metric": n.Metric, "sub_tlvs": describeSubs(TLVExtISReach, n.SubTLVs, code)}
	}
	return out
}

func describeIPv4Prefixes(ps []ExtIPPrefix, code uint8) []map[string]any {
	out := make([]map[string]any, len(ps))
	for i, p := range ps {
		out[i] = map[string]any{"prefix": p.Prefix.String(), "metric": p.Metric, "down": p.Down,
			"sub_tlvs": describeSubs(TLVExtIPReach, p.SubTLVs, code)}
	}
	return out
}

func describeIPv6Prefixes(ps []IPv6Prefix, code uint8) []map[string]any {
	out := make([]map[string]any, len(ps))
	for i, p := range ps {
		out[i] = map[string]any{"prefix": p.Prefix.String(), "metric": p.Metric, "down": p.Down, "external": p.External,
			"sub_tlvs": describeSubs(TLVIPv6Reach, p.SubTLVs, code)}
	}
	return out
}

// describeMTID is a TLV 229 topology; "reserved_bits" only when a router
// set them.
func describeMTID(mt MTID) map[string]any {
	d := map[string]any{"mt_id": int(mt.ID()), "overload": mt.Overload(), "attached": mt.Attached()}
	if r := uint16(mt) & 0x3000; r != 0 {
		d["reserved_bits"] = hex4(r)
	}
	return d
}

func describeSubs(parent uint8, subs []SubTLV, code uint8) []map[string]any {
	out := make([]map[string]any, len(subs))
	for i, s := range subs {
		name, v := DescribeSubTLV(parent, s, code)
		out[i] = map[string]any{"type": int(s.Type), "name": name, "length": len(s.Value), "value": v}
	}
	return out
}

// tagsOr reads administrative tags of size bytes each (get reads one),
// or is the hex h when v is not a whole number of them.
func tagsOr[T uint32 | uint64](v []byte, h string, size int, get func([]byte) T) any {
	if len(v)%size != 0 {
		return h
	}
	tags := make([]T, len(v)/size)
	for i := range tags {
		tags[i] = get(v[size*i:])
	}
	return tags
}

// DescribeSubTLV names and decodes one sub-TLV of TLV parent (22, 135 or
// 236, or their multi-topology forms 222, 235 and 237): e.g.
// ("max_link_bandwidth", float32 bytes/s). Unknown sub-TLVs, and known
// ones of the wrong length, give their bytes as a hex string (name
// "unknown" for the former).
func DescribeSubTLV(parent uint8, s SubTLV, pathBWCode uint8) (name string, value any) {
	parent = singleTopologyTLV(parent)
	v := s.Value
	h := hex.EncodeToString(v)
	if parent == TLVExtIPReach || parent == TLVIPv6Reach {
		switch {
		case s.Type == pathBWCode:
			return floatOr("path_bandwidth", v, h)
		case s.Type == SubPrefixTag32:
			return "admin_tags", tagsOr(v, h, 4, binary.BigEndian.Uint32)
		case s.Type == SubPrefixTag64:
			return "admin_tags_64", tagsOr(v, h, 8, binary.BigEndian.Uint64)
		case s.Type == SubPrefixSID:
			return "prefix_sid", h
		case s.Type == SubPrefixAttrFlags:
			if len(v) == 0 {
				return "prefix_attribute_flags", h
			}
			return "prefix_attribute_flags", map[string]any{"x": v[0]&0x80 != 0, "r": v[0]&0x40 != 0, "n": v[0]&0x20 != 0, "hex": h}
		case s.Type == SubIPv4SourceRouterID:
			return addrOr("ipv4_source_router_id", v, 4, h)
		case s.Type == SubIPv6SourceRouterID:
			return addrOr("ipv6_source_router_id", v, 16, h)
		}
		return "unknown", h
	}
	if parent != TLVExtISReach {
		return "unknown", h
	}
	switch s.Type {
	case SubAdminGroup:
		if len(v) != 4 {
			return "admin_group", h
		}
		return "admin_group", binary.BigEndian.Uint32(v)
	case SubLinkIDs:
		if len(v) != 8 {
			return "link_ids", h
		}
		return "link_ids", map[string]any{"local": binary.BigEndian.Uint32(v), "remote": binary.BigEndian.Uint32(v[4:])}
	case SubIPv4IfAddr:
		return addrOr("ipv4_interface_address", v, 4, h)
	case SubIPv4NbrAddr:
		return addrOr("ipv4_neighbor_address", v, 4, h)
	case SubIPv6IfAddr:
		return addrOr("ipv6_interface_address", v, 16, h)
	case SubIPv6NbrAddr:
		return addrOr("ipv6_neighbor_address", v, 16, h)
	case SubMaxLinkBW:
		return floatOr("max_link_bandwidth", v, h)
	case SubMaxResvBW:
		return floatOr("max_reservable_bandwidth", v, h)
	case SubResidualBW:
		return floatOr("residual_bandwidth", v, h)
	case SubAvailableBW:
		return floatOr("available_bandwidth", v, h)
	case SubUtilizedBW:
		return floatOr("utilized_bandwidth", v, h)
	case SubUnreservedBW:
		if len(v) != 32 {
			return "unreserved_bandwidth", h
		}
		bw := make([]float32, 8)
		for i := range bw {
			bw[i] = math.Float32frombits(binary.BigEndian.Uint32(v[4*i:]))
		}
		return "unreserved_bandwidth", bw
	case SubTEMetric:
		if len(v) != 3 {
			return "te_metric", h
		}
		return "te_metric", uint32(v[0])<<16 | uint32(v[1])<<8 | uint32(v[2])
	case SubLinkDelay, SubDelayVariation:
		name := "unidirectional_link_delay"
		if s.Type == SubDelayVariation {
			name = "delay_variation"
		}
		if len(v) != 4 {
			return name, h
		}
		return name, map[string]any{"anomalous": v[0]&0x80 != 0, "microseconds": binary.BigEndian.Uint32(v) & 0xffffff}
	case SubMinMaxDelay:
		if len(v) != 8 {
			return "min_max_link_delay", h
		}
		return "min_max_link_delay", map[string]any{"anomalous": v[0]&0x80 != 0,
			"min_microseconds": binary.BigEndian.Uint32(v) & 0xffffff, "max_microseconds": binary.BigEndian.Uint32(v[4:]) & 0xffffff}
	case SubLinkLoss:
		if len(v) != 4 {
			return "link_loss", h
		}
		// RFC 8570: units of 0.000003 %.
		return "link_loss", map[string]any{"anomalous": v[0]&0x80 != 0, "percent": float64(binary.BigEndian.Uint32(v)&0xffffff) * 0.000003}
	}
	return "unknown", h
}

// singleTopologyTLV is the TLV whose entries (and sub-TLV codepoints) the
// multi-topology TLV t carries; any other t is itself.
func singleTopologyTLV(t uint8) uint8 {
	switch t {
	case TLVMTISReach:
		return TLVExtISReach
	case TLVMTIPReach:
		return TLVExtIPReach
	case TLVMTIPv6Reach:
		return TLVIPv6Reach
	}
	return t
}

func floatOr(name string, v []byte, h string) (string, any) {
	if f, ok := Float32Of(v); ok {
		if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
			return name, h // JSON cannot carry Inf or NaN
		}
		return name, f
	}
	return name, h
}

func addrOr(name string, v []byte, n int, h string) (string, any) {
	if len(v) != n {
		return name, h
	}
	a, _ := netip.AddrFromSlice(v)
	return name, a.String()
}

func addrStrings(as []netip.Addr) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

func macString(m [6]byte) string { return net.HardwareAddr(m[:]).String() }

func hex4(v uint16) string { return "0x" + hex.EncodeToString([]byte{byte(v >> 8), byte(v)}) }

func threeWayState(s uint8) string {
	switch s {
	case ThreeWayUp:
		return "up"
	case ThreeWayInitializing:
		return "initializing"
	case ThreeWayDown:
		return "down"
	}
	return "state_" + hex.EncodeToString([]byte{s})
}
