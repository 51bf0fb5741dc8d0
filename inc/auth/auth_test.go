package auth

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func TestTokenRoundTrip(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tok, err := Mint(testKey, Claims{Group: "job-42/*", Subject: "slurm", Expires: now.Add(time.Hour).Unix()}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "fit1.") || len(tok) > 300 {
		t.Fatalf("token %q", tok)
	}
	c, err := Verify([][]byte{[]byte(strings.Repeat("x", 32)), testKey}, tok, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c.Group != "job-42/*" || c.Subject != "slurm" || len(c.ID) != 16 || c.Issued != now.Unix() {
		t.Fatalf("claims %+v", c)
	}
	for g, want := range map[string]bool{"job-42/a": true, "job-42/": true, "job-42": false, "job-420": false, "x": false} {
		if c.Covers(g) != want {
			t.Errorf("%q covers %q: %v", c.Group, g, !want)
		}
	}
	if !(Claims{Group: "*"}).Covers("anything") || !(Claims{Group: "g"}).Covers("g") || (Claims{Group: "g"}).Covers("g2") {
		t.Fatal("Covers")
	}
	if _, err := Verify([][]byte{testKey}, tok, now.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Fatalf("at expiry: %v", err)
	}
}

// TestTokenRefusals: every way a token can be wrong, told apart.
func TestTokenRefusals(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tok, _ := Mint(testKey, Claims{Group: "g", Expires: now.Add(time.Hour).Unix()}, now)
	dot := strings.LastIndexByte(tok, '.')
	// The same claims with the group changed, keeping the signature.
	body, _ := base64.RawURLEncoding.DecodeString(tok[5:dot])
	forged := "fit1." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(body), `"grp":"g"`, `"grp":"*"`, 1))) + tok[dot:]
	other, _ := Mint([]byte(strings.Repeat("k", 32)), Claims{Group: "g", Expires: now.Add(time.Hour).Unix()}, now)
	for name, c := range map[string]struct {
		tok  string
		want error
	}{
		"empty":          {"", ErrNoToken},
		"no prefix":      {"abc.def", ErrMalformed},
		"prefix only":    {"fit1.", ErrMalformed},
		"no signature":   {"fit1.abc", ErrMalformed},
		"bad base64 sig": {tok[:dot] + ".!!!", ErrMalformed},
		"short sig":      {tok[:dot] + ".AAAA", ErrMalformed},
		"too long":       {"fit1." + strings.Repeat("a", MaxTokenLen), ErrMalformed},
		"group changed":  {forged, ErrSignature},
		"other key":      {other, ErrSignature},
	} {
		if _, err := Verify([][]byte{testKey}, c.tok, now); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := Mint(testKey[:31], Claims{Group: "g", Expires: 2}, now); err == nil {
		t.Error("minted with a short key")
	}
	for _, p := range []string{"", "a*b", "**", "a b", strings.Repeat("a", 66)} {
		if CheckGroupPattern(p) == nil {
			t.Errorf("pattern %q accepted", p)
		}
	}
}

// FuzzVerify: whatever arrives as a token is refused with one of the
// typed errors or accepted only if the key signed it; never a panic.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	// A fixed id: fuzz workers are other processes and must mint the same token.
	tok, _ := Mint(testKey, Claims{ID: "seed", Group: "g*", Expires: now.Add(time.Hour).Unix()}, now)
	f.Add(tok)
	f.Add("fit1..")
	f.Add("fit1.e30.AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Verify([][]byte{testKey}, s, now)
		if err == nil {
			// Only a token we minted verifies: its signature is over its text.
			if s != tok || c.Group != "g*" {
				t.Fatalf("accepted %q as %+v", s, c)
			}
			return
		}
		if !errors.Is(err, ErrNoToken) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrSignature) && !errors.Is(err, ErrExpired) {
			t.Fatalf("untyped error %v", err)
		}
	})
}

func TestLoadKeys(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k")
	if err := NewKeyFile(p); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadKeys(p)
	if err != nil || len(keys) != 1 || len(keys[0]) != 64 {
		t.Fatalf("%q %v", keys, err)
	}
	os.WriteFile(p, []byte("# new first\n"+strings.Repeat("n", 32)+"\n\n"+string(keys[0])+"\n"), 0o600)
	if keys, err := LoadKeys(p); err != nil || len(keys) != 2 || keys[0][0] != 'n' {
		t.Fatalf("two keys: %q %v", keys, err)
	}
	os.WriteFile(p, []byte("short\n"), 0o600)
	if _, err := LoadKeys(p); err == nil || !strings.Contains(err.Error(), ":1: key of 5 bytes") {
		t.Fatalf("short key: %v", err)
	}
	os.Chmod(p, 0o644)
	if _, err := LoadKeys(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable key: %v", err)
	}
}

// TestCAAndVerifySwitch: the lab CA's certificates load as a node's
// material, verify as a switch's client certificate and name the router;
// another CA's do not.
func TestCAAndVerifySwitch(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("lab", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.WriteCA(dir); err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue("l1", []netip.Addr{netip.MustParseAddr("10.255.0.1")}, []string{"L1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	files, err := leaf.Write(dir, "l1")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(files)
	if err != nil {
		t.Fatal(err)
	}
	id, err := VerifySwitch(m.Roots, []*x509.Certificate{m.Leaf}, time.Now())
	if err != nil || len(id.IPs) != 1 || id.IPs[0] != netip.MustParseAddr("10.255.0.1") || id.Names[0] != "l1" || id.Subject != "l1" {
		t.Fatalf("%+v %v", id, err)
	}
	if _, err := VerifySwitch(m.Roots, nil, time.Now()); !errors.Is(err, ErrNoCert) {
		t.Fatalf("no cert: %v", err)
	}
	other, _ := NewCA("other", time.Hour)
	ol, _ := other.Issue("l1", nil, nil, time.Hour)
	oc := ol.TLS()
	if _, err := VerifySwitch(m.Roots, []*x509.Certificate{oc.Leaf}, time.Now()); !errors.Is(err, ErrBadCert) {
		t.Fatalf("other CA: %v", err)
	}
	if _, err := VerifySwitch(m.Roots, []*x509.Certificate{m.Leaf}, time.Now().Add(2*time.Hour)); !errors.Is(err, ErrBadCert) {
		t.Fatalf("expired: %v", err)
	}
	// A node certificate of another CA does not load with this CA.
	files2, _ := ol.Write(dir, "stranger")
	if _, err := Load(files2); err == nil || !strings.Contains(err.Error(), "not signed by ca") {
		t.Fatalf("load a stranger's certificate: %v", err)
	}
	again, err := LoadCAFiles(dir)
	if err != nil || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("LoadCAFiles: %v", err)
	}
}
