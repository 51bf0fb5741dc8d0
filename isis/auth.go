package isis

import (
	"fmt"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/isis/packet"
)

// Authentication (ISO 10589 §9.8, RFC 5304, RFC 5310, RFC 6233).
//
// Hellos use the interface's key chain; LSPs and SNPs the level's (ISO's
// area and domain passwords). A PDU is sent with the chain's send key
// (config.Auth.SendKeyAt) and accepted if any key of its accept lifetime
// verifies it. Our LSPs are signed once, at origination; a change of the
// level's send key re-originates them (authTick), so a rollover needs no
// restart and no adjacency goes down. A rejected PDU counts as
// rx_rejected_auth_<why> on the interface and logs once.
//
// When every key's send lifetime has ended, the chain keeps sending with
// the last one and accepts it (RFC 8177's common practice; sending
// without authentication would make every neighbour drop us, and
// accepting nothing would drop them: an outage). That is counted on the
// interface (tx_auth_expired_key, rx_auth_expired_key; LSPs signed so:
// lsp_auth_expired_key on the interfaces of the level) and logged when it
// starts and when it ends.

// pktKey is the packet form of a configured key.
func pktKey(k config.AuthKey) packet.Key {
	alg, _ := packet.ParseAlg(k.Algorithm) // config accepts only names ParseAlg knows
	return packet.Key{ID: k.ID, Alg: alg, Secret: []byte(k.Secret)}
}

// sendKey is the chain's send key at now; fallback: an expired one (no
// key's send lifetime holds).
func sendKey(a *config.Auth, now time.Time) (k packet.Key, fallback, ok bool) {
	ck, fallback, ok := a.SendKeyAt(now)
	if !ok {
		return packet.Key{}, false, false
	}
	return pktKey(ck), fallback, true
}

// acceptKeys are the keys accepted at now, and the ids of those accepted
// only as a fallback (their accept lifetime has ended).
func acceptKeys(a *config.Auth, now time.Time) (keys []packet.Key, expired map[uint16]bool) {
	cks, _ := a.AcceptKeysAt(now)
	for _, k := range cks {
		keys = append(keys, pktKey(k))
		if !k.CanAccept(now) {
			if expired == nil {
				expired = map[uint16]bool{}
			}
			expired[k.ID] = true
		}
	}
	return keys, expired
}

// noteFallback logs, once per change, that chain name of the circuit
// sends with an expired key (or no longer does).
func (c *circuit) noteFallback(name string, on bool, k packet.Key) {
	f := c.keyFallback[name]
	if f == nil {
		f = &config.KeyFallback{}
		c.keyFallback[name] = f
	}
	if !f.Note(on) {
		return
	}
	if on {
		c.in.log.Warn("every authentication key's send lifetime has ended: sending with the last one until a valid key is configured",
			"iface", c.name, "chain", name, "key_id", k.ID)
	} else {
		c.in.log.Info("a valid authentication key again", "iface", c.name, "chain", name, "key_id", k.ID)
	}
}

// chainName names the chain of a PDU for logs.
func chainName(pdu packet.PDU) string {
	switch pdu.(type) {
	case *packet.P2PHello, *packet.LANHello:
		return "hello"
	}
	return fmt.Sprintf("level-%d", pdu.PDUHeader().Level())
}

// authRoom is the most TLV 10 bytes any key of the chain needs, so that
// PDUs are cut to fit whichever key signs them.
func authRoom(a *config.Auth) int {
	if a == nil {
		return 0
	}
	n := 0
	for _, k := range a.Keys {
		n = max(n, pktKey(k).TLVLen())
	}
	return n
}

// lspAuth is the chain of level l's LSPs and SNPs (nil: none).
func (in *Instance) lspAuth(l int) *config.Auth { return in.icfg.Authentication.Level(l) }

// lspAuthRoom is the TLV 10 room LSPs and SNPs of either level need.
func (in *Instance) lspAuthRoom() int {
	return max(authRoom(in.lspAuth(1)), authRoom(in.lspAuth(2)))
}

// keyName identifies a send key for counters and for noticing a rollover.
func keyName(k packet.Key, ok bool) string {
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s/%d", k.Alg, k.ID)
}

// pduAuth is the chain a PDU is authenticated with on circuit c.
func (c *circuit) pduAuth(pdu packet.PDU) *config.Auth {
	switch p := pdu.(type) {
	case *packet.P2PHello, *packet.LANHello:
		return c.cfg.Authentication
	default:
		return c.in.lspAuth(p.PDUHeader().Level())
	}
}

// encode serialises a hello or SNP, with the TLV 10 of its chain's send
// key first (RFC 5304 §2 recommends first) and signed.
func (c *circuit) encode(pdu packet.PDU) []byte {
	a := c.pduAuth(pdu)
	if a == nil {
		return pdu.AppendTo(nil)
	}
	k, fallback, ok := sendKey(a, c.in.opt.Now())
	if !ok {
		// An empty chain: the configuration refuses one.
		c.count("tx_auth_no_send_key")
		c.logOnce("auth_no_send_key", "no authentication key may send now: PDU sent without authentication", "pdu", pdu.PDUHeader().TypeName())
		return pdu.AppendTo(nil)
	}
	c.noteFallback(chainName(pdu), fallback, k)
	if fallback {
		c.count("tx_auth_expired_key")
	}
	if _, lsp := pdu.(*packet.LSP); lsp {
		return pdu.AppendTo(nil) // encode takes hellos and SNPs only
	}
	q := packet.PrependTLVs(pdu, k.Placeholder())
	if q == nil {
		return pdu.AppendTo(nil)
	}
	b := q.AppendTo(nil)
	if err := packet.Sign(b, k); err != nil {
		c.in.log.Error("signing a PDU failed", "iface", c.name, "err", err)
	}
	c.count("tx_auth_key_" + fmt.Sprint(k.ID))
	return b
}

// authOK authenticates a received PDU (b as received, pdu decoded from
// it). A failure is counted and logged once per kind and interface.
func (c *circuit) authOK(pdu packet.PDU, b []byte, src [6]byte) bool {
	a := c.pduAuth(pdu)
	if a == nil {
		return true
	}
	name := pdu.PDUHeader().TypeName()
	keys, expired := acceptKeys(a, c.in.opt.Now())
	if len(keys) == 0 {
		c.reject("auth_expired", "authentication failed: no key may be accepted now, PDU dropped", "pdu", name, "from", macString(src))
		return false
	}
	k, err := packet.Verify(b, keys)
	if err != nil {
		kind := packet.AuthKind(err).String()
		c.reject(kind, "authentication failed: PDU dropped", "pdu", name, "err", err, "from", macString(src))
		return false
	}
	// RFC 6233 §3: with authentication in use, a purge carries only the
	// TLVs the registry allows in purges; anything else is not accepted.
	if l, ok := pdu.(*packet.LSP); ok && l.Lifetime == 0 {
		for i, t := range l.TLVs {
			if !packet.PurgeTLVOK(t.Type()) {
				c.reject("auth_purge_tlv", "authenticated purge with a TLV purges may not carry (RFC 6233): dropped",
					"lsp", l.ID.String(), "tlv", t.Type(), "tlv_index", i, "from", macString(src))
				return false
			}
		}
	}
	c.count("rx_auth_key_" + fmt.Sprint(k.ID))
	if expired[k.ID] {
		c.count("rx_auth_expired_key")
	}
	return true
}

// encodeLSP serialises an LSP of ours (or a purge we issue) with level
// l's send key, replacing any TLV 10 it held. keep writes p.Checksum as
// it is (purges go out with 0) instead of computing it.
func (in *Instance) encodeLSP(l int, p *packet.LSP, keep bool) []byte {
	p.TLVs = p.TLVs.WithoutAuth()
	k, ok := packet.Key{}, false
	if a := in.lspAuth(l); a != nil {
		var fallback bool
		k, fallback, ok = sendKey(a, in.opt.Now())
		if !ok {
			in.LogOnce(fmt.Sprintf("auth_no_send_key_l%d", l), "no level authentication key may send now: LSP sent without authentication", "level", l)
		}
		in.lspFallback(l, fallback, k)
	}
	if ok {
		p.TLVs = append(packet.TLVs{k.Placeholder()}, p.TLVs...)
	}
	var raw []byte
	if keep {
		raw = p.AppendToKeepChecksum(nil)
	} else {
		raw = p.AppendTo(nil)
	}
	in.lspKey[l-1] = keyName(k, ok)
	if ok {
		if err := packet.Sign(raw, k); err != nil {
			in.log.Error("signing an LSP failed", "lsp", p.ID.String(), "err", err)
		}
	}
	return raw
}

// authTick re-originates our LSPs of a level whose send key changed (a
// lifetime began or ended): the old signatures may soon stop being
// accepted. Our purges are left as they are: they age out.
func (in *Instance) authTick(now time.Time) {
	for l := 1; l <= 2; l++ {
		lv := in.level(l)
		if lv == nil {
			continue
		}
		cur := ""
		if a := in.lspAuth(l); a != nil {
			k, _, ok := sendKey(a, now)
			cur = keyName(k, ok)
		}
		if cur == in.lspKey[l-1] || lv.originated == 0 {
			continue
		}
		in.lspKey[l-1] = cur // also when nothing is left to re-sign
		n := 0
		for _, e := range lv.db {
			if e.own && e.purged.IsZero() && e.lsp != nil {
				in.reoriginate(lv, e, now)
				n++
			}
		}
		in.log.Info("LSP authentication key changed: own LSPs re-signed", "level", l, "key", cur, "lsps", n)
	}
}

// lspFallback counts an LSP of level l signed with an expired key on the
// level's interfaces and logs each change of that once.
func (in *Instance) lspFallback(l int, on bool, k packet.Key) {
	if on {
		for _, c := range in.circuits {
			if c.running && c.levelOn(l) {
				c.count("lsp_auth_expired_key")
			}
		}
	}
	if !in.lspKeyFallback[l-1].Note(on) {
		return
	}
	if on {
		in.log.Warn("every LSP authentication key's send lifetime has ended: signing with the last one until a valid key is configured", "level", l, "key_id", k.ID)
	} else {
		in.log.Info("a valid LSP authentication key again", "level", l, "key_id", k.ID)
	}
}
