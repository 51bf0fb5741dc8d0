package model

import "context"

// ECN overlay (seed 001, "ECN overlay"; RFC 6040): congestion marked in a
// VXLAN underlay reaches the endpoints. The encapsulating VTEP copies the
// inner header's ECN field into the outer header, so the underlay's
// switches may mark the outer header CE; the decapsulating VTEP carries
// an outer CE into the inner header. Backends that have tunnels take an
// Overlay and report, per tunnel, what their data plane does.

// DecapECN is a tunnel's decapsulation ECN mode, by the values SONiC's
// TUNNEL table uses (ecn_mode).
type DecapECN string

const (
	// DecapStandard is RFC 6040 §4.2: an outer CE sets CE on an
	// ECN-capable inner header; a Not-ECT inner header with an outer CE
	// is dropped (the sender cannot be told).
	DecapStandard DecapECN = "standard"
	// DecapCopyFromOuter copies the outer ECN field into the inner
	// header whatever the inner one was (SAI's COPY_FROM_OUTER).
	DecapCopyFromOuter DecapECN = "copy_from_outer"
)

// Tunnel DSCP handling on Linux (the vxlan device's tos).
const (
	DSCPInherit = "inherit" // outer DSCP copied from the inner header (`tos inherit`)
	DSCPKeep    = "keep"    // fared leaves the device's tos as it is
)

// EncapCopyFromInner is the encapsulation ECN mode where the outer ECN
// field is copied from the inner header (RFC 6040 §4.1 normal mode; SAI
// and SONiC call it "standard").
const EncapCopyFromInner = "copy_from_inner"

// Overlay is what the config asks of the node's tunnels.
type Overlay struct {
	// Tunnels names the tunnels; empty means every tunnel of the node.
	Tunnels []string
	Decap   DecapECN
	// DSCP is DSCPInherit or DSCPKeep (Linux only).
	DSCP string
}

// TunnelECN is what a backend found, and changed, on one tunnel.
type TunnelECN struct {
	Name string
	// Kind is "vxlan" (a Linux device), or the SONiC CONFIG_DB table the
	// tunnel is in ("VXLAN_TUNNEL", "TUNNEL"); "" when not found.
	Kind          string
	VNI           uint32
	Local, Remote string
	// DSCP is the outer DSCP's source: "inherit", "fixed" (Fixed holds
	// the TOS byte), "metadata" (a flow-based device: per packet), or ""
	// where the backend does not tell.
	DSCP  string
	Fixed uint8
	// Encap and Decap are the ECN modes in force ("" when unknown).
	Encap string
	Decap DecapECN
	// Conforms: the tunnel does what the overlay asks (RFC 6040 ECN in
	// both directions, and the DSCP handling asked for).
	Conforms bool
	// Changed lists what the backend changed now ("tos inherit",
	// "ecn_mode=standard").
	Changed []string
	// ECNDrops counts packets the decapsulator dropped because the outer
	// header was CE and the inner Not-ECT (Linux: the device's
	// rx_frame_errors, which vxlan increments for that drop); -1 unknown.
	ECNDrops int64
	Note     string
}

// OverlayBackend is a backend with tunnels. ApplyOverlay makes the
// tunnels do what o asks as far as the backend can, and reports each;
// a nil o withdraws what the backend wrote for an earlier one (where it
// writes anything it can take back).
type OverlayBackend interface {
	ApplyOverlay(ctx context.Context, o *Overlay) ([]TunnelECN, error)
}
