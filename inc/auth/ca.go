package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"
)

// CA is a small certificate authority for labs (farelab) and tests: an
// ECDSA P-256 root that issues node certificates valid for both server
// and client authentication (a node with role both is a switch of its
// own manager). Production deployments use their own PKI; the manager
// only needs the CA certificate and a certificate per node.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	DER  []byte
}

// NewCA makes a root valid for validity from now (minus an hour of clock
// skew).
func NewCA(name string, validity time.Duration) (*CA, error) {
	tmpl := certTemplate(name, validity)
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.MaxPathLenZero = true, true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	key, der, err := newKeyCert(tmpl, nil, nil)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, DER: der}, nil
}

// certTemplate is what every certificate made here carries: a random
// serial, the common name, and validity from an hour ago (clock skew) to
// validity from now.
func certTemplate(cn string, validity time.Duration) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity)}
}

// newKeyCert makes a P-256 key and the certificate tmpl describes for
// it, signed by parent's key (a nil parent: self-signed, a root).
func newKeyCert(tmpl, parent *x509.Certificate, parentKey crypto.Signer) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, nil, err
	}
	return key, der, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err)
	}
	return n
}

// Leaf is an issued certificate and its key.
type Leaf struct {
	DER    []byte
	Key    *ecdsa.PrivateKey
	Parent *CA
}

// Issue makes a node certificate: common name cn, IP SANs ips (the router
// id, loopback), DNS SANs names (the hostname), for server and client
// authentication.
func (ca *CA) Issue(cn string, ips []netip.Addr, names []string, validity time.Duration) (*Leaf, error) {
	tmpl := certTemplate(cn, validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.DNSNames = names
	for _, a := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.IP(a.AsSlice()))
	}
	key, der, err := newKeyCert(tmpl, ca.Cert, ca.Key)
	if err != nil {
		return nil, err
	}
	return &Leaf{DER: der, Key: key, Parent: ca}, nil
}

// TLS returns the leaf as a tls.Certificate.
func (l *Leaf) TLS() tls.Certificate {
	c, _ := x509.ParseCertificate(l.DER)
	return tls.Certificate{Certificate: [][]byte{l.DER}, PrivateKey: l.Key, Leaf: c}
}

// WriteCA writes the CA certificate (ca.pem, 0644) and key (ca.key,
// 0600) into dir.
func (ca *CA) WriteCA(dir string) error {
	k, ok := ca.Key.(*ecdsa.PrivateKey)
	if !ok {
		return errors.New("CA key is not ECDSA")
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), PEM("CERTIFICATE", ca.DER), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "ca.key"), PEM("PRIVATE KEY", kder), 0o600)
}

// LoadCAFiles reads a CA written by WriteCA.
func LoadCAFiles(dir string) (*CA, error) {
	c, err := tls.LoadX509KeyPair(filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return nil, err
	}
	signer, ok := c.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: key cannot sign", dir)
	}
	return &CA{Cert: cert, Key: signer, DER: c.Certificate[0]}, nil
}

// Write writes the leaf as <dir>/<name>.pem (0644) and <name>.key
// (0600) and returns the Files of a node using it.
func (l *Leaf) Write(dir, name string) (Files, error) {
	kder, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		return Files{}, err
	}
	f := Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, name+".pem"), Key: filepath.Join(dir, name+".key")}
	if err := os.WriteFile(f.Cert, PEM("CERTIFICATE", l.DER), 0o644); err != nil {
		return f, err
	}
	return f, os.WriteFile(f.Key, PEM("PRIVATE KEY", kder), 0o600)
}
