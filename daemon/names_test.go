package daemon_test

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/rib"
	"github.com/fared/fared/spf"
)

// The core knows no routing protocol by name (issue 26): adding one is
// adding a package and a line in the module table, never an edit here.
// The rule, over the non-test Go files of daemon, config and rib: no
// identifier, string or character literal contains "isis", "ospf" or
// "is-is" (any case); comments may (they explain where a design comes
// from). An import of a protocol package is a string literal, so it fails
// too.
func TestCoreNamesNoProtocol(t *testing.T) {
	banned := []string{"isis", "ospf", "is-is"}
	for _, dir := range []string{".", "../config", "../rib"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v (%d files)", dir, err, len(files))
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			var s scanner.Scanner
			s.Init(fset.AddFile(f, -1, len(src)), src, nil, 0) // comments skipped
			for {
				pos, tok, lit := s.Scan()
				if tok == token.EOF {
					break
				}
				if tok != token.IDENT && tok != token.STRING && tok != token.CHAR {
					continue
				}
				for _, b := range banned {
					if strings.Contains(strings.ToLower(lit), b) {
						t.Errorf("%s: %s names a protocol", fset.Position(pos), lit)
					}
				}
			}
		}
	}
}

// config states the RFC 8405 defaults itself (it must not import spf):
// they are spf's, and config refuses what spf refuses.
func TestSPFDefaultsAgree(t *testing.T) {
	d := spf.DefaultDelayConfig()
	c := config.DefaultSPF
	if (spf.DelayConfig{InitialDelay: c.InitialDelay, ShortDelay: c.ShortDelay, LongDelay: c.LongDelay, TimeToLearn: c.TimeToLearn, Holddown: c.Holddown}) != d {
		t.Errorf("config.DefaultSPF %+v, spf.DefaultDelayConfig %+v", c, d)
	}
	for _, s := range []config.SPF{{}, {Holddown: 100 * time.Millisecond}, {TimeToLearn: 20 * time.Second}, {TimeToLearn: time.Second, Holddown: time.Second},
		{TimeToLearn: time.Second, Holddown: 2 * time.Second}} {
		want := spf.DelayConfig{InitialDelay: s.InitialDelay, ShortDelay: s.ShortDelay, LongDelay: s.LongDelay, TimeToLearn: s.TimeToLearn, Holddown: s.Holddown}.Validate()
		got := s.Validate()
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Errorf("%+v: config says %v, spf says %v", s, got, want)
		}
	}
}

// config states the capacity damping defaults itself (it must not import
// rib): they are the rib's.
func TestDampingDefaultsAgree(t *testing.T) {
	c := config.DefaultDamping
	if (rib.DampConfig{Changes: c.Changes, Window: c.Window, Hold: c.Hold, MaxHold: c.MaxHold}) != rib.DefaultDampConfig() {
		t.Errorf("config.DefaultDamping %+v, rib.DefaultDampConfig %+v", c, rib.DefaultDampConfig())
	}
}
