package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/interop"
	"github.com/fared/fared/ospf"
)

// ifCounters returns the counters of one of a fared node's interfaces.
// IS-IS and OSPF interfaces name their name and counters alike in JSON.
func ifCounters(ctx context.Context, l *interop.Lab, node, proto, iface string) (map[string]uint64, error) {
	var v []struct {
		Name     string            `json:"name"`
		Counters map[string]uint64 `json:"counters"`
	}
	if err := l.FarectlJSON(ctx, node, &v, proto, "interfaces"); err != nil {
		return nil, err
	}
	for _, i := range v {
		if i.Name == iface {
			return i.Counters, nil
		}
	}
	return nil, fmt.Errorf("%s has no %s interface %s", node, proto, iface)
}

// counterAtLeast succeeds once counter of f1's interface iface reaches n.
func counterAtLeast(ctx context.Context, l *interop.Lab, proto, iface, counter string, n uint64) func() error {
	return func() error {
		cs, err := ifCounters(ctx, l, "f1", proto, iface)
		if err != nil {
			return err
		}
		if cs[counter] < n {
			return fmt.Errorf("counters %v", cs)
		}
		return nil
	}
}

// rejects are the authentication rejections among an interface's counters.
func rejects(cs map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for k, v := range cs {
		if strings.HasPrefix(k, "rx_rejected_auth") && v > 0 {
			out[k] = v
		}
	}
	return out
}

// authLogLines counts fared's "authentication failed" log lines for an
// interface.
func authLogLines(t *testing.T, l *interop.Lab, node, iface string) int {
	t.Helper()
	return len(logLines(t, l, node, "authentication failed", "iface="+iface))
}

// TestAuthISISMD5WithFRR: fared and FRR 8.4.4 with HMAC-MD5 (RFC 5304) on
// hellos (`isis password md5`) and on L2 LSPs and SNPs (`domain-password
// md5 … authenticate snp validate`): the adjacency comes up and the
// databases agree, which FRR only allows when our digests verify. A
// second FRR router with another key gets no adjacency; fared counts the
// rejected hellos and logs one line.
func TestAuthISISMD5WithFRR(t *testing.T) {
	l := startLab(t, md5Topo("isauth", "isis"))
	ctx := ctxT(t)
	poll(t, ctx, 30*time.Second, "f1-r1 Up, r2 alone", adjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1}))
	poll(t, ctx, 30*time.Second, "identical LSDBs f1, r1", sameLSDB(ctx, l, 2, "f1", "r1"))
	out, err := l.Vtysh(ctx, "r1", "show isis database detail f1.00-00")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "HMAC-MD5") {
		t.Fatalf("FRR does not show our LSP's HMAC-MD5 TLV:\n%s", out)
	}
	if up, _ := isisUp(ctx, l, "r2"); len(up) != 0 {
		t.Fatalf("r2 has %d adjacencies with the wrong key", len(up))
	}
	wrongKeyRejected(t, ctx, l, "isis", "rx_auth_key_1")
}

// md5Topo is fared f1 with FRR r1, which shares its MD5 key, and FRR r2,
// whose key differs. OSPF labs put FRR on side A.
func md5Topo(name, proto string) string {
	links := "  - {a: f1, b: r1}\n  - {a: f1, b: r2}\n"
	if proto == "ospf" {
		links = "  - {a: r1, b: f1}\n  - {a: r2, b: f1}\n"
	}
	return "name: " + name + "\nprotocol: " + proto + `
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared, auth: [{id: 1, algorithm: md5, secret: fabric-key}]}
  r1: {kind: frr, auth: [{id: 1, algorithm: md5, secret: fabric-key}]}
  r2: {kind: frr, auth: [{id: 1, algorithm: md5, secret: other-key}]}
links:
` + links
}

// wrongKeyRejected checks f1's side: r2's packets are rejected (three at
// least) and logged once; toward r1 nothing is rejected and each counter
// of used moved.
func wrongKeyRejected(t *testing.T, ctx context.Context, l *interop.Lab, proto string, used ...string) {
	t.Helper()
	poll(t, ctx, 10*time.Second, "r2's packets rejected", counterAtLeast(ctx, l, proto, "r2-1", "rx_rejected_auth_mismatch", 3))
	cs, err := ifCounters(ctx, l, "f1", proto, "r1-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range used {
		if cs[c] == 0 {
			t.Fatalf("toward r1: %s is 0, counters %v", c, cs)
		}
	}
	if r := rejects(cs); len(r) > 0 {
		t.Fatalf("toward r1: rejects %v, counters %v", r, cs)
	}
	if n := authLogLines(t, l, "f1", "r2-1"); n != 1 {
		t.Fatalf("%d log lines for r2's rejected packets, want 1", n)
	}
}

// TestAuthOSPFMD5WithFRR: fared and FRR ospfd with keyed MD5 (RFC 2328
// D.4.3, `ip ospf authentication message-digest`): Full and identical
// databases, which FRR only allows when our digests verify. A router
// with another key gets no adjacency; fared counts and logs once. (FRR
// 8.4.4 accepts only the last message-digest-key configured, so a
// rollover with it cannot be hitless: the rollover test runs with BIRD.)
func TestAuthOSPFMD5WithFRR(t *testing.T) {
	l := startLab(t, md5Topo("oauth", "ospf"))
	ctx := ctxT(t)
	poll(t, ctx, 30*time.Second, "f1-r1 Full", ospfAdjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1, "r2": 0}))
	poll(t, ctx, 30*time.Second, "identical LSDBs f1, r1", func() error {
		a, err := ospfNodeDB(ctx, l, "f1")
		if err != nil {
			return err
		}
		b, err := ospfNodeDB(ctx, l, "r1")
		if err != nil {
			return err
		}
		da, na := ospfDigest(a)
		db, _ := ospfDigest(b)
		if na == 0 || da != db {
			return fmt.Errorf("databases differ:\n f1 %s\n r1 %s", da, db)
		}
		return nil
	})
	wrongKeyRejected(t, ctx, l, "ospf", "rx_auth_key_1", "tx_auth_key_1")
}

// TestAuthOSPFSHA256WithBIRD: fared and BIRD 2 with HMAC-SHA-256 (RFC
// 5709, BIRD's `authentication cryptographic` with `algorithm hmac
// sha256`) reach Full on both sides, and fared learns BIRD's loopback.
// Both accept keys 7 and 8; fared sends with 7 until T and with 8 after:
// BIRD stays Full throughout (dead interval 3s) and fared's neighbour
// never flaps.
func TestAuthOSPFSHA256WithBIRD(t *testing.T) {
	rollover := time.Now().Add(15 * time.Second).UTC().Truncate(time.Second)
	ts := rollover.Format(time.RFC3339)
	topo := fmt.Sprintf(`name: bauth
protocol: ospf
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared, auth: [{id: 7, algorithm: hmac-sha-256, secret: bird-and-fared, send-until: "%s"}, {id: 8, algorithm: hmac-sha-256, secret: next-key, send-from: "%s"}]}
  b1: {kind: frr}
links:
  - {a: b1, b: f1}
`, ts, ts)
	l := startLab(t, topo)
	ctx := ctxT(t)
	conf, err := interop.RenderBIRDOSPF(l.Node("b1"), l.Topo.Defaults, []interop.AuthKey{
		{ID: 7, Algorithm: "hmac-sha-256", Secret: "bird-and-fared"}, {ID: 8, Algorithm: "hmac-sha-256", Secret: "next-key"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.StartBIRD(ctx, "b1", conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(filepath.Dir(b.Conf), "bird.log")); err == nil {
				t.Logf("bird.log:\n%s", log)
			}
		}
		if err := b.Stop(); err != nil {
			t.Error(err)
		}
	})
	poll(t, ctx, 30*time.Second, "fared Full with BIRD", ospfAdjacencies(ctx, l, map[string]int{"f1": 1}))
	birdSeesFull := func() error {
		out, err := b.Cmd(ctx, "show ospf neighbors")
		if err != nil {
			return err
		}
		if st := interop.BIRDOSPFNeighbors(out)[rid(l, "f1")]; !strings.HasPrefix(st, "Full") {
			return fmt.Errorf("BIRD's neighbours:\n%s", out)
		}
		return nil
	}
	poll(t, ctx, 10*time.Second, "BIRD Full with fared", birdSeesFull)
	// Counted from here: b1's FRR, stopped by StartBIRD, may have sent an
	// unauthenticated hello before it went.
	cs0, err := ifCounters(ctx, l, "f1", "ospf", "b1-1")
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, ctx, "fared learns BIRD's loopback", ospfGraph(ctx, l, "f1", "0.0.0.0"), prefixesOf,
		prefixFrom(rid(l, "b1")+"/32", ""), present)
	poll(t, ctx, 10*time.Second, "BIRD's packets accepted with key 7, none rejected", func() error {
		cs, err := ifCounters(ctx, l, "f1", "ospf", "b1-1")
		if err != nil {
			return err
		}
		for k, v := range rejects(cs) {
			if v != cs0[k] {
				t.Fatalf("%s: %d -> %d talking to BIRD", k, cs0[k], v)
			}
		}
		if cs["rx_auth_key_7"]+cs["rx_auth_key_8"] < cs0["rx_auth_key_7"]+cs0["rx_auth_key_8"]+3 {
			return fmt.Errorf("counters %v", cs)
		}
		return nil
	})
	birdFull := func() error {
		if err := ospfAdjacencies(ctx, l, map[string]int{"f1": 1})(); err != nil {
			return err
		}
		return birdSeesFull()
	}
	poll(t, ctx, 20*time.Second, "both Full", birdFull)
	if time.Now().After(rollover.Add(-3 * time.Second)) {
		t.Fatalf("lab too slow: Full only at %v, rollover at %v", time.Now().UTC(), rollover)
	}
	var before []ospf.NeighborView
	if err := l.FarectlJSON(ctx, "f1", &before, "ospf", "neighbors"); err != nil || len(before) != 1 {
		t.Fatalf("neighbours %+v, %v", before, err)
	}
	// Across the rollover both must stay Full on every look.
	for time.Now().Before(rollover.Add(5 * time.Second)) {
		if err := birdFull(); err != nil {
			t.Fatalf("at %v (rollover %v): %v", time.Now().UTC(), rollover, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cs, err := ifCounters(ctx, l, "f1", "ospf", "b1-1")
	if err != nil {
		t.Fatal(err)
	}
	if cs["tx_auth_key_8"] < 5 {
		t.Fatalf("fared does not send with key 8 after the rollover: %v", cs)
	}
	for k, v := range rejects(cs) {
		if v != cs0[k] {
			t.Fatalf("%s: %d -> %d across the rollover", k, cs0[k], v)
		}
	}
	var after []ospf.NeighborView
	if err := l.FarectlJSON(ctx, "f1", &after, "ospf", "neighbors"); err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || after[0].State != "Full" || after[0].Flaps != before[0].Flaps || after[0].UpSince != before[0].UpSince {
		t.Fatalf("fared's adjacency changed across the rollover: %+v -> %+v", before, after)
	}
}

// TestAuthExpiredKeyWithFRR: fared's only key stops sending at T (a
// send-until, no newer key) while FRR (which has no lifetimes) keeps it.
// fared keeps sending with that last key (RFC 8177 practice), counts it,
// and the adjacency with FRR's isisd (HMAC-MD5) and ospfd (keyed MD5)
// stays up well past the hold or dead interval. Before, fared sent
// without authentication from T on and FRR dropped it after the hold
// time.
func TestAuthExpiredKeyWithFRR(t *testing.T) {
	for _, proto := range []string{"isis", "ospf"} {
		t.Run(proto, func(t *testing.T) {
			until := time.Now().Add(20 * time.Second).UTC().Truncate(time.Second)
			l := startLab(t, fmt.Sprintf(`name: kx%s
protocol: %s
defaults: {hello-interval: 1s}
nodes:
  f1: {kind: fared, auth: [{id: 1, algorithm: md5, secret: the-last-key, send-until: "%s"}]}
  r1: {kind: frr, auth: [{id: 1, algorithm: md5, secret: the-last-key}]}
links:
  - {a: r1, b: f1}
`, proto[:1], proto, until.Format(time.RFC3339)))
			ctx := ctxT(t)
			up := func() error {
				if proto == "isis" {
					return adjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1})()
				}
				return ospfAdjacencies(ctx, l, map[string]int{"f1": 1, "r1": 1})()
			}
			poll(t, ctx, 30*time.Second, "adjacency up", up)
			if time.Now().After(until) {
				t.Fatalf("the lab took past the key's send-until (%s)", until.Format(time.RFC3339))
			}
			// After T, five hold/dead intervals (3 s) of hellos with the
			// expired key, each one checked.
			poll(t, ctx, time.Until(until)+30*time.Second, "sending with the expired key", func() error {
				if err := up(); err != nil {
					t.Fatalf("adjacency lost: %v", err)
				}
				return counterAtLeast(ctx, l, proto, "r1-1", "tx_auth_expired_key", 15)()
			})
			if err := up(); err != nil {
				t.Fatal(err)
			}
			cs, _ := ifCounters(ctx, l, "f1", proto, "r1-1")
			if r := rejects(cs); len(r) > 0 || cs["adjacency_down"] > 0 {
				t.Fatalf("rejects %v, counters %v", r, cs)
			}
			// One warning per chain of the interface: IS-IS has the
			// hellos' and the level's (its SNPs), OSPF one.
			log, _ := os.ReadFile(l.FaredLog("f1"))
			want := map[string]int{"isis": 2, "ospf": 1}[proto]
			if n := strings.Count(string(log), "send lifetime has ended: sending with the last one"); n != want {
				t.Errorf("%d warnings about the expired key, want %d", n, want)
			}
		})
	}
}
