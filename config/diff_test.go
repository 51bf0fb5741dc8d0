package config

import (
	"strings"
	"testing"
)

func TestDiffAndKebab(t *testing.T) {
	type iface struct {
		Name   string
		Metric int
		Line   int
	}
	type sec struct {
		HelloInterval int
		Interfaces    []iface
	}
	a := sec{HelloInterval: 3, Interfaces: []iface{{Name: "e0", Metric: 10, Line: 4}, {Name: "e1"}}}
	b := sec{HelloInterval: 1, Interfaces: []iface{{Name: "e2"}, {Name: "e0", Metric: 20, Line: 9}}}
	got := strings.Join(Diff(a, b), "\n")
	want := "hello-interval: 3 -> 1\ninterfaces[e1]: removed\ninterfaces[e2]: added\ninterfaces[e0].metric: 10 -> 20"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if k := kebab("LSPMTU") + " " + kebab("ECMPOnly") + " " + kebab("HelloInterval") + " " + kebab("PathBandwidthSubTLV"); k != "lsp-mtu ecmp-only hello-interval path-bandwidth-subtlv" {
		t.Errorf("kebab: %s", k)
	}
}
