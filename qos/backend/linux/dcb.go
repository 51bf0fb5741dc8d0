package linux

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// dcbnl, the kernel's DCB netlink interface (include/uapi/linux/dcbnl.h):
// the messages `dcb` (iproute2) and mlnx_qos send. No Go library covers
// it; the messages are built with vishvananda/netlink's nl package.
const (
	RTM_GETDCB = 78
	RTM_SETDCB = 79

	DCB_CMD_IEEE_SET = 20
	DCB_CMD_IEEE_GET = 21
	DCB_CMD_IEEE_DEL = 27

	DCB_ATTR_IFNAME = 1
	DCB_ATTR_IEEE   = 13

	DCB_ATTR_IEEE_ETS       = 1
	DCB_ATTR_IEEE_PFC       = 2
	DCB_ATTR_IEEE_APP_TABLE = 3
	DCB_ATTR_IEEE_APP       = 1

	// IEEE_8021QAZ_APP_SEL_DSCP selects DSCP in a dcb_app entry.
	AppSelDSCP = 5

	TSAStrict = 0
	TSAETS    = 2

	sizeofDcbmsg = 4   // struct dcbmsg {u8 dcb_family; u8 cmd; u16 dcb_pad}
	SizeofETS    = 59  // struct ieee_ets
	SizeofPFC    = 136 // struct ieee_pfc (u16 delay at 4, u64 arrays at 8 and 72)
	SizeofApp    = 4   // struct dcb_app {u8 selector; u8 priority; u16 protocol}
)

// ETS is struct ieee_ets.
type ETS struct {
	Willing, ETSCap, CBS uint8
	TCTxBW, TCRxBW       [8]uint8
	TCTSA                [8]uint8
	PrioTC               [8]uint8
	TCRecoBW, TCRecoTSA  [8]uint8
	RecoPrioTC           [8]uint8
}

// AppendTo appends the struct as the kernel lays it out.
func (e *ETS) AppendTo(b []byte) []byte {
	b = append(b, e.Willing, e.ETSCap, e.CBS)
	for _, a := range [][8]uint8{e.TCTxBW, e.TCRxBW, e.TCTSA, e.PrioTC, e.TCRecoBW, e.TCRecoTSA, e.RecoPrioTC} {
		b = append(b, a[:]...)
	}
	return b
}

// DecodeETS reads struct ieee_ets.
func DecodeETS(b []byte) (ETS, error) {
	var e ETS
	if len(b) < SizeofETS {
		return e, fmt.Errorf("ieee_ets: %d bytes, want %d", len(b), SizeofETS)
	}
	e.Willing, e.ETSCap, e.CBS = b[0], b[1], b[2]
	for i, a := range []*[8]uint8{&e.TCTxBW, &e.TCRxBW, &e.TCTSA, &e.PrioTC, &e.TCRecoBW, &e.TCRecoTSA, &e.RecoPrioTC} {
		copy(a[:], b[3+8*i:])
	}
	return e, nil
}

// PFC is struct ieee_pfc.
type PFC struct {
	Cap, Enable, MBC uint8
	Delay            uint16
	Requests         [8]uint64
	Indications      [8]uint64
}

// AppendTo appends the struct in host byte order, as the kernel reads
// it (netlink carries native structs).
func (p *PFC) AppendTo(b []byte) []byte {
	off := len(b)
	b = append(b, make([]byte, SizeofPFC)...)
	s := b[off:]
	s[0], s[1], s[2] = p.Cap, p.Enable, p.MBC
	binary.NativeEndian.PutUint16(s[4:], p.Delay)
	for i := 0; i < 8; i++ {
		binary.NativeEndian.PutUint64(s[8+8*i:], p.Requests[i])
		binary.NativeEndian.PutUint64(s[72+8*i:], p.Indications[i])
	}
	return b
}

// DecodePFC reads struct ieee_pfc.
func DecodePFC(b []byte) (PFC, error) {
	var p PFC
	if len(b) < SizeofPFC {
		return p, fmt.Errorf("ieee_pfc: %d bytes, want %d", len(b), SizeofPFC)
	}
	p.Cap, p.Enable, p.MBC = b[0], b[1], b[2]
	p.Delay = binary.NativeEndian.Uint16(b[4:])
	for i := 0; i < 8; i++ {
		p.Requests[i] = binary.NativeEndian.Uint64(b[8+8*i:])
		p.Indications[i] = binary.NativeEndian.Uint64(b[72+8*i:])
	}
	return p, nil
}

// App is struct dcb_app: one APP table entry (selector 5: DSCP
// Protocol -> Priority).
type App struct {
	Selector, Priority uint8
	Protocol           uint16
}

// AppendTo appends the entry.
func (a App) AppendTo(b []byte) []byte {
	b = append(b, a.Selector, a.Priority, 0, 0)
	binary.NativeEndian.PutUint16(b[len(b)-2:], a.Protocol)
	return b
}

// DecodeApp reads struct dcb_app.
func DecodeApp(b []byte) (App, error) {
	if len(b) < SizeofApp {
		return App{}, fmt.Errorf("dcb_app: %d bytes, want %d", len(b), SizeofApp)
	}
	return App{Selector: b[0], Priority: b[1], Protocol: binary.NativeEndian.Uint16(b[2:])}, nil
}

// IEEE is what one DCB_CMD_IEEE_SET carries; nil parts are left out.
type IEEE struct {
	ETS  *ETS
	PFC  *PFC
	Apps []App
}

// dcbmsg serialises struct dcbmsg.
type dcbmsg struct{ cmd uint8 }

func (m dcbmsg) Len() int { return sizeofDcbmsg }
func (m dcbmsg) Serialize() []byte {
	return []byte{unix.AF_UNSPEC, m.cmd, 0, 0}
}

// Request builds an RTM_SETDCB (set) or RTM_GETDCB (get) message for
// ifname: the attribute layout iproute2's dcb uses (nests flagged
// NLA_F_NESTED, the interface name NUL-terminated).
func Request(cmd uint8, ifname string, ie *IEEE) *nl.NetlinkRequest {
	typ := RTM_SETDCB
	if cmd == DCB_CMD_IEEE_GET {
		typ = RTM_GETDCB
	}
	req := nl.NewNetlinkRequest(typ, unix.NLM_F_ACK)
	req.AddData(dcbmsg{cmd: cmd})
	req.AddData(nl.NewRtAttr(DCB_ATTR_IFNAME, nl.ZeroTerminated(ifname)))
	if ie == nil {
		return req
	}
	nest := nl.NewRtAttr(unix.NLA_F_NESTED|DCB_ATTR_IEEE, nil)
	if ie.ETS != nil {
		nest.AddRtAttr(DCB_ATTR_IEEE_ETS, ie.ETS.AppendTo(nil))
	}
	if ie.PFC != nil {
		nest.AddRtAttr(DCB_ATTR_IEEE_PFC, ie.PFC.AppendTo(nil))
	}
	if len(ie.Apps) > 0 {
		tbl := nest.AddRtAttr(unix.NLA_F_NESTED|DCB_ATTR_IEEE_APP_TABLE, nil)
		for _, a := range ie.Apps {
			tbl.AddRtAttr(DCB_ATTR_IEEE_APP, a.AppendTo(nil))
		}
	}
	req.AddData(nest)
	return req
}

// ErrDCBUnsupported is returned when the device has no DCB operations
// (the kernel answers EOPNOTSUPP: veth, most virtual devices).
var ErrDCBUnsupported = errors.New("the device has no DCB support (kernel: operation not supported)")

func execDCB(req *nl.NetlinkRequest) ([][]byte, error) {
	msgs, err := req.Execute(unix.NETLINK_ROUTE, 0)
	if errors.Is(err, unix.EOPNOTSUPP) {
		return nil, ErrDCBUnsupported
	}
	return msgs, err
}

// ProbeDCB asks the kernel for ifname's IEEE DCB state.
func ProbeDCB(ifname string) error {
	_, err := execDCB(Request(DCB_CMD_IEEE_GET, ifname, nil))
	return err
}

// SetDCB sends one IEEE set. The kernel answers the whole request with
// one status: a device without DCB fails it all.
func SetDCB(ifname string, ie *IEEE) error {
	_, err := execDCB(Request(DCB_CMD_IEEE_SET, ifname, ie))
	return err
}
