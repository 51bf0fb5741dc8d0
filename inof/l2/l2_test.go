package l2

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/fared/fared/internal/testvec"
)

// The Register of docs/inof.md's example, byte by byte from the spec.
const registerHex = `01 01 0023 00000007
	01 02 6831
	02 01 01
	06 06 020000000001
	04 04 0a000001
	07 04 00000bb8`

func TestRegisterGolden(t *testing.T) {
	m := Message{Type: TypeRegister, Seq: 7, Hold: 3 * time.Second, Host: Host{
		ID: "h1", Role: RoleInitiator, MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1},
		Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.1")},
	}}
	want := testvec.Hex(t, registerHex)
	if got := m.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n got %x\nwant %x", got, want)
	}
	d, err := Decode(append(want, 0, 0, 0)) // Ethernet padding after the length
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d, m) {
		t.Fatalf("decoded %+v\nwant    %+v", d, m)
	}
}

func TestRoundTrip(t *testing.T) {
	sw := netip.MustParseAddr("10.255.0.3")
	msgs := []Message{
		{Type: TypeRegister, Seq: 1, Hold: 1500 * time.Millisecond, Host: Host{ID: "tgt-1", Role: RoleTarget,
			NQN:   "nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
			Addrs: []netip.Addr{netip.MustParseAddr("10.1.1.1"), netip.MustParseAddr("2001:db8::1")}}},
		{Type: TypeRegisterAck, Seq: 1, Status: StatusOK, Switch: sw, SwitchName: "leaf1", Port: "h1-1", Hold: time.Second, Nonce: 0xdeadbeef},
		{Type: TypeKeepalive, Seq: 2, Host: Host{ID: "tgt-1"}},
		{Type: TypeKeepaliveAck, Seq: 2, Status: StatusUnknownHost, Nonce: 9},
		{Type: TypeDeregister, Seq: 3, Host: Host{ID: "tgt-1"}},
		{Type: TypeDeregisterAck, Seq: 3, Status: StatusOK},
		{Type: TypeNotify, Seq: 4, Event: EventUnreachable, Source: SourceLLDP, Switch: sw, SwitchName: "leaf2", Port: "t1-1",
			Zones: []string{"default", "z1"}, Nonce: 5,
			Host: Host{ID: "t1", Role: RoleBoth, MAC: net.HardwareAddr{2, 1, 2, 3, 4, 5}, Addrs: []netip.Addr{netip.MustParseAddr("fd00::5")}}},
		{Type: TypeNotifyAck, Seq: 4, Host: Host{ID: "h1"}},
	}
	for _, m := range msgs {
		b := m.AppendTo(nil)
		if m.Len() != len(b) {
			t.Fatalf("%s: Len %d, encoded %d", m.Type, m.Len(), len(b))
		}
		d, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", m.Type, err)
		}
		if !reflect.DeepEqual(d, m) {
			t.Fatalf("%s: decoded %+v\nwant %+v", m.Type, d, m)
		}
	}
}

// Bad input: every rejection says where, and names the TLV.
func TestDecodeErrors(t *testing.T) {
	reg := testvec.Hex(t, registerHex)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), reg...)) }
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"short", reg[:5], "offset 0: 5 bytes, shorter than the 8-byte header"},
		{"version", mod(func(b []byte) []byte { b[0] = 2; return b }), "offset 0: version 2, want 1"},
		{"type", mod(func(b []byte) []byte { b[1] = 99; return b }), "offset 1: unknown message type 99"},
		{"length past end", mod(func(b []byte) []byte { b[3] = 0x40; return b }), "register: offset 2: length 64 outside 8..35"},
		{"length below header", mod(func(b []byte) []byte { b[3] = 4; return b }), "offset 2: length 4 outside"},
		{"tlv overruns", mod(func(b []byte) []byte { b[9] = 40; return b }), "TLV 1 at offset 8: length 40 runs past the message end (35)"},
		{"bad role", mod(func(b []byte) []byte { b[14] = 7; return b }), "TLV 2 at offset 12: role 7, want 1..3"},
		{"bad mac length", mod(func(b []byte) []byte { b[16] = 5; b[3]--; return b[:len(b)-1] }), "TLV 6 at offset 15"},
		{"control char", mod(func(b []byte) []byte { b[11] = 0x07; return b }), "TLV 1 at offset 8: control character 0x07 at value byte 1"},
		{"missing hold", mod(func(b []byte) []byte { b[3] -= 6; return b[:len(b)-6] }), "register: TLV 7 at offset 29: required TLV missing"},
		{"repeated id", append(testvec.Hex(t, "01 03 0010 00000001 01 02 6831 01 02 6832"), 0), "keepalive: TLV 1 at offset 12: repeated"},
		{"zero hold", mod(func(b []byte) []byte { copy(b[31:], []byte{0, 0, 0, 0}); return b }), "TLV 7 at offset 29: hold time 0"},
	}
	for _, c := range cases {
		_, err := Decode(c.b)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: error %v (%T), want a *DecodeError", c.name, err, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, want it to contain %q", c.name, err, c.want)
		}
	}
	// An unknown TLV type is skipped, not an error.
	b := testvec.Hex(t, "01 03 0011 00000001 01 02 6831 63 03 010203")
	m, err := Decode(b)
	if err != nil || m.Host.ID != "h1" {
		t.Fatalf("unknown TLV: %+v %v", m, err)
	}
}

func TestFrame(t *testing.T) {
	src := net.HardwareAddr{2, 0, 0, 0, 0, 9}
	m := Message{Type: TypeKeepalive, Seq: 77, Host: Host{ID: "host-a"}}
	f, err := EncodeFrame(GroupMAC, src, &m)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != MinFrame {
		t.Fatalf("frame of %d bytes, want padding to %d", len(f), MinFrame)
	}
	want := testvec.Hex(t, "0180c200000e 020000000009 88b5 01 03 0010 0000004d 01 06 686f73742d61")
	if !bytes.Equal(f[:len(want)], want) {
		t.Fatalf("frame\n got %x\nwant %x", f, want)
	}
	d, err := DecodeFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	if d.Src.String() != src.String() || d.Dst.String() != GroupMAC.String() || !reflect.DeepEqual(d.Message, m) {
		t.Fatalf("decoded %+v", d)
	}
	// gopacket's generic decoder finds the layer after Ethernet.
	pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	l, _ := pkt.Layer(LayerTypeINOF).(*Layer)
	if l == nil || l.Host.ID != "host-a" || len(l.LayerPayload()) != MinFrame-len(want) {
		t.Fatalf("gopacket layers %v", pkt.Layers())
	}
	// A malformed message in a frame is a DecodeError, offsets from the
	// iNOF header.
	f[14+9] = 200
	var de *DecodeError
	if _, err := DecodeFrame(f); !errors.As(err, &de) || de.Offset != 8 || de.TLV != TLVHostID {
		t.Fatalf("malformed frame: %v", err)
	}
	// Another EtherType.
	g := append([]byte(nil), want...)
	g[12], g[13] = 0x08, 0x06
	if _, err := DecodeFrame(g); err == nil {
		t.Fatal("ARP frame accepted")
	}
	// Too long for one frame.
	big := Message{Type: TypeNotify, Event: EventJoin, Host: Host{ID: "x"}, Switch: netip.MustParseAddr("1.2.3.4")}
	for i := 0; i < 10; i++ {
		big.Zones = append(big.Zones, strings.Repeat("z", 200))
	}
	if _, err := EncodeFrame(GroupMAC, src, &big); err == nil {
		t.Fatal("a 2 kB message was framed")
	}
}

// lldpd 1.0.16 with the iNOF TLV configured by lldpcli (testdata/capture.sh).
// ParseOUI takes the three separators and two hex digits a byte, nothing
// looser ("0g" and "+1" are not bytes).
func TestParseOUI(t *testing.T) {
	for _, s := range []string{"02:46:44", "02-46-44", "02,46,44"} {
		if o, err := ParseOUI(s); err != nil || o != DefaultOUI {
			t.Errorf("%s: %x, %v", s, o, err)
		}
	}
	for _, s := range []string{"02:46", "02:46:44:01", "2:46:44", "0g:46:44", "+1:46:44", ""} {
		if o, err := ParseOUI(s); err == nil {
			t.Errorf("%q accepted as %x", s, o)
		}
	}
}

func TestLLDPFromLLDPD(t *testing.T) {
	b, err := os.ReadFile("testdata/lldpd_custom_tlv.bin")
	if err != nil {
		t.Fatal(err)
	}
	h, err := DecodeLLDP(b, DefaultOUI)
	if err != nil {
		t.Fatal(err)
	}
	want := LLDPHost{Found: true, TTL: 4 * time.Second, Src: net.HardwareAddr{0xbe, 0xcc, 0xc1, 0x1d, 0xc3, 0xa2}, ChassisID: "be:cc:c1:1d:c3:a2", PortID: "be:cc:c1:1d:c3:a2", SysName: "tgt1",
		Host: Host{ID: "tgt1", Role: RoleTarget, NQN: "nqn.2014-08.org",
			// No address in the TLV: the two management addresses.
			Addrs: []netip.Addr{netip.MustParseAddr("10.9.0.1"), netip.MustParseAddr("fd00::1")}}}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("decoded %+v\nwant    %+v", h, want)
	}
	// The bytes given to lldpcli are what AppendLLDPInfo makes.
	info := AppendLLDPInfo(nil, Host{ID: "tgt1", Role: RoleTarget, NQN: "nqn.2014-08.org"})
	if !bytes.Contains(b, append([]byte{0x02, 0x46, 0x44, LLDPSubtype}, info...)) {
		t.Fatalf("AppendLLDPInfo %x is not in lldpd's frame", info)
	}
	// Another OUI: the TLV is not ours.
	if h, err := DecodeLLDP(b, [3]byte{0, 0x90, 0x69}); err != nil || h.Found {
		t.Fatalf("foreign OUI: %+v %v", h, err)
	}

	b, err = os.ReadFile("testdata/lldpd_shutdown.bin")
	if err != nil {
		t.Fatal(err)
	}
	h, err = DecodeLLDP(b, DefaultOUI)
	if err != nil || h.Found || h.TTL != 0 || h.ChassisID != "be:cc:c1:1d:c3:a2" {
		t.Fatalf("shutdown LLDPDU: %+v %v", h, err)
	}
}

func TestLLDPInfoErrors(t *testing.T) {
	for _, c := range []struct {
		b    string
		want string
	}{
		{"01", "offset 0: TLV header truncated"},
		{"01 05 6869", "TLV 1 at offset 0: length 5 runs past the end (4)"},
		{"01 02 6869 02 01 09", "TLV 2 at offset 4: role 9"},
		{"01 02 6869 01 02 6869", "TLV 1 at offset 4: repeated"},
		{"04 03 0a0000", "TLV 4 at offset 0: length 3, want 4"},
	} {
		if _, err := DecodeLLDPInfo(testvec.Hex(t, c.b)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.b, err, c.want)
		}
	}
	// Addresses in the TLV win over management addresses; hold and
	// switch TLVs mean nothing here and are skipped.
	h, err := DecodeLLDPInfo(testvec.Hex(t, "01 01 78 04 04 0a000005 07 04 00000001"))
	if err != nil || h.ID != "x" || len(h.Addrs) != 1 || h.Addrs[0].String() != "10.0.0.5" {
		t.Fatalf("%+v %v", h, err)
	}
}
