package config

import (
	"fmt"
	"log/slog"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Render writes the configuration in force as YAML, defaults included,
// in the file's own keys: `farectl running-config`. What it writes parses
// back to the same configuration (Parse(Render(c)) == c, tested), so an
// operator can save it as a config file.
//
// Fields are written by their config key (kebab-case of the Go name, or a
// `render:"key"` tag); a `render:"-"` tag skips a field; `render:"level"`
// writes 1, 2, 3 as "1", "2", "1-2"; `render:"area"` writes a uint32 as a
// dotted quad; `,omitzero` leaves out a zero value (a setting that is "not
// set"). Module sections render the same way, by reflection.
func Render(c *Config) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) {
		if v != nil {
			root.Content = append(root.Content, scalar(k), v)
		}
	}
	add("hostname", scalar(c.Hostname))
	add("router-id", scalar(c.RouterID.String()))
	add("system-id", scalar(SystemIDString(c.SystemID)))
	add("log-level", scalar(strings.ToLower(c.LogLevel.String())))
	add("socket", scalar(c.Socket))
	if c.SocketGroup != "" {
		add("socket-group", scalar(c.SocketGroup))
	}
	add("fib", node(reflect.ValueOf(c.FIB), ""))
	rib := c.RIB
	rib.SPF = rib.SPF.Over(DefaultSPF)
	add("rib", node(reflect.ValueOf(rib), ""))
	if c.Metrics != nil {
		add("metrics", node(reflect.ValueOf(c.Metrics), ""))
	}
	// The routing protocols' sections first, then the others, each by key.
	keys := make([]string, 0, len(c.Sections))
	for k := range c.Sections {
		keys = append(keys, k)
	}
	routing := map[string]bool{}
	for _, s := range registered() {
		routing[s.Key] = s.Distance != 0
	}
	sort.Slice(keys, func(i, j int) bool {
		if routing[keys[i]] != routing[keys[j]] {
			return routing[keys[i]]
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		add(k, node(reflect.ValueOf(c.Sections[k]), ""))
	}
	return yaml.Marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}})
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

var (
	durationType  = reflect.TypeOf(time.Duration(0))
	bandwidthType = reflect.TypeOf(Bandwidth(0))
	levelType     = reflect.TypeOf(slog.Level(0))
	addrType      = reflect.TypeOf(netip.Addr{})
	prefixType    = reflect.TypeOf(netip.Prefix{})
	areasType     = reflect.TypeOf([][]byte{})
	timeType      = reflect.TypeOf(time.Time{})
	bfdType       = reflect.TypeOf(BFD{})
)

// node renders v; tag is the field's render tag ("level", "area" or "").
// A nil result means "nothing to write".
func node(v reflect.Value, tag string) *yaml.Node {
	if !v.IsValid() {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return node(v.Elem(), tag)
	}
	if v.Type() == bfdType && v.Interface().(BFD).Off {
		return scalar("off")
	}
	switch v.Type() {
	case durationType:
		return scalar(FormatDuration(time.Duration(v.Int())))
	case bandwidthType:
		return scalar(Bandwidth(v.Float()).String())
	case levelType:
		return scalar(strings.ToLower(slog.Level(v.Int()).String()))
	case addrType, prefixType:
		return scalar(fmt.Sprint(v.Interface()))
	case timeType:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: v.Interface().(time.Time).Format(time.RFC3339Nano), Style: yaml.DoubleQuotedStyle}
	case areasType:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, a := range v.Interface().([][]byte) {
			n.Content = append(n.Content, scalar(dottedArea(a)))
		}
		return n
	}
	switch tag {
	case "level":
		return scalar(LevelName(int(v.Int())))
	case "area":
		return scalar(AreaString(uint32(v.Uint())))
	}
	switch v.Kind() {
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode}
		t := v.Type()
		var omit []string
		if o, ok := v.Interface().(KeyOmitter); ok {
			omit = o.OmitKeys()
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			rt, opt, _ := strings.Cut(f.Tag.Get("render"), ",")
			if !f.IsExported() || rt == "-" || f.Name == "Line" {
				continue
			}
			fv := v.Field(i)
			if opt == "omitzero" && fv.IsZero() {
				continue
			}
			key, sub := kebab(f.Name), ""
			switch rt {
			case "level", "area", "":
				sub = rt
			default:
				key = rt
			}
			if slices.Contains(omit, key) {
				continue
			}
			if c := node(fv, sub); c != nil {
				n.Content = append(n.Content, scalar(key), c)
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for i := 0; i < v.Len(); i++ {
			if c := node(v.Index(i), tag); c != nil {
				n.Content = append(n.Content, c)
			}
		}
		if len(n.Content) > 0 && n.Content[0].Kind == yaml.ScalarNode {
			n.Style = yaml.FlowStyle
		}
		return n
	case reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface()) })
		for _, k := range keys {
			if c := node(v.MapIndex(k), tag); c != nil {
				n.Content = append(n.Content, scalar(fmt.Sprint(k.Interface())), c)
			}
		}
		return n
	case reflect.Bool:
		return scalar(fmt.Sprint(v.Bool()))
	case reflect.String:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: v.String(), Style: quoteIfNeeded(v.String())}
	}
	return scalar(fmt.Sprint(v.Interface()))
}

// KeyOmitter is implemented by a section's struct that leaves keys out of
// its rendering depending on its values (a setting that does not apply).
type KeyOmitter interface{ OmitKeys() []string }

// quoteIfNeeded keeps a string a string when YAML would read it as
// something else ("2" for a level, "true").
func quoteIfNeeded(s string) yaml.Style {
	var x any
	if yaml.Unmarshal([]byte(s), &x) == nil {
		if _, isStr := x.(string); isStr {
			return 0
		}
	}
	return yaml.DoubleQuotedStyle
}

func dottedArea(a []byte) string {
	h := fmt.Sprintf("%x", a)
	// 49.0001: the first byte (AFI), then groups of two bytes.
	out := h[:2]
	for i := 2; i < len(h); i += 4 {
		out += "." + h[i:min(i+4, len(h))]
	}
	return out
}

// LevelName writes a level as the config does: 1, 2, or 3 as "1-2".
func LevelName(l int) string {
	switch l {
	case 1:
		return "1"
	case 2:
		return "2"
	}
	return "1-2"
}
