package sonic

import (
	"context"
	"reflect"
	"testing"

	"github.com/fared/fared/qos/model"
)

// TestOverlayTunnelECN: against a real redis-server, the ECN overlay
// writes SONiC's TUNNEL fields (names and values from sonic-swss's
// orchagent/tunneldecaporch.cpp: ecn_mode "standard" | "copy_from_outer",
// encap_ecn_mode "standard") into the IPINIP tunnel that exists, leaves
// VXLAN_TUNNEL alone (VxlanTunnelOrch takes src_ip, dst_ip and ttl_mode
// only: any other field would stop the tunnel being created), creates no
// entry for a tunnel that is not there, and gives the operator's values
// back when the overlay goes.
func TestOverlayTunnelECN(t *testing.T) {
	sock := startRedis(t)
	ctx := context.Background()
	cfg := client(sock, 4)
	defer cfg.Close()
	// SONiC's dual-ToR default tunnel, a VXLAN VTEP and a tunnel of a
	// type tunnelmgrd does not handle.
	mux := map[string]string{"tunnel_type": "IPINIP", "dst_ip": "10.1.0.32", "dscp_mode": "uniform", "ecn_mode": "copy_from_outer", "ttl_mode": "pipe"}
	vtep := map[string]string{"src_ip": "10.0.0.1"}
	cfg.HSet(ctx, "TUNNEL|MuxTunnel0", mux)
	cfg.HSet(ctx, "VXLAN_TUNNEL|vtep1", vtep)
	cfg.HSet(ctx, "TUNNEL|gre0", "tunnel_type", "GRE")

	b := New(Config{Addr: sock, ConfigDB: 4, CountersDB: 2})
	defer b.Close()
	if _, err := b.Apply(ctx, desired()); err != nil {
		t.Fatal(err)
	}
	o := &model.Overlay{Decap: model.DecapStandard}
	rep, err := b.ApplyOverlay(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]model.TunnelECN{}
	for _, r := range rep {
		byName[r.Name] = r
	}
	if len(rep) != 3 {
		t.Fatalf("report %+v, want MuxTunnel0, gre0, vtep1", rep)
	}
	wantMux := map[string]string{"tunnel_type": "IPINIP", "dst_ip": "10.1.0.32", "dscp_mode": "uniform", "ecn_mode": "standard", "ttl_mode": "pipe", "encap_ecn_mode": "standard"}
	if got := hgetall(t, cfg, "TUNNEL|MuxTunnel0"); !reflect.DeepEqual(got, wantMux) {
		t.Errorf("TUNNEL|MuxTunnel0 = %v\nwant %v", got, wantMux)
	}
	if got := hgetall(t, cfg, "VXLAN_TUNNEL|vtep1"); !reflect.DeepEqual(got, vtep) {
		t.Errorf("VXLAN_TUNNEL|vtep1 = %v, want it untouched %v", got, vtep)
	}
	if got := hgetall(t, cfg, "TUNNEL|gre0"); len(got) != 1 {
		t.Errorf("TUNNEL|gre0 = %v, want untouched", got)
	}
	m := byName["MuxTunnel0"]
	if m.Kind != "TUNNEL" || !m.Conforms || m.Decap != model.DecapStandard || !reflect.DeepEqual(m.Changed, []string{"ecn_mode=standard", "encap_ecn_mode=standard"}) {
		t.Errorf("MuxTunnel0 report %+v", m)
	}
	if v := byName["vtep1"]; v.Kind != "VXLAN_TUNNEL" || !v.Conforms || v.Encap != model.EncapCopyFromInner || v.Decap != model.DecapStandard || len(v.Changed) != 0 || v.Local != "10.0.0.1" {
		t.Errorf("vtep1 report %+v", v)
	}
	if g := byName["gre0"]; g.Conforms || len(g.Changed) != 0 {
		t.Errorf("gre0 report %+v", g)
	}

	// Applied again (and the QoS tables re-applied): nothing to change,
	// and neither sync removes the other's fields.
	if _, err := b.Apply(ctx, desired()); err != nil {
		t.Fatal(err)
	}
	rep, err = b.ApplyOverlay(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep {
		if len(r.Changed) != 0 {
			t.Errorf("second apply changed %s: %v", r.Name, r.Changed)
		}
	}
	if got := hgetall(t, cfg, "TUNNEL|MuxTunnel0"); !reflect.DeepEqual(got, wantMux) {
		t.Errorf("after re-apply TUNNEL|MuxTunnel0 = %v", got)
	}

	// A named tunnel that is not there gets no entry; copy_from_outer is
	// written to the IPINIP tunnel and refused for the VXLAN one.
	rep, err = b.ApplyOverlay(ctx, &model.Overlay{Tunnels: []string{"ghost", "MuxTunnel0", "vtep1"}, Decap: model.DecapCopyFromOuter})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := cfg.Exists(ctx, "TUNNEL|ghost", "VXLAN_TUNNEL|ghost").Result(); n != 0 {
		t.Errorf("an entry was created for the missing tunnel ghost")
	}
	if len(rep) != 3 || rep[0].Name != "MuxTunnel0" || rep[1].Name != "ghost" || rep[1].Kind != "" || rep[1].Conforms || rep[2].Conforms {
		t.Errorf("report %+v", rep)
	}
	if got := hgetall(t, cfg, "TUNNEL|MuxTunnel0")["ecn_mode"]; got != "copy_from_outer" {
		t.Errorf("ecn_mode %q, want copy_from_outer", got)
	}

	// The overlay goes: MuxTunnel0 is as the operator had it.
	if _, err := b.ApplyOverlay(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := hgetall(t, cfg, "TUNNEL|MuxTunnel0"); !reflect.DeepEqual(got, mux) {
		t.Errorf("after removal TUNNEL|MuxTunnel0 = %v\nwant the operator's %v", got, mux)
	}
	if got := hgetall(t, cfg, "PORT_QOS_MAP|Ethernet0")["pfc_enable"]; got != "3,4" {
		t.Errorf("the QoS tables lost pfc_enable (%q) when the overlay went", got)
	}
}
