package isis

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/internal/igp/igptest"
	"github.com/fared/fared/isis/packet"
)

func chain(keys ...config.AuthKey) *config.Auth { return &config.Auth{Keys: keys} }

func md5Key(id uint16, s string) config.AuthKey {
	return config.AuthKey{ID: id, Algorithm: "md5", Secret: config.Secret(s)}
}

func shaKey(id uint16, s string) config.AuthKey {
	return config.AuthKey{ID: id, Algorithm: "hmac-sha-256", Secret: config.Secret(s)}
}

// startAuth starts router n on one interface of w with hello chain hello
// and level-2 chain lsp.
func startAuth(t *testing.T, n int, w *wire, typ string, hello, lsp *config.Auth) *memNode {
	ifs := []memIf{{name: "e0", typ: typ, w: w, addr: netip.MustParsePrefix(fmt.Sprintf("10.253.0.%d/24", n))}}
	cfg := testConfig(t, n, "2", ifs)
	Section(cfg).Interfaces[0].Authentication = hello
	Section(cfg).Authentication.Level2 = lsp
	return startMemCfg(t, n, cfg, ifs, nil)
}

func counters(t *testing.T, m *memNode) map[string]uint64 {
	t.Helper()
	ifs, err := m.in.Interfaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ifs[0].Counters
}

// lspAuthKeyID is the RFC 5310 key id of r's own LSP as m holds it.
func lspAuthKeyID(m *memNode, r *memNode) (int, error) {
	id := packet.MakeLSPID(r.in.sysID, 0, 0)
	var raw []byte
	if err := m.in.Query(context.Background(), func() {
		if e := m.in.level(2).db[id]; e != nil {
			raw = append([]byte(nil), e.raw...)
		}
	}); err != nil {
		return 0, err
	}
	if raw == nil {
		return 0, fmt.Errorf("no LSP %s", id)
	}
	p, err := packet.Decode(raw)
	if err != nil {
		return 0, err
	}
	a, ok := p.(*packet.LSP).TLVs.Auth()
	if !ok {
		return -1, nil
	}
	return int(a.KeyID), nil
}

// Hellos with HMAC-MD5 and LSPs/SNPs with HMAC-SHA-256 on a LAN and a
// P2P link: adjacencies come up, databases synchronise, nothing is
// rejected, and every stored LSP carries its originator's TLV 10.
func TestAuthAdjacencyAndSync(t *testing.T) {
	for _, typ := range []string{"p2p", "lan"} {
		t.Run(typ, func(t *testing.T) {
			w := &wire{}
			hello, lsp := chain(md5Key(1, "hello")), chain(shaKey(9, "domain"))
			r1 := startAuth(t, 1, w, typ, hello, lsp)
			r2 := startAuth(t, 2, w, typ, hello, lsp)
			igptest.Poll(t, 10*time.Second, "adjacency up", func() error {
				if err := neighborsUp(r1, 1); err != nil {
					return err
				}
				return neighborsUp(r2, 1)
			})
			igptest.Poll(t, 10*time.Second, "databases in sync", sameDB(r1, r2))
			if id, err := lspAuthKeyID(r2, r1); err != nil || id != 9 {
				t.Fatalf("r1's LSP at r2: key id %d, %v", id, err)
			}
			for _, r := range []*memNode{r1, r2} {
				cs := counters(t, r)
				for k, v := range cs {
					if len(k) > 12 && k[:12] == "rx_rejected_" && v > 0 {
						t.Errorf("%s = %d", k, v)
					}
				}
				if cs["rx_auth_key_9"] == 0 || cs["rx_auth_key_1"] == 0 || cs["tx_auth_key_1"] == 0 {
					t.Errorf("auth counters: %v", cs)
				}
			}
		})
	}
}

// A hello key mismatch: no adjacency, the rejections counted by reason.
// An LSP key mismatch: the adjacency comes up but no LSP is accepted.
func TestAuthMismatch(t *testing.T) {
	w := &wire{}
	r1 := startAuth(t, 1, w, "p2p", chain(md5Key(1, "a")), nil)
	r2 := startAuth(t, 2, w, "p2p", chain(md5Key(1, "b")), nil)
	igptest.Poll(t, 10*time.Second, "hellos rejected", func() error {
		for _, r := range []*memNode{r1, r2} {
			if counters(t, r)["rx_rejected_auth_mismatch"] < 3 {
				return fmt.Errorf("counters %v", counters(t, r))
			}
		}
		return nil
	})
	if err := neighborsUp(r1, 0); err != nil {
		t.Fatal(err)
	}

	w2 := &wire{}
	r3 := startAuth(t, 3, w2, "p2p", nil, chain(shaKey(1, "x")))
	r4 := startAuth(t, 4, w2, "p2p", nil, chain(shaKey(2, "x")))
	igptest.Poll(t, 10*time.Second, "adjacency up", func() error { return neighborsUp(r3, 1) })
	igptest.Poll(t, 10*time.Second, "LSPs rejected for their key id", func() error {
		if c := counters(t, r3); c["rx_rejected_auth_key_id"] == 0 {
			return fmt.Errorf("counters %v", c)
		}
		return nil
	})
	if _, err := lspAuthKeyID(r3, r4); err == nil {
		t.Fatal("r3 stored r4's LSP signed with a key it does not accept")
	}
}

// Rollover: both routers accept keys 1 and 2; key 1 sends until T and key
// 2 from T. After T hellos, SNPs and our LSPs go out with key 2, the
// adjacency never leaves Up and the databases stay in sync.
func TestAuthRollover(t *testing.T) {
	w := &wire{}
	at := time.Now().Add(3 * time.Second)
	mk := func() *config.Auth {
		k1, k2 := shaKey(1, "old"), shaKey(2, "new")
		k1.SendUntil, k2.SendFrom = at, at
		return chain(k1, k2)
	}
	r1 := startAuth(t, 1, w, "p2p", mk(), mk())
	r2 := startAuth(t, 2, w, "p2p", mk(), mk())
	igptest.Poll(t, 10*time.Second, "adjacency up", func() error { return neighborsUp(r1, 1) })
	igptest.Poll(t, 10*time.Second, "databases in sync", sameDB(r1, r2))
	if id, _ := lspAuthKeyID(r2, r1); id != 1 && time.Now().Before(at) {
		t.Fatalf("before the rollover r1's LSP has key id %d", id)
	}
	before := map[*memNode]NeighborView{}
	for _, r := range []*memNode{r1, r2} {
		ns, _ := r.in.Neighbors(context.Background())
		before[r] = ns[0]
	}
	igptest.Poll(t, 15*time.Second, "LSPs re-signed with key 2", func() error {
		for _, p := range [][2]*memNode{{r1, r2}, {r2, r1}} {
			if id, err := lspAuthKeyID(p[0], p[1]); err != nil || id != 2 {
				return fmt.Errorf("key id %d, %v", id, err)
			}
		}
		return sameDB(r1, r2)()
	})
	for _, r := range []*memNode{r1, r2} {
		cs := counters(t, r)
		if cs["rx_auth_key_2"] == 0 || cs["tx_auth_key_2"] == 0 {
			t.Fatalf("key 2 never used: %v", cs)
		}
		for k, v := range cs {
			if len(k) > 12 && k[:12] == "rx_rejected_" && v > 0 {
				t.Errorf("%s = %d across the rollover", k, v)
			}
		}
		ns, _ := r.in.Neighbors(context.Background())
		if b := before[r]; len(ns) != 1 || ns[0].State != "Up" || ns[0].Flaps != b.Flaps || ns[0].UpSince != b.UpSince {
			t.Fatalf("adjacency went down across the rollover: %+v, before %+v", ns, b)
		}
	}
}

// Every key of both chains (hellos, and the level's LSPs and SNPs) ends
// its send and accept lifetime at T, and no new key is configured: the
// routers keep sending with the last key and accepting it (RFC 8177
// practice), count it, and the adjacency never goes down. Before, they
// sent without authentication and dropped each other's hellos: the
// adjacency died with its hold time.
func TestAuthAllKeysExpired(t *testing.T) {
	w := &wire{}
	at := time.Now().Add(3 * time.Second)
	mk := func(k config.AuthKey) *config.Auth {
		k.SendUntil, k.AcceptUntil = at, at
		return chain(k)
	}
	r1 := startAuth(t, 1, w, "p2p", mk(md5Key(1, "hello")), mk(shaKey(2, "lsp")))
	r2 := startAuth(t, 2, w, "p2p", mk(md5Key(1, "hello")), mk(shaKey(2, "lsp")))
	igptest.Poll(t, 10*time.Second, "adjacency up", func() error { return neighborsUp(r1, 1) })
	igptest.Poll(t, 10*time.Second, "databases in sync", sameDB(r1, r2))
	before := map[*memNode]NeighborView{}
	for _, r := range []*memNode{r1, r2} {
		ns, _ := r.in.Neighbors(context.Background())
		before[r] = ns[0]
	}
	// Five hellos after T: longer than the hold time (3 s).
	igptest.Poll(t, 20*time.Second, "hellos with the expired key both ways", func() error {
		for _, r := range []*memNode{r1, r2} {
			if cs := counters(t, r); cs["tx_auth_expired_key"] < 5 || cs["rx_auth_expired_key"] < 5 {
				return fmt.Errorf("counters %v", cs)
			}
		}
		return nil
	})
	for _, r := range []*memNode{r1, r2} {
		for k, v := range counters(t, r) {
			if strings.HasPrefix(k, "rx_rejected_") && v > 0 {
				t.Errorf("%s = %d with every key expired", k, v)
			}
		}
		ns, _ := r.in.Neighbors(context.Background())
		if b := before[r]; len(ns) != 1 || ns[0].State != "Up" || ns[0].Flaps != b.Flaps || ns[0].UpSince != b.UpSince {
			t.Fatalf("adjacency went down when the keys expired: %+v, before %+v", ns, b)
		}
	}
	if err := sameDB(r1, r2)(); err != nil {
		t.Fatal(err)
	}
	if id, err := lspAuthKeyID(r2, r1); err != nil || id != 2 {
		t.Fatalf("r1's LSP as r2 holds it: key %d, %v", id, err)
	}
}
