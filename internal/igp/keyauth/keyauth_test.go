package keyauth

import (
	"errors"
	"fmt"
	"testing"
)

// The config's names parse to the algorithms that print as them; the
// digest lengths are the hashes'.
func TestAlgNames(t *testing.T) {
	for a, want := range map[Alg]int{Clear: 0, MD5: 16, HMACSHA1: 20, HMACSHA224: 28, HMACSHA256: 32, HMACSHA384: 48, HMACSHA512: 64} {
		if got, ok := ParseAlg(a.String()); !ok || got != a {
			t.Errorf("ParseAlg(%q) = %v %v", a.String(), got, ok)
		}
		if a.DigestLen() != want {
			t.Errorf("%s: digest length %d, want %d", a, a.DigestLen(), want)
		}
	}
	if _, ok := ParseAlg("sha-1"); ok {
		t.Error("ParseAlg accepted an unknown name")
	}
	if s := Alg(9).String(); s != "alg_9" {
		t.Errorf("unknown algorithm prints %q", s)
	}
}

// KindOf finds the rejection in an error chain; any other error is
// malformed input; the kinds' names are the counters' labels.
func TestKindOf(t *testing.T) {
	e := &Error{Proto: "isis", Kind: NoKey, Offset: 3, Msg: "key id 9 is not accepted"}
	if k := KindOf(fmt.Errorf("wrapped: %w", e)); k != NoKey || k.String() != "auth_key_id" {
		t.Errorf("KindOf(wrapped) = %v", k)
	}
	if k := KindOf(errors.New("other")); k != Malformed {
		t.Errorf("KindOf(other) = %v", k)
	}
	if k := KindOf(nil); k != 0 {
		t.Errorf("KindOf(nil) = %v", k)
	}
	if s := e.Error(); s != "isis: authentication: offset 3: key id 9 is not accepted" {
		t.Errorf("Error() = %q", s)
	}
}

// Apad repeats 0x878FE1F3 (RFC 5310 §3.3).
func TestApad(t *testing.T) {
	if got := fmt.Sprintf("%x", Apad(6)); got != "878fe1f3878f" {
		t.Errorf("Apad(6) = %s", got)
	}
}
