package igptest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
)

// EverySetting is the test that a reload reports each key of a routing
// section and of its interfaces, changed on its own, by name (nothing a
// reload changes goes unmentioned), refuses none, and reports changing
// it back too.
type EverySetting struct {
	Head      string                       // the file up to the section's key line ("hostname: r1\n...isis:\n")
	Keys      map[string][2]string         // every section key: running and other value
	Iface     map[string][2]string         // interface e0's keys: running and other value
	Tail      string                       // after the interfaces (the prefixes)
	Fix       func(ifKey, y string) string // adjusts a file for an interface key's change (nil: none)
	Section   any                          // the section's and an interface's struct values:
	Interface any                          // each of their fields must be exercised...
	Skip      []string                     // ...but these (exercised elsewhere)
	Reload    func(y string) daemon.Change
}

// Base is the section keys as the running config has them.
func (e EverySetting) Base() map[string]string {
	top := map[string]string{}
	for k, v := range e.Keys {
		top[k] = v[0]
	}
	return top
}

// Render writes the file with the section keys top and interface e0's
// keys, ifKey set to ifVal.
func (e EverySetting) Render(top map[string]string, ifKey, ifVal string) string {
	y := e.Head
	for _, k := range slices.Sorted(maps.Keys(top)) {
		y += fmt.Sprintf("  %s: %s\n", k, top[k])
	}
	f := map[string]string{"name": "e0"}
	for k, v := range e.Iface {
		f[k] = v[0]
	}
	if ifKey != "" {
		f[ifKey] = ifVal
	}
	y += "  interfaces:\n    - {"
	for _, k := range slices.Sorted(maps.Keys(f)) {
		y += k + ": " + f[k] + ", "
	}
	return y + "}\n" + e.Tail
}

// Run runs the test on the running instance, whose config is
// Render(Base()).
func (e EverySetting) Run(t *testing.T) {
	t.Helper()
	e.covered(t, e.Interface, func(k string) bool { _, ok := e.Iface[k]; return ok })
	e.covered(t, e.Section, func(k string) bool { _, ok := e.Keys[k]; return ok })
	base := e.Render(e.Base(), "", "")
	back := func(key string) {
		if rep := e.Reload(base); len(rep.Changed) == 0 {
			t.Errorf("%s: changing it back reported nothing", key)
		}
	}
	for k, v := range e.Keys {
		top := e.Base()
		top[k] = v[1]
		rep := e.Reload(e.Render(top, "", ""))
		if len(rep.Warnings) > 0 {
			t.Errorf("%s: warnings %q", k, rep.Warnings)
		}
		if err := HasLine(rep, k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		back(k)
	}
	for k, v := range e.Iface {
		y := e.Render(e.Base(), k, v[1])
		if e.Fix != nil {
			y = e.Fix(k, y)
		}
		if err := HasLine(e.Reload(y), "interface e0: "+k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		back(k)
	}
}

// covered fails for an exported field of v's struct that is not in the
// test's keys (has) nor skipped.
func (e EverySetting) covered(t *testing.T, v any, has func(key string) bool) {
	t.Helper()
	for _, f := range reflect.VisibleFields(reflect.TypeOf(v)) {
		if k := config.KeyOf(f.Name); f.IsExported() && !has(k) && !slices.Contains(e.Skip, f.Name) {
			t.Errorf("%T key %s not exercised", v, k)
		}
	}
}
