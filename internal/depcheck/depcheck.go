// Package depcheck reads a package graph the way the structure tests need
// it (issue 26: config reaches no protocol, bfd no daemon, the core no
// api/wire): `go list -deps` of some packages, keeping fared's own.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// Module is fared's module path.
const Module = "github.com/fared/fared/"

// Deps lists fared's packages that pkgs depend on (themselves included),
// by their path inside the module ("config", "api/wire"); withTests adds
// what their tests import. A go list failure fails t.
func Deps(t testing.TB, withTests bool, pkgs ...string) []string {
	t.Helper()
	args := []string{"list", "-deps"}
	if withTests {
		args = append(args, "-test")
	}
	out, err := exec.Command("go", append(args, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var own []string
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(p, Module); ok {
			own = append(own, rel)
		}
	}
	return own
}
