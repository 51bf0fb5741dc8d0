package bfd

import (
	"testing"

	"github.com/fared/fared/internal/depcheck"
)

// BFD is a core service: the daemon owns the speaker, so bfd must not
// reach the daemon (nor any module), or the modules would reach the
// daemon twice (issue 26).
func TestNoDaemonImport(t *testing.T) {
	for _, p := range depcheck.Deps(t, false, ".") {
		switch p {
		case "daemon", "isis", "ospf", "inof", "qos", "inc", "rib", "fib":
			t.Errorf("bfd imports %s", p)
		}
	}
}
