package config

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// Diff lists, in words, what differs between two values of one config
// type: "interfaces[eth1].metric: 10 -> 20", "prefixes[10.1.0.0/24]:
// added". List entries are matched by their Name or Prefix field when
// they have one (so a reordered list is no change), else by position.
// Line numbers are not compared. Reload reports use it.
func Diff(a, b any) []string {
	var out []string
	diff(&out, "", reflect.ValueOf(a), reflect.ValueOf(b))
	return out
}

func diff(out *[]string, path string, a, b reflect.Value) {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			*out = append(*out, fmt.Sprintf("%s: %s -> %s", label(path), show(a), show(b)))
		}
		return
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		switch {
		case a.IsNil() && b.IsNil():
		case a.IsNil():
			*out = append(*out, label(path)+": added")
		case b.IsNil():
			*out = append(*out, label(path)+": removed")
		default:
			diff(out, path, a.Elem(), b.Elem())
		}
	case reflect.Struct:
		if a.Type().PkgPath() != "" && a.Type().Name() != "" && a.NumField() == 0 {
			return
		}
		if s, ok := a.Interface().(fmt.Stringer); ok && isValueLike(a.Type()) {
			if s.String() != b.Interface().(fmt.Stringer).String() {
				*out = append(*out, fmt.Sprintf("%s: %s -> %s", label(path), show(a), show(b)))
			}
			return
		}
		t := a.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Name == "Line" || f.Name == "File" {
				continue
			}
			diff(out, join(path, kebab(f.Name)), a.Field(i), b.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if a.Type().Elem().Kind() == reflect.Uint8 {
			if !reflect.DeepEqual(a.Interface(), b.Interface()) {
				*out = append(*out, fmt.Sprintf("%s: %x -> %x", label(path), a.Interface(), b.Interface()))
			}
			return
		}
		ka, kb := keyed(a), keyed(b)
		if ka == nil || kb == nil {
			if !reflect.DeepEqual(a.Interface(), b.Interface()) {
				*out = append(*out, fmt.Sprintf("%s: %s -> %s", label(path), show(a), show(b)))
			}
			return
		}
		for _, k := range ka.order {
			if _, ok := kb.at[k]; !ok {
				*out = append(*out, fmt.Sprintf("%s[%s]: removed", path, k))
			}
		}
		for _, k := range kb.order {
			ia, ok := ka.at[k]
			if !ok {
				*out = append(*out, fmt.Sprintf("%s[%s]: added", path, k))
				continue
			}
			diff(out, fmt.Sprintf("%s[%s]", path, k), a.Index(ia), b.Index(kb.at[k]))
		}
	case reflect.Map:
		seen := map[string]bool{}
		for _, k := range a.MapKeys() {
			ks := fmt.Sprint(k.Interface())
			seen[ks] = true
			diff(out, join(path, ks), a.MapIndex(k), b.MapIndex(k))
		}
		for _, k := range b.MapKeys() {
			if ks := fmt.Sprint(k.Interface()); !seen[ks] {
				diff(out, join(path, ks), a.MapIndex(k), b.MapIndex(k))
			}
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, fmt.Sprintf("%s: %s -> %s", label(path), show(a), show(b)))
		}
	}
}

// isValueLike: structs compared as one value (netip.Addr, netip.Prefix).
func isValueLike(t reflect.Type) bool { return t.PkgPath() == "net/netip" || t.PkgPath() == "time" }

type keys struct {
	order []string
	at    map[string]int
}

// keyed indexes a list of structs by Name or Prefix; nil when the list
// has neither or a key repeats.
func keyed(v reflect.Value) *keys {
	et := v.Type().Elem()
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	if et.Kind() != reflect.Struct {
		return nil
	}
	field := ""
	for _, f := range []string{"Name", "Prefix"} {
		if _, ok := et.FieldByName(f); ok {
			field = f
			break
		}
	}
	if field == "" {
		return nil
	}
	k := &keys{at: map[string]int{}}
	for i := 0; i < v.Len(); i++ {
		e := reflect.Indirect(v.Index(i))
		s := fmt.Sprint(e.FieldByName(field).Interface())
		if _, dup := k.at[s]; dup {
			return nil
		}
		k.at[s] = i
		k.order = append(k.order, s)
	}
	return k
}

func show(v reflect.Value) string {
	if !v.IsValid() {
		return "none"
	}
	if bs, ok := v.Interface().([][]byte); ok {
		parts := make([]string, len(bs))
		for i, b := range bs {
			parts[i] = fmt.Sprintf("%x", b)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return "none"
	}
	return fmt.Sprint(reflect.Indirect(v).Interface())
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func label(path string) string {
	if path == "" {
		return "value"
	}
	return path
}

// keyNames are the field names whose config key kebab cannot guess.
var keyNames = map[string]string{"LSPMTU": "lsp-mtu", "PathBandwidthSubTLV": "path-bandwidth-subtlv", "LeakL2ToL1": "leak-l2-to-l1"}

// KeyOf is the config key of a section struct's field, as Render and
// Diff write it (a module's tests check that every key is exercised).
func KeyOf(field string) string { return kebab(field) }

// kebab turns a Go field name into the config key style: HelloInterval ->
// hello-interval, LSPMTU -> lsp-mtu, ECMPOnly -> ecmp-only.
func kebab(s string) string {
	if k, ok := keyNames[s]; ok {
		return k
	}
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
