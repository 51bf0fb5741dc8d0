package config

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// Auth is a key chain: the keys a protocol authenticates with (a routing
// protocol's level or interface, a BFD session). Every key whose accept
// lifetime holds is accepted; packets are sent with the preferred key (see
// SendKey). See docs/config.md, "Authentication".
type Auth struct {
	Keys []AuthKey
}

// AuthKey is one key of a chain. Zero lifetime bounds are open.
type AuthKey struct {
	// ID is the key id on the wire (its range is the protocol's: 0..255,
	// or 0..65535). A protocol whose algorithm sends none still names the
	// key by it in counters.
	ID        uint16
	Algorithm string // the protocol's (AuthRules.Algs): clear, md5, hmac-sha-256, keyed-sha1, ...
	Secret    Secret
	// Preferred: send with this key while its send lifetime holds.
	Preferred   bool      `render:",omitzero"`
	SendFrom    time.Time `render:",omitzero"`
	SendUntil   time.Time `render:",omitzero"`
	AcceptFrom  time.Time `render:",omitzero"`
	AcceptUntil time.Time `render:",omitzero"`
	Line        int
}

// Secret is a key's secret. It prints as "(secret)" so that reload
// reports and logs never show it; Render writes it as it is.
type Secret string

func (Secret) String() string { return "(secret)" }

// CanSend reports whether the key's send lifetime holds at now.
func (k AuthKey) CanSend(now time.Time) bool {
	return (k.SendFrom.IsZero() || !now.Before(k.SendFrom)) && (k.SendUntil.IsZero() || now.Before(k.SendUntil))
}

// CanAccept reports whether the key's accept lifetime holds at now.
func (k AuthKey) CanAccept(now time.Time) bool {
	return (k.AcceptFrom.IsZero() || !now.Before(k.AcceptFrom)) && (k.AcceptUntil.IsZero() || now.Before(k.AcceptUntil))
}

// SendKey is the key to send with at now: the preferred key if it may
// send; else, of the keys that may, the one whose send lifetime began
// last, the highest id on a tie (so a rollover happens by adding a key
// with a later send-from). ok is false when no key may send.
func (a *Auth) SendKey(now time.Time) (AuthKey, bool) {
	if a == nil {
		return AuthKey{}, false
	}
	best, ok := AuthKey{}, false
	for _, k := range a.Keys {
		if !k.CanSend(now) {
			continue
		}
		switch {
		case !ok, k.Preferred && !best.Preferred:
		case best.Preferred && !k.Preferred:
			continue
		case k.SendFrom.After(best.SendFrom):
		case k.SendFrom.Equal(best.SendFrom) && k.ID > best.ID:
		default:
			continue
		}
		best, ok = k, true
	}
	return best, ok
}

// AcceptKeys are the keys accepted at now.
func (a *Auth) AcceptKeys(now time.Time) []AuthKey {
	if a == nil {
		return nil
	}
	var out []AuthKey
	for _, k := range a.Keys {
		if k.CanAccept(now) {
			out = append(out, k)
		}
	}
	return out
}

// SendKeyAt is the key to send with at now, as SendKey, except when no
// key may send: rather than send without authentication (which every
// neighbour drops: an outage), the chain keeps sending with its last key,
// the one whose send lifetime ended last (or, when none has ended yet,
// the one that begins first), and fallback is true, as RFC 8177's common
// practice does. The protocol warns and counts while it lasts. ok is
// false only for a nil or empty chain.
func (a *Auth) SendKeyAt(now time.Time) (k AuthKey, fallback, ok bool) {
	if k, ok := a.SendKey(now); ok {
		return k, false, true
	}
	if a == nil || len(a.Keys) == 0 {
		return AuthKey{}, false, false
	}
	return lastKey(a.Keys, now, func(k AuthKey) (time.Time, time.Time) { return k.SendFrom, k.SendUntil }), true, true
}

// AcceptKeysAt is AcceptKeys with the same fallback: while the chain
// sends with an expired key (SendKeyAt), that key is accepted too (a
// neighbour in the same state sends with it); and when no key's accept
// lifetime holds, the key whose accept lifetime ended last is. fallback
// says a key outside its accept lifetime was added.
func (a *Auth) AcceptKeysAt(now time.Time) (keys []AuthKey, fallback bool) {
	keys = a.AcceptKeys(now)
	if a == nil || len(a.Keys) == 0 {
		return keys, false
	}
	add := func(k AuthKey) {
		for _, h := range keys {
			if h.ID == k.ID {
				return
			}
		}
		keys, fallback = append(keys, k), true
	}
	if k, fb, _ := a.SendKeyAt(now); fb {
		add(k)
	}
	if len(keys) == 0 {
		add(lastKey(a.Keys, now, func(k AuthKey) (time.Time, time.Time) { return k.AcceptFrom, k.AcceptUntil }))
	}
	return keys, fallback
}

// lastKey is the key whose lifetime (from, until) ended last before now;
// when none has ended, the one that begins first; the highest id on a tie.
func lastKey(ks []AuthKey, now time.Time, life func(AuthKey) (from, until time.Time)) AuthKey {
	type cand struct {
		k     AuthKey
		ended bool
		at    time.Time // until if ended, else from
	}
	better := func(a, b cand) bool { // a better than b
		switch {
		case a.ended != b.ended:
			return a.ended
		case !a.at.Equal(b.at):
			return a.at.After(b.at) == a.ended // ended: later end; else earlier start
		}
		return a.k.ID > b.k.ID
	}
	var best cand
	for i, k := range ks {
		from, until := life(k)
		c := cand{k: k, ended: !until.IsZero() && !now.Before(until), at: from}
		if c.ended {
			c.at = until
		}
		if i == 0 || better(c, best) {
			best = c
		}
	}
	return best.k
}

// KeyFallback remembers whether a chain was sending with an expired key,
// so that a protocol logs each change of that once (not every packet).
type KeyFallback struct{ on bool }

// Note records the state in force and reports whether it changed.
func (f *KeyFallback) Note(on bool) bool {
	changed := f.on != on
	f.on = on
	return changed
}

// AuthRules are a protocol's limits on keys: each protocol that takes a
// key chain declares its own (BFD's are here; the routing protocols keep
// theirs with their sections).
type AuthRules struct {
	Proto    string          // the protocol's name, for messages
	Algs     map[string]bool // the algorithms it supports
	MaxID    int64           // highest key id
	MaxClear int             // longest cleartext password
	MaxMD5   int             // longest md5 secret (0: no limit)
	MaxLen   map[string]int  // longest secret per algorithm (BFD)
	OneType  bool            // no mixing of clear and cryptographic keys in a chain
}

// bfdAuthRules: RFC 5880 §4.2-4.4: one-byte key ids; a simple password
// or an MD5 key of at most 16 bytes, a SHA1 key of at most 20 (the key
// fills the digest field when hashing).
var bfdAuthRules = AuthRules{Proto: "BFD", MaxID: 255,
	Algs:   map[string]bool{"simple": true, "keyed-md5": true, "meticulous-keyed-md5": true, "keyed-sha1": true, "meticulous-keyed-sha1": true},
	MaxLen: map[string]int{"simple": 16, "keyed-md5": 16, "meticulous-keyed-md5": 16, "keyed-sha1": 20, "meticulous-keyed-sha1": 20}}

// BFDAuthentication parses a BFD key chain (`authentication: {keys:
// [...]}` in a bfd setting), for modules with a bfd setting of their own
// (inof).
func (p *Walker) BFDAuthentication(dst **Auth) Field { return p.Auth(bfdAuthRules, dst) }

// Auth parses a key chain (`authentication: {keys: [...]}`) under the
// protocol's rules.
func (p *Walker) Auth(r AuthRules, dst **Auth) Field {
	return func(k, v *yaml.Node) {
		if !p.Want(k, v, "a mapping with keys", v.Kind == yaml.MappingNode) {
			return
		}
		a := &Auth{}
		seen := p.Mapping(v, map[string]Field{
			"keys": p.List(func(v *yaml.Node) { a.Keys = append(a.Keys, p.authKey(r, v)) }),
		})
		if len(a.Keys) == 0 {
			at := seen["keys"]
			if at == nil {
				at = v
			}
			p.Errf(at, "%s: need at least one key", k.Value)
			*dst = a
			return
		}
		ids := map[uint16]int{}
		preferred := 0
		for _, key := range a.Keys {
			if first, dup := ids[key.ID]; dup {
				p.Errf(v, "%s: key id %d at line %d repeats the one at line %d", k.Value, key.ID, key.Line, first)
			}
			ids[key.ID] = key.Line
			if key.Preferred {
				preferred++
			}
			if r.OneType && (key.Algorithm == "clear") != (a.Keys[0].Algorithm == "clear") {
				p.Errf(v, "%s: key id %d: %s cannot mix a clear password with cryptographic keys on one interface (one AuType)", k.Value, key.ID, r.Proto)
			}
		}
		if preferred > 1 {
			p.Errf(v, "%s: %d keys are preferred, at most one may be", k.Value, preferred)
		}
		*dst = a
	}
}

func (p *Walker) timestamp(dst *time.Time) Field {
	return func(k, v *yaml.Node) {
		// YAML reads an unquoted 2030-01-01T00:00:00Z as a timestamp.
		s, ok := v.Value, v.Kind == yaml.ScalarNode && v.ShortTag() == "!!timestamp"
		if !ok {
			if s, ok = p.Text(k, v); !ok {
				return
			}
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			p.Errf(v, "%s: invalid time %q (want RFC 3339, e.g. 2025-06-01T00:00:00Z)", k.Value, s)
			return
		}
		*dst = t
	}
}

func (p *Walker) authKey(r AuthRules, v *yaml.Node) AuthKey {
	key := AuthKey{Line: v.Line}
	var secret string
	seen := p.Mapping(v, map[string]Field{
		"id": SetInt(p, &key.ID, 0, r.MaxID),
		"algorithm": p.Str(&key.Algorithm, func(s string) string {
			if !r.Algs[s] {
				return fmt.Sprintf("%s does not support algorithm %q (want one of %s)", r.Proto, s, orList(sortedKeys(r.Algs)))
			}
			return ""
		}),
		"secret": p.Str(&secret, func(s string) string {
			if s == "" {
				return "empty secret"
			}
			return ""
		}),
		"preferred":    p.Bool(&key.Preferred),
		"send-from":    p.timestamp(&key.SendFrom),
		"send-until":   p.timestamp(&key.SendUntil),
		"accept-from":  p.timestamp(&key.AcceptFrom),
		"accept-until": p.timestamp(&key.AcceptUntil),
	})
	key.Secret = Secret(secret)
	for _, req := range []string{"id", "algorithm", "secret"} {
		if seen[req] == nil {
			p.Errf(v, "key: missing required key %q", req)
		}
	}
	switch {
	case key.Algorithm == "clear" && len(secret) > r.MaxClear:
		p.Errf(seen["secret"], "key id %d: a %s clear password has at most %d bytes, got %d", key.ID, r.Proto, r.MaxClear, len(secret))
	case key.Algorithm == "md5" && r.MaxMD5 > 0 && len(secret) > r.MaxMD5:
		p.Errf(seen["secret"], "key id %d: a %s md5 key has at most %d bytes, got %d", key.ID, r.Proto, r.MaxMD5, len(secret))
	case r.MaxLen[key.Algorithm] > 0 && len(secret) > r.MaxLen[key.Algorithm]:
		p.Errf(seen["secret"], "key id %d: a %s %s key has at most %d bytes, got %d", key.ID, r.Proto, key.Algorithm, r.MaxLen[key.Algorithm], len(secret))
	}
	if !key.SendFrom.IsZero() && !key.SendUntil.IsZero() && !key.SendFrom.Before(key.SendUntil) {
		p.Errf(seen["send-until"], "key id %d: send-until %s is not after send-from %s", key.ID, key.SendUntil.Format(time.RFC3339), key.SendFrom.Format(time.RFC3339))
	}
	if !key.AcceptFrom.IsZero() && !key.AcceptUntil.IsZero() && !key.AcceptFrom.Before(key.AcceptUntil) {
		p.Errf(seen["accept-until"], "key id %d: accept-until %s is not after accept-from %s", key.ID, key.AcceptUntil.Format(time.RFC3339), key.AcceptFrom.Format(time.RFC3339))
	}
	return key
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for _, n := range []string{"clear", "md5", "hmac-sha-1", "hmac-sha-224", "hmac-sha-256", "hmac-sha-384", "hmac-sha-512",
		"simple", "keyed-md5", "meticulous-keyed-md5", "keyed-sha1", "meticulous-keyed-sha1"} {
		if m[n] {
			out = append(out, n)
		}
	}
	return out
}

// On reports whether the chain sends with an expired key now.
func (f *KeyFallback) On() bool { return f.on }
