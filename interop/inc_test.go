package interop

import (
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/inc"
	"github.com/fared/fared/inc/auth"
)

const incTopo = `name: inct
nodes:
  s1: {kind: fared, config: {inc: {role: both}}}
  l1: {kind: fared, prefixes: [10.10.1.0/24], config: {inc: {role: switch, manager: "10.255.0.1:7791"}}}
  l2: {kind: fared, config: {inc: {role: switch, manager: "10.255.0.1:7791", tls: {ca: /own/ca.pem, cert: /own/l2.pem, key: /own/l2.key}}}}
  h1: {kind: host, agent: none}
links:
  - {a: l1, b: s1}
  - {a: l2, b: s1}
  - {a: h1, b: l1}
`

// TestINCCredentials: at Up farelab makes the lab CA, a certificate per
// fared node naming its router id and hostname, the token key and host
// tokens; the rendered inc sections carry tls (and the manager's
// client-auth), and fared's own parser loads them; a node's own tls is
// kept; a host's exec environment has its CA and token.
func TestINCCredentials(t *testing.T) {
	l := planLab(t, incTopo, Options{RunDir: t.TempDir()})
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.makeINCCredentials(); err != nil {
		t.Fatal(err)
	}
	parse := func(node string) *inc.Config {
		s, _ := parseRendered(t, l, node).Sections["inc"].(*inc.Config)
		return s
	}
	s1 := parse("s1")
	if s1.TLS == nil || s1.TLS.Cert != l.INCTLSFiles("s1").Cert || s1.ClientAuth == nil || s1.ClientAuth.KeyFile != l.INCTokenKeyFile() ||
		s1.Listen != "0.0.0.0:7791" {
		t.Fatalf("s1 inc %+v", s1)
	}
	if l1 := parse("l1"); l1.TLS == nil || l1.ClientAuth != nil {
		t.Fatalf("l1 inc %+v", l1)
	}
	b, _ := l.renderNodeConfig(l.Node("l2"))
	if !strings.Contains(string(b), "cert: /own/l2.pem") || strings.Contains(string(b), l.INCTLSFiles("l2").Cert) {
		t.Fatalf("l2's own tls replaced:\n%s", b)
	}
	// The certificate names the router as the manager's LSDB knows it.
	m, err := auth.Load(l.INCTLSFiles("l1"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := auth.VerifySwitch(m.Roots, []*x509.Certificate{m.Leaf}, time.Now())
	if err != nil || len(id.IPs) != 1 || id.IPs[0] != l.Node("l1").Loopback || id.Names[0] != l.Node("l1").Hostname {
		t.Fatalf("l1 identity %+v %v", id, err)
	}
	// The host's environment: CA and a token of its own, for any group.
	t.Setenv("FAREINC_CA", "")
	t.Setenv("FAREINC_TOKEN_FILE", "")
	env := strings.Join(l.ExecEnv(l.Node("h1")), " ")
	if !strings.Contains(env, "FAREINC_CA="+l.INCTLSFiles("").CA) || !strings.Contains(env, "FAREINC_TOKEN_FILE="+l.INCDir()+"/h1.token") {
		t.Fatalf("h1 env %q", env)
	}
	tok, _ := os.ReadFile(l.INCDir() + "/h1.token")
	keys, _ := auth.LoadKeys(l.INCTokenKeyFile())
	if c, err := auth.Verify(keys, strings.TrimSpace(string(tok)), time.Now()); err != nil || c.Group != "*" {
		t.Fatalf("h1 token %+v %v", c, err)
	}
	if len(l.ExecEnv(l.Node("s1"))) != 0 {
		t.Fatal("a switch node got client credentials")
	}
	// A host that is not a lab node (a namespace a test adds) gets a token
	// minted on demand.
	if env, err := l.INCClientEnv("outsider"); err != nil || len(env) != 2 {
		t.Fatalf("outsider env %v %v", env, err)
	}
	if st, err := os.Stat(l.INCTLSFiles("s1").Key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", st.Mode(), err)
	}
}
