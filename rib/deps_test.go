package rib

import (
	"strings"
	"testing"

	"github.com/fared/fared/internal/depcheck"
)

// TestCoreImportsNoWire: the core's types are its own. api/wire promises
// that a JSON field is never renamed or removed; a core package that used
// its types would be frozen by that promise. The daemon converts
// (daemon/wireconv.go). Their tests are held to it too.
func TestCoreImportsNoWire(t *testing.T) {
	core := []string{"rib", "fib", "lsdb", "spf", "fare"}
	var pkgs []string
	for _, p := range core {
		pkgs = append(pkgs, depcheck.Module+p)
	}
	for _, p := range depcheck.Deps(t, true, pkgs...) {
		if p == "api" || strings.HasPrefix(p, "api/") {
			t.Errorf("a core package (%s) depends on %s", strings.Join(core, ", "), p)
		}
	}
}
