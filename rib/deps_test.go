package rib

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreImportsNoWire: the core's types are its own. api/wire promises
// that a JSON field is never renamed or removed; a core package that used
// its types would be frozen by that promise. The daemon converts
// (daemon/wireconv.go). Their tests are held to it too.
func TestCoreImportsNoWire(t *testing.T) {
	const mod = "github.com/fared/fared/"
	core := []string{"rib", "fib", "lsdb", "spf", "fare"}
	args := []string{"list", "-deps", "-test"}
	for _, p := range core {
		args = append(args, mod+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == mod+"api" || strings.HasPrefix(p, mod+"api/") {
			t.Errorf("a core package (%s) depends on %s", strings.Join(core, ", "), p)
		}
	}
}
