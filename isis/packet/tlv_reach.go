package packet

import (
	"encoding/binary"
	"net/netip"
)

// ExtISNeighbor is one neighbour of TLV 22 (RFC 5305 3).
type ExtISNeighbor struct {
	ID      NodeID
	Metric  uint32 // 24 bits
	SubTLVs []SubTLV
}

// ExtISReach is TLV 22.
type ExtISReach struct{ Neighbors []ExtISNeighbor }

// ExtIPPrefix is one prefix of TLV 135 (RFC 5305 4). A non-nil but empty
// SubTLVs sends the sub-TLV bit with an empty block: Decode yields that
// when it was received, to re-encode it exactly.
type ExtIPPrefix struct {
	Metric  uint32
	Down    bool // up/down bit: leaked from L2 into L1
	Prefix  netip.Prefix
	SubTLVs []SubTLV
}

// ExtIPReach is TLV 135.
type ExtIPReach struct{ Prefixes []ExtIPPrefix }

// IPv6Prefix is one prefix of TLV 236 (RFC 5308). SubTLVs nil/empty as
// for ExtIPPrefix.
type IPv6Prefix struct {
	Metric   uint32
	Down     bool
	External bool
	Prefix   netip.Prefix
	SubTLVs  []SubTLV
}

// IPv6Reach is TLV 236.
type IPv6Reach struct{ Prefixes []IPv6Prefix }

func (ExtISReach) Type() uint8 { return TLVExtISReach }
func (ExtIPReach) Type() uint8 { return TLVExtIPReach }
func (IPv6Reach) Type() uint8  { return TLVIPv6Reach }

func subTLVsLen(s []SubTLV) int {
	n := 0
	for _, x := range s {
		n += 2 + len(x.Value)
	}
	return n
}

func appendSubTLVs(b []byte, s []SubTLV) []byte {
	for _, x := range s {
		b = append(b, x.Type, byte(len(x.Value)))
		b = append(b, x.Value...)
	}
	return b
}

// sumWireLen is the wire size of a TLV's entries.
func sumWireLen[E any, P interface {
	*E
	wireLen() int
}](es []E) int {
	l := 0
	for i := range es {
		l += P(&es[i]).wireLen()
	}
	return l
}

func (n *ExtISNeighbor) wireLen() int { return 11 + subTLVsLen(n.SubTLVs) }

func (t ExtISReach) valueLen() int { return sumWireLen(t.Neighbors) }

func (t ExtISReach) AppendValue(b []byte) []byte {
	for i := range t.Neighbors {
		n := &t.Neighbors[i]
		b = append(b, n.ID[:]...)
		b = append(b, byte(n.Metric>>16), byte(n.Metric>>8), byte(n.Metric), byte(subTLVsLen(n.SubTLVs)))
		b = appendSubTLVs(b, n.SubTLVs)
	}
	return b
}

func prefixBytes(bits int) int { return (bits + 7) / 8 }

// prefixTailLen is the wire size of what follows a TLV 135 or 236
// entry's head: the prefix bytes of a prefix of bits (at most maxBits)
// and, when subs is not nil, the sub-TLV block with its length byte.
func prefixTailLen(bits, maxBits int, subs []SubTLV) int {
	l := prefixBytes(min(bits, maxBits))
	if subs != nil {
		l += 1 + subTLVsLen(subs)
	}
	return l
}

// appendPrefixTail appends what prefixTailLen measures: the first bytes of
// addr a prefix of bits needs, then the sub-TLV block if subs is not nil.
func appendPrefixTail(b, addr []byte, bits int, subs []SubTLV) []byte {
	b = append(b, addr[:prefixBytes(bits)]...)
	if subs != nil {
		b = append(b, byte(subTLVsLen(subs)))
		b = appendSubTLVs(b, subs)
	}
	return b
}

func (p *ExtIPPrefix) wireLen() int { return 5 + prefixTailLen(max(p.Prefix.Bits(), 0), 32, p.SubTLVs) }

func (t ExtIPReach) valueLen() int { return sumWireLen(t.Prefixes) }

func (t ExtIPReach) AppendValue(b []byte) []byte {
	for i := range t.Prefixes {
		p := &t.Prefixes[i]
		b = binary.BigEndian.AppendUint32(b, p.Metric)
		bits := min(max(p.Prefix.Bits(), 0), 32)
		c := byte(bits)
		if p.Down {
			c |= 0x80
		}
		if p.SubTLVs != nil {
			c |= 0x40
		}
		a := as4(p.Prefix.Addr())
		b = appendPrefixTail(append(b, c), a[:], bits, p.SubTLVs)
	}
	return b
}

func (p *IPv6Prefix) wireLen() int { return 6 + prefixTailLen(max(p.Prefix.Bits(), 0), 128, p.SubTLVs) }

func (t IPv6Reach) valueLen() int { return sumWireLen(t.Prefixes) }

func (t IPv6Reach) AppendValue(b []byte) []byte {
	for i := range t.Prefixes {
		p := &t.Prefixes[i]
		b = binary.BigEndian.AppendUint32(b, p.Metric)
		var f byte
		if p.Down {
			f |= 0x80
		}
		if p.External {
			f |= 0x40
		}
		if p.SubTLVs != nil {
			f |= 0x20
		}
		bits := min(max(p.Prefix.Bits(), 0), 128)
		a := p.Prefix.Addr().As16()
		b = appendPrefixTail(append(b, f, byte(bits)), a[:], bits, p.SubTLVs)
	}
	return b
}

// countSubTLVs counts the sub-TLVs of a block, or reports the first one
// that runs past it.
func countSubTLVs(blk []byte) (n int, bad uint8, badLen int, ok bool) {
	for i := 0; i < len(blk); {
		if i+2 > len(blk) {
			return 0, blk[i], -1, false
		}
		l := int(blk[i+1])
		if i+2+l > len(blk) {
			return 0, blk[i], l, false
		}
		n++
		i += 2 + l
	}
	return n, 0, 0, true
}

// fillSubTLVs decodes a block already checked by countSubTLVs into dst.
func fillSubTLVs(dst []SubTLV, blk []byte) {
	for i, k := 0, 0; i < len(blk); k++ {
		l := int(blk[i+1])
		dst[k] = SubTLV{Type: blk[i], Value: sub(blk, i+2, i+2+l)}
		i += 2 + l
	}
}

func subOverflow(t uint8, off int, what string, bad uint8, badLen int) error {
	if badLen < 0 {
		return tlvError(t, off, bad, "sub-TLV %d header past the end of the %s sub-TLV block", bad, what)
	}
	return tlvError(t, off, bad, "sub-TLV %d length %d past the end of the %s sub-TLV block", bad, badLen, what)
}

func decodeExtISReach(v []byte, off int) (TLV, error) {
	ns, err := decodeExtISNeighbors(TLVExtISReach, v, off)
	if err != nil {
		return nil, err
	}
	return &ExtISReach{Neighbors: ns}, nil
}

// decodeExtISNeighbors decodes the neighbour entries of TLV 22, or of TLV
// 222 after its MT id (t names the TLV in errors).
func decodeExtISNeighbors(t uint8, v []byte, off int) ([]ExtISNeighbor, error) {
	// Pass 1 validates and counts so that pass 2 makes two allocations for
	// the whole TLV: the neighbours and one shared backing of sub-TLVs.
	nn, nsubs := 0, 0
	for i := 0; i < len(v); {
		if i+11 > len(v) {
			return nil, tlvError(t, off, 0, "neighbor at value offset %d: %d bytes left, want at least 11", i, len(v)-i)
		}
		sl := int(v[i+10])
		if i+11+sl > len(v) {
			return nil, tlvError(t, off, 0, "neighbor at value offset %d: sub-TLV block of %d bytes past the end of the TLV", i, sl)
		}
		blk := v[i+11 : i+11+sl]
		c, bad, badLen, ok := countSubTLVs(blk)
		if !ok {
			return nil, subOverflow(t, off, "neighbor's", bad, badLen)
		}
		for j := 0; j < len(blk); j += 2 + int(blk[j+1]) {
			if want := isSubTLVLen(blk[j]); want >= 0 && int(blk[j+1]) != want {
				return nil, tlvError(t, off, blk[j], "sub-TLV %d length %d, want %d", blk[j], blk[j+1], want)
			}
		}
		nn++
		nsubs += c
		i += 11 + sl
	}
	ns := make([]ExtISNeighbor, nn)
	var subs []SubTLV
	if nsubs > 0 {
		subs = make([]SubTLV, nsubs)
	}
	for i, k := 0, 0; i < len(v); k++ {
		n := &ns[k]
		copy(n.ID[:], v[i:i+7])
		n.Metric = uint32(v[i+7])<<16 | uint32(v[i+8])<<8 | uint32(v[i+9])
		sl := int(v[i+10])
		blk := v[i+11 : i+11+sl]
		if c, _, _, _ := countSubTLVs(blk); c > 0 {
			n.SubTLVs = subs[:c:c]
			subs = subs[c:]
			fillSubTLVs(n.SubTLVs, blk)
		}
		i += 11 + sl
	}
	return ns, nil
}

// prefixEntry is what TLV 135 and 236 entries share after their fixed
// head: the prefix bytes and optional sub-TLV block.
type prefixEntry struct {
	addr    []byte
	blk     []byte
	hasSubs bool
	nsubs   int
	next    int
}

// scanPrefix parses the entry whose prefix length byte is at v[pl],
// headLen bytes after the entry start i.
func scanPrefix(t uint8, v []byte, off, i, pl, maxBits int, hasSubs bool) (prefixEntry, error) {
	var e prefixEntry
	bits := int(v[pl]) & 0xff
	if t == TLVExtIPReach || t == TLVMTIPReach {
		bits &= 0x3f // the IPv4 entry's byte shares up/down and sub-TLV bits
	}
	if bits > maxBits {
		return e, tlvError(t, off, 0, "prefix at value offset %d: length %d, more than %d", i, bits, maxBits)
	}
	a := pl + 1
	end := a + prefixBytes(bits)
	if end > len(v) {
		return e, tlvError(t, off, 0, "prefix at value offset %d: %d prefix bytes past the end of the TLV", i, prefixBytes(bits))
	}
	e.addr = v[a:end]
	e.hasSubs = hasSubs
	if hasSubs {
		if end >= len(v) {
			return e, tlvError(t, off, 0, "prefix at value offset %d: sub-TLV bit set but no sub-TLV length", i)
		}
		sl := int(v[end])
		if end+1+sl > len(v) {
			return e, tlvError(t, off, 0, "prefix at value offset %d: sub-TLV block of %d bytes past the end of the TLV", i, sl)
		}
		e.blk = v[end+1 : end+1+sl]
		c, bad, badLen, ok := countSubTLVs(e.blk)
		if !ok {
			return e, subOverflow(t, off, "prefix's", bad, badLen)
		}
		e.nsubs = c
		end += 1 + sl
	}
	e.next = end
	return e, nil
}

func (e *prefixEntry) subTLVs(pool *[]SubTLV) []SubTLV {
	if !e.hasSubs {
		return nil
	}
	if e.nsubs == 0 {
		return []SubTLV{}
	}
	s := (*pool)[:e.nsubs:e.nsubs]
	*pool = (*pool)[e.nsubs:]
	fillSubTLVs(s, e.blk)
	return s
}

// reachLayout is where a TLV 135 or 236 entry keeps what decodeReach
// reads: after the 4-byte metric, the prefix length byte is at plen (IPv4
// shares it with the up/down and sub-TLV bits), and the control byte at
// entry offset 4 has the sub-TLV bit subBit.
type reachLayout struct {
	t       uint8
	plen    int
	maxBits int
	subBit  byte
}

// decodeReach decodes the prefix entries of a TLV 135 or 236 value in two
// passes: one that checks every entry and counts them and their sub-TLVs,
// then one that fills them in (mk gets an entry's bytes, its prefix bytes
// and its sub-TLVs), so the entries and sub-TLVs take one allocation each;
// tlv makes the TLV of the entries.
func decodeReach[P any](v []byte, off int, l reachLayout, mk func(entry, addr []byte, subs []SubTLV) P, tlv func([]P) TLV) (TLV, error) {
	np, ns := 0, 0
	for i := 0; i < len(v); {
		if i+l.plen+1 > len(v) {
			return nil, tlvError(l.t, off, 0, "prefix at value offset %d: %d bytes left, want at least %d", i, len(v)-i, l.plen+1)
		}
		e, err := scanPrefix(l.t, v, off, i, i+l.plen, l.maxBits, v[i+4]&l.subBit != 0)
		if err != nil {
			return nil, err
		}
		np++
		ns += e.nsubs
		i = e.next
	}
	out := make([]P, np)
	pool := make([]SubTLV, ns)
	for i, k := 0, 0; i < len(v); k++ {
		e, _ := scanPrefix(l.t, v, off, i, i+l.plen, l.maxBits, v[i+4]&l.subBit != 0)
		out[k] = mk(v[i:], e.addr, e.subTLVs(&pool))
		i = e.next
	}
	return tlv(out), nil
}

// prefixAddr is the address whose first bytes a prefix entry carries:
// addr, zero-padded to 4 bytes (IPv4) or 16.
func prefixAddr(addr []byte, ipv4 bool) netip.Addr {
	var a [16]byte
	copy(a[:], addr)
	if ipv4 {
		return netip.AddrFrom4([4]byte(a[:4]))
	}
	return netip.AddrFrom16(a)
}

func decodeExtIPReach(v []byte, off int) (TLV, error) {
	return decodeExtIPPrefixes(TLVExtIPReach, v, off, func(ps []ExtIPPrefix) TLV { return &ExtIPReach{Prefixes: ps} })
}

// decodeExtIPPrefixes decodes the entries of TLV 135, or of TLV 235 after
// its MT id (t), and wraps them with tlv.
func decodeExtIPPrefixes(t uint8, v []byte, off int, tlv func([]ExtIPPrefix) TLV) (TLV, error) {
	return decodeReach(v, off, reachLayout{t: t, plen: 4, maxBits: 32, subBit: 0x40},
		func(entry, addr []byte, subs []SubTLV) ExtIPPrefix {
			c := entry[4] // up/down, sub-TLVs, prefix length
			return ExtIPPrefix{Metric: binary.BigEndian.Uint32(entry), Down: c&0x80 != 0,
				Prefix: netip.PrefixFrom(prefixAddr(addr, true), int(c&0x3f)), SubTLVs: subs}
		}, tlv)
}

func decodeIPv6Reach(v []byte, off int) (TLV, error) {
	return decodeIPv6Prefixes(TLVIPv6Reach, v, off, func(ps []IPv6Prefix) TLV { return &IPv6Reach{Prefixes: ps} })
}

// decodeIPv6Prefixes decodes the entries of TLV 236, or of TLV 237 after
// its MT id (t), and wraps them with tlv.
func decodeIPv6Prefixes(t uint8, v []byte, off int, tlv func([]IPv6Prefix) TLV) (TLV, error) {
	return decodeReach(v, off, reachLayout{t: t, plen: 5, maxBits: 128, subBit: 0x20},
		func(entry, addr []byte, subs []SubTLV) IPv6Prefix {
			f := entry[4] // up/down, external, sub-TLVs
			return IPv6Prefix{Metric: binary.BigEndian.Uint32(entry), Down: f&0x80 != 0, External: f&0x40 != 0,
				Prefix: netip.PrefixFrom(prefixAddr(addr, false), int(entry[5])), SubTLVs: subs}
		}, tlv)
}

// pack fills TLVs of at most 255 value bytes with items in order; an item
// is never split. An item larger than 255 bytes on its own (a neighbour or
// prefix with more than ~240 bytes of sub-TLVs) cannot be sent and is left
// out: a routing daemon must not die on what it was asked to advertise.
func pack[T any](items []T, size func(*T) int, mk func([]T) TLV) []TLV {
	out, _ := packCount(items, size, mk)
	return out
}

// packCount is pack that also reports how many items it left out. Each
// TLV is a sub-slice of items (capacity cut), so nothing is copied.
func packCount[T any](items []T, size func(*T) int, mk func([]T) TLV) (out []TLV, dropped int) {
	return packRoom(items, MaxTLVValue, size, mk)
}

// packRoom is packCount for TLVs whose entries have room bytes of the
// value: less than 255 when a fixed head comes first (the MT id of TLVs
// 222, 235 and 237).
func packRoom[T any](items []T, room int, size func(*T) int, mk func([]T) TLV) (out []TLV, dropped int) {
	start, used := 0, 0
	for i := range items {
		s := size(&items[i])
		if s > room {
			if start < i {
				out = append(out, mk(items[start:i:i]))
			}
			dropped++
			start, used = i+1, 0
			continue
		}
		if used+s > room {
			out = append(out, mk(items[start:i:i]))
			start, used = i, 0
		}
		used += s
	}
	if start < len(items) {
		out = append(out, mk(items[start:len(items):len(items)]))
	}
	return out, dropped
}

// PackExtISReach spreads neighbours over as few TLV 22s as fit.
func PackExtISReach(ns []ExtISNeighbor) []TLV {
	return pack(ns, (*ExtISNeighbor).wireLen, func(s []ExtISNeighbor) TLV { return &ExtISReach{Neighbors: s} })
}

// PackExtIPReach spreads prefixes over as few TLV 135s as fit.
func PackExtIPReach(ps []ExtIPPrefix) []TLV {
	return pack(ps, (*ExtIPPrefix).wireLen, func(s []ExtIPPrefix) TLV { return &ExtIPReach{Prefixes: s} })
}

// PackIPv6Reach spreads prefixes over as few TLV 236s as fit.
func PackIPv6Reach(ps []IPv6Prefix) []TLV {
	return pack(ps, (*IPv6Prefix).wireLen, func(s []IPv6Prefix) TLV { return &IPv6Reach{Prefixes: s} })
}

// PackLSPEntries spreads SNP entries over TLV 9s (15 entries each).
func PackLSPEntries(es []LSPEntry) []TLV {
	return pack(es, func(*LSPEntry) int { return 16 }, func(s []LSPEntry) TLV { return &LSPEntries{Entries: s} })
}

// PackIPv4Addresses spreads addresses over TLV 132s (63 each).
func PackIPv4Addresses(as []netip.Addr) []TLV {
	return pack(as, func(*netip.Addr) int { return 4 }, func(s []netip.Addr) TLV { return &IPv4Addresses{Addrs: s} })
}

// PackIPv6Addresses spreads addresses over TLV 232s (15 each).
func PackIPv6Addresses(as []netip.Addr) []TLV {
	return pack(as, func(*netip.Addr) int { return 16 }, func(s []netip.Addr) TLV { return &IPv6Addresses{Addrs: s} })
}

// PaddingTLVs returns padding TLVs that take exactly n bytes on the wire,
// for padding hellos to the MTU (ISO 10589 8.2.3). n == 1 cannot be done
// (a TLV takes 2 bytes at least): it yields nothing, as does n <= 0.
func PaddingTLVs(n int) TLVs {
	var out TLVs
	for n >= 2 {
		l := min(n-2, MaxTLVValue)
		if r := n - 2 - l; r == 1 {
			l-- // leave 2 bytes for a last, empty padding TLV
		}
		out = append(out, &Padding{Len: l})
		n -= 2 + l
	}
	return out
}

// SplitFragments cuts an ordered TLV list into LSP fragments whose PDU
// size (27-byte header plus TLVs) stays within lspMTU, keeping order. TLVs
// are never split: build large ones with the Pack* helpers first.
func SplitFragments(t TLVs, lspMTU int) []TLVs {
	room := lspMTU - LSPHeaderLen
	var out []TLVs
	var cur TLVs
	used := 0
	for _, v := range t {
		s := encodedLen(v)
		if used+s > room && len(cur) > 0 {
			out = append(out, cur)
			cur, used = nil, 0
		}
		cur = append(cur, v)
		used += s
	}
	if len(cur) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}
