// Package l2 is the wire format between an iNOF host and its switch: a
// small TLV protocol on the IEEE 802 local-experimental EtherType 0x88B5,
// and the iNOF organisation-specific TLV carried in LLDP by agentless
// hosts. docs/inof.md is the specification; this package is its codec
// (Decode, AppendTo) and a gopacket layer for it.
package l2

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/fared/fared/inof/internal/tlv"
	"github.com/fared/fared/internal/enum"
)

// EtherType is the IEEE 802 "local experimental" EtherType 1 (IEEE Std
// 802-2014 §9.2.4): free for any protocol that never leaves a site.
const EtherType = 0x88B5

// Version is the only protocol version defined.
const Version = 1

// HeaderLen is the fixed header: version, type, length, sequence.
const HeaderLen = 8

// MaxLen is the largest message: an untagged Ethernet payload.
const MaxLen = 1500

// GroupMAC is where a host sends: the IEEE "nearest bridge" group
// (802.1Q Table 8-1), which no bridge forwards, so a host reaches exactly
// the switch port it is plugged into without knowing its MAC. A switch
// answers to the host's own MAC.
var GroupMAC = net.HardwareAddr{0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E}

// Type is a message type.
type Type uint8

// Message types. Every request from a host is answered by its Ack; a
// Notify from a switch is answered by a NotifyAck from the host.
const (
	TypeRegister      Type = 1
	TypeRegisterAck   Type = 2
	TypeKeepalive     Type = 3
	TypeKeepaliveAck  Type = 4
	TypeDeregister    Type = 5
	TypeDeregisterAck Type = 6
	TypeNotify        Type = 7
	TypeNotifyAck     Type = 8
)

var typeNames = enum.Names[Type]{
	TypeRegister: "register", TypeRegisterAck: "register-ack",
	TypeKeepalive: "keepalive", TypeKeepaliveAck: "keepalive-ack",
	TypeDeregister: "deregister", TypeDeregisterAck: "deregister-ack",
	TypeNotify: "notify", TypeNotifyAck: "notify-ack",
}

func (t Type) String() string { return typeNames.Name(t, "type-") }

// Role is what a host does in NVMe-oF.
type Role uint8

// Roles.
const (
	RoleInitiator Role = 1
	RoleTarget    Role = 2
	RoleBoth      Role = 3
)

var roleNames = enum.Names[Role]{RoleInitiator: "initiator", RoleTarget: "target", RoleBoth: "both"}

func (r Role) String() string { return roleNames.Name(r, "role-") }

// ParseRole is the inverse of Role.String.
func ParseRole(s string) (Role, error) { return roleNames.Lookup("role", s) }

// Event is what a Notify says about a peer.
type Event uint8

// Events.
const (
	EventJoin        Event = 1 // the peer appeared (or changed): connect to it
	EventLeave       Event = 2 // the peer left in good order (deregistered, zone change)
	EventUnreachable Event = 3 // the peer, its link or its switch failed: use another path
)

var eventNames = enum.Names[Event]{EventJoin: "join", EventLeave: "leave", EventUnreachable: "unreachable"}

func (e Event) String() string { return eventNames.Name(e, "event-") }

// Status is a switch's answer to a request.
type Status uint8

// Statuses.
const (
	StatusOK Status = 0
	// StatusUnknownHost answers a keepalive from a host the switch does not
	// hold (it restarted, or the hold time ran out): register again.
	StatusUnknownHost Status = 1
	// StatusRefused: the request is valid but cannot be served (table full).
	StatusRefused Status = 2
)

var statusNames = enum.Names[Status]{StatusOK: "ok", StatusUnknownHost: "unknown-host", StatusRefused: "refused"}

func (s Status) String() string { return statusNames.Name(s, "status-") }

// Source is how a switch learned a host.
type Source uint8

// Sources.
const (
	SourceAgent Source = 1 // the host agent registered on this switch
	SourceLLDP  Source = 2 // LLDP on this switch
	SourceBGP   Source = 3 // another switch, over IBGP
)

var sourceNames = enum.Names[Source]{SourceAgent: "agent", SourceLLDP: "lldp", SourceBGP: "bgp"}

func (s Source) String() string { return sourceNames.Name(s, "source-") }

// Host describes a host: what it registers, and what peers are told.
type Host struct {
	ID    string
	Role  Role
	NQN   string
	MAC   net.HardwareAddr // nil when unknown
	Addrs []netip.Addr
}

// Message is one protocol message. Which fields a type uses is in
// docs/inof.md ("Messages"); Decode checks the required ones.
type Message struct {
	Type Type
	// Seq matches an answer to its request: an ack carries the sequence
	// number of what it acknowledges.
	Seq uint32
	// Host: the registering host (Register); its ID (Keepalive,
	// Deregister, NotifyAck); the peer a Notify is about.
	Host Host
	// Hold is the registration's lifetime without a keepalive: asked for
	// in Register, granted in RegisterAck.
	Hold time.Duration
	// Status answers a request (RegisterAck, KeepaliveAck, DeregisterAck).
	Status Status
	// Switch is a switch's router id: the answering switch in acks, the
	// peer's switch in a Notify.
	Switch     netip.Addr
	SwitchName string
	// Port is the switch port: the host's own in RegisterAck, the peer's
	// in a Notify.
	Port string
	// Nonce identifies one run of the switch's agent; a host that sees it
	// change knows the switch restarted.
	Nonce uint32
	// Event, Zones and Source describe a Notify.
	Event  Event
	Zones  []string
	Source Source
	// Auth authenticates a host's request (Sign, Verify); nil without.
	Auth *Auth
	// raw is the message as received when it carries Auth: what Verify
	// computes the digest over.
	raw []byte
}

// TLV types (docs/inof.md, "TLVs").
const (
	TLVHostID     = 1  // string 1..255
	TLVRole       = 2  // 1 byte
	TLVNQN        = 3  // string 1..223 (NVMe Base Specification: NQN ≤ 223 bytes)
	TLVIPv4       = 4  // 4 bytes, repeatable
	TLVIPv6       = 5  // 16 bytes, repeatable
	TLVMAC        = 6  // 6 bytes
	TLVHold       = 7  // 4 bytes, milliseconds
	TLVSwitch     = 8  // 4 bytes, router id
	TLVSwitchName = 9  // string
	TLVPort       = 10 // string
	TLVEvent      = 11 // 1 byte
	TLVZone       = 12 // string, repeatable
	TLVStatus     = 13 // 1 byte
	TLVNonce      = 14 // 4 bytes
	TLVSource     = 15 // 1 byte
	// TLVAuth (16) is in auth.go.
)

// MaxNQN is the longest NVMe Qualified Name (NVMe Base Specification 2.0,
// §4.5).
const MaxNQN = 223

// MaxHold is the longest hold time a message can carry.
const MaxHold = time.Duration(1<<32-1) * time.Millisecond

// required lists the TLVs each message type must carry.
var required = map[Type][]uint8{
	TypeRegister:      {TLVHostID, TLVRole, TLVHold},
	TypeRegisterAck:   {TLVStatus, TLVSwitch, TLVPort, TLVHold, TLVNonce},
	TypeKeepalive:     {TLVHostID},
	TypeKeepaliveAck:  {TLVStatus, TLVNonce},
	TypeDeregister:    {TLVHostID},
	TypeDeregisterAck: {TLVStatus},
	TypeNotify:        {TLVEvent, TLVHostID, TLVSwitch},
	TypeNotifyAck:     {TLVHostID},
}

// Decode parses one message: b starts at the header and may carry
// Ethernet padding after the length the header gives. Unknown TLV types
// are skipped (a newer peer may send more); a known TLV that does not
// parse, a missing required TLV, or a length that overruns the buffer is
// an error that says where.
func Decode(b []byte) (Message, error) {
	var m Message
	if len(b) < HeaderLen {
		return m, &DecodeError{Offset: 0, Msg: fmt.Sprintf("%d bytes, shorter than the %d-byte header", len(b), HeaderLen)}
	}
	if b[0] != Version {
		return m, &DecodeError{Offset: 0, Msg: fmt.Sprintf("version %d, want %d", b[0], Version)}
	}
	m.Type = Type(b[1])
	if required[m.Type] == nil {
		return m, &DecodeError{Type: m.Type, Offset: 1, Msg: fmt.Sprintf("unknown message type %d", b[1])}
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n < HeaderLen || n > len(b) {
		return m, &DecodeError{Type: m.Type, Offset: 2, Msg: fmt.Sprintf("length %d outside %d..%d (bytes present)", n, HeaderLen, len(b))}
	}
	m.Seq = binary.BigEndian.Uint32(b[4:8])
	var seen [32]bool
	for off := HeaderLen; off < n; {
		if off+2 > n {
			return m, &DecodeError{Type: m.Type, Offset: off, Msg: "TLV header truncated"}
		}
		t, l := b[off], int(b[off+1])
		if off+2+l > n {
			return m, &DecodeError{Type: m.Type, Offset: off, TLV: t, Msg: fmt.Sprintf("length %d runs past the message end (%d)", l, n)}
		}
		v := b[off+2 : off+2+l]
		if int(t) < len(seen) {
			if seen[t] && !repeatable(t) {
				return m, &DecodeError{Type: m.Type, Offset: off, TLV: t, Msg: "repeated"}
			}
			seen[t] = true
		}
		if t == TLVAuth {
			// What follows the auth TLV would not be authenticated.
			if off+2+l != n {
				return m, &DecodeError{Type: m.Type, Offset: off, TLV: t, Msg: fmt.Sprintf("auth TLV is not the last (message ends at %d)", n)}
			}
			a, err := DecodeAuth(v)
			if err != nil {
				return m, &DecodeError{Type: m.Type, Offset: off, TLV: t, Msg: err.Error()}
			}
			m.Auth, m.raw = &a, append([]byte(nil), b[:n]...)
		} else if err := m.decodeTLV(t, v); err != "" {
			return m, &DecodeError{Type: m.Type, Offset: off, TLV: t, Msg: err}
		}
		off += 2 + l
	}
	for _, t := range required[m.Type] {
		if !seen[t] {
			return m, &DecodeError{Type: m.Type, Offset: n, TLV: t, Msg: "required TLV missing"}
		}
	}
	return m, nil
}

func repeatable(t uint8) bool { return t == TLVIPv4 || t == TLVIPv6 || t == TLVZone }

// decodeTLV stores one TLV's value; it returns what is wrong, or "".
func (m *Message) decodeTLV(t uint8, v []byte) string {
	fixed := func(n int) string { return tlv.Fixed(v, n) }
	text := func(max int) (string, string) { return tlv.Text(v, max) }
	var err string
	switch t {
	case TLVHostID:
		m.Host.ID, err = text(255)
	case TLVRole:
		if err = fixed(1); err == "" {
			m.Host.Role = Role(v[0])
			if m.Host.Role < RoleInitiator || m.Host.Role > RoleBoth {
				err = fmt.Sprintf("role %d, want 1..3", v[0])
			}
		}
	case TLVNQN:
		m.Host.NQN, err = text(MaxNQN)
	case TLVIPv4:
		if err = fixed(4); err == "" {
			m.Host.Addrs = append(m.Host.Addrs, netip.AddrFrom4([4]byte(v)))
		}
	case TLVIPv6:
		if err = fixed(16); err == "" {
			m.Host.Addrs = append(m.Host.Addrs, netip.AddrFrom16([16]byte(v)))
		}
	case TLVMAC:
		if err = fixed(6); err == "" {
			m.Host.MAC = append(net.HardwareAddr(nil), v...)
		}
	case TLVHold:
		if err = fixed(4); err == "" {
			m.Hold = time.Duration(binary.BigEndian.Uint32(v)) * time.Millisecond
			if m.Hold == 0 {
				err = "hold time 0"
			}
		}
	case TLVSwitch:
		if err = fixed(4); err == "" {
			m.Switch = netip.AddrFrom4([4]byte(v))
		}
	case TLVSwitchName:
		m.SwitchName, err = text(255)
	case TLVPort:
		m.Port, err = text(255)
	case TLVEvent:
		if err = fixed(1); err == "" {
			m.Event = Event(v[0])
			if m.Event < EventJoin || m.Event > EventUnreachable {
				err = fmt.Sprintf("event %d, want 1..3", v[0])
			}
		}
	case TLVZone:
		var z string
		if z, err = text(255); err == "" {
			m.Zones = append(m.Zones, z)
		}
	case TLVStatus:
		if err = fixed(1); err == "" {
			m.Status = Status(v[0])
			if m.Status > StatusRefused {
				err = fmt.Sprintf("status %d, want 0..2", v[0])
			}
		}
	case TLVNonce:
		if err = fixed(4); err == "" {
			m.Nonce = binary.BigEndian.Uint32(v)
		}
	case TLVSource:
		if err = fixed(1); err == "" {
			m.Source = Source(v[0])
			if m.Source < SourceAgent || m.Source > SourceBGP {
				err = fmt.Sprintf("source %d, want 1..3", v[0])
			}
		}
	}
	return err
}

// AppendTo appends the message (header and TLVs, no Ethernet header). It
// encodes the fields that are set; Len tells the caller whether the
// result fits MaxLen before sending. Strings longer than a TLV can hold
// are a caller's bug and panic, rather than being cut silently.
func (m *Message) AppendTo(b []byte) []byte {
	start := len(b)
	b = append(b, Version, byte(m.Type), 0, 0)
	b = binary.BigEndian.AppendUint32(b, m.Seq)
	str := func(t uint8, s string) {
		if s == "" {
			return
		}
		if len(s) > 255 {
			panic(fmt.Sprintf("inof/l2: TLV %d: %d bytes", t, len(s)))
		}
		b = append(b, t, byte(len(s)))
		b = append(b, s...)
	}
	u8 := func(t, v uint8) { b = append(b, t, 1, v) }
	u32 := func(t uint8, v uint32) { b = binary.BigEndian.AppendUint32(append(b, t, 4), v) }

	str(TLVHostID, m.Host.ID)
	if m.Host.Role != 0 {
		u8(TLVRole, uint8(m.Host.Role))
	}
	str(TLVNQN, m.Host.NQN)
	if len(m.Host.MAC) == 6 {
		b = append(append(b, TLVMAC, 6), m.Host.MAC...)
	}
	for _, a := range m.Host.Addrs {
		a = a.Unmap()
		if a.Is4() {
			v := a.As4()
			b = append(append(b, TLVIPv4, 4), v[:]...)
		} else if a.Is6() {
			v := a.As16()
			b = append(append(b, TLVIPv6, 16), v[:]...)
		}
	}
	if m.Hold > 0 {
		u32(TLVHold, uint32(min(m.Hold, MaxHold)/time.Millisecond))
	}
	if needsStatus(m.Type) {
		u8(TLVStatus, uint8(m.Status))
	}
	if m.Switch.Is4() {
		v := m.Switch.As4()
		b = append(append(b, TLVSwitch, 4), v[:]...)
	}
	str(TLVSwitchName, m.SwitchName)
	str(TLVPort, m.Port)
	if m.Nonce != 0 || m.Type == TypeRegisterAck || m.Type == TypeKeepaliveAck {
		u32(TLVNonce, m.Nonce)
	}
	if m.Event != 0 {
		u8(TLVEvent, uint8(m.Event))
	}
	for _, z := range m.Zones {
		str(TLVZone, z)
	}
	if m.Source != 0 {
		u8(TLVSource, uint8(m.Source))
	}
	if m.Auth != nil { // last: it authenticates what precedes it
		b = m.Auth.AppendTo(append(b, TLVAuth, AuthLen))
	}
	binary.BigEndian.PutUint16(b[start+2:], uint16(len(b)-start))
	return b
}

// needsStatus: the acks of host requests always carry a status (OK is 0,
// so "set" cannot be told from the value).
func needsStatus(t Type) bool {
	return t == TypeRegisterAck || t == TypeKeepaliveAck || t == TypeDeregisterAck
}

// Len is the encoded size of m.
func (m *Message) Len() int { return len(m.AppendTo(nil)) }

// DecodeError says why and where Decode rejected a message. Offset is
// from the start of the iNOF header: the offending header field, or the
// TLV's type byte.
type DecodeError struct {
	Type   Type
	Offset int
	TLV    uint8 // 0 for header errors
	Msg    string
}

func (e *DecodeError) Error() string {
	what := "inof l2"
	if e.Type != 0 {
		what += " " + e.Type.String()
	}
	if e.TLV != 0 {
		return fmt.Sprintf("%s: TLV %d at offset %d: %s", what, e.TLV, e.Offset, e.Msg)
	}
	return fmt.Sprintf("%s: offset %d: %s", what, e.Offset, e.Msg)
}
