package interop

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/inc/auth"
)

// INC credentials of a lab (docs/inc.md, "Control-plane trust"; docs
// farelab): at Up, farelab makes a lab CA under <run dir>/<lab>/inc/, a
// certificate for every fared node (router id as IP SAN, hostname as DNS
// SAN: what the manager checks against its LSDB), the manager's token key,
// and a join token for every host node. A fared node's inc: section
// (config:) gets tls: and, for a manager, client-auth: unless it sets
// them itself; `farelab exec HOST -- fareinc ...` and Lab.Exec give the
// host's command FAREINC_CA and FAREINC_TOKEN_FILE. So fareinc works
// unchanged in a lab, with the manager as strict as anywhere else.
//
// A lab's host tokens cover every group ("*"): any host of a lab may join
// any group, as a test fabric wants; a test that plays an attacker
// strips them (env -u) or mints narrower ones (MintINCToken).

// incValidity is how long a lab's certificates and host tokens last.
const incValidity = 365 * 24 * time.Hour

// INCDir is where the lab's INC credentials are.
func (l *Lab) INCDir() string { return filepath.Join(l.Dir, "inc") }

// INCTLSFiles are a node's TLS files (its certificate is made at Up for
// every fared node).
func (l *Lab) INCTLSFiles(node string) auth.Files {
	d := l.INCDir()
	return auth.Files{CA: filepath.Join(d, "ca.pem"), Cert: filepath.Join(d, node+".pem"), Key: filepath.Join(d, node+".key")}
}

// INCTokenKeyFile is the managers' client-auth key file.
func (l *Lab) INCTokenKeyFile() string { return filepath.Join(l.INCDir(), "token.key") }

// incTokenFile is where a host's join token is.
func (l *Lab) incTokenFile(name string) string { return filepath.Join(l.INCDir(), name+".token") }

// makeINCCredentials writes the lab CA, node certificates, token key and
// host tokens.
func (l *Lab) makeINCCredentials() error {
	dir := l.INCDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := auth.NewCA("farelab "+l.Name+" INC CA", incValidity)
	if err != nil {
		return err
	}
	if err := ca.WriteCA(dir); err != nil {
		return err
	}
	if err := auth.NewKeyFile(l.INCTokenKeyFile()); err != nil {
		return err
	}
	for _, n := range l.Nodes {
		switch {
		case n.Kind == "fared":
			leaf, err := ca.Issue(n.Hostname, []netip.Addr{n.Loopback}, []string{n.Hostname}, incValidity)
			if err != nil {
				return err
			}
			if _, err := leaf.Write(dir, n.Name); err != nil {
				return err
			}
		case n.isHost():
			if _, err := l.incHostToken(n.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// MintINCToken mints a join token for a group pattern with the lab's key
// (tests: a tenant's token for its own job).
func (l *Lab) MintINCToken(group, subject string, ttl time.Duration) (string, error) {
	keys, err := auth.LoadKeys(l.INCTokenKeyFile())
	if err != nil {
		return "", err
	}
	now := time.Now()
	return auth.Mint(keys[0], auth.Claims{Group: group, Subject: subject, Expires: now.Add(ttl).Unix()}, now)
}

// incHostToken returns the token file of host name, minting it (group
// "*") if there is none yet.
func (l *Lab) incHostToken(name string) (string, error) {
	f := l.incTokenFile(name)
	if _, err := os.Stat(f); err == nil {
		return f, nil
	}
	tok, err := l.MintINCToken("*", "farelab "+l.Name+" host "+name, incValidity)
	if err != nil {
		return "", err
	}
	return f, os.WriteFile(f, []byte(tok+"\n"), 0o600)
}

// INCClientEnv is the environment of a fareinc run on host name: the lab
// CA and the host's token (minted now for a host farelab did not make: a
// namespace a test adds). Variables already in this process's environment
// are left to it.
func (l *Lab) INCClientEnv(name string) ([]string, error) {
	if _, err := os.Stat(l.INCTLSFiles("").CA); err != nil {
		return nil, nil // a lab made before farelab had INC credentials
	}
	tf, err := l.incHostToken(name)
	if err != nil {
		return nil, err
	}
	var env []string
	for k, v := range map[string]string{"FAREINC_CA": l.INCTLSFiles("").CA, "FAREINC_TOKEN_FILE": tf} {
		if os.Getenv(k) == "" {
			env = append(env, k+"="+v)
		}
	}
	return env, nil
}

// ExecEnv is the environment farelab gives a command run on node n (farelab
// exec, Exec): for a host, its INC client credentials.
func (l *Lab) ExecEnv(n *Node) []string {
	if !n.isHost() {
		return nil
	}
	env, _ := l.INCClientEnv(n.Name)
	return env
}

// withINCTrust adds tls: and client-auth: to the inc section of a fared
// node's config: extras, unless it has them (or is no role farelab
// knows). extra is YAML of top-level sections.
func (l *Lab) withINCTrust(n *Node, extra string) (string, error) {
	if n.Kind != "fared" || !strings.Contains(extra, "inc:") {
		return extra, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(extra), &doc); err != nil {
		return "", err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return extra, nil
	}
	top := doc.Content[0]
	var inc *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "inc" {
			inc = top.Content[i+1]
		}
	}
	if inc == nil || inc.Kind != yaml.MappingNode {
		return extra, nil
	}
	keys := map[string]string{}
	for i := 0; i+1 < len(inc.Content); i += 2 {
		keys[inc.Content[i].Value] = inc.Content[i+1].Value
	}
	role := keys["role"]
	if role != "manager" && role != "switch" && role != "both" {
		return extra, nil
	}
	if _, err := os.Stat(l.INCTLSFiles(n.Name).Cert); err != nil {
		return "", fmt.Errorf("node %s: no INC certificate: %w", n.Name, err)
	}
	add := func(key string, kv ...string) {
		if _, ok := keys[key]; ok {
			return
		}
		m := &yaml.Node{Kind: yaml.MappingNode}
		for i := 0; i+1 < len(kv); i += 2 {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: kv[i]}, &yaml.Node{Kind: yaml.ScalarNode, Value: kv[i+1]})
		}
		inc.Content = append(inc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, m)
	}
	f := l.INCTLSFiles(n.Name)
	add("tls", "ca", f.CA, "cert", f.Cert, "key", f.Key)
	if role != "switch" {
		add("client-auth", "key-file", l.INCTokenKeyFile())
	}
	b, err := yaml.Marshal(&doc)
	return string(b), err
}
