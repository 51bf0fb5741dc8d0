// Package packaging holds the test of fared's Debian package: it builds the
// package with scripts/package.sh (nfpm), checks its control data and
// contents, runs what it ships, lints the systemd unit offline, and runs
// the packaged fared with nothing but the unit's privileges.
package packaging

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/internal/testns"
)

// need finds a tool the test cannot do without; under CI its absence
// fails the test instead of skipping it.
func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (CI=true: not skipping)", tool)
	}
	t.Skipf("%s not found", tool)
	return ""
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pkg is one package built for the whole test binary (a build takes
// seconds; the tests read it).
var pkg struct {
	deb, root string // the .deb, and where it was unpacked
	took      time.Duration
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pkg.deb != "" {
		os.RemoveAll(filepath.Dir(pkg.deb))
		os.RemoveAll(pkg.root)
	}
	os.Exit(code)
}

func build(t *testing.T) {
	t.Helper()
	if pkg.deb != "" || pkg.err != nil {
		if pkg.err != nil {
			t.Fatal(pkg.err)
		}
		return
	}
	need(t, "dpkg-deb")
	out, err := os.MkdirTemp("", "fared-deb-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "../scripts/package.sh", out)
	cmd.Env = append(os.Environ(), "VERSION=1.2.3~test1")
	start := time.Now()
	b, err := cmd.CombinedOutput()
	pkg.took = time.Since(start)
	if err != nil {
		pkg.err = fmt.Errorf("scripts/package.sh: %v\n%s", err, b)
		t.Fatal(pkg.err)
	}
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	if len(debs) != 1 {
		pkg.err = fmt.Errorf("want one .deb in %s, got %v\n%s", out, debs, b)
		t.Fatal(pkg.err)
	}
	pkg.deb = debs[0]
	// Unpacked where an unprivileged user can reach the binaries.
	root, err := os.MkdirTemp("", "fared-root-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755)
	run(t, "dpkg-deb", "-x", pkg.deb, root)
	pkg.root = root
	st, _ := os.Stat(pkg.deb)
	t.Logf("FIGURE package: %s, %.1f MB, built in %v (fared and farectl compiled, completion generated, nfpm)",
		filepath.Base(pkg.deb), float64(st.Size())/1e6, pkg.took.Round(10*time.Millisecond))
}

// The package's control data, file list, modes and conffiles.
func TestPackageContents(t *testing.T) {
	build(t)
	info := run(t, "dpkg-deb", "--info", pkg.deb)
	for _, want := range []string{"Package: fared\n", "Version: 1.2.3~test1\n", "Architecture: " + goarch(t) + "\n",
		"Depends: adduser\n", "Recommends: bash-completion\n", "Section: net\n", "postinst", "prerm", "postrm"} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
		}
	}
	if f := filepath.Base(pkg.deb); f != "fared_1.2.3~test1_"+goarch(t)+".deb" {
		t.Errorf("file name %s", f)
	}
	list := run(t, "dpkg-deb", "--contents", pkg.deb)
	for path, mode := range map[string]string{
		"./usr/sbin/fared":                                      "-rwxr-xr-x root/root",
		"./usr/bin/farectl":                                     "-rwxr-xr-x root/root",
		"./etc/fared/fared.yaml":                                "-rw-r----- root/root",
		"./lib/systemd/system/fared.service":                    "-rw-r--r-- root/root",
		"./usr/share/bash-completion/completions/farectl":       "-rw-r--r-- root/root",
		"./usr/share/doc/fared/metrics.md":                      "-rw-r--r-- root/root",
		"./usr/share/doc/fared/examples/grafana-dashboard.json": "-rw-r--r-- root/root",
	} {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(mode) + `\s+\d+ \S+ \S+ ` + regexp.QuoteMeta(path) + `$`)
		if !re.MatchString(list) {
			t.Errorf("%s not in the package as %s:\n%s", path, mode, list)
		}
	}
	ctl := t.TempDir()
	run(t, "dpkg-deb", "-e", pkg.deb, ctl)
	if b, _ := os.ReadFile(filepath.Join(ctl, "conffiles")); strings.TrimSpace(string(b)) != "/etc/fared/fared.yaml" {
		t.Errorf("conffiles %q, want /etc/fared/fared.yaml (an upgrade keeps the operator's config)", b)
	}
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		run(t, "sh", "-n", filepath.Join(ctl, s))
	}
	// What the package ships is what the repository holds.
	for src, dst := range map[string]string{"../contrib/fared.yaml": "etc/fared/fared.yaml",
		"../contrib/systemd/fared.service":        "lib/systemd/system/fared.service",
		"../contrib/grafana/fared-dashboard.json": "usr/share/doc/fared/examples/grafana-dashboard.json"} {
		a, _ := os.ReadFile(src)
		b, _ := os.ReadFile(filepath.Join(pkg.root, dst))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s", dst, src)
		}
	}
}

func goarch(t *testing.T) string {
	return strings.TrimSpace(run(t, "go", "env", "GOARCH"))
}

// The packaged binaries run; the packaged config is valid; the bash
// completion is farectl's own (cobra) and parses.
func TestPackagedFiles(t *testing.T) {
	build(t)
	fared := filepath.Join(pkg.root, "usr/sbin/fared")
	farectl := filepath.Join(pkg.root, "usr/bin/farectl")
	if out := run(t, fared, "--version"); !strings.HasPrefix(out, "fared ") {
		t.Errorf("fared --version: %q", out)
	}
	if out := run(t, farectl, "--version"); !strings.Contains(out, "farectl") {
		t.Errorf("farectl --version: %q", out)
	}
	cfg := filepath.Join(pkg.root, "etc/fared/fared.yaml")
	if out := run(t, fared, "-c", cfg, "--check"); !strings.Contains(out, cfg+": ok") {
		t.Errorf("packaged config --check: %s", out)
	}
	comp := filepath.Join(pkg.root, "usr/share/bash-completion/completions/farectl")
	b, _ := os.ReadFile(comp)
	if !strings.HasPrefix(string(b), "# bash completion V2 for farectl") || !strings.Contains(string(b), "complete -o default -F __start_farectl farectl") {
		t.Errorf("completion file is not farectl's cobra script:\n%.300s", b)
	}
	run(t, "bash", "-n", comp)
	// Loaded by bash-completion (which the package recommends; the
	// directory it ships in is bash-completion's), it completes farectl's
	// nouns by asking farectl.
	const bc = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (apt-get install bash-completion)", bc, err)
		}
		t.Skipf("%s: %v", bc, err)
	}
	script := fmt.Sprintf(`source %q; source %q; COMP_WORDS=(farectl is); COMP_CWORD=1; COMP_LINE="farectl is"; COMP_POINT=${#COMP_LINE}; PATH=%q:$PATH __start_farectl; printf '%%s\n' "${COMPREPLY[@]}"`,
		bc, comp, filepath.Dir(farectl))
	// (compopt complains on stderr outside a real completion: ignored.)
	if out, err := exec.Command("bash", "-c", script).Output(); err != nil || strings.TrimSpace(string(out)) != "isis" {
		t.Errorf("completion of `farectl is`: %q, want isis", out)
	}
}

// The unit: what the service must be (notify, reload by SIGHUP, restart on
// failure, the router's capabilities only, hardened), verified by
// systemd-analyze offline (systemd is not PID 1 here: `verify` loads the
// unit and checks its executables; `security --offline` rates it).
func TestSystemdUnit(t *testing.T) {
	build(t)
	unit := filepath.Join(pkg.root, "lib/systemd/system/fared.service")
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = append(keys[k], v)
		}
	}
	for k, want := range map[string]string{
		"Type": "notify", "ExecStart": "/usr/sbin/fared -c /etc/fared/fared.yaml", "ExecReload": "/bin/kill -HUP $MAINPID",
		"Restart": "on-failure", "User": "fared", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"CapabilityBoundingSet": "CAP_NET_ADMIN CAP_NET_RAW CAP_NET_BIND_SERVICE", "AmbientCapabilities": "CAP_NET_ADMIN CAP_NET_RAW CAP_NET_BIND_SERVICE",
		"RuntimeDirectory": "fared", "WantedBy": "multi-user.target",
	} {
		if got := strings.Join(keys[k], " | "); got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}

	sa := need(t, "systemd-analyze")
	// verify checks that ExecStart's binary exists: point the unit at the
	// unpacked package instead of /usr/sbin.
	dir := t.TempDir()
	local := filepath.Join(dir, "fared.service")
	os.WriteFile(local, bytes.ReplaceAll(b, []byte("/usr/sbin/fared"), []byte(filepath.Join(pkg.root, "usr/sbin/fared"))), 0o644)
	out, err := exec.Command(sa, "verify", local).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command(sa, "security", "--offline=yes", local).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for fared.service: ([0-9.]+) (\w+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	t.Logf("FIGURE unit: systemd-analyze security --offline exposure %.1f %s (0 safest, 10 unsafe)", score, m[2])
	if r := string(m[2]); r != "OK" && r != "SAFE" {
		t.Errorf("exposure %.1f %s: the unit lost its hardening", score, r)
	}
}

// The unit's privileges are enough: two packaged fareds, each in its own
// namespace as the unprivileged user nobody with only the unit's
// capabilities (ambient CAP_NET_ADMIN, CAP_NET_RAW, CAP_NET_BIND_SERVICE,
// no new privileges), form an IS-IS adjacency over a veth and install
// each other's loopback in the kernel.
func TestRunsWithUnitCapabilities(t *testing.T) {
	build(t)
	setpriv := need(t, "setpriv")
	a, b := testns.New(t, "fpa"), testns.New(t, "fpb")
	a.IP("link", "add", "v0", "type", "veth", "peer", "name", "v0", "netns", b.Name)
	for i, n := range []*testns.NS{a, b} {
		n.IP("addr", "add", fmt.Sprintf("10.254.0.%d/31", i), "dev", "v0")
		n.IP("link", "set", "v0", "up")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	os.Chmod(filepath.Dir(dir), 0o755)
	caps := "-all,+net_admin,+net_raw,+net_bind_service"
	for i, n := range []*testns.NS{a, b} {
		cfg := filepath.Join(dir, n.Name+".yaml")
		os.WriteFile(cfg, []byte(fmt.Sprintf("hostname: n%d\nrouter-id: 10.255.0.%d\nfib: {on-shutdown: flush}\nisis:\n  areas: [49.0001]\n"+
			"  interfaces:\n    - {name: v0, type: p2p, hello-interval: 1s}\n  prefixes:\n    - {prefix: 10.255.0.%d/32}\n", i+1, i+1, i+1)), 0o644)
		cmd := exec.Command("ip", "netns", "exec", n.Name, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
			"--inh-caps="+caps, "--ambient-caps="+caps, "--bounding-set="+caps, "--nnp",
			filepath.Join(pkg.root, "usr/sbin/fared"), "-c", cfg, "--socket", filepath.Join(dir, n.Name+".sock"))
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				t.Logf("%s log:\n%s", n.Name, log.String())
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ra := a.IP("route", "show", "10.255.0.2/32", "proto", "isis")
		rb := b.IP("route", "show", "10.255.0.1/32", "proto", "isis")
		if strings.Contains(ra, "10.255.0.2") && strings.Contains(rb, "10.255.0.1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no IS-IS route installed by unprivileged fareds: %q %q", ra, rb)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// And the processes are what the unit makes them: uid nobody, no
	// capability beyond the unit's.
	out, err := exec.Command("sh", "-c", fmt.Sprintf("grep -E '^(Uid|CapEff|CapBnd|NoNewPrivs)' /proc/$(ip netns pids %s | head -1)/status", a.Name)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "65534") || !strings.Contains(string(out), "CapEff:\t0000000000003400") ||
		!strings.Contains(string(out), "NoNewPrivs:\t1") {
		t.Fatalf("process status: %v\n%s", err, out)
	}
}
