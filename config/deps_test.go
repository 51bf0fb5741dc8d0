package config

import (
	"testing"

	"github.com/fared/fared/internal/depcheck"
)

// config is the core's: it parses the core's keys and hands every other
// section to the module that registered it, so it reaches no protocol
// (isis, ospf), no bfd, no spf and no module, nor anything else of fared
// (issue 26).
func TestNoProtocolDeps(t *testing.T) {
	for _, p := range depcheck.Deps(t, false, ".") {
		if p != "config" {
			t.Errorf("config imports %s", p)
		}
	}
}
