package linux

import (
	"context"
	"fmt"
	"sort"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/fared/fared/qos/model"
)

// ECN overlay on the kernel's vxlan devices (docs/qos.md "ECN overlay").
// What the kernel does, read in drivers/net/vxlan and checked by
// TestVXLANECNOverlay on this machine's kernel:
//
//   - encapsulation: vxlan_xmit_one always passes the outer TOS through
//     ip_tunnel_ecn_encap, which takes the ECN field from the inner
//     header: ECT(0) and ECT(1) are copied, an inner CE leaves as ECT(0)
//     (RFC 3168's reset; the decapsulator keeps the inner CE, so the end
//     result is RFC 6040's). The device's tos only chooses the outer
//     DSCP: 1 ("tos inherit") copies the inner one, anything else is that
//     fixed value. So `tos inherit` is not what copies ECN; it is what
//     puts tunnelled RoCE in the underlay's lossless (and ECN-marking)
//     queue, which classifies by the outer DSCP.
//   - decapsulation: vxlan_rcv runs INET_ECN_decapsulate, RFC 6040 §4.2:
//     outer CE on an ECT inner header sets CE, outer ECT(1) on ECT(0)
//     gives ECT(1), and an outer CE over a Not-ECT inner header is
//     dropped and counted in the device's rx_frame_errors. There is no
//     knob; fared reports it.

const vxlanNote = "kernel vxlan: encap copies the inner ECT (inner CE leaves as ECT(0), kept at decap); decap RFC 6040 (CE on Not-ECT dropped)"

// ApplyOverlay reports every asked-for vxlan device and sets `tos
// inherit` where o asks for DSCP inheritance. The kernel's ECN handling
// has no knob, so a nil o changes nothing.
func (b *Backend) ApplyOverlay(ctx context.Context, o *model.Overlay) ([]model.TunnelECN, error) {
	if o == nil {
		return nil, nil
	}
	links, err := b.h.LinkList()
	if err != nil {
		return nil, err
	}
	byName := map[string]netlink.Link{}
	var all []string
	for _, l := range links {
		byName[l.Attrs().Name] = l
		if l.Type() == "vxlan" {
			all = append(all, l.Attrs().Name)
		}
	}
	names := o.Tunnels
	if len(names) == 0 {
		names = all
	}
	sort.Strings(names)
	out := make([]model.TunnelECN, 0, len(names))
	for _, n := range names {
		t, err := b.vxlanECN(byName[n], n, o)
		if err != nil {
			return out, fmt.Errorf("vxlan %s: %w", n, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// vxlanECN reports one device, first setting tos inherit if asked.
func (b *Backend) vxlanECN(l netlink.Link, name string, o *model.Overlay) (model.TunnelECN, error) {
	t := model.TunnelECN{Name: name, ECNDrops: -1}
	if l == nil {
		t.Note = "no such interface"
		return t, nil
	}
	vx, ok := l.(*netlink.Vxlan)
	if !ok {
		t.Note = "not a vxlan device (" + l.Type() + ")"
		return t, nil
	}
	if o.DSCP == model.DSCPInherit && !vx.FlowBased && vx.TOS != 1 {
		if err := b.setTOSInherit(vx.Index); err != nil {
			return t, fmt.Errorf("setting tos inherit: %w", err)
		}
		t.Changed = append(t.Changed, "tos inherit")
		fresh, err := b.h.LinkByIndex(vx.Index)
		if err != nil {
			return t, err
		}
		if vx, ok = fresh.(*netlink.Vxlan); !ok {
			return t, fmt.Errorf("ifindex %d is no longer a vxlan device", fresh.Attrs().Index)
		}
	}
	return vxlanReport(t, vx, o), nil
}

// vxlanReport fills t from the device as the kernel has it.
func vxlanReport(t model.TunnelECN, vx *netlink.Vxlan, o *model.Overlay) model.TunnelECN {
	t.Kind, t.VNI = "vxlan", uint32(vx.VxlanId)
	if vx.SrcAddr != nil {
		t.Local = vx.SrcAddr.String()
	}
	if vx.Group != nil {
		t.Remote = vx.Group.String()
	}
	switch {
	case vx.FlowBased:
		t.DSCP = "metadata"
	case vx.TOS == 1:
		t.DSCP = model.DSCPInherit
	default:
		t.DSCP, t.Fixed = "fixed", uint8(vx.TOS)
	}
	t.Encap, t.Decap = model.EncapCopyFromInner, model.DecapStandard
	if st := vx.Attrs().Statistics; st != nil {
		t.ECNDrops = int64(st.RxFrameErrors)
	}
	t.Note = vxlanNote
	t.Conforms = o.Decap == model.DecapStandard
	if o.DSCP == model.DSCPInherit && t.DSCP != model.DSCPInherit {
		t.Conforms = false
		t.Note = "outer DSCP is not inherited (" + t.DSCP + "): the underlay classifies tunnelled traffic by the outer DSCP; " + vxlanNote
	}
	return t
}

// setTOSInherit changes only the device's tos to 1 (inherit), as `ip
// link set DEV type vxlan tos inherit` does: a changelink with no other
// vxlan attribute leaves the rest of the device alone (the kernel
// refuses to change the VNI, port and most others on a live device).
func (b *Backend) setTOSInherit(index int) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("vxlan"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	data.AddRtAttr(nl.IFLA_VXLAN_TOS, nl.Uint8Attr(1))
	req.AddData(info)
	if b.sock != nil {
		req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: b.sock}
	}
	_, err := req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}
