package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cmdError names the command and carries its output, so a failed ip or
// vtysh call explains itself.
type cmdError struct {
	Cmd    []string
	Err    error
	Output string
}

func (e *cmdError) Error() string {
	out := strings.TrimSpace(e.Output)
	if out == "" {
		return fmt.Sprintf("%s: %v", strings.Join(e.Cmd, " "), e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", strings.Join(e.Cmd, " "), e.Err, out)
}

func (e *cmdError) Unwrap() error { return e.Err }

// run runs a short command, logging it, and returns its stdout. The error
// names the command and includes stderr (and stdout).
func run(ctx context.Context, log io.Writer, name string, args ...string) ([]byte, error) {
	fmt.Fprintf(log, "+ %s %s\n", name, strings.Join(args, " "))
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &cmdError{Cmd: append([]string{name}, args...), Err: err,
			Output: strings.TrimSpace(stderr.String() + "\n" + stdout.String())}
	}
	return stdout.Bytes(), nil
}

// runCombined is run with stdout and stderr interleaved, as a user of
// Exec wants to see them.
func runCombined(ctx context.Context, log io.Writer, name string, args ...string) ([]byte, error) {
	return runCombinedEnv(ctx, log, nil, name, args...)
}

// runCombinedEnv is runCombined with env added to this process's
// environment.
func runCombinedEnv(ctx context.Context, log io.Writer, env []string, name string, args ...string) ([]byte, error) {
	fmt.Fprintf(log, "+ %s%s %s\n", envPrefix(env), name, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, name, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, &cmdError{Cmd: append([]string{name}, args...), Err: err, Output: string(out)}
	}
	return out, nil
}

// alive reports whether pid is a live process. Zombies count as dead: in
// containers whose init does not reap, killed daemons stay <defunct>.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may itself
	// contain spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// waitGone waits until none of pids is alive or timeout passes; it returns
// the ones still alive.
func waitGone(pids []int, timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// terminate sends SIGTERM, waits up to grace, then SIGKILLs what is left
// and waits a little more. It returns an error if something survives.
func terminate(pids []int, grace time.Duration) error {
	for _, p := range pids {
		if alive(p) {
			_ = syscall.Kill(p, syscall.SIGTERM)
		}
	}
	left := waitGone(pids, grace)
	for _, p := range left {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	if left = waitGone(left, 3*time.Second); len(left) > 0 {
		return fmt.Errorf("processes %v survive SIGKILL", left)
	}
	return nil
}

// ReadPid returns the pid in a daemon's pid file, 0 while there is none.
func ReadPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return p
}

// tail returns the last n bytes of a file, for error messages.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(-n, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// errJoin joins non-nil errors.
func errJoin(errs []error) error { return errors.Join(errs...) }

func envPrefix(env []string) string {
	if len(env) == 0 {
		return ""
	}
	return strings.Join(env, " ") + " "
}
