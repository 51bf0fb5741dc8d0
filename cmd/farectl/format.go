package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// newTable starts a table on w with its header row; the printer adds rows
// and flushes.
func newTable(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

// printTable prints header and below it, aligned, what row writes for
// each element of v: a line, several, or none.
func printTable[T any](w io.Writer, header string, v []T, row func(tw io.Writer, x T)) error {
	tw := newTable(w, header)
	for _, x := range v {
		row(tw, x)
	}
	return tw.Flush()
}

// printCounters prints a line per counter, sorted by name; format takes
// the name and the count.
func printCounters(w io.Writer, format string, m map[string]uint64) {
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(w, format, k, m[k])
	}
}

// ownMark stars what this router originated.
func ownMark(own bool) string {
	if own {
		return " *"
	}
	return ""
}

// dash shows an empty field as "-".
func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// dashJoin shows a list comma-separated, an empty one as "-".
func dashJoin(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// formatBytesPerSec shows a wire bandwidth (bytes/s) the way operators
// configure it (bits/s with a unit).
func formatBytesPerSec(b float64) string {
	bits := b * 8
	switch {
	case bits >= 1e30:
		return "max"
	case bits >= 1e12:
		return fmt.Sprintf("%.4gT", bits/1e12)
	case bits >= 1e9:
		return fmt.Sprintf("%.4gG", bits/1e9)
	case bits >= 1e6:
		return fmt.Sprintf("%.4gM", bits/1e6)
	case bits >= 1e3:
		return fmt.Sprintf("%.4gK", bits/1e3)
	}
	return fmt.Sprintf("%g", bits)
}

// optBytesPerSec shows an optional bandwidth (bytes/s), none when absent.
func optBytesPerSec(b *float64, none string) string {
	if b == nil {
		return none
	}
	return formatBytesPerSec(*b)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// printTLV renders one decoded TLV as indented "key: value" lines; nested
// lists (neighbours, prefixes, sub-TLVs) are indented below their parent.
func printTLV(w io.Writer, t map[string]any) {
	head := fmt.Sprintf("TLV %v", t["type"])
	if n, ok := t["name"]; ok {
		head += " " + fmt.Sprint(n)
	}
	if l, ok := t["length"]; ok {
		head += fmt.Sprintf(" (length %v)", l)
	}
	fmt.Fprintf(w, "  %s\n", head)
	printFields(w, t, "    ", map[string]bool{"type": true, "name": true, "length": true})
}

func printFields(w io.Writer, m map[string]any, indent string, skip map[string]bool) {
	for _, k := range sortedKeys(m) {
		if skip[k] {
			continue
		}
		switch v := m[k].(type) {
		case []any:
			if len(v) == 0 {
				continue
			}
			if _, nested := v[0].(map[string]any); !nested {
				fmt.Fprintf(w, "%s%s: %v\n", indent, k, v)
				continue
			}
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			for _, it := range v {
				if mm, ok := it.(map[string]any); ok {
					fmt.Fprintf(w, "%s  -\n", indent)
					printFields(w, mm, indent+"    ", nil)
				}
			}
		case []map[string]any:
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			for _, mm := range v {
				fmt.Fprintf(w, "%s  -\n", indent)
				printFields(w, mm, indent+"    ", nil)
			}
		case map[string]any:
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			printFields(w, v, indent+"  ", nil)
		default:
			fmt.Fprintf(w, "%s%s: %s\n", indent, k, withUnit(m, k, v))
		}
	}
}

// withUnit shows a bandwidth as the protocols carry it (bytes/s, float32)
// and as operators configure it (bits/s): a field or sub-TLV whose name
// says bandwidth.
func withUnit(m map[string]any, k string, v any) string {
	f, ok := v.(float64)
	name, _ := m["name"].(string)
	if !ok || !(strings.Contains(k, "bandwidth") || (k == "value" && strings.Contains(name, "bandwidth"))) {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%v bytes/s (%s)", v, formatBytesPerSec(f))
}
