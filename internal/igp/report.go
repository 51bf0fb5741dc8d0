package igp

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/fared/fared/config"
	"github.com/fared/fared/daemon"
)

// The words of a reload report (daemon.Change), which the operator reads
// in `farectl reload` and the tests match: the same change is said the
// same way by every protocol.

// Changer records one applied change, in words (fmt.Sprintf's format).
type Changer func(format string, args ...any)

// Report collects a reload's changes and warnings.
type Report struct{ daemon.Change }

// Changed records an applied change.
func (r *Report) Changed(format string, args ...any) {
	r.Change.Changed = append(r.Change.Changed, fmt.Sprintf(format, args...))
}

// Warn records what was not applied, and why.
func (r *Report) Warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// Log logs every change and warning, and returns the report.
func (r *Report) Log(log *slog.Logger) daemon.Change {
	for _, c := range r.Change.Changed {
		log.Info("reload", "change", c)
	}
	for _, w := range r.Warnings {
		log.Warn("reload", "warning", w)
	}
	return r.Change
}

// Settings words the changes between two values of a section (stripped
// of what the caller reports itself): each config.Diff line, with how it
// is applied (how returns "" for "applied").
func Settings(old, new any, how func(diff string) string, changed Changer) {
	for _, d := range config.Diff(old, new) {
		h := how(d)
		if h == "" {
			h = "applied"
		}
		changed("%s (%s)", d, h)
	}
}

// HowCommon is how the settings every routing section has are applied:
// ecmp-only and spf by the rib, bfd by the sessions ("" for others).
func HowCommon(d string) string {
	switch {
	case strings.HasPrefix(d, "ecmp-only"), strings.HasPrefix(d, "spf"):
		return "applied by the rib"
	case strings.HasPrefix(d, "bfd"):
		return "sessions follow within a tick; new timers by Poll/Final"
	}
	return ""
}

// Bandwidth words an interface's configured bandwidth changing in place:
// a run-time override (*override) is dropped when the configured value
// changes, kept otherwise.
func Bandwidth(changed Changer, iface string, old, new config.Bandwidth, override *config.Bandwidth) {
	if old != new {
		how := "re-originated"
		if *override != 0 {
			how = fmt.Sprintf("run-time override %s dropped, re-originated", *override)
			*override = 0
		}
		changed("interface %s: bandwidth %s -> %s (%s)", iface, BandwidthName(old), BandwidthName(new), how)
	} else if *override != 0 {
		changed("interface %s: bandwidth override %s kept (configured bandwidth unchanged)", iface, *override)
	}
}

// KeepOverride is the run-time bandwidth override an interface that
// restarts keeps: none when its configured bandwidth changed.
func KeepOverride(changed Changer, iface string, override, old, new config.Bandwidth) config.Bandwidth {
	if override != 0 && new != old {
		changed("interface %s: bandwidth override %s dropped (configured bandwidth changed)", iface, override)
		return 0
	}
	return override
}

// BFD words an interface's bfd setting changing (the sessions follow
// within a tick: the BFD ticks reconcile them with the config).
func BFD(changed Changer, iface string, old, new *config.BFD) {
	for _, d := range config.Diff(old, new) {
		changed("interface %s: bfd %s (sessions follow within a tick; new timers by Poll/Final)", iface, d)
	}
}

// Auth words an interface's key chain changing; applied says from when
// ("applied to the next hello").
func Auth(changed Changer, iface string, old, new *config.Auth, applied string) {
	for _, d := range config.Diff(old, new) {
		changed("interface %s: authentication %s (%s)", iface, d, applied)
	}
}

// BandwidthName shows a configured bandwidth; 0 means the interface speed.
func BandwidthName(b config.Bandwidth) string {
	if b == 0 {
		return "speed"
	}
	return b.String()
}

// LogOverride logs a run-time bandwidth override set or cleared (bw 0)
// on an interface configured with configured; bytes is the bandwidth now
// in force.
func LogOverride(log *slog.Logger, iface string, old, bw, configured config.Bandwidth, bytes any) {
	if bw == 0 {
		log.Info("bandwidth override cleared", "iface", iface, "was", old.String(), "configured", BandwidthName(configured), "bandwidth_bytes", bytes)
		return
	}
	log.Info("bandwidth override set", "iface", iface, "bandwidth", bw.String(), "configured", BandwidthName(configured),
		"note", "kept across reloads that leave this interface's configured bandwidth unchanged")
}
