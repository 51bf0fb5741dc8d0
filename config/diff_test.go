package config

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	a, err := Parse("a.yaml", []byte(`router-id: 10.0.0.1
isis:
  areas: [49.0001]
  interfaces:
    - {name: e0, metric: 10}
    - {name: e1}
  prefixes: [{prefix: 10.1.0.0/24}]
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("b.yaml", []byte(`router-id: 10.0.0.1
isis:
  areas: [49.0002]
  ecmp-only: true
  interfaces:
    - {name: e2}
    - {name: e0, metric: 20, bandwidth: 40G}
  prefixes: [{prefix: 10.1.0.0/24, path-bandwidth: 10G}]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Diff(a.ISIS, b.ISIS), "\n")
	want := strings.Join([]string{
		"areas: [490001] -> [490002]",
		"ecmp-only: added",
		"interfaces[e1]: removed",
		"interfaces[e2]: added",
		"interfaces[e0].metric: 10 -> 20",
		"interfaces[e0].bandwidth: 0 -> 40G",
		"prefixes[10.1.0.0/24].path-bandwidth: 0 -> 10G",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if d := Diff(a.ISIS, a.ISIS); len(d) != 0 {
		t.Errorf("self diff %v", d)
	}
	if k := kebab("LSPMTU") + " " + kebab("ECMPOnly") + " " + kebab("HelloInterval") + " " + kebab("PathBandwidthSubTLV"); k != "lsp-mtu ecmp-only hello-interval path-bandwidth-subtlv" {
		t.Errorf("kebab: %s", k)
	}
}
