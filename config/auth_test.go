package config

import (
	"testing"
	"time"
)

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
