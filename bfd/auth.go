package bfd

import (
	"time"

	"github.com/fared/fared/bfd/packet"
	"github.com/fared/fared/config"
)

// Authentication (RFC 5880 §6.7) with key chains (RFC 8177).
//
// A session authenticates when its Params carry a key chain. Every packet
// goes out signed with the chain's send key (config.Auth.SendKeyAt: when
// every send lifetime has ended, the last key, counted and logged, rather
// than no authentication); a packet is accepted only if it names, by Key
// ID, a key whose accept lifetime holds, of the Auth Type that key's
// algorithm is, and verifies with it. The Auth Type is the key's: a chain
// may roll from keyed MD5 to meticulous keyed SHA1 like any other key.
//
// Sequence numbers (§6.7.3, §6.7.4): ours start at random; meticulous
// types add one for every packet, keyed ones at most once a second (when
// a packet goes out). A received one must lie in [last, last+3×Detect
// Mult] (keyed) or (last, last+3×Detect Mult] (meticulous), in 32-bit
// circular space, Detect Mult being the packet's own. The last one is
// forgotten after twice the Detection Time without an accepted packet
// (§6.8.1), so a peer that restarted is heard again.

// authState is a session's bfd.XmitAuthSeq, bfd.RcvAuthSeq and
// bfd.AuthSeqKnown, and whether it sends with an expired key.
type authState struct {
	xmitSeq  uint32
	xmitAt   time.Time // keyed types: when xmitSeq last grew
	rcvSeq   uint32
	rcvKnown bool
	rcvAt    time.Time // the last authenticated packet
	fallback config.KeyFallback
	keyID    int // the key of the last packet sent; -1: none
	typ      packet.AuthType
}

// Reasons a packet that reached its session is dropped (the counters
// rx_rejected_<reason>).
const (
	rejDisc         = "my_disc_mismatch"   // My Discriminator is not the one learnt
	rejAuthMismatch = "auth_type_mismatch" // A bit or Auth Type other than the chain's key
	rejAuthKey      = "auth_key_id"        // no key of that id may be accepted now
	rejAuthSeq      = "auth_seq"           // sequence number outside the window (replay?)
	rejAuthDigest   = "auth_digest"        // wrong digest or password
)

func authType(k config.AuthKey) packet.AuthType {
	t, _ := packet.ParseAuthType(k.Algorithm) // config accepts only names ParseAuthType knows
	return t
}

// check applies the rules of RFC 5880 §6.8.6 that need the session, before
// the packet may change it: it must come from the remote system the
// session learnt, and authenticate (§6.7). It returns "" (and whether an
// expired key verified it) or the reason to drop the packet.
//
// Once the remote discriminator is learnt, only that remote system speaks
// for the session: a packet with another My Discriminator (a spoofed
// Down from a host on the link, a stale sender) would otherwise take an
// Up session down. A peer that restarted with a new discriminator is
// heard once the old one ages out (a Detection Time without it, run).
func (s *session) check(c packet.Control, raw []byte, now time.Time) (reason string, fallback bool) {
	if s.remoteDisc != 0 && c.MyDisc != s.remoteDisc {
		return rejDisc, false
	}
	return s.authenticate(c, raw, now)
}

// encode is the wire form of c, signed with the send key when the session
// authenticates. fallback: the key's send lifetime has ended (no key's
// holds).
func (s *session) encode(c packet.Control, now time.Time) (b []byte, fallback bool) {
	k, fallback, ok := s.params.Auth.SendKeyAt(now)
	if !ok {
		s.auth.keyID, s.auth.typ = -1, 0
		return c.AppendTo(make([]byte, 0, packet.Len)), false
	}
	t := authType(k)
	c.Auth = packet.Auth{Type: t, KeyID: uint8(k.ID)}
	switch {
	case t == packet.AuthSimple:
		c.Auth.ValueLen = uint8(copy(c.Auth.Value[:], k.Secret))
	case t.Meticulous():
		s.auth.xmitSeq++
	case now.Sub(s.auth.xmitAt) >= time.Second:
		s.auth.xmitSeq++
		s.auth.xmitAt = now
	}
	if t.Crypto() {
		c.Auth.Seq, c.Auth.ValueLen = s.auth.xmitSeq, uint8(t.DigestLen())
	}
	b = c.AppendTo(make([]byte, 0, packet.Len+c.Auth.Len()))
	if err := packet.Sign(b, []byte(k.Secret)); err != nil {
		panic(err) // our own packet, well formed: a bug (the guard catches it)
	}
	s.auth.keyID, s.auth.typ = int(k.ID), t
	return b, fallback
}

// authenticate applies §6.7 to a packet of the session (c decoded from
// raw). It returns "" and whether the key's accept lifetime had ended (a
// fallback key) when the packet is accepted, else the reason it is not.
func (s *session) authenticate(c packet.Control, raw []byte, now time.Time) (reason string, fallback bool) {
	a := s.params.Auth
	if a == nil {
		if c.Auth.Type != 0 {
			return rejAuthMismatch, false // §6.8.6: A bit, no authentication in use
		}
		return "", false
	}
	if c.Auth.Type == 0 {
		return rejAuthMismatch, false // §6.8.6: no A bit, authentication in use
	}
	keys, _ := a.AcceptKeysAt(now)
	var key *config.AuthKey
	for i := range keys {
		if keys[i].ID == uint16(c.Auth.KeyID) {
			key = &keys[i]
		}
	}
	if key == nil {
		return rejAuthKey, false
	}
	t := authType(*key)
	if t != c.Auth.Type {
		return rejAuthMismatch, false
	}
	if t.Crypto() && !s.seqOK(c, t, now) {
		return rejAuthSeq, false
	}
	if !packet.Verify(raw, []byte(key.Secret)) {
		return rejAuthDigest, false
	}
	if t.Crypto() {
		s.auth.rcvSeq, s.auth.rcvKnown, s.auth.rcvAt = c.Auth.Seq, true, now
	}
	return "", !key.CanAccept(now)
}

// seqOK checks a sequence number against the last one accepted (§6.7.3).
func (s *session) seqOK(c packet.Control, t packet.AuthType, now time.Time) bool {
	if s.auth.rcvKnown {
		if d := s.detectTime(); d > 0 && now.Sub(s.auth.rcvAt) >= 2*d {
			s.auth.rcvKnown = false // §6.8.1: silent for twice the Detection Time
		}
	}
	if !s.auth.rcvKnown {
		return true
	}
	ahead := c.Auth.Seq - s.auth.rcvSeq // circular
	if t.Meticulous() && ahead == 0 {
		return false
	}
	return ahead <= 3*uint32(c.DetectMult)
}
