// Package configtest holds the checks the tests of config and of the
// modules' sections share: a file's errors at their marked lines, and a
// config rendered and parsed back.
package configtest

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fared/fared/config"
)

// ErrorCase is a file with one or more lines marked "# <-": parsing it
// must fail with exactly Want, in order, at the marked lines. (An
// unnamed struct, so that tables list cases without field names.)
type ErrorCase = struct {
	YAML string
	Want []string
}

// Errors checks each case, the file named t.yaml.
func Errors(t *testing.T, cases []ErrorCase) {
	t.Helper()
	for _, tc := range cases {
		var want []string
		for i, line := range strings.Split(tc.YAML, "\n") {
			if strings.HasSuffix(line, "# <-") {
				want = append(want, "t.yaml:"+strconv.Itoa(i+1)+": "+tc.Want[len(want)])
			}
		}
		if len(want) != len(tc.Want) {
			t.Fatalf("%d markers for %d errors in\n%s", len(want), len(tc.Want), tc.YAML)
		}
		_, err := config.Parse("t.yaml", []byte(tc.YAML))
		if err == nil {
			t.Errorf("no error for\n%s", tc.YAML)
			continue
		}
		if got := err.Error(); got != strings.Join(want, "\n") {
			t.Errorf("config:\n%s\ngot  %s\nwant %s", tc.YAML, got, strings.Join(want, "\n"))
		}
	}
}

// RoundTrip renders c, parses the file back and fails unless it is the
// same configuration: the bookkeeping a file does not keep (c.File, and
// what clear zeroes: line numbers) aside, and the rib's SPF timers stated
// with their defaults (as Render writes them). It returns the file.
func RoundTrip(t *testing.T, c *config.Config, clear func(*config.Config)) []byte {
	t.Helper()
	out, err := config.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := config.Parse("b.yaml", out)
	if err != nil {
		t.Fatalf("rendered config does not parse: %v\n%s", err, out)
	}
	want := *c
	want.File, c2.File = "", ""
	want.RIB.SPF = want.RIB.SPF.Over(config.DefaultSPF)
	if clear != nil {
		clear(&want)
		clear(c2)
	}
	if !reflect.DeepEqual(&want, c2) {
		t.Errorf("round trip differs: %v\n%s", config.Diff(&want, c2), out)
	}
	return out
}
