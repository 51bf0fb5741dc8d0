// Package enum names the values of the wire codecs' small enumerations
// (message types, roles, states, error kinds): one table per enumeration,
// indexed by value, serves both String and the parser of the names, in
// place of a switch for each.
package enum

import (
	"fmt"
	"strconv"
	"strings"
)

// Names are the names of an enumeration's values, indexed by value: ""
// for a value without a name. Declare one with keyed elements:
//
//	var roleNames = enum.Names[Role]{RoleInitiator: "initiator", RoleTarget: "target"}
type Names[T ~uint8] []string

// Name returns v's name, or unknown followed by v's number (decimal)
// for a value without one.
func (n Names[T]) Name(v T, unknown string) string {
	if int(v) < len(n) && n[v] != "" {
		return n[v]
	}
	return unknown + strconv.Itoa(int(v))
}

// Parse returns the value named s.
func (n Names[T]) Parse(s string) (T, bool) {
	if s == "" {
		return 0, false
	}
	for i, name := range n {
		if name == s {
			return T(i), true
		}
	}
	return 0, false
}

// Lookup is Parse with an error that lists the names in value order:
// `role "x": want initiator, target or both` (what is "role").
func (n Names[T]) Lookup(what, s string) (T, error) {
	if v, ok := n.Parse(s); ok {
		return v, nil
	}
	var names []string
	for _, name := range n {
		if name != "" {
			names = append(names, name)
		}
	}
	want := names[len(names)-1]
	if len(names) > 1 {
		want = strings.Join(names[:len(names)-1], ", ") + " or " + want
	}
	return 0, fmt.Errorf("%s %q: want %s", what, s, want)
}
