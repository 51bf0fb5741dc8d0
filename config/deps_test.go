package config

import (
	"os/exec"
	"strings"
	"testing"
)

// config is the core's: it parses the core's keys and hands every other
// section to the module that registered it, so it reaches no protocol
// (isis, ospf), no bfd, no spf and no module, nor anything else of fared
// (issue 26).
func TestNoProtocolDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/fared/fared/") && p != "github.com/fared/fared/config" {
			t.Errorf("config imports %s", p)
		}
	}
}
