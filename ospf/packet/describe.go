package packet

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net/netip"
	"strconv"
)

// LSATypeName is the snake_case name of an LSA type ("unknown" if none).
func LSATypeName(t uint8) string {
	switch t {
	case LSARouter:
		return "router"
	case LSANetwork:
		return "network"
	case LSASummary:
		return "summary"
	case LSAASBRSummary:
		return "asbr_summary"
	case LSAExternal:
		return "external"
	case LSANSSA:
		return "nssa"
	case LSAOpaqueLink:
		return "opaque_link"
	case LSAOpaqueArea:
		return "opaque_area"
	case LSAOpaqueAS:
		return "opaque_as"
	}
	return "unknown"
}

// OpaqueTypeName is the snake_case name of an opaque type ("unknown" if
// none).
func OpaqueTypeName(t uint8) string {
	switch t {
	case OpaqueTE:
		return "traffic_engineering"
	case OpaqueGrace:
		return "grace"
	case OpaqueRouterInfo:
		return "router_information"
	case OpaqueExtPrefix:
		return "extended_prefix"
	case OpaqueExtLink:
		return "extended_link"
	}
	return "unknown"
}

// Describe turns an LSA into a JSON-ready map for
// `farectl ospf database --detail`: the header fields, "checksum_ok" when
// Raw is there, and "body" with every known body, TLV and sub-TLV decoded.
// Unknown LSA types, TLVs and sub-TLVs appear as {"type","length","hex"}
// (for an unknown LSA type the body's "hex"); a TLV whose contents do not
// parse gets an "error" next to its hex. pbCode is the configured Path
// Bandwidth sub-TLV codepoint. Floats that JSON cannot carry (NaN, ±Inf)
// are strings.
func Describe(l *LSA, pbCode uint16) map[string]any {
	h := l.LSAHeader
	m := map[string]any{
		"age": h.Age, "options": hex2(h.Options), "type": h.Type, "type_name": LSATypeName(h.Type),
		"id": addrString(h.ID), "adv_router": addrString(h.AdvRouter),
		"seq": fmt.Sprintf("0x%08x", uint32(h.Seq)), "checksum": fmt.Sprintf("0x%04x", h.Checksum), "length": h.Length,
	}
	if l.Raw != nil {
		m["checksum_ok"] = LSAChecksumOK(l.Raw)
	}
	if body, ok := describeBody(l.Body, pbCode); ok {
		m["body"] = body
	} else {
		var body []byte
		if len(l.Raw) >= LSAHeaderLen {
			body = l.Raw[LSAHeaderLen:]
		} else if l.Body != nil {
			body = l.Body.AppendBody(nil)
		}
		m["body"] = map[string]any{"hex": hex.EncodeToString(body)}
	}
	return m
}

// describer describes with describe a body holding a *T (as Decode
// produces) or a T value (as callers may build); false for another type.
func describer[T any](describe func(*T) map[string]any) func(LSABody) (map[string]any, bool) {
	return func(body LSABody) (map[string]any, bool) {
		switch b := any(body).(type) {
		case *T:
			return describe(b), true
		case T:
			return describe(&b), true
		}
		return nil, false
	}
}

// describeBody describes the bodies of the LSA types fared knows.
func describeBody(body LSABody, pbCode uint16) (map[string]any, bool) {
	for _, describe := range []func(LSABody) (map[string]any, bool){
		describer(describeRouter), describer(describeNetwork), describer(describeSummary), describer(describeExternal),
		describer(func(o *OpaqueLSA) map[string]any { return describeOpaque(o, pbCode) }),
	} {
		if m, ok := describe(body); ok {
			return m, true
		}
	}
	return nil, false
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return "0.0.0.0"
	}
	return a.String()
}

func addrStrings(as []netip.Addr) []string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = addrString(a)
	}
	return s
}

func hex2(v uint8) string { return fmt.Sprintf("0x%02x", v) }

// jsonFloat gives a float32 as the float64 of its shortest decimal form
// (1.25e10, not 12499999744), and values JSON cannot carry as strings.
func jsonFloat(v float32) any {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprint(f)
	}
	f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
	return f
}

var linkTypeNames = map[uint8]string{LinkP2P: "p2p", LinkTransit: "transit", LinkStub: "stub", LinkVirtual: "virtual"}

func describeRouter(r *RouterLSA) map[string]any {
	links := make([]map[string]any, len(r.Links))
	for i, l := range r.Links {
		lm := map[string]any{"id": addrString(l.ID), "data": addrString(l.Data), "type": l.Type, "metric": l.Metric}
		if n, ok := linkTypeNames[l.Type]; ok {
			lm["type_name"] = n
		}
		if len(l.TOS) > 0 {
			tos := make([]map[string]any, len(l.TOS))
			for j, t := range l.TOS {
				tos[j] = map[string]any{"tos": t.TOS, "metric": t.Metric}
			}
			lm["tos"] = tos
		}
		links[i] = lm
	}
	return map[string]any{"flags": hex2(r.Flags), "v": r.Flags&RouterFlagV != 0, "e": r.Flags&RouterFlagE != 0,
		"b": r.Flags&RouterFlagB != 0, "links": links}
}

func describeNetwork(n *NetworkLSA) map[string]any {
	return map[string]any{"mask": addrString(n.Mask), "mask_len": MaskLen(n.Mask), "routers": addrStrings(n.Routers)}
}

func describeSummary(s *SummaryLSA) map[string]any {
	m := map[string]any{"mask": addrString(s.Mask), "mask_len": MaskLen(s.Mask), "metric": s.Metric}
	if len(s.TOS) > 0 {
		m["tos_hex"] = hex.EncodeToString(s.TOS)
	}
	return m
}

func describeExternal(e *ExternalLSA) map[string]any {
	m := map[string]any{"mask": addrString(e.Mask), "mask_len": MaskLen(e.Mask), "e_bit": e.EBit, "metric": e.Metric,
		"forward": addrString(e.Forward), "tag": e.Tag}
	if len(e.TOS) > 0 {
		m["tos_hex"] = hex.EncodeToString(e.TOS)
	}
	return m
}

func describeOpaque(o *OpaqueLSA, pbCode uint16) map[string]any {
	tlvs := make([]map[string]any, len(o.TLVs))
	for i, t := range o.TLVs {
		tlvs[i] = describeTLV(o.OpaqueType, t, pbCode)
		if t.Pad != nil {
			tlvs[i]["pad_hex"] = hex.EncodeToString(t.Pad)
		}
	}
	return map[string]any{"opaque_type": o.OpaqueType, "opaque_type_name": OpaqueTypeName(o.OpaqueType),
		"opaque_id": o.OpaqueID, "tlvs": tlvs}
}

func rawTLV(t TLV) map[string]any {
	return map[string]any{"type": t.Type, "length": len(t.Value), "hex": hex.EncodeToString(t.Value)}
}

func withName(m map[string]any, name string) map[string]any {
	m["name"] = name
	return m
}

func failed(t TLV, name string, err error) map[string]any {
	m := withName(rawTLV(t), name)
	m["error"] = err.Error()
	return m
}

func describeTLV(ot uint8, t TLV, pbCode uint16) map[string]any {
	v := t.Value
	switch {
	case ot == OpaqueTE && t.Type == TETLVRouterAddr && len(v) == 4:
		return map[string]any{"type": t.Type, "name": "router_address", "length": len(v), "address": addrString(addr4(v))}
	case ot == OpaqueTE && t.Type == TETLVLink:
		subs, err := subTLVs(v, TETLVLink, 0)
		if err != nil {
			return failed(t, "link", err)
		}
		if _, err := decodeTELink(v, 0); err != nil {
			return failed(t, "link", err)
		}
		return map[string]any{"type": t.Type, "name": "link", "length": len(v), "sub_tlvs": describeSubs(subs, describeTESub)}
	case ot == OpaqueExtPrefix && t.Type == ExtPrefixTLVType:
		p, err := decodeExtPrefix(v, 0)
		if err != nil {
			return failed(t, "extended_prefix", err)
		}
		return map[string]any{"type": t.Type, "name": "extended_prefix", "length": len(v), "route_type": p.RouteType,
			"prefix": p.Prefix.String(), "flags": hex2(p.Flags), "a": p.Flags&ExtPrefixFlagA != 0, "n": p.Flags&ExtPrefixFlagN != 0,
			"sub_tlvs": describeSubs(p.SubTLVs, func(s TLV) map[string]any { return describeExtPrefixSub(s, pbCode) })}
	case ot == OpaqueExtLink && t.Type == 1 && len(v) >= 12:
		subs, err := subTLVs(v[12:], 1, 0)
		if err != nil {
			return failed(t, "extended_link", err)
		}
		return map[string]any{"type": t.Type, "name": "extended_link", "length": len(v), "link_type": v[0],
			"link_id": addrString(addr4(v[4:])), "link_data": addrString(addr4(v[8:])),
			"sub_tlvs": describeSubs(subs, describeExtLinkSub)}
	case ot == OpaqueRouterInfo:
		return describeRITLV(t)
	}
	return rawTLV(t)
}

func describeSubs(subs []TLV, f func(TLV) map[string]any) []map[string]any {
	out := make([]map[string]any, len(subs))
	for i, s := range subs {
		out[i] = f(s)
	}
	return out
}

func describeTESub(s TLV) map[string]any {
	v := s.Value
	named := func(name string, kv ...any) map[string]any {
		m := map[string]any{"type": s.Type, "name": name, "length": len(v)}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	switch s.Type {
	case TESubLinkType:
		return named("link_type", "link_type", v[0])
	case TESubLinkID:
		return named("link_id", "link_id", addrString(addr4(v)))
	case TESubLocalAddr:
		return named("local_if_addr", "addresses", addrStrings(appendAddrs(nil, v)))
	case TESubRemoteAddr:
		return named("remote_if_addr", "addresses", addrStrings(appendAddrs(nil, v)))
	case TESubTEMetric:
		return named("te_metric", "metric", binary.BigEndian.Uint32(v))
	case TESubMaxBW:
		return named("max_bw", "bytes_per_sec", jsonFloat(float(v)))
	case TESubMaxRsvBW:
		return named("max_rsv_bw", "bytes_per_sec", jsonFloat(float(v)))
	case TESubUnrsvBW:
		bw := make([]any, 8)
		for i := range bw {
			bw[i] = jsonFloat(float(v[4*i:]))
		}
		return named("unrsv_bw", "bytes_per_sec", bw)
	case TESubAdminGroup:
		return named("admin_group", "admin_group", fmt.Sprintf("0x%08x", binary.BigEndian.Uint32(v)))
	}
	return rawTLV(s)
}

// sid decodes the SID/Label field of RFC 8665 sub-TLVs: a 4-byte index or
// a 3-byte label (20 bits).
func sid(m map[string]any, v []byte) map[string]any {
	switch len(v) {
	case 4:
		m["index"] = binary.BigEndian.Uint32(v)
	case 3:
		m["label"] = u24(v) & 0xfffff
	default:
		m["sid_hex"] = hex.EncodeToString(v)
	}
	return m
}

func describeExtPrefixSub(s TLV, pbCode uint16) map[string]any {
	v := s.Value
	switch {
	case s.Type == pbCode && len(v) == 4:
		return map[string]any{"type": s.Type, "name": "path_bandwidth", "length": len(v), "bytes_per_sec": jsonFloat(float(v))}
	case s.Type == ExtPrefixSubPrefixSID && len(v) >= 7:
		return sid(map[string]any{"type": s.Type, "name": "prefix_sid", "length": len(v), "flags": hex2(v[0]),
			"mt_id": v[2], "algorithm": v[3]}, v[4:])
	}
	return rawTLV(s)
}

func describeExtLinkSub(s TLV) map[string]any {
	v := s.Value
	switch {
	case s.Type == 2 && len(v) >= 7: // Adj-SID
		return sid(map[string]any{"type": s.Type, "name": "adj_sid", "length": len(v), "flags": hex2(v[0]),
			"mt_id": v[2], "weight": v[3]}, v[4:])
	case s.Type == 3 && len(v) >= 11: // LAN Adj-SID
		return sid(map[string]any{"type": s.Type, "name": "lan_adj_sid", "length": len(v), "flags": hex2(v[0]),
			"mt_id": v[2], "weight": v[3], "neighbor_id": addrString(addr4(v[4:]))}, v[8:])
	}
	return rawTLV(s)
}

func describeRITLV(t TLV) map[string]any {
	v := t.Value
	switch {
	case t.Type == 1 && len(v) >= 4: // Informational Capabilities (RFC 7770)
		c := binary.BigEndian.Uint32(v)
		return map[string]any{"type": t.Type, "name": "informational_capabilities", "length": len(v),
			"bits": fmt.Sprintf("0x%08x", c), "graceful_restart": c&(1<<31) != 0, "graceful_restart_helper": c&(1<<30) != 0,
			"stub_router": c&(1<<29) != 0, "traffic_engineering": c&(1<<28) != 0, "p2p_over_lan": c&(1<<27) != 0}
	case t.Type == 8: // SR-Algorithm (RFC 8665)
		algs := make([]int, len(v))
		for i, a := range v {
			algs[i] = int(a)
		}
		return map[string]any{"type": t.Type, "name": "sr_algorithm", "length": len(v), "algorithms": algs}
	case (t.Type == 9 || t.Type == 14) && len(v) >= 4: // SID/Label Range, SR Local Block
		name := "sid_label_range"
		if t.Type == 14 {
			name = "sr_local_block"
		}
		m := map[string]any{"type": t.Type, "name": name, "length": len(v), "range_size": u24(v)}
		subs, err := ParseTLVs(v[4:])
		if err != nil {
			return failed(t, name, err)
		}
		m["sub_tlvs"] = describeSubs(subs, func(s TLV) map[string]any {
			if s.Type == 1 { // SID/Label
				return sid(map[string]any{"type": s.Type, "name": "sid_label", "length": len(s.Value)}, s.Value)
			}
			return rawTLV(s)
		})
		return m
	case t.Type == 12 && len(v)%2 == 0: // Node MSD (RFC 8476)
		msd := make([]map[string]any, len(v)/2)
		for i := range msd {
			msd[i] = map[string]any{"type": v[2*i], "value": v[2*i+1]}
		}
		return map[string]any{"type": t.Type, "name": "node_msd", "length": len(v), "msd": msd}
	}
	return rawTLV(t)
}
