package interop

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// PollInterval is how often Poll retries.
const PollInterval = 200 * time.Millisecond

// permanent marks an error that no retry can fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so that Poll gives up at once instead of retrying
// until the deadline (e.g. "the daemon exited").
func Permanent(err error) error { return permanent{err} }

// Poll calls f every PollInterval until it returns nil, the deadline
// passes or ctx ends. The error names what was awaited and f's last error.
func Poll(ctx context.Context, deadline time.Duration, what string, f func() error) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		err := f()
		if err == nil {
			return nil
		}
		var p permanent
		if errors.As(err, &p) {
			return fmt.Errorf("%s: %w", what, p.err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not reached after %v: %w", what, time.Since(start).Round(time.Millisecond), err)
		case <-t.C:
		}
	}
}

// UniqueName returns prefix plus 4 random base36 characters, so that
// parallel test runs never share a lab name. The prefix is cut so the
// result stays within MaxLabName.
func UniqueName(prefix string) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	if len(prefix) > MaxLabName-4 {
		prefix = prefix[:MaxLabName-4]
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	s := []byte(prefix)
	for _, c := range b {
		s = append(s, alphabet[int(c)%len(alphabet)])
	}
	return string(s)
}
