package config

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// A module section registered from outside the package is parsed with the
// same walker, reported at file:line, and absent keys stay absent.
func TestRegisteredSection(t *testing.T) {
	type toy struct{ Count int }
	Register(Section{Key: "toy-test", Parse: func(w *Walker, k, v *yaml.Node) any {
		out := &toy{}
		if !w.IsMapping(k, v) {
			return out
		}
		w.Mapping(v, map[string]Field{"count": SetInt(w, &out.Count, 1, 10)})
		return out
	}})
	c, err := Parse("m.yaml", []byte("router-id: 10.0.0.1\ntoy-test: {count: 3}\n"))
	if err != nil || c.Sections["toy-test"].(*toy).Count != 3 {
		t.Fatalf("%+v %v", c, err)
	}
	_, err = Parse("m.yaml", []byte("router-id: 10.0.0.1\ntoy-test:\n  count: 11\n  colour: red\n"))
	if err == nil || err.Error() != "m.yaml:3: count: 11 out of range 1..10\nm.yaml:4: unknown key \"colour\"" {
		t.Fatalf("err %v", err)
	}
	c, _ = Parse("m.yaml", []byte("router-id: 10.0.0.1\n"))
	if _, ok := c.Sections["toy-test"]; ok {
		t.Fatal("absent section present")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a core key did not panic")
		}
	}()
	Register(Section{Key: "hostname"})
}
