// Package record is what iNOF switches exchange over IBGP: host records
// and the zone configuration, each one BGP route. A record's identity is
// its key (originating switch, kind, 128-bit id), which the exchange maps
// to a VPNv6 NLRI (RD per switch, the id as a /128); its content travels
// in one optional transitive path attribute whose value this package
// encodes. docs/inof.md ("Records") is the specification.
package record

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"time"

	"github.com/fared/fared/inof/internal/tlv"
	"github.com/fared/fared/inof/l2"
	"github.com/fared/fared/internal/enum"
)

// AttrType is the path attribute carrying a record: 255, "reserved for
// development" in the IANA BGP Path Attributes registry (RFC 2042), so it
// can never collide with an attribute a real BGP speaker gives meaning.
const AttrType = 255

// Version of the attribute's encoding.
const Version = 1

// MaxLen bounds an encoded record so that an UPDATE carrying it (NLRI,
// next hop, communities, the reflector's attributes) stays within BGP's
// 4096 bytes (RFC 4271 §4).
const MaxLen = 3200

// Kind of record.
type Kind uint8

// Kinds, also the RD's assigned number.
const (
	KindHost     Kind = 1 // a host seen on a switch
	KindZone     Kind = 2 // one chunk of one zone's members, from a reflector
	KindManifest Kind = 3 // a reflector's zone configuration as a whole
)

var kindNames = enum.Names[Kind]{KindHost: "host", KindZone: "zone", KindManifest: "manifest"}

func (k Kind) String() string { return kindNames.Name(k, "kind-") }

// Key identifies a record in the fabric: the BGP NLRI. Origin is the
// switch (or reflector) that originates it, so the same host seen on two
// switches is two records.
type Key struct {
	Origin netip.Addr // IPv4 router id
	Kind   Kind
	ID     [16]byte
}

func (k Key) String() string { return fmt.Sprintf("%s:%s:%x", k.Origin, k.Kind, k.ID[:6]) }

func hashID(parts ...string) [16]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var id [16]byte
	copy(id[:], h.Sum(nil))
	return id
}

// State of a host record. A host that leaves or fails is first
// re-advertised with its reason (Left, Unreachable) and withdrawn a
// little later, so that every switch can tell its hosts why; a record
// that is withdrawn while Up (its switch died) means Unreachable.
type State uint8

// States.
const (
	StateUp          State = 1
	StateLeft        State = 2
	StateUnreachable State = 3
	// StateBound: the host is not registered, but its id stays bound
	// here (to this port and MAC) until the binding expires or an
	// operator releases it; other switches refuse claims of the id that
	// the binding does not allow.
	StateBound State = 4
)

var stateNames = enum.Names[State]{StateUp: "up", StateLeft: "left", StateUnreachable: "unreachable", StateBound: "bound"}

func (s State) String() string { return stateNames.Name(s, "state-") }

// Host is a host seen on one port of one switch.
type Host struct {
	Switch     netip.Addr
	SwitchName string
	Port       string
	Host       l2.Host
	Source     l2.Source // agent or lldp: how its switch learnt it
	State      State
	// Zones are the zones the originating switch placed the host in: for
	// display and for routing policy (as large communities); every switch
	// computes memberships from the zone configuration itself.
	Zones []string
	Since time.Time // registration, millisecond precision
	// Pinned: the id is pinned here, by a static binding or the host's
	// key; switches refuse claims of a pinned id that are not pinned too.
	Pinned bool
}

// Key of the record.
func (h *Host) Key() Key {
	return Key{Origin: h.Switch, Kind: KindHost, ID: hashID("host", h.Host.ID, h.Port)}
}

// Zone is one chunk of a zone's configuration as a reflector holds it.
type Zone struct {
	Origin  netip.Addr
	Stamp   uint64 // the manifest's
	Name    string
	Chunk   uint16
	Members []string
}

// Key of the record.
func (z *Zone) Key() Key {
	return Key{Origin: z.Origin, Kind: KindZone, ID: hashID("zone", z.Name, fmt.Sprint(z.Chunk))}
}

// Manifest is a reflector's zone configuration as a whole: its stamp
// (when it last changed) and how many zone chunks carry it, so that a
// switch applies a configuration only once it holds all of it.
type Manifest struct {
	Origin  netip.Addr
	Stamp   uint64 // nanoseconds since 1970 of the configuration's last change
	Chunks  uint32
	AutoAdd bool // default zone: add hosts that are in no user zone
}

// Key of the record.
func (m *Manifest) Key() Key {
	return Key{Origin: m.Origin, Kind: KindManifest, ID: hashID("manifest")}
}

// Record is one of *Host, *Zone, *Manifest.
type Record interface {
	Key() Key
}

// TLV types of the attribute value (docs/inof.md, "Records").
const (
	tOrigin     = 1 // 4: switch or reflector router id
	tSwitchName = 2
	tPort       = 3
	tHostID     = 4
	tRole       = 5 // 1
	tNQN        = 6
	tMAC        = 7 // 6
	tIPv4       = 8 // 4, repeatable
	tIPv6       = 9 // 16, repeatable
	tSource     = 10
	tState      = 11
	tZone       = 12 // repeatable
	tSince      = 13 // 8: unix milliseconds
	tPinned     = 14 // 1: 1 (absent: not pinned)
	tStamp      = 20 // 8
	tZoneName   = 21
	tChunk      = 22 // 2
	tMember     = 23 // repeatable
	tChunks     = 24 // 4
	tAutoAdd    = 25 // 1
)

// AppendTo appends the attribute value of r: version, kind, then TLVs
// (type 1 byte, length 2 bytes).
func AppendTo(b []byte, r Record) []byte {
	b = append(b, Version, 0)
	kindAt := len(b) - 1
	tlv := func(t uint8, v []byte) {
		b = binary.BigEndian.AppendUint16(append(b, t), uint16(len(v)))
		b = append(b, v...)
	}
	str := func(t uint8, s string) {
		if s != "" {
			tlv(t, []byte(s))
		}
	}
	addr4 := func(t uint8, a netip.Addr) {
		v := a.As4()
		tlv(t, v[:])
	}
	u64 := func(t uint8, v uint64) { tlv(t, binary.BigEndian.AppendUint64(nil, v)) }
	switch r := r.(type) {
	case *Host:
		b[kindAt] = byte(KindHost)
		addr4(tOrigin, r.Switch)
		str(tSwitchName, r.SwitchName)
		str(tPort, r.Port)
		str(tHostID, r.Host.ID)
		tlv(tRole, []byte{byte(r.Host.Role)})
		str(tNQN, r.Host.NQN)
		if len(r.Host.MAC) == 6 {
			tlv(tMAC, r.Host.MAC)
		}
		for _, a := range r.Host.Addrs {
			if a = a.Unmap(); a.Is4() {
				addr4(tIPv4, a)
			} else if a.Is6() {
				v := a.As16()
				tlv(tIPv6, v[:])
			}
		}
		tlv(tSource, []byte{byte(r.Source)})
		tlv(tState, []byte{byte(r.State)})
		for _, z := range r.Zones {
			str(tZone, z)
		}
		if !r.Since.IsZero() {
			u64(tSince, uint64(r.Since.UnixMilli()))
		}
		if r.Pinned {
			tlv(tPinned, []byte{1})
		}
	case *Zone:
		b[kindAt] = byte(KindZone)
		addr4(tOrigin, r.Origin)
		u64(tStamp, r.Stamp)
		str(tZoneName, r.Name)
		tlv(tChunk, binary.BigEndian.AppendUint16(nil, r.Chunk))
		for _, m := range r.Members {
			str(tMember, m)
		}
	case *Manifest:
		b[kindAt] = byte(KindManifest)
		addr4(tOrigin, r.Origin)
		u64(tStamp, r.Stamp)
		tlv(tChunks, binary.BigEndian.AppendUint32(nil, r.Chunks))
		auto := byte(0)
		if r.AutoAdd {
			auto = 1
		}
		tlv(tAutoAdd, []byte{auto})
	default:
		panic(fmt.Sprintf("record: AppendTo(%T)", r))
	}
	return b
}

// Len is the encoded size of r.
func Len(r Record) int { return len(AppendTo(nil, r)) }

// DecodeError says why and where a record attribute was rejected; Offset
// is from the start of the attribute value.
type DecodeError struct {
	Offset int
	TLV    uint8
	Msg    string
}

func (e *DecodeError) Error() string {
	if e.TLV != 0 {
		return fmt.Sprintf("inof record: TLV %d at offset %d: %s", e.TLV, e.Offset, e.Msg)
	}
	return fmt.Sprintf("inof record: offset %d: %s", e.Offset, e.Msg)
}

// required TLVs per kind.
var required = map[Kind][]uint8{
	KindHost:     {tOrigin, tPort, tHostID, tRole, tSource, tState},
	KindZone:     {tOrigin, tStamp, tZoneName, tChunk},
	KindManifest: {tOrigin, tStamp, tChunks, tAutoAdd},
}

// allowed: which TLVs a kind may carry; others are skipped (a newer
// switch may add some), but a known one in the wrong kind is an error.
var allowed = map[Kind]map[uint8]bool{
	KindHost: {tOrigin: true, tSwitchName: true, tPort: true, tHostID: true, tRole: true, tNQN: true, tMAC: true,
		tIPv4: true, tIPv6: true, tSource: true, tState: true, tZone: true, tSince: true, tPinned: true},
	KindZone:     {tOrigin: true, tStamp: true, tZoneName: true, tChunk: true, tMember: true},
	KindManifest: {tOrigin: true, tStamp: true, tChunks: true, tAutoAdd: true},
}

// Decode parses an attribute value.
func Decode(b []byte) (Record, error) {
	if len(b) < 2 {
		return nil, &DecodeError{Msg: fmt.Sprintf("%d bytes, shorter than the 2-byte header", len(b))}
	}
	if b[0] != Version {
		return nil, &DecodeError{Msg: fmt.Sprintf("version %d, want %d", b[0], Version)}
	}
	kind := Kind(b[1])
	if required[kind] == nil {
		return nil, &DecodeError{Offset: 1, Msg: fmt.Sprintf("unknown kind %d", b[1])}
	}
	var r interface {
		Record
		decodeTLV(t uint8, v []byte) string
	}
	switch kind {
	case KindHost:
		r = &Host{}
	case KindZone:
		r = &Zone{}
	default:
		r = &Manifest{}
	}
	seen := map[uint8]bool{}
	for off := 2; off < len(b); {
		if off+3 > len(b) {
			return nil, &DecodeError{Offset: off, Msg: "TLV header truncated"}
		}
		t, l := b[off], int(binary.BigEndian.Uint16(b[off+1:]))
		if off+3+l > len(b) {
			return nil, &DecodeError{Offset: off, TLV: t, Msg: fmt.Sprintf("length %d runs past the end (%d)", l, len(b))}
		}
		v := b[off+3 : off+3+l]
		msg := ""
		known := t >= tOrigin && t <= tPinned || t >= tStamp && t <= tAutoAdd
		switch {
		case known && !allowed[kind][t]:
			msg = fmt.Sprintf("not allowed in a %s record", kind)
		case seen[t] && t != tIPv4 && t != tIPv6 && t != tZone && t != tMember:
			msg = "repeated"
		default:
			seen[t] = true
			msg = r.decodeTLV(t, v)
		}
		if msg != "" {
			return nil, &DecodeError{Offset: off, TLV: t, Msg: msg}
		}
		off += 3 + l
	}
	for _, t := range required[kind] {
		if !seen[t] {
			return nil, &DecodeError{Offset: len(b), TLV: t, Msg: fmt.Sprintf("required in a %s record, missing", kind)}
		}
	}
	return r, nil
}

// origin decodes a record's origin, a router id.
func origin(v []byte, dst *netip.Addr) string {
	if err := tlv.Fixed(v, 4); err != "" {
		return err
	}
	*dst = netip.AddrFrom4([4]byte(v))
	return ""
}

// stamp decodes a reflector's configuration stamp.
func stamp(v []byte, dst *uint64) string {
	if err := tlv.Fixed(v, 8); err != "" {
		return err
	}
	*dst = binary.BigEndian.Uint64(v)
	return ""
}

// decodeTLV stores one TLV of a host record; it returns what is wrong,
// or "". TLVs of other kinds do not reach it; unknown ones are skipped.
func (h *Host) decodeTLV(t uint8, v []byte) string {
	var err string
	switch t {
	case tOrigin:
		err = origin(v, &h.Switch)
	case tSwitchName:
		h.SwitchName, err = tlv.Text(v, 255)
	case tPort:
		h.Port, err = tlv.Text(v, 255)
	case tHostID:
		h.Host.ID, err = tlv.Text(v, 255)
	case tRole:
		if len(v) != 1 || v[0] < 1 || v[0] > 3 {
			return fmt.Sprintf("role %x, want one byte 1..3", v)
		}
		h.Host.Role = l2.Role(v[0])
	case tNQN:
		h.Host.NQN, err = tlv.Text(v, l2.MaxNQN)
	case tMAC:
		if err = tlv.Fixed(v, 6); err == "" {
			h.Host.MAC = append(net.HardwareAddr(nil), v...)
		}
	case tIPv4:
		if err = tlv.Fixed(v, 4); err == "" {
			h.Host.Addrs = append(h.Host.Addrs, netip.AddrFrom4([4]byte(v)))
		}
	case tIPv6:
		if err = tlv.Fixed(v, 16); err == "" {
			h.Host.Addrs = append(h.Host.Addrs, netip.AddrFrom16([16]byte(v)))
		}
	case tSource:
		if len(v) != 1 || (v[0] != byte(l2.SourceAgent) && v[0] != byte(l2.SourceLLDP)) {
			return fmt.Sprintf("source %x, want one byte 1 (agent) or 2 (lldp)", v)
		}
		h.Source = l2.Source(v[0])
	case tState:
		if len(v) != 1 || v[0] < 1 || v[0] > 4 {
			return fmt.Sprintf("state %x, want one byte 1..4", v)
		}
		h.State = State(v[0])
	case tZone:
		var s string
		if s, err = tlv.Text(v, 255); err == "" {
			h.Zones = append(h.Zones, s)
		}
	case tSince:
		if err = tlv.Fixed(v, 8); err == "" {
			h.Since = time.UnixMilli(int64(binary.BigEndian.Uint64(v)))
		}
	case tPinned:
		if len(v) != 1 || v[0] != 1 {
			return fmt.Sprintf("pinned %x, want one byte 1", v)
		}
		h.Pinned = true
	}
	return err
}

// decodeTLV stores one TLV of a zone chunk (see Host.decodeTLV).
func (z *Zone) decodeTLV(t uint8, v []byte) string {
	var err string
	switch t {
	case tOrigin:
		err = origin(v, &z.Origin)
	case tStamp:
		err = stamp(v, &z.Stamp)
	case tZoneName:
		z.Name, err = tlv.Text(v, 255)
	case tChunk:
		if err = tlv.Fixed(v, 2); err == "" {
			z.Chunk = binary.BigEndian.Uint16(v)
		}
	case tMember:
		var s string
		if s, err = tlv.Text(v, 255); err == "" {
			z.Members = append(z.Members, s)
		}
	}
	return err
}

// decodeTLV stores one TLV of a manifest (see Host.decodeTLV).
func (m *Manifest) decodeTLV(t uint8, v []byte) string {
	var err string
	switch t {
	case tOrigin:
		err = origin(v, &m.Origin)
	case tStamp:
		err = stamp(v, &m.Stamp)
	case tChunks:
		if err = tlv.Fixed(v, 4); err == "" {
			m.Chunks = binary.BigEndian.Uint32(v)
		}
	case tAutoAdd:
		if len(v) != 1 || v[0] > 1 {
			return fmt.Sprintf("auto-add %x, want one byte 0 or 1", v)
		}
		m.AutoAdd = v[0] == 1
	}
	return err
}

// Community is a BGP large community (RFC 8092) as GoBGP writes it.
type Community struct{ Global, Local1, Local2 uint32 }

func (c Community) String() string { return fmt.Sprintf("%d:%d:%d", c.Global, c.Local1, c.Local2) }

// Large community functions (Local1) that iNOF host records carry, so
// that routing policy can filter records by zone and by switch.
const (
	CommunityZone   = 1 // Local2 = ZoneHash(name)
	CommunitySwitch = 2 // Local2 = the switch's router id as a number
)

// ZoneHash is a zone name as a community value (FNV-1a, 32 bits).
func ZoneHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}

// ZoneCommunity is the community of a zone's records.
func ZoneCommunity(asn uint32, zone string) Community {
	return Community{asn, CommunityZone, ZoneHash(zone)}
}

// SwitchCommunity is the community of a switch's records.
func SwitchCommunity(asn uint32, sw netip.Addr) Community {
	return Community{asn, CommunitySwitch, binary.BigEndian.Uint32(sw.AsSlice())}
}

// Communities of a host record: its switch and each of its zones.
func (h *Host) Communities(asn uint32) []Community {
	c := []Community{SwitchCommunity(asn, h.Switch)}
	for _, z := range h.Zones {
		c = append(c, ZoneCommunity(asn, z))
	}
	return c
}
