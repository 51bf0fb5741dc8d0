package bfd

import (
	"os/exec"
	"strings"
	"testing"
)

// BFD is a core service: the daemon owns the speaker, so bfd must not
// reach the daemon (nor any module), or the modules would reach the
// daemon twice (issue 26).
func TestNoDaemonImport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		switch strings.TrimPrefix(p, "github.com/fared/fared/") {
		case "daemon", "isis", "ospf", "inof", "qos", "inc", "rib", "fib":
			t.Errorf("bfd imports %s", p)
		}
	}
}
