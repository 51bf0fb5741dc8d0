package sonic

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/fared/fared/qos/model"
)

// ECN overlay on SONiC (docs/qos.md "ECN overlay"), from sonic-swss's
// tunnel orchestration (orchagent/vxlanorch.*, tunneldecaporch.cpp,
// cfgmgr/vxlanmgr.cpp, tunnelmgr.cpp):
//
//   - VXLAN_TUNNEL|<name> {src_ip, dst_ip, ttl_mode}: vxlanmgrd copies the
//     entry's fields to APP_DB, where VxlanTunnelOrch parses them strictly
//     (its request lists only those three; an unknown field throws and
//     the tunnel is never created). vxlanorch's create_tunnel sets no
//     SAI_TUNNEL_ATTR_ENCAP_ECN_MODE or _DECAP_ECN_MODE, so a VXLAN
//     tunnel has SAI's defaults: encap STANDARD (RFC 6040 §4.1, copy
//     from inner) and decap STANDARD (§4.2). There is no field to write;
//     fared writes none and reports the defaults.
//   - TUNNEL|<name> {tunnel_type IPINIP, ..., ecn_mode, encap_ecn_mode}:
//     tunnelmgrd copies it to APP_DB TUNNEL_DECAP_TABLE; tunneldecaporch
//     takes ecn_mode "standard" | "copy_from_outer" and encap_ecn_mode
//     "standard", both create-only: on a tunnel that exists it logs and
//     skips them, so a change applies when the tunnel is created again
//     (config reload). fared writes both into existing IPINIP entries.

// Tunnel tables in CONFIG_DB.
const (
	VXLANTunnelTable = "VXLAN_TUNNEL"
	TunnelTable      = "TUNNEL"
)

const vxlanNote = "VXLAN_TUNNEL has no ECN field (VxlanTunnelOrch refuses unknown fields): vxlanorch leaves SAI's defaults, encap STANDARD (RFC 6040 §4.1) and decap STANDARD (§4.2)"

// tunnelEntry is one tunnel as CONFIG_DB has it.
type tunnelEntry struct {
	table  string
	fields map[string]string
}

// ApplyOverlay writes the ECN modes into the TUNNEL entries o names (all
// when it names none) and reports VXLAN_TUNNEL entries' fixed modes. A
// nil o removes the fields fared wrote.
func (b *Backend) ApplyOverlay(ctx context.Context, o *model.Overlay) ([]model.TunnelECN, error) {
	if o == nil {
		return nil, b.sync(ctx, map[string]map[string]string{}, &b.overlay)
	}
	have, err := b.tunnels(ctx)
	if err != nil {
		return nil, err
	}
	names := o.Tunnels
	if len(names) == 0 {
		for n := range have {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	want := map[string]map[string]string{}
	out := make([]model.TunnelECN, 0, len(names))
	for _, n := range names {
		t, fields := tunnelECN(n, have[n], o)
		if fields != nil {
			want[TunnelTable+"|"+n] = fields
		}
		out = append(out, t)
	}
	if err := b.sync(ctx, want, &b.overlay); err != nil {
		return out, err
	}
	return out, nil
}

// TunnelFields are the TUNNEL entry fields fared writes for o.
func TunnelFields(o *model.Overlay) map[string]string {
	return map[string]string{"ecn_mode": string(o.Decap), "encap_ecn_mode": "standard"}
}

// tunnelECN reports one tunnel and returns the fields to write into its
// TUNNEL entry (nil: none).
func tunnelECN(name string, e *tunnelEntry, o *model.Overlay) (model.TunnelECN, map[string]string) {
	t := model.TunnelECN{Name: name, ECNDrops: -1}
	if e == nil {
		t.Note = "no VXLAN_TUNNEL or TUNNEL entry in CONFIG_DB"
		return t, nil
	}
	t.Kind, t.Local, t.Remote = e.table, e.fields["src_ip"], e.fields["dst_ip"]
	if e.table == VXLANTunnelTable {
		t.Encap, t.Decap, t.Note = model.EncapCopyFromInner, model.DecapStandard, vxlanNote
		t.Conforms = o.Decap == model.DecapStandard
		if !t.Conforms {
			t.Note = "decap copy_from_outer cannot be asked of a VXLAN tunnel: " + vxlanNote
		}
		return t, nil
	}
	if typ := e.fields["tunnel_type"]; typ != "IPINIP" {
		t.Note = fmt.Sprintf("tunnel_type %q: tunnelmgrd and tunneldecaporch handle IPINIP only; fared writes nothing", typ)
		return t, nil
	}
	want := TunnelFields(o)
	for _, f := range []string{"ecn_mode", "encap_ecn_mode"} {
		if e.fields[f] != want[f] {
			t.Changed = append(t.Changed, f+"="+want[f])
		}
	}
	t.Encap, t.Decap, t.Conforms = model.EncapCopyFromInner, o.Decap, true
	t.Note = "CONFIG_DB TUNNEL ecn_mode/encap_ecn_mode"
	if len(t.Changed) > 0 {
		t.Note += "; create-only in orchagent: a tunnel that exists takes it at the next config reload"
	}
	return t, want
}

// tunnels reads every VXLAN_TUNNEL and TUNNEL entry, by name (a name in
// both tables is reported as its VXLAN_TUNNEL).
func (b *Backend) tunnels(ctx context.Context) (map[string]*tunnelEntry, error) {
	var keys []string
	for _, table := range []string{TunnelTable, VXLANTunnelTable} {
		iter := b.cfg.Scan(ctx, 0, table+"|*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return nil, fmt.Errorf("CONFIG_DB %s: %w", table, err)
		}
	}
	pipe := b.cfg.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.HGetAll(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, fmt.Errorf("CONFIG_DB tunnels: %w", err)
	}
	out := map[string]*tunnelEntry{}
	for i, k := range keys {
		table, name, _ := strings.Cut(k, "|")
		out[name] = &tunnelEntry{table: table, fields: cmds[i].Val()}
	}
	return out, nil
}
