package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const authYAML = `router-id: 10.0.0.1
isis:
  areas: [49.0001]
  level: 1-2
  authentication:
    level-1:
      keys:
        - {id: 1, algorithm: md5, secret: area-secret}
    level-2:
      keys:
        - {id: 1, algorithm: hmac-sha-256, secret: old, send-until: "2030-01-01T00:00:00Z", accept-until: "2030-01-02T00:00:00Z"}
        - {id: 2, algorithm: hmac-sha-256, secret: new, send-from: "2030-01-01T00:00:00Z"}
  interfaces:
    - name: eth0
      type: p2p
      authentication:
        keys: [{id: 5, algorithm: md5, secret: hello-secret, preferred: true}, {id: 6, algorithm: md5, secret: other}]
ospf:
  interfaces:
    - name: eth1
      authentication:
        keys: [{id: 1, algorithm: md5, secret: frr}, {id: 2, algorithm: hmac-sha-256, secret: bird}]
    - name: eth2
      authentication:
        keys: [{id: 0, algorithm: clear, secret: pass}]
`

func TestAuthParse(t *testing.T) {
	c, err := Parse("t.yaml", []byte(authYAML))
	if err != nil {
		t.Fatal(err)
	}
	l2 := c.ISIS.Authentication.Level(2)
	if l2 == nil || len(l2.Keys) != 2 || l2.Keys[1].Secret != "new" || l2.Keys[0].SendUntil != time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) {
		t.Fatalf("level-2: %+v", l2)
	}
	if a := c.ISIS.Authentication.Level(1); a == nil || a.Keys[0].Algorithm != "md5" {
		t.Fatalf("level-1: %+v", a)
	}
	if a := c.ISIS.Interfaces[0].Authentication; a == nil || !a.Keys[0].Preferred {
		t.Fatalf("hello auth: %+v", a)
	}
	if a := c.OSPF.Interfaces[1].Authentication; a == nil || a.Keys[0].Algorithm != "clear" {
		t.Fatalf("ospf eth2: %+v", a)
	}
	// Rollover: key 1 sends until 2030, then key 2; key 1 is still
	// accepted for a day.
	before, after := time.Date(2029, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 1, 0, 0, 0, time.UTC)
	if k, _ := l2.SendKey(before); k.ID != 1 {
		t.Fatalf("send before rollover: key %d", k.ID)
	}
	if k, _ := l2.SendKey(after); k.ID != 2 {
		t.Fatalf("send after rollover: key %d", k.ID)
	}
	if n := len(l2.AcceptKeys(after)); n != 2 {
		t.Fatalf("%d keys accepted just after the rollover", n)
	}
	if ks := l2.AcceptKeys(after.Add(48 * time.Hour)); len(ks) != 1 || ks[0].ID != 2 {
		t.Fatalf("accepted two days later: %+v", ks)
	}
	// The preferred key wins over a later send-from.
	if k, _ := c.ISIS.Interfaces[0].Authentication.SendKey(before); k.ID != 5 {
		t.Fatalf("preferred key not sent: %d", k.ID)
	}
	// Without preferred and lifetimes: the highest id.
	if k, _ := c.OSPF.Interfaces[0].Authentication.SendKey(before); k.ID != 2 {
		t.Fatalf("highest id not sent: %d", k.ID)
	}
	var none *Auth
	if _, ok := none.SendKey(before); ok || none.AcceptKeys(before) != nil {
		t.Fatal("nil chain sends or accepts")
	}
}

// Secrets never show in a reload report; the rendered config keeps them
// and parses back to the same chains.
func TestAuthRenderAndDiff(t *testing.T) {
	c, err := Parse("t.yaml", []byte(authYAML))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse("r.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	chains := func(c *Config) []*Auth {
		out := []*Auth{c.ISIS.Authentication.Level1, c.ISIS.Authentication.Level2, c.ISIS.Interfaces[0].Authentication,
			c.OSPF.Interfaces[0].Authentication, c.OSPF.Interfaces[1].Authentication}
		for _, a := range out {
			for i := range a.Keys {
				a.Keys[i].Line = 0
			}
		}
		return out
	}
	if a, b := chains(c), chains(c2); !reflect.DeepEqual(a, b) {
		t.Fatalf("render round trip:\n%s", out)
	}
	c2.OSPF.Interfaces[0].Authentication.Keys[0].Secret = "changed"
	d := strings.Join(Diff(c.OSPF, c2.OSPF), "\n")
	if !strings.Contains(d, "secret") || strings.Contains(d, "changed") || strings.Contains(d, "frr") {
		t.Fatalf("diff: %s", d)
	}
}

func TestAuthErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication: {keys: []}\n", "t.yaml:5: authentication: need at least one key"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: hmac-sha-224, secret: x}]\n",
			`does not support algorithm "hmac-sha-224"`},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 256, algorithm: md5, secret: x}]\n", "id: 256 out of range 0..255"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: md5, secret: 12345678901234567}]\n",
			"md5 key has at most 16 bytes"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: clear, secret: 123456789}]\n",
			"clear password has at most 8 bytes"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: clear, secret: a}, {id: 2, algorithm: md5, secret: b}]\n",
			"cannot mix a clear password"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: md5, secret: a}, {id: 1, algorithm: md5, secret: b}]\n",
			"key id 1 at line 6 repeats"},
		{"ospf:\n  interfaces:\n    - name: e0\n      authentication:\n        keys: [{id: 1, algorithm: md5}]\n", `missing required key "secret"`},
		{"isis:\n  areas: [49.0001]\n  authentication:\n    level-2:\n      keys: [{id: 1, algorithm: md5, secret: a, send-from: yesterday}]\n",
			`send-from: invalid time "yesterday"`},
		{"isis:\n  areas: [49.0001]\n  authentication:\n    level-2:\n      keys: [{id: 1, algorithm: md5, secret: a, preferred: true}, {id: 2, algorithm: md5, secret: b, preferred: true}]\n",
			"2 keys are preferred"},
		{"isis:\n  areas: [49.0001]\n  authentication:\n    level-3: {keys: [{id: 1, algorithm: md5, secret: a}]}\n", "level-3"},
		{"isis:\n  areas: [49.0001]\n  authentication:\n    level-1:\n      keys: [{id: 1, algorithm: md5, secret: a, send-from: \"2030-01-02T00:00:00Z\", send-until: \"2030-01-01T00:00:00Z\"}]\n",
			"send-until 2030-01-01T00:00:00Z is not after send-from"},
	} {
		_, err := Parse("t.yaml", []byte("router-id: 10.0.0.1\n"+tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config:\n%s\ngot  %v\nwant %q", tc.yaml, err, tc.want)
		}
	}
}

// When every send lifetime has ended, the chain keeps sending with the
// key whose lifetime ended last and accepts it too (fallback); a valid
// key ends the fallback.
func TestKeyChainFallback(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	k1 := AuthKey{ID: 1, Algorithm: "md5", Secret: "a", SendUntil: t0, AcceptUntil: t0.Add(time.Hour)}
	k2 := AuthKey{ID: 2, Algorithm: "md5", Secret: "b", SendUntil: t0.Add(time.Minute), AcceptUntil: t0.Add(time.Minute)}
	k3 := AuthKey{ID: 3, Algorithm: "md5", Secret: "c", SendFrom: t0.Add(48 * time.Hour), AcceptFrom: t0.Add(47 * time.Hour)}
	a := &Auth{Keys: []AuthKey{k1, k2, k3}}
	// Before: key 2 (latest send-from is equal, highest id), no fallback.
	if k, fb, ok := a.SendKeyAt(t0.Add(-time.Hour)); !ok || fb || k.ID != 2 {
		t.Fatalf("before: %d %v %v", k.ID, fb, ok)
	}
	// Between key 2's end and key 3's start: key 2 ended last.
	at := t0.Add(2 * time.Hour)
	if _, ok := a.SendKey(at); ok {
		t.Fatal("SendKey found a valid key")
	}
	k, fb, ok := a.SendKeyAt(at)
	if !ok || !fb || k.ID != 2 {
		t.Fatalf("fallback: key %d %v %v, want 2 (its send lifetime ended last)", k.ID, fb, ok)
	}
	// No accept lifetime holds (key 1's ended an hour after t0): key 2,
	// the fallback send key, is accepted.
	keys, afb := a.AcceptKeysAt(at)
	if !afb || len(keys) != 1 || keys[0].ID != 2 {
		t.Fatalf("accept in fallback: %+v %v", keys, afb)
	}
	// Key 3 begins: no fallback any more, key 1 and 2 not accepted.
	later := t0.Add(49 * time.Hour)
	if k, fb, _ := a.SendKeyAt(later); fb || k.ID != 3 {
		t.Fatalf("after key 3 begins: %d %v", k.ID, fb)
	}
	if keys, fb := a.AcceptKeysAt(later); fb || len(keys) != 1 || keys[0].ID != 3 {
		t.Fatalf("accept after: %+v %v", keys, fb)
	}
	// Send lifetimes ended, accept lifetimes too, but the fallback send
	// key is the only one: the key whose accept lifetime ended last is
	// added only when nothing else is accepted.
	g := &Auth{Keys: []AuthKey{{ID: 4, SendUntil: t0, AcceptUntil: t0.Add(time.Hour)}, {ID: 5, SendUntil: t0.Add(-time.Hour), AcceptUntil: t0.Add(2 * time.Hour)}}}
	if keys, fb := g.AcceptKeysAt(at); !fb || len(keys) != 1 || keys[0].ID != 4 {
		t.Fatalf("accept, all ended: %+v", keys)
	}
	// Only future keys: the one that begins first.
	f := &Auth{Keys: []AuthKey{{ID: 7, SendFrom: t0.Add(time.Hour), AcceptFrom: t0.Add(time.Hour)}, {ID: 8, SendFrom: t0.Add(time.Minute), AcceptFrom: t0.Add(time.Minute)}}}
	if k, fb, _ := f.SendKeyAt(t0); !fb || k.ID != 8 {
		t.Fatalf("future keys: %d %v", k.ID, fb)
	}
	var none *Auth
	if _, _, ok := none.SendKeyAt(t0); ok {
		t.Fatal("nil chain sends")
	}
	if ks, fb := none.AcceptKeysAt(t0); ks != nil || fb {
		t.Fatal("nil chain accepts")
	}
	var st KeyFallback
	if st.Note(false) || !st.Note(true) || st.Note(true) || !st.Note(false) {
		t.Fatal("KeyFallback reports changes only")
	}
}
