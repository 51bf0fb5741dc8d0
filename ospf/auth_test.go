package ospf

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/ospf/packet"
)

func key(id uint16, alg, secret string) config.AuthKey {
	return config.AuthKey{ID: id, Algorithm: alg, Secret: config.Secret(secret)}
}

// startAuth starts router n on one p2p interface of w with the chain a.
func startAuth(t *testing.T, n int, w *wire, a *config.Auth) *memNode {
	ifs := []memIf{{name: "e0", typ: "p2p", w: w, addr: pfx(fmt.Sprintf("10.254.0.%d/31", n-1))}}
	cfg := parse(t, testYAML(n, ifs, ""))
	Section(cfg).Interfaces[0].Authentication = a
	return startMemCfg(t, cfg, ifs, nil)
}

func ifCounters(t *testing.T, m *memNode) map[string]uint64 {
	t.Helper()
	ifs, err := m.in.Interfaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ifs[0].Counters
}

// staysFull starts r1 and r2 on w, each with the key chain mk makes, and
// once they are Full waits (up to d) until both interfaces' counters are
// done (what they wait for); meanwhile nothing may have been rejected,
// and r1's neighbour must have stayed Full without a flap (or the test
// fails: the neighbour changed when).
func staysFull(t *testing.T, w *wire, mk func() *config.Auth, d time.Duration, what string, done func(map[string]uint64) bool, when string) {
	t.Helper()
	r1, r2 := startAuth(t, 1, w, mk()), startAuth(t, 2, w, mk())
	igptest.Poll(t, 10*time.Second, "Full", fullCount(r1, 1))
	before, _ := r1.in.Neighbors(context.Background())
	igptest.Poll(t, d, what, func() error {
		for _, r := range []*memNode{r1, r2} {
			if c := ifCounters(t, r); !done(c) {
				return fmt.Errorf("counters %v", c)
			}
		}
		return nil
	})
	for _, r := range []*memNode{r1, r2} {
		noRejects(t, r)
	}
	after, _ := r1.in.Neighbors(context.Background())
	if len(after) != 1 || after[0].State != "Full" || after[0].Flaps != before[0].Flaps || after[0].UpSince != before[0].UpSince {
		t.Fatalf("neighbour changed %s: %+v -> %+v", when, before, after)
	}
}

func noRejects(t *testing.T, m *memNode) {
	t.Helper()
	for k, v := range ifCounters(t, m) {
		if strings.HasPrefix(k, "rx_rejected_") && v > 0 {
			t.Errorf("%s = %d", k, v)
		}
	}
}

// Each algorithm: Full, identical databases, nothing rejected.
func TestAuthFull(t *testing.T) {
	for _, alg := range []string{"clear", "md5", "hmac-sha-256"} {
		t.Run(alg, func(t *testing.T) {
			w := &wire{}
			a := &config.Auth{Keys: []config.AuthKey{key(3, alg, "secret")}}
			r1, r2 := startAuth(t, 1, w, a), startAuth(t, 2, w, a)
			igptest.Poll(t, 10*time.Second, "Full", fullCount(r1, 1))
			igptest.Poll(t, 10*time.Second, "identical LSDBs", sameDBn(10, r1, r2))
			noRejects(t, r1)
			noRejects(t, r2)
			if c := ifCounters(t, r1); c["rx_auth_key_3"] == 0 || c["tx_auth_key_3"] == 0 {
				t.Fatalf("counters %v", c)
			}
		})
	}
}

// Mismatches: no adjacency, and the counter says why.
func TestAuthMismatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a1, a2 *config.Auth
		kind   string
	}{
		{"secret", &config.Auth{Keys: []config.AuthKey{key(1, "md5", "a")}}, &config.Auth{Keys: []config.AuthKey{key(1, "md5", "b")}}, "auth_mismatch"},
		{"key id", &config.Auth{Keys: []config.AuthKey{key(1, "md5", "a")}}, &config.Auth{Keys: []config.AuthKey{key(2, "md5", "a")}}, "auth_key_id"},
		{"none vs md5", nil, &config.Auth{Keys: []config.AuthKey{key(1, "md5", "a")}}, "auth_type"},
		{"md5 vs sha", &config.Auth{Keys: []config.AuthKey{key(1, "md5", "a")}}, &config.Auth{Keys: []config.AuthKey{key(1, "hmac-sha-256", "a")}}, "auth_malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &wire{}
			r1, r2 := startAuth(t, 1, w, tc.a1), startAuth(t, 2, w, tc.a2)
			igptest.Poll(t, 10*time.Second, "hellos rejected", func() error {
				for _, r := range []*memNode{r1, r2} {
					if c := ifCounters(t, r); c["rx_rejected_"+tc.kind] < 2 {
						return fmt.Errorf("counters %v", c)
					}
				}
				return nil
			})
			for _, r := range []*memNode{r1, r2} {
				ns, _ := r.in.Neighbors(context.Background())
				if len(ns) != 0 {
					t.Fatalf("neighbours despite the mismatch: %+v", ns)
				}
			}
		})
	}
}

// A replayed packet (a sequence number older than the neighbour's last)
// is dropped; the adjacency stays Full.
func TestAuthReplay(t *testing.T) {
	w := &wire{}
	a := &config.Auth{Keys: []config.AuthKey{key(1, "md5", "k")}}
	r1, r2 := startAuth(t, 1, w, a), startAuth(t, 2, w, a)
	igptest.Poll(t, 10*time.Second, "Full", fullCount(r1, 1))
	// A hello from r2 signed with a sequence number below its current one.
	h := &packet.Hello{Header: packet.Header{RouterID: r2.in.rid, AreaID: areaAddr(0), AuType: packet.AuCrypto},
		HelloInterval: 1, DeadInterval: 3, Options: optE, Neighbors: nil}
	b, err := packet.Sign(h.AppendTo(nil), 0, pktKey(a.Keys[0]), 1)
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(b[20:]) != 1 {
		t.Fatal("sequence number not written")
	}
	src := pfx("10.254.0.1/31").Addr()
	r1.in.lp.Post(rxEvent{ifc: r1.in.ifaces[0], src: src, dst: AllSPFRouters, pkt: b})
	igptest.Poll(t, 5*time.Second, "replay rejected", func() error {
		if c := ifCounters(t, r1); c["rx_rejected_auth_seq"] != 1 {
			return fmt.Errorf("counters %v", c)
		}
		return nil
	})
	igptest.Poll(t, time.Second, "still Full", fullCount(r1, 1))
}

// Rollover: both accept keys 1 (MD5) and 2 (HMAC-SHA-256); key 1 sends
// until T, key 2 from T. After T both send with key 2, and the adjacency
// never left Full.
func TestAuthRollover(t *testing.T) {
	w := &wire{}
	at := time.Now().Add(3 * time.Second)
	mk := func() *config.Auth {
		k1, k2 := key(1, "md5", "old"), key(2, "hmac-sha-256", "new")
		k1.SendUntil, k2.SendFrom = at, at
		return &config.Auth{Keys: []config.AuthKey{k1, k2}}
	}
	staysFull(t, w, mk, 10*time.Second, "key 2 in use both ways", func(c map[string]uint64) bool { return c["rx_auth_key_2"] >= 3 }, "across the rollover")
}

// Cryptographic sequence numbers must arrive in order (RFC 2328 D.3): an
// interface with such keys keeps its hellos out of the loop's urgent lane,
// which would let a hello overtake an earlier packet of the same
// neighbour and make that packet look like a replay.
func TestCryptoAuthKeepsHellosInOrder(t *testing.T) {
	ifc := &iface{}
	for _, tc := range []struct {
		auth *config.Auth
		want bool
	}{
		{nil, false},
		{&config.Auth{Keys: []config.AuthKey{key(1, "clear", "a")}}, false},
		{&config.Auth{Keys: []config.AuthKey{key(1, "md5", "a")}}, true},
		{&config.Auth{Keys: []config.AuthKey{key(1, "hmac-sha-256", "a")}}, true},
	} {
		ifc.setCfg(Interface{Authentication: tc.auth})
		if got := ifc.ordered.Load(); got != tc.want {
			t.Errorf("%+v: ordered %v, want %v", tc.auth, got, tc.want)
		}
	}
}

// Every key's send and accept lifetime ends at T and no new key is
// configured: both routers keep sending with the last key and accepting
// it (RFC 8177 practice), count it, and stay Full. Before, they sent
// AuType 0 and dropped each other: the neighbour died with its dead
// interval.
func TestAuthAllKeysExpired(t *testing.T) {
	w := &wire{}
	at := time.Now().Add(3 * time.Second)
	mk := func() *config.Auth {
		k := key(1, "hmac-sha-256", "s")
		k.SendUntil, k.AcceptUntil = at, at
		return &config.Auth{Keys: []config.AuthKey{k}}
	}
	// Five hellos after T: longer than the dead interval (3 s).
	staysFull(t, w, mk, 20*time.Second, "packets with the expired key both ways", func(c map[string]uint64) bool {
		return c["tx_auth_expired_key"] >= 5 && c["rx_auth_expired_key"] >= 5
	}, "when the keys expired")
}
