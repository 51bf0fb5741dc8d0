// Package auth holds the credentials of INC's control plane (docs/inc.md,
// "Control-plane trust"): the join tokens clients present to the
// manager, the TLS material of the manager and its switches, and a small
// certificate authority for labs and tests.
//
// A join token is a bearer credential minted by whoever holds the
// manager's token key (the cluster's scheduler, or an operator with
// `fareinc token`). It names a group, exactly or as a prefix ("job-42/*"),
// and an expiry:
//
//	fit1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(key, "fit1.<claims>"))>
//
// The claims are {"jti": random id, "grp": group pattern, "sub": who it
// was minted for, "iat": issued, "exp": expires} (Unix seconds). HMAC
// with a key the manager holds needs no public-key infrastructure on the
// hosts and costs about a microsecond to check, which matters for the
// heartbeats every rank sends several times a second.
package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"
)

// tokenPrefix is the format version; a token without it is refused.
const tokenPrefix = "fit1."

// MaxTokenLen bounds what the manager parses (a token is ~200 bytes).
const MaxTokenLen = 1024

// MinKeyLen is the shortest token key accepted: 32 bytes, as HMAC-SHA256
// wants at least its output size.
const MinKeyLen = 32

// MaxGroupPattern is the longest group pattern (the manager's group
// names are at most 64 characters; one more for the "*").
const MaxGroupPattern = 65

// Claims are what a token says.
type Claims struct {
	ID      string `json:"jti"`
	Group   string `json:"grp"`
	Subject string `json:"sub,omitempty"`
	Issued  int64  `json:"iat"`
	Expires int64  `json:"exp"`
}

// Token errors, told apart so the manager counts them by kind.
var (
	ErrNoToken   = errors.New("no join token")
	ErrMalformed = errors.New("malformed join token")
	ErrSignature = errors.New("join token not signed by this manager's key")
	ErrExpired   = errors.New("join token expired")
)

// b64 decodes strictly: one token has one spelling (a lax decoder takes
// several last characters for the same bits; FuzzVerify found it).
var b64 = base64.RawURLEncoding.Strict()

// Covers reports whether the claims cover group: "*" covers every group,
// "p*" every group that starts with p, anything else exactly itself.
func (c Claims) Covers(group string) bool {
	if p, ok := strings.CutSuffix(c.Group, "*"); ok {
		return strings.HasPrefix(group, p)
	}
	return c.Group == group
}

// CheckGroupPattern checks a group pattern: printable, no spaces, at most
// one "*" and only at the end.
func CheckGroupPattern(p string) error {
	if p == "" || len(p) > MaxGroupPattern {
		return fmt.Errorf("group pattern %q: 1..%d characters", p, MaxGroupPattern)
	}
	for i, r := range p {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("group pattern %q: character %q at %d is not printable", p, r, i)
		}
		if r == '*' && i != len(p)-1 {
			return fmt.Errorf("group pattern %q: * only at the end (a prefix)", p)
		}
	}
	return nil
}

// Mint signs claims with key (the first key of a key file). An empty ID
// gets a random one; a zero Issued gets now.
func Mint(key []byte, c Claims, now time.Time) (string, error) {
	if len(key) < MinKeyLen {
		return "", fmt.Errorf("token key: %d bytes, want at least %d", len(key), MinKeyLen)
	}
	if err := CheckGroupPattern(c.Group); err != nil {
		return "", err
	}
	if c.ID == "" {
		c.ID = RandomID(8)
	}
	if c.Issued == 0 {
		c.Issued = now.Unix()
	}
	if c.Expires <= c.Issued {
		return "", fmt.Errorf("token expires at %d, not after it is issued (%d)", c.Expires, c.Issued)
	}
	body, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	signed := tokenPrefix + base64.RawURLEncoding.EncodeToString(body)
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac(key, signed)), nil
}

func mac(key []byte, signed string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(signed))
	return h.Sum(nil)
}

// Verify checks tok against keys (any of them may have signed it) and the
// clock, and returns its claims.
func Verify(keys [][]byte, tok string, now time.Time) (Claims, error) {
	var c Claims
	if tok == "" {
		return c, ErrNoToken
	}
	if len(tok) > MaxTokenLen || !strings.HasPrefix(tok, tokenPrefix) {
		return c, fmt.Errorf("%w: want %s<claims>.<mac>, at most %d bytes", ErrMalformed, tokenPrefix, MaxTokenLen)
	}
	dot := strings.LastIndexByte(tok, '.')
	if dot <= len(tokenPrefix) {
		return c, fmt.Errorf("%w: no signature (want %s<claims>.<mac>)", ErrMalformed, tokenPrefix)
	}
	signed, sig64 := tok[:dot], tok[dot+1:]
	sig, err := b64.DecodeString(sig64)
	if err != nil || len(sig) != sha256.Size {
		return c, fmt.Errorf("%w: the signature at byte %d is not a base64url HMAC-SHA256", ErrMalformed, dot+1)
	}
	ok := false
	for _, k := range keys {
		ok = ok || hmac.Equal(sig, mac(k, signed))
	}
	if !ok {
		return c, ErrSignature
	}
	// Only signed input is parsed beyond this point.
	body, err := b64.DecodeString(signed[len(tokenPrefix):])
	if err != nil {
		return c, fmt.Errorf("%w: claims: %v", ErrMalformed, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%w: claims: %v", ErrMalformed, err)
	}
	if err := CheckGroupPattern(c.Group); err != nil || c.ID == "" || len(c.ID) > 64 || len(c.Subject) > 255 {
		return c, fmt.Errorf("%w: claims: bad group, id or subject", ErrMalformed)
	}
	if now.Unix() >= c.Expires {
		return c, fmt.Errorf("%w at %s", ErrExpired, time.Unix(c.Expires, 0).UTC().Format(time.RFC3339))
	}
	return c, nil
}

// RandomID returns n random bytes in hex.
func RandomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux (Go 1.24+ crashes instead)
	}
	return hex.EncodeToString(b)
}

// LoadKeys reads a token key file: one key per line (blank lines and
// lines starting with # are skipped), each at least MinKeyLen bytes. The
// first key mints; every key verifies, so a key is rotated by putting the
// new one first, reloading, and removing the old one once its tokens
// expired. The file must not be readable or writable by others.
func LoadKeys(path string) ([][]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o007 != 0 {
		return nil, fmt.Errorf("%s: mode %v: a token key must not be accessible to others (chmod 600)", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var keys [][]byte
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) < MinKeyLen {
			return nil, fmt.Errorf("%s:%d: key of %d bytes, want at least %d (e.g. openssl rand -hex 32)", path, i+1, len(line), MinKeyLen)
		}
		keys = append(keys, []byte(line))
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no key (one per line; e.g. openssl rand -hex 32 > %s)", path, path)
	}
	return keys, nil
}

// NewKeyFile writes a fresh random key (64 hex characters) to path, mode
// 0600.
func NewKeyFile(path string) error {
	return os.WriteFile(path, []byte(RandomID(32)+"\n"), 0o600)
}
