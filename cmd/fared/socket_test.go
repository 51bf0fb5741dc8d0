package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fared/fared/internal/testns"
)

// The control socket is mode 0660 whatever the umask (here 000, where a
// plain listen made POST /reload world-writable), its group is
// socket-group's, and a reload changes the group live. Checked as an
// operator would: farectl run as an unprivileged user (setpriv) is let in
// only through the group.
func TestControlSocketPermissions(t *testing.T) {
	testns.RequireRoot(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("setpriv (util-linux) is needed: %v", err)
	}
	bin := build(t)
	ctl := filepath.Join(filepath.Dir(bin), "farectl")
	if out, err := exec.Command("go", "build", "-o", ctl, "../farectl").CombinedOutput(); err != nil {
		t.Fatalf("build farectl: %v\n%s", err, out)
	}
	// A directory nobody can traverse, as /run/fared is.
	dir, err := os.MkdirTemp("", "fared-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{dir, filepath.Dir(bin)} {
		os.Chmod(d, 0o755)
	}
	os.Chmod(ctl, 0o755)
	sock := filepath.Join(dir, "fared.sock")
	cfg := filepath.Join(dir, "f.yaml")
	write := func(extra string) {
		os.WriteFile(cfg, []byte("hostname: t1\nrouter-id: 10.0.0.1\nfib: {enabled: false}\n"+extra), 0o644)
	}
	write("socket-group: nogroup\n")
	cmd := exec.Command("sh", "-c", "umask 000; exec "+bin+" -c "+cfg+" --socket "+sock)
	startServing(t, cmd, sock)
	gidOf := func() (uint32, os.FileMode) {
		fi, err := os.Stat(sock)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Gid, fi.Mode().Perm()
	}
	if gid, mode := gidOf(); mode != 0o660 || gid != 65534 {
		t.Fatalf("socket mode %o gid %d; want 0660, nogroup (65534)", mode, gid)
	}
	// An unprivileged user: in by the group, out without it.
	as := func(gid string) (string, error) {
		out, err := exec.Command("setpriv", "--reuid=65534", "--regid="+gid, "--clear-groups", ctl, "-s", sock, "status").CombinedOutput()
		return string(out), err
	}
	if out, err := as("65534"); err != nil {
		t.Fatalf("member of socket-group refused: %v\n%s", err, out)
	}
	if out, err := as("12345"); err == nil || !strings.Contains(out, "permission denied") {
		t.Fatalf("a user outside socket-group got in (or another error): %v\n%s", err, out)
	}
	// A reload without socket-group: the socket goes back to fared's group.
	write("")
	if out, err := exec.Command(ctl, "-s", sock, "reload").CombinedOutput(); err != nil || !strings.Contains(string(out), "socket-group") {
		t.Fatalf("reload: %v\n%s", err, out)
	}
	if gid, mode := gidOf(); mode != 0o660 || gid != uint32(os.Getegid()) {
		t.Fatalf("after reload: mode %o gid %d; want 0660 and fared's gid %d", mode, gid, os.Getegid())
	}
	if out, err := as("65534"); err == nil {
		t.Fatalf("nogroup still let in after the reload removed it:\n%s", out)
	}
}
