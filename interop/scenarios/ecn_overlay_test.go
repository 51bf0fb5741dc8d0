package scenarios

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api/wire"
)

// TestQoSECNOverlayStatus: the ecn-overlay key end to end, on the real
// fared and farectl: a qos section naming a vxlan device of the node is
// added by reload; fared sets the device's tos inherit (iproute2 reads it
// back) and `farectl qos status` reports the tunnel as the kernel has it;
// a recreated device (tos 0 again) is set again when it comes up. The
// ECN behaviour itself is measured by qos/backend/linux's
// TestVXLANECNOverlay.
func TestQoSECNOverlayStatus(t *testing.T) {
	l := startLab(t, qosTopo)
	ctx := ctxT(t)
	a := l.Node("qa")
	local, remote := l.Links[0].AddrA.Addr().String(), l.Links[0].AddrB.Addr().String()
	ipn := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, "ip", append([]string{"-n", a.Netns}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	addVXLAN := func() {
		ipn("link", "add", "vx0", "type", "vxlan", "id", "42", "local", local, "remote", remote, "dstport", "4789")
		ipn("link", "set", "vx0", "up")
	}
	addVXLAN()
	addSection(t, ctx, l, "qa", fmt.Sprintf(`qos:
  backend: linux
  interfaces:
    - name: %s
  ecn-overlay:
    tunnels: [vx0]
`, a.Interfaces[0].Name))

	var st wire.QoSStatus
	poll(t, ctx, 10*time.Second, "ecn overlay in qos status", func() error {
		if err := l.FarectlJSON(ctx, "qa", &st, "qos", "status"); err != nil {
			return err
		}
		if st.ECNOverlay == nil || len(st.ECNOverlay.Tunnels) != 1 {
			return fmt.Errorf("ecn_overlay %+v", st.ECNOverlay)
		}
		return nil
	})
	o := st.ECNOverlay
	tun := o.Tunnels[0]
	if o.Decap != "standard" || o.DSCP != "inherit" || o.Error != "" || o.CheckedAt == "" {
		t.Errorf("ecn_overlay %+v", o)
	}
	if tun.Name != "vx0" || tun.Kind != "vxlan" || tun.VNI != 42 || tun.Local != local || tun.Remote != remote || tun.DSCP != "inherit" ||
		tun.EncapECN != "copy_from_inner" || tun.DecapECN != "standard" || !tun.Conforms || tun.ECNDropPackets == nil ||
		len(tun.Changed) != 1 || tun.Changed[0] != "tos inherit" {
		t.Errorf("tunnel %+v", tun)
	}
	if out := ipn("-d", "link", "show", "vx0"); !strings.Contains(out, "tos inherit") {
		t.Errorf("fared did not set tos inherit:\n%s", out)
	}
	text, err := l.Farectl(ctx, "qa", "-j=false", "qos", "status") // the table, not the JSON
	if err != nil || !strings.Contains(string(text), "ECN overlay: decap standard  dscp inherit") || !strings.Contains(string(text), "vx0") {
		t.Errorf("farectl qos status: %v\n%s", err, text)
	}

	// Recreated with the default tos: fared sets it again on link up.
	ipn("link", "del", "vx0")
	addVXLAN()
	poll(t, ctx, 10*time.Second, "tos inherit on the recreated vx0", func() error {
		if out := ipn("-d", "link", "show", "vx0"); !strings.Contains(out, "tos inherit") {
			return fmt.Errorf("not yet:\n%s", out)
		}
		return nil
	})
}
