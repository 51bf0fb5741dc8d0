package auth

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"
)

// Files are the PEM files of a node's INC TLS material (inc: tls:).
type Files struct {
	CA   string // the CA that signs the manager's and the switches' certificates
	Cert string // this node's certificate (and any intermediates)
	Key  string // its private key
}

// Material is loaded TLS material.
type Material struct {
	Cert  tls.Certificate
	Leaf  *x509.Certificate
	Roots *x509.CertPool
	// Sum is a SHA-256 of the three files' contents: a reload that
	// replaced a file shows it as a change.
	Sum string
}

// Load reads and checks the files: the CA parses, the key matches the
// certificate, and the certificate chains to the CA.
func Load(f Files) (*Material, error) {
	ca, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("ca %s: no PEM certificate in it", f.CA)
	}
	certPEM, err := os.ReadFile(f.Cert)
	if err != nil {
		return nil, fmt.Errorf("cert: %w", err)
	}
	keyPEM, err := os.ReadFile(f.Key)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("cert %s, key %s: %w", f.Cert, f.Key, err)
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("cert %s: %w", f.Cert, err)
		}
	}
	inter := x509.NewCertPool()
	for _, c := range cert.Certificate[1:] {
		if ic, err := x509.ParseCertificate(c); err == nil {
			inter.AddCert(ic)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("cert %s is not signed by ca %s: %w", f.Cert, f.CA, err)
	}
	h := sha256.New()
	for _, b := range [][]byte{ca, certPEM, keyPEM} {
		h.Write(b)
	}
	return &Material{Cert: cert, Leaf: leaf, Roots: roots, Sum: hex.EncodeToString(h.Sum(nil))[:16]}, nil
}

// LoadCA reads a CA file alone (clients verify the manager with it).
func LoadCA(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

// ServerConfig is the manager's TLS: its certificate from get (so a
// reload takes effect on the next handshake), and a client certificate
// requested but not required — clients authenticate with tokens,
// switches with a certificate the manager verifies itself (VerifySwitch),
// so that a refusal is a counted, explained PermissionDenied rather than
// a failed handshake.
func ServerConfig(get func() *Material) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ClientAuth: tls.RequestClientCert,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			m := get()
			if m == nil {
				return nil, errors.New("no certificate loaded")
			}
			return &m.Cert, nil
		},
	}
}

// SwitchConfig is a switch's TLS towards its manager: it verifies the
// manager against the CA and presents its own certificate.
func SwitchConfig(m *Material) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: m.Roots, Certificates: []tls.Certificate{m.Cert}}
}

// ClientConfig is a client's TLS towards the manager: server
// authentication only (the client's credential is its token).
func ClientConfig(roots *x509.CertPool) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
}

// Identity is who a verified switch certificate names: its IP addresses
// (the router id, a loopback) and DNS names (the hostname).
type Identity struct {
	IPs   []netip.Addr
	Names []string // lower case
	// Subject is for logs: the certificate's common name, or its first
	// name.
	Subject string
	// Local: no certificate, a peer on the manager's loopback (a manager
	// without tls: only processes on its own node reach it).
	Local bool
}

func (id Identity) String() string {
	if id.Local {
		return "local (loopback, no tls)"
	}
	var parts []string
	for _, a := range id.IPs {
		parts = append(parts, a.String())
	}
	parts = append(parts, id.Names...)
	return id.Subject + " [" + strings.Join(parts, " ") + "]"
}

// Refusal kinds of VerifySwitch.
var (
	ErrNoCert  = errors.New("no client certificate (a switch needs inc: tls: with a certificate signed by the manager's CA)")
	ErrBadCert = errors.New("client certificate not valid for the manager's CA")
)

// VerifySwitch verifies the chain a switch presented against roots, for
// client authentication, and returns the identity it names.
func VerifySwitch(roots *x509.CertPool, chain []*x509.Certificate, now time.Time) (Identity, error) {
	if len(chain) == 0 {
		return Identity{}, ErrNoCert
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	leaf := chain[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrBadCert, err)
	}
	id := Identity{Subject: leaf.Subject.CommonName}
	for _, ip := range leaf.IPAddresses {
		if a, ok := netip.AddrFromSlice(ip); ok {
			id.IPs = append(id.IPs, a.Unmap())
		}
	}
	for _, n := range leaf.DNSNames {
		id.Names = append(id.Names, strings.ToLower(n))
	}
	if id.Subject == "" && len(id.Names) > 0 {
		id.Subject = id.Names[0]
	}
	return id, nil
}

// PEM encodes DER blocks of one type.
func PEM(typ string, ders ...[]byte) []byte {
	var out []byte
	for _, d := range ders {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: d})...)
	}
	return out
}
