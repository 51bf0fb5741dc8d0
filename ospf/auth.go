package ospf

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/ospf/packet"
)

// Authentication (RFC 2328 appendix D, RFC 5709).
//
// Each interface has one key chain (Interface.Authentication):
// packets go out with the chain's send key and are accepted with any key
// of its accept lifetime whose id they name, so a rollover is: add the new
// key on every router, then move the send lifetime. Cryptographic packets
// carry a sequence number that never decreases per sender (RFC 2328
// D.4.3): ours starts at the Unix time and grows by one a packet, so it
// keeps growing across restarts; a neighbour's that goes backwards is a
// replay. A rejected packet counts as rx_rejected_auth_<why> and logs once.
//
// When every key's send lifetime has ended, the interface keeps sending
// with the last one and accepts it (RFC 8177's common practice: sending
// without authentication would make every neighbour drop us, and
// accepting nothing would drop them: an outage); counted
// (tx_auth_expired_key, rx_auth_expired_key) and logged when it starts
// and when it ends.

func pktKey(k config.AuthKey) packet.Key {
	alg, _ := packet.ParseAlg(k.Algorithm) // config accepts only names ParseAlg knows
	return packet.Key{ID: uint8(k.ID), Alg: alg, Secret: []byte(k.Secret)}
}

// authRoom is the most digest bytes a key of the chain appends.
func authRoom(a *config.Auth) int {
	if a == nil {
		return 0
	}
	n := 0
	for _, k := range a.Keys {
		n = max(n, pktKey(k).Alg.DigestLen())
	}
	return n
}

// nextCryptSeq is the cryptographic sequence number of the next packet.
func (ifc *iface) nextCryptSeq(now time.Time) uint32 {
	s := max(ifc.cryptSeq+1, uint32(now.Unix()))
	ifc.cryptSeq = s
	return s
}

// sign authenticates an encoded packet (p's header already has the AuType
// of the send key: setAuType) with the interface's send key.
func (ifc *iface) sign(b []byte, k packet.Key) []byte {
	out, err := packet.Sign(b, 0, k, ifc.nextCryptSeq(ifc.in.opt.Now()))
	if err != nil {
		ifc.in.log.Error("signing a packet failed", "iface", ifc.name, "err", err)
		return b
	}
	ifc.count("tx_auth_key_" + fmt.Sprint(k.ID))
	return out
}

// sendKey is the key to sign with now; ok false means AuType 0.
func (ifc *iface) sendKey() (packet.Key, bool) {
	a := ifc.cfg.Authentication
	if a == nil {
		return packet.Key{}, false
	}
	k, fallback, ok := a.SendKeyAt(ifc.in.opt.Now())
	if !ok {
		// An empty chain: the configuration refuses one.
		ifc.count("tx_auth_no_send_key")
		ifc.logOnce("auth_no_send_key", "no authentication key may send now: packet sent without authentication")
		return packet.Key{}, false
	}
	if fallback {
		ifc.count("tx_auth_expired_key")
	}
	if ifc.keyFallback.Note(fallback) {
		if fallback {
			ifc.in.log.Warn("every authentication key's send lifetime has ended: sending with the last one until a valid key is configured",
				"iface", ifc.name, "key_id", k.ID)
		} else {
			ifc.in.log.Info("a valid authentication key again", "iface", ifc.name, "key_id", k.ID)
		}
	}
	return pktKey(k), true
}

// authOK authenticates a received packet (b is the IP payload) and checks
// its sequence number against the sending neighbour's last one.
func (ifc *iface) authOK(b []byte, rid, src netip.Addr) (packet.Verified, bool) {
	a := ifc.cfg.Authentication
	var keys []packet.Key
	expired := map[uint8]bool{}
	if a != nil {
		now := ifc.in.opt.Now()
		cks, _ := a.AcceptKeysAt(now)
		for _, k := range cks {
			keys = append(keys, pktKey(k))
			if !k.CanAccept(now) {
				expired[uint8(k.ID)] = true
			}
		}
		if len(keys) == 0 {
			ifc.reject("auth_expired", "authentication failed: no key may be accepted now, packet dropped", "from", src)
			return packet.Verified{}, false
		}
	}
	v, err := packet.Verify(b, keys)
	if err != nil {
		kind := packet.AuthKind(err).String()
		ifc.reject(kind, "authentication failed: packet dropped", "err", err, "from", src, "router_id", rid)
		return v, false
	}
	if v.Key.AuType() == packet.AuCrypto {
		if n := ifc.nbrFor(rid, src); n != nil && n.cryptSeqSet && v.Seq < n.cryptSeq {
			ifc.reject("auth_seq", "cryptographic sequence number went backwards (replay?): packet dropped",
				"seq", v.Seq, "last", n.cryptSeq, "from", src, "router_id", rid)
			return v, false
		}
	}
	if a != nil {
		ifc.count("rx_auth_key_" + fmt.Sprint(v.Key.ID))
		if expired[v.Key.ID] {
			ifc.count("rx_auth_expired_key")
		}
	}
	return v, true
}

// noteCryptSeq records an accepted packet's sequence number on the
// neighbour that sent it (which a hello may just have created).
func (ifc *iface) noteCryptSeq(v packet.Verified, rid, src netip.Addr) {
	if v.Key.AuType() != packet.AuCrypto {
		return
	}
	if n := ifc.nbrFor(rid, src); n != nil {
		n.cryptSeq, n.cryptSeqSet = v.Seq, true
	}
}
