// Package scripts holds the shell scripts a newcomer runs first. The test
// keeps the README's "two commands" runnable as written both in a root
// shell without sudo (a fresh Debian) and, prefixed with sudo, as a user.
package scripts

import (
	"os"
	"strings"
	"testing"
)

func TestReadmeTwoCommands(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	_, sec, ok := strings.Cut(readme, "\n## The two commands\n")
	if !ok {
		t.Fatal(`README has no "## The two commands" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, block, ok := strings.Cut(sec, "```sh\n")
	if !ok {
		t.Fatal("the two commands section has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	want := []string{"scripts/demo.sh", "scripts/test.sh"}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the newcomer's commands are %q, want exactly %q (no sudo: a root shell on a fresh Debian has none)", cmds, want)
	}
	for _, c := range cmds {
		fi, err := os.Stat("../" + c)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable: %q would fail as written", c, c)
		}
	}
	// The one sentence that tells a user what to add, and the cleanup
	// command in both forms.
	flat := strings.Join(strings.Fields(sec), " ")
	for _, s := range []string{
		"in a root shell run them as written",
		"as a user with sudo, prefix each with `sudo`",
		"`bin/farelab down demo` removes it (as a user, `sudo bin/farelab down demo`)",
	} {
		if !strings.Contains(flat, s) {
			t.Errorf("README's two commands section does not say %q", s)
		}
	}
}
