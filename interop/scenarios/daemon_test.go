package scenarios

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
)

// TestOSPFOnlyLSDB: a fared running only OSPF answers `farectl lsdb` (the
// protocol-neutral topologies SPF ran on) with its area's graph, in JSON
// and in text; the route to FRR's loopback was computed from it.
func TestOSPFOnlyLSDB(t *testing.T) {
	l, ctx := pairLab(t, "olsdb", "ospf", "")
	f1, r1 := rid(l, "f1"), rid(l, "r1")
	var v []wire.Topology
	poll(t, ctx, 30*time.Second, "farectl -j lsdb shows area 0 with both routers", func() error {
		if err := l.FarectlJSON(ctx, "f1", &v, "lsdb"); err != nil {
			return err
		}
		if len(v) != 1 || v[0].Protocol != "ospf" || v[0].Area != "0.0.0.0" || v[0].Self != f1 {
			return fmt.Errorf("topologies %+v", v)
		}
		ids := map[string]bool{}
		for _, n := range v[0].Nodes {
			ids[n.ID] = true
		}
		if !ids[f1] || !ids[r1] {
			return fmt.Errorf("nodes %v, want %s and %s", ids, f1, r1)
		}
		return nil
	})
	// The same through the area filter, and as text.
	if err := l.FarectlJSON(ctx, "f1", &v, "lsdb", "--area", "0"); err != nil || len(v) != 1 {
		t.Fatalf("lsdb --area 0: %+v %v", v, err)
	}
	n := l.Node("f1")
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", n.Netns, bins.Farectl, "-s", n.Socket, "lsdb").CombinedOutput()
	if err != nil {
		t.Fatalf("farectl lsdb: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ospf area 0.0.0.0, self "+f1) || !strings.Contains(string(out), r1) {
		t.Fatalf("farectl lsdb text:\n%s", out)
	}
	var routes []wire.Route
	poll(t, ctx, 20*time.Second, "route to FRR's loopback", func() error {
		if err := l.FarectlJSON(ctx, "f1", &routes, "route", r1+"/32"); err != nil {
			return err
		}
		if len(routes) != 1 || routes[0].Protocol != "ospf" || routes[0].Area != "0.0.0.0" {
			return fmt.Errorf("routes %+v", routes)
		}
		return nil
	})
}
