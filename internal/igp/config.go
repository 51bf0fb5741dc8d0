package igp

import (
	"fmt"
	"net/netip"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
)

// The parsing an IGP's config section shares: the checks of interface
// entries and prefix entries, and the BFD settings' inheritance.

// IfaceName is the Walker.Str check of an interface name: a Linux one
// (1..15 bytes, no slash or blank).
func IfaceName(s string) string {
	if s == "" || len(s) > 15 || strings.ContainsAny(s, "/ \t") {
		return fmt.Sprintf("invalid interface name %q", s)
	}
	return ""
}

// OneOf is the Walker.Str check of a value that must be a or b.
func OneOf(a, b string) func(string) string {
	return func(s string) string {
		if s != a && s != b {
			return fmt.Sprintf("must be %s or %s, got %q", a, b, s)
		}
		return ""
	}
}

// PrefixField reads a prefix into dst: canonical (no host bits set), and
// one the protocol carries (refuse, when set, says why not, or "").
func PrefixField(w *config.Walker, dst *netip.Prefix, refuse func(netip.Prefix) string) config.Field {
	return func(k, v *yaml.Node) {
		s, ok := w.Text(k, v)
		if !ok {
			return
		}
		p, err := netip.ParsePrefix(s)
		switch {
		case err != nil:
			w.Errf(v, "%s: invalid prefix %q", k.Value, s)
		case refuse != nil && refuse(p) != "":
			w.Errf(v, "%s: %s %s", k.Value, s, refuse(p))
		case p != p.Masked():
			w.Errf(v, "%s: host bits set, did you mean %s", k.Value, p.Masked())
		default:
			*dst = p
		}
	}
}

// FirstLines are the config lines at which a list's entries were first
// given, by what must differ between them (an interface's name, a
// prefix): a repeat is refused, naming the first.
type FirstLines[K comparable] map[K]int

// Add notes the entry at v (line) with key; what names it in the error of
// a repeat (`interface "e0"`).
func (f FirstLines[K]) Add(w *config.Walker, v *yaml.Node, key K, line int, what string) {
	if first, dup := f[key]; dup {
		w.Errf(v, "duplicate %s (first at line %d)", what, first)
		return
	}
	f[key] = line
}

// ResolveBFD runs once the whole file is read: the section's bfd setting
// takes the top-level defaults, and each interface's (bfd gives its
// field) the section's.
func ResolveBFD[I any](w *config.Walker, section **config.BFD, ifaces []I, bfd func(*I) **config.BFD) {
	*section = w.SectionBFD(*section)
	for i := range ifaces {
		b := bfd(&ifaces[i])
		*b = config.InheritBFD(*section, *b)
	}
}
