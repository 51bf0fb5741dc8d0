package interop

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// AuthKey is one key of a node's `auth` list in a topology file: every
// interface of the node (hellos, and for IS-IS the LSPs and SNPs of its
// levels) authenticates with these keys. Lifetimes are RFC 3339 strings,
// passed on to fared as they are; FRR has no lifetimes and gets every key
// (ospfd) or the first md5/clear key (isisd, one password).
//
//	nodes:
//	  f1: {kind: fared, auth: [{id: 1, algorithm: md5, secret: s3cret}]}
type AuthKey struct {
	ID        int    `yaml:"id"`
	Algorithm string `yaml:"algorithm"`
	Secret    string `yaml:"secret"`
	SendFrom  string `yaml:"send-from,omitempty"`
	SendUntil string `yaml:"send-until,omitempty"`
}

func (p *tparser) authKeys(what string, v *yaml.Node) []AuthKey {
	return list(p, v, what+": auth: expected a list of keys", func(it *yaml.Node) (AuthKey, bool) {
		var k AuthKey
		kw := what + ": auth key"
		p.keys(it, kw, map[string]func(k, v *yaml.Node){
			"id":         p.integer(kw, 0, 65535, &k.ID),
			"algorithm":  p.str(kw, &k.Algorithm),
			"secret":     p.str(kw, &k.Secret),
			"send-from":  p.str(kw, &k.SendFrom),
			"send-until": p.str(kw, &k.SendUntil),
		})
		if k.Algorithm == "" || k.Secret == "" {
			p.errf(it, "%s: algorithm and secret are required", kw)
		}
		return k, true
	})
}

// frrISISKey is the key isisd uses: it has one password per level and
// per circuit, HMAC-MD5 or clear only.
func frrISISKey(n *Node) (AuthKey, bool) {
	for _, k := range n.Auth {
		if k.Algorithm == "md5" || k.Algorithm == "clear" {
			return k, true
		}
	}
	return AuthKey{}, false
}

// frrISISAuthRouter: the area (L1) and domain (L2) passwords, SNPs signed
// and checked too (isisd's default leaves SNPs out; RFC 5304 and fared
// authenticate them).
func frrISISAuthRouter(n *Node) string {
	k, ok := frrISISKey(n)
	if !ok {
		return ""
	}
	var b strings.Builder
	if n.Level != "2" {
		fmt.Fprintf(&b, " area-password %s %s authenticate snp validate\n", k.Algorithm, k.Secret)
	}
	if n.Level != "1" {
		fmt.Fprintf(&b, " domain-password %s %s authenticate snp validate\n", k.Algorithm, k.Secret)
	}
	return b.String()
}

// frrISISAuthIface: the hello password of a circuit.
func frrISISAuthIface(n *Node) string {
	k, ok := frrISISKey(n)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" isis password %s %s\n", k.Algorithm, k.Secret)
}

// frrOSPFAuthIface: ospfd interface authentication, every md5 key (ospfd
// accepts any of them by key id and sends with the last one configured).
func frrOSPFAuthIface(n *Node) string {
	var b strings.Builder
	for _, k := range n.Auth {
		switch k.Algorithm {
		case "md5":
			if b.Len() == 0 {
				b.WriteString(" ip ospf authentication message-digest\n")
			}
			fmt.Fprintf(&b, " ip ospf message-digest-key %d md5 %s\n", k.ID, k.Secret)
		case "clear":
			fmt.Fprintf(&b, " ip ospf authentication\n ip ospf authentication-key %s\n", k.Secret)
		}
	}
	return b.String()
}
