package l2

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// DefaultOUI is the organisation identifier of the iNOF LLDP TLV.
//
// The project owns no IEEE OUI, so it uses a value from the SLAP
// "administratively assigned" quadrant (IEEE 802c-2017: U/L bit set,
// Y = Z = 0, so the first octet ends in binary 0010): the IEEE never
// assigns such a value, so it cannot collide with a vendor's TLV, and
// 0x46 0x44 spell "FD" (fared). A site that owns an OUI or CID sets its
// own (`inof: {lldp-oui: ...}`): the TLV's content does not change.
var DefaultOUI = [3]byte{0x02, 0x46, 0x44}

// ParseOUI reads an OUI written "02:46:44", "02-46-44" or "02,46,44"
// (lldpcli's form); the error does not repeat s, which callers name with
// their own key.
func ParseOUI(s string) ([3]byte, error) {
	var o [3]byte
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == '-' || r == ',' })
	if len(f) != 3 {
		return o, errors.New("want three hex bytes like 02:46:44")
	}
	for i, x := range f {
		b, err := strconv.ParseUint(x, 16, 8)
		if err != nil || len(x) != 2 {
			return o, fmt.Errorf("%q is not a hex byte", x)
		}
		o[i] = byte(b)
	}
	return o, nil
}

// LLDPSubtype is the iNOF host subtype under the OUI.
const LLDPSubtype = 1

// LLDPHost is what one LLDPDU tells a switch about an agentless host.
type LLDPHost struct {
	// Found: the LLDPDU carries the iNOF TLV. Without it the frame only
	// matters as a shutdown (TTL 0) of a host learnt before.
	Found bool
	Host  Host
	// TTL is how long the information stays valid; 0 is a shutdown LLDPDU.
	TTL time.Duration
	// Src is the frame's source MAC.
	Src       net.HardwareAddr
	ChassisID string
	PortID    string
	SysName   string
}

// DecodeLLDP decodes an Ethernet frame carrying an LLDPDU with gopacket's
// LLDP layers, and the iNOF TLV (OUI oui, subtype LLDPSubtype) in it. The
// host's addresses are those in the iNOF TLV, else the LLDP management
// addresses; its id is the TLV's, else the system name.
func DecodeLLDP(frame []byte, oui [3]byte) (LLDPHost, error) {
	var h LLDPHost
	pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true, Lazy: false})
	if el := pkt.ErrorLayer(); el != nil {
		return h, fmt.Errorf("lldp: %w", el.Error())
	}
	dl, _ := pkt.Layer(layers.LayerTypeLinkLayerDiscovery).(*layers.LinkLayerDiscovery)
	if dl == nil {
		return h, errors.New("lldp: no LLDPDU in the frame")
	}
	h.TTL = time.Duration(dl.TTL) * time.Second
	if eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet); eth != nil {
		h.Src = append(net.HardwareAddr(nil), eth.SrcMAC...)
	}
	h.ChassisID = idString(byte(dl.ChassisID.Subtype), dl.ChassisID.ID)
	h.PortID = idString(byte(dl.PortID.Subtype), dl.PortID.ID)
	if info, _ := pkt.Layer(layers.LayerTypeLinkLayerDiscoveryInfo).(*layers.LinkLayerDiscoveryInfo); info != nil {
		h.SysName = info.SysName
		for _, o := range info.OrgTLVs {
			if uint32(o.OUI) != uint32(oui[0])<<16|uint32(oui[1])<<8|uint32(oui[2]) || o.SubType != LLDPSubtype {
				continue
			}
			if h.Found {
				return h, errors.New("lldp: two iNOF TLVs")
			}
			host, err := DecodeLLDPInfo(o.Info)
			if err != nil {
				return h, err
			}
			h.Host, h.Found = host, true
		}
	}
	if !h.Found {
		return h, nil
	}
	if h.Host.ID == "" {
		h.Host.ID = h.SysName
	}
	if h.Host.ID == "" {
		return h, errors.New("lldp: iNOF TLV without a host id, and no system name")
	}
	if h.Host.Role == 0 {
		h.Host.Role = RoleTarget // what an agentless host usually is
	}
	if len(h.Host.Addrs) == 0 {
		// gopacket's Info keeps only the last management address; the
		// raw values have them all.
		for _, v := range dl.Values {
			if v.Type != layers.LLDPTLVMgmtAddress || len(v.Value) < 2 {
				continue
			}
			n := int(v.Value[0]) // address string length, subtype included
			if n < 1 || 1+n > len(v.Value) {
				continue
			}
			if a, ok := netip.AddrFromSlice(v.Value[2 : 1+n]); ok {
				switch layers.IANAAddressFamily(v.Value[1]) {
				case layers.IANAAddressFamilyIPV4, layers.IANAAddressFamilyIPV6:
					h.Host.Addrs = append(h.Host.Addrs, a.Unmap())
				}
			}
		}
	}
	return h, nil
}

// idString prints a chassis or port id: MAC addresses (subtype 4 for the
// chassis, 3 for the port) in hex, other subtypes as text.
func idString(subtype byte, id []byte) string {
	if len(id) == 6 && (subtype == 4 || subtype == 3) {
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", id[0], id[1], id[2], id[3], id[4], id[5])
	}
	return string(id)
}

// lldpFields are the TLVs an iNOF LLDP TLV may carry.
var lldpFields = map[uint8]bool{TLVHostID: true, TLVRole: true, TLVNQN: true, TLVIPv4: true, TLVIPv6: true, TLVMAC: true}

// DecodeLLDPInfo decodes the content of the iNOF LLDP TLV (after OUI and
// subtype): the same TLVs as a Register message (host id, role, NQN,
// addresses, MAC), all optional. Unknown TLVs are skipped.
func DecodeLLDPInfo(b []byte) (Host, error) {
	var m Message
	var seen [16]bool
	for off := 0; off < len(b); {
		if off+2 > len(b) {
			return Host{}, fmt.Errorf("lldp iNOF TLV: offset %d: TLV header truncated", off)
		}
		t, l := b[off], int(b[off+1])
		if off+2+l > len(b) {
			return Host{}, fmt.Errorf("lldp iNOF TLV: TLV %d at offset %d: length %d runs past the end (%d)", t, off, l, len(b))
		}
		if lldpFields[t] {
			if seen[t] && !repeatable(t) {
				return Host{}, fmt.Errorf("lldp iNOF TLV: TLV %d at offset %d: repeated", t, off)
			}
			seen[t] = true
			if err := m.decodeTLV(t, b[off+2:off+2+l]); err != "" {
				return Host{}, fmt.Errorf("lldp iNOF TLV: TLV %d at offset %d: %s", t, off, err)
			}
		}
		off += 2 + l
	}
	return m.Host, nil
}

// AppendLLDPInfo appends the content of the iNOF LLDP TLV for h: what
// `lldpcli configure lldp custom-tlv oui ... subtype 1 oui-info ...`
// needs (docs/inof.md shows the bytes).
func AppendLLDPInfo(b []byte, h Host) []byte {
	m := Message{Host: h}
	enc := m.AppendTo(nil)
	return append(b, enc[HeaderLen:]...)
}

// MaxLLDPInfo is the most an organisationally specific TLV holds after
// OUI and subtype (IEEE 802.1AB: 511 - 4).
const MaxLLDPInfo = 507
