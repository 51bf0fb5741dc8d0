package l2

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/internal/testvec"
)

var testKey = Key{ID: 7, Secret: []byte("0123456789abcdef-host-key")}

// TestAuthGolden: the auth TLV's bytes, from the specification (key id,
// counter, digest), after the message it authenticates.
func TestAuthGolden(t *testing.T) {
	m := Message{Type: TypeKeepalive, Seq: 2, Host: Host{ID: "h1"}}
	m.Sign(testKey, 0x0102030405060708)
	b := m.AppendTo(nil)
	want := testvec.Hex(t, "01 03 0038 00000002  01 02 6831  10 2a 0007 0102030405060708")
	if !bytes.Equal(b[:len(want)], want) || len(b) != len(want)+32 {
		t.Fatalf("encoding %x\nwant prefix %x and 32 bytes of digest", b, want)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if d.Auth == nil || d.Auth.KeyID != 7 || d.Auth.Counter != 0x0102030405060708 || d.Auth.Digest != m.Auth.Digest {
		t.Fatalf("decoded auth %+v", d.Auth)
	}
	if !d.Verify(testKey) {
		t.Fatal("a signed message does not verify")
	}
}

// TestAuthVerify: a wrong key, another key id, any changed byte, or a
// message built locally do not verify.
func TestAuthVerify(t *testing.T) {
	m := Message{Type: TypeRegister, Seq: 9, Hold: 3 * time.Second, Host: Host{ID: "tgt1", Role: RoleTarget, MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}}}
	m.Sign(testKey, uint64(time.Now().UnixMilli()))
	b := m.AppendTo(nil)
	if m.Verify(testKey) {
		t.Error("a message not decoded verified (no received bytes)")
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Verify(testKey) {
		t.Fatal("good key refused")
	}
	if d.Verify(Key{ID: 7, Secret: []byte("another secret of the same id")}) {
		t.Error("wrong secret accepted")
	}
	if d.Verify(Key{ID: 8, Secret: testKey.Secret}) {
		t.Error("another key id accepted")
	}
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x40
		d, err := Decode(c)
		if err == nil && d.Verify(testKey) {
			t.Fatalf("byte %d changed, still verifies", i)
		}
	}
}

// TestAuthMustBeLast: TLVs after the auth TLV would not be authenticated.
func TestAuthMustBeLast(t *testing.T) {
	m := Message{Type: TypeKeepalive, Seq: 2, Host: Host{ID: "h1"}}
	m.Sign(testKey, 1)
	b := m.AppendTo(nil)
	b = append(b, TLVRole, 1, 1)
	b[3] += 3
	_, err := Decode(b)
	var de *DecodeError
	if !errors.As(err, &de) || de.TLV != TLVAuth || de.Offset != 12 || !strings.Contains(err.Error(), "not the last") {
		t.Fatalf("got %v", err)
	}
	// A short value says so.
	bad := testvec.Hex(t, "01 03 0010 00000002 01 02 6831 10 02 0007")
	if _, err := Decode(bad); err == nil || !strings.Contains(err.Error(), "TLV 16 at offset 12: auth: length 2, want 42") {
		t.Fatalf("got %v", err)
	}
}
