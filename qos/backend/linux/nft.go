package linux

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/fared/fared/qos/model"
)

// Table is the nftables table fared owns (family inet): large-flow
// meters and deadlock-prevention remaps. Each Apply replaces it in one
// transaction.
const Table = "fared_qos"

func quote(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "{ " + strings.Join(q, ", ") + " }"
}

// Ruleset renders the table for d, or "" when d needs none.
//
// Elephants: a flow (addresses, protocol, ports) gets a token bucket of
// Size bytes filling at Rate (`limit rate over R bytes/second burst B
// bytes` in a dynamic set); the first packet that finds the bucket empty
// adds the flow to the elephants set, and every packet of an elephant
// gets `meta priority` = the HTB class of the elephant priority. The
// kernel's nft_limit holds rate x 1 s + burst bytes, so the burst is
// Size - Rate x 1 s; a Size below one second of Rate cannot be expressed
// and becomes Rate x 1 s (EffectiveSize, reported by Apply). This
// kernel's u32 cannot match marks (CLS_U32_MARK off, no cls_fw), so nft
// sets skb->priority, which HTB reads before its filters.
//
// Prevention: a packet forwarded from one interface of a port group to
// another with a remapped DSCP gets the new DSCP and the new priority's
// class.
func Ruleset(d *model.Desired) string {
	var ifaces []string
	for _, i := range d.Ifaces {
		ifaces = append(ifaces, i.Name)
	}
	if (d.Elephant == nil && len(d.Remaps) == 0) || len(ifaces) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table inet %s {\n", Table)
	key := map[string]string{
		"4": "ip saddr . ip daddr . meta l4proto . th sport . th dport",
		"6": "ip6 saddr . ip6 daddr . meta l4proto . th sport . th dport",
	}
	if e := d.Elephant; e != nil {
		idle := e.Idle
		if idle <= 0 {
			idle = 10 * time.Second
		}
		for _, v := range []string{"4", "6"} {
			typ := fmt.Sprintf("ipv%s_addr . ipv%s_addr . inet_proto . inet_service . inet_service", v, v)
			for _, set := range []string{"elephants", "meter"} {
				fmt.Fprintf(&b, "\tset %s%s {\n\t\ttype %s\n\t\tflags dynamic,timeout\n\t\ttimeout %dms\n\t\tsize 65536\n\t}\n",
					set, v, typ, idle.Milliseconds())
			}
		}
		// Classify-only: elephants are listed, not moved.
		set := " meta priority set " + ClassName(int(e.Prio))
		if e.ClassifyOnly {
			set = ""
		}
		fmt.Fprintf(&b, "\tchain elephants {\n\t\ttype filter hook postrouting priority filter; policy accept;\n")
		fmt.Fprintf(&b, "\t\toifname != %s return\n", quote(ifaces))
		fmt.Fprintf(&b, "\t\tmeta l4proto != { tcp, udp } return\n")
		for _, v := range []string{"4", "6"} {
			k := key[v]
			fmt.Fprintf(&b, "\t\t%s @elephants%s update @elephants%s { %s }%s counter return\n", k, v, v, k, set)
			fmt.Fprintf(&b, "\t\tupdate @meter%s { %s limit rate over %d bytes/second burst %d bytes } add @elephants%s { %s }%s counter\n",
				v, k, max(e.Rate, 1), nftBurst(e), v, k, set)
		}
		b.WriteString("\t}\n")
	}
	if len(d.Remaps) > 0 {
		groups := map[string][]string{}
		for _, i := range d.Ifaces {
			if i.Group != "" {
				groups[i.Group] = append(groups[i.Group], i.Name)
			}
		}
		var names []string
		for g := range groups {
			names = append(names, g)
		}
		sort.Strings(names)
		for _, g := range names {
			fmt.Fprintf(&b, "\tset group_%s {\n\t\ttype ifname\n\t\telements = %s\n\t}\n", g, quote(groups[g]))
		}
		// accept ends the chain at the first remap: a packet remapped
		// here is not remapped again by a rule for its new DSCP (the
		// second-bounce rule applies at the next bounce, not this one).
		b.WriteString("\tchain prevent {\n\t\ttype filter hook forward priority mangle; policy accept;\n")
		for _, r := range d.Remaps {
			if groups[r.Group] == nil {
				continue
			}
			for _, fam := range []string{"ip", "ip6"} {
				fmt.Fprintf(&b, "\t\tiifname @group_%s oifname @group_%s %s dscp %d %s dscp set %d meta priority set %s counter accept\n",
					r.Group, r.Group, fam, r.From, fam, r.To, ClassName(int(r.Prio)))
			}
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// nftBurst is the burst that makes nft_limit's bucket Size deep.
func nftBurst(e *model.Elephant) uint64 {
	if e.Size > e.Rate {
		return e.Size - e.Rate
	}
	return 0
}

// EffectiveSize is the large-flow size nftables applies for e.
func EffectiveSize(e *model.Elephant) uint64 { return max(e.Size, e.Rate) }

func (b *Backend) nft(ctx context.Context, stdin string, args ...string) ([]byte, error) {
	argv := append([]string{b.opt.NftBin}, args...)
	if b.opt.Netns != "" {
		argv = append([]string{"ip", "netns", "exec", b.opt.Netns}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// applyNft replaces fared's table (or removes it) in one transaction.
func (b *Backend) applyNft(ctx context.Context, d *model.Desired) error {
	rs := Ruleset(d)
	// Creating the table first makes the delete valid when it is absent.
	script := fmt.Sprintf("table inet %s {}\ndelete table inet %s\n%s", Table, Table, rs)
	_, err := b.nft(ctx, script, "-f", "-")
	return err
}

// elephants lists the flows nftables classified as elephants.
func (b *Backend) elephants(ctx context.Context) ([]model.Flow, error) {
	var out []model.Flow
	for _, set := range []string{"elephants4", "elephants6"} {
		js, err := b.nft(ctx, "", "-j", "list", "set", "inet", Table, set)
		if err != nil {
			return nil, err
		}
		keys, err := setElements(js)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			out = append(out, model.Flow{Key: k, Elephant: true})
		}
	}
	return out, nil
}

// setElements extracts the elements of `nft -j list set` as
// "a . b . c" strings.
func setElements(js []byte) ([]string, error) {
	var doc struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, fmt.Errorf("nft json: %w", err)
	}
	var out []string
	for _, obj := range doc.Nftables {
		raw, ok := obj["set"]
		if !ok {
			continue
		}
		var set struct {
			Elem []json.RawMessage `json:"elem"`
		}
		if err := json.Unmarshal(raw, &set); err != nil {
			return nil, fmt.Errorf("nft json set: %w", err)
		}
		for _, e := range set.Elem {
			out = append(out, elemString(e))
		}
	}
	return out, nil
}

// elemString renders one element: {"elem": {"val": {"concat": [...]}}}
// or a bare concat/value.
func elemString(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	var walk func(v any) string
	walk = func(v any) string {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["elem"]; ok {
				return walk(e)
			}
			if val, ok := x["val"]; ok {
				return walk(val)
			}
			if c, ok := x["concat"]; ok {
				return walk(c)
			}
			return fmt.Sprint(x)
		case []any:
			parts := make([]string, len(x))
			for i, p := range x {
				parts[i] = walk(p)
			}
			return strings.Join(parts, " . ")
		case float64:
			return fmt.Sprint(int64(x))
		default:
			return fmt.Sprint(x)
		}
	}
	return walk(v)
}
