package daemon

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// sdNotify tells the service manager about fared's state (sd_notify(3)):
// one datagram on the unix socket $NOTIFY_SOCKET names, when systemd
// started fared with Type=notify. Without the variable it does nothing.
// The daemon sends READY=1 once its core and modules run,
// RELOADING=1 ... READY=1 around a reload, and STOPPING=1 on shutdown.
func sdNotify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	// Go maps a leading '@' to the abstract namespace, as systemd means it.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	return nil
}

// notify sends state and logs a failure (the service manager then times
// fared out, which the log explains).
func (d *Daemon) notify(state string) {
	if err := sdNotify(state); err != nil {
		d.log.Warn("cannot notify the service manager", "state", state, "err", err)
	}
}

// monotonicUsec is CLOCK_MONOTONIC in µs: RELOADING=1 carries it
// (MONOTONIC_USEC, required by systemd's Type=notify-reload).
func monotonicUsec() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return ts.Sec*1e6 + ts.Nsec/1e3
}
