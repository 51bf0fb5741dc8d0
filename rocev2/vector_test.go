package rocev2

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"

	"github.com/fared/fared/internal/testvec"
)

// cnpCapture is the IP packet of a CNP sent by a ConnectX-4 Lx (scapy's
// RoCE tests, "RoCE CNP captured on ConnectX-4 Lx"; the seed README's
// vector): TOS 0xc2, UDP source port 0 and checksum 0, BTH
// 81 00 ff ff 40 00 01 18 00 00 00 00, 16 zero bytes, ICRC 82 fd 00 2a.
const cnpCapture = `
45c2 003c 718c 4000 4011 9161 0a00 1101 0a00 1201
0000 12b7 0028 0000
8100 ffff 4000 0118 0000 0000
0000 0000 0000 0000 0000 0000 0000 0000
82fd 002a`

// TestCNPVector: the hardware CNP is reproduced byte for byte, its ICRC
// included, from its field values.
func TestCNPVector(t *testing.T) {
	want := testvec.Hex(t, cnpCapture)
	f := Frame{Src: netip.MustParseAddr("10.0.17.1"), Dst: netip.MustParseAddr("10.0.18.1"),
		TOS: 0xc2, TTL: 64, ID: 0x718c, DF: true, SrcPort: 0}
	p := NewCNP(0x118)
	got := f.Append(nil, &p)
	if !bytes.Equal(got, want) {
		t.Fatalf("CNP\n got % x\nwant % x", got, want)
	}
	if err := VerifyICRC(want); err != nil {
		t.Fatal(err)
	}
	c, _ := ICRC(want)
	if c != 0x2a00fd82 {
		t.Fatalf("ICRC register %08x", c)
	}
	gf, gp, err := DecodeIP(want)
	if err != nil {
		t.Fatal(err)
	}
	if gp.BTH.Opcode != CNP || !gp.BTH.BECN || gp.BTH.FECN || gp.BTH.PKey != 0xFFFF || gp.BTH.DestQP != 0x118 || gp.BTH.PSN != 0 || len(gp.Payload) != CNPLen {
		t.Fatalf("decoded %+v", gp)
	}
	if gf.TOS != 0xc2 || gf.ID != 0x718c || gf.SrcPort != 0 || gf.Dst != f.Dst {
		t.Fatalf("frame %+v", gf)
	}
}

// TestUCSendVector: scapy's UC SEND_ONLY example (migreq, pad count 2,
// ICRC 0x78f353f3 read big-endian from the wire). The IPv4 and UDP
// checksums scapy computed (0xb4d5, 0xaca2) check our framing; the UDP
// checksum is masked in the ICRC, so our zero checksum gives the same ICRC.
func TestUCSendVector(t *testing.T) {
	payload := []byte("F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P")
	f := Frame{Src: netip.MustParseAddr("192.168.0.7"), Dst: netip.MustParseAddr("192.168.0.7"),
		TOS: 1, TTL: 64, ID: 1144, DF: true, SrcPort: 49152}
	p := Packet{BTH: BTH{Opcode: UCSendOnly, MigReq: true, PKey: 0xffff, DestQP: 211, PSN: 13571856}, Payload: payload}
	ip := f.Append(nil, &p)
	if len(ip) != 64 {
		t.Fatalf("length %d, want 64", len(ip))
	}
	if c := binary.BigEndian.Uint16(ip[10:]); c != 0xb4d5 {
		t.Errorf("IPv4 checksum %04x, scapy says b4d5", c)
	}
	if ip[29] != 0x60 { // SE=0 M=1 PadCnt=2 TVer=0
		t.Errorf("BTH byte 1 %02x, want 60", ip[29])
	}
	if got := binary.BigEndian.Uint32(ip[60:]); got != 0x78f353f3 {
		t.Errorf("ICRC on the wire %08x, scapy says 78f353f3", got)
	}
	binary.BigEndian.PutUint16(ip[26:], 0xaca2)
	if err := VerifyICRC(ip); err != nil {
		t.Errorf("with scapy's UDP checksum: %v", err)
	}
	_, gp, err := DecodeIP(ip)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gp.Payload, payload) || gp.BTH.PadCount != 2 || !gp.BTH.MigReq {
		t.Fatalf("decoded %+v", gp)
	}
}

// refICRC is the ICRC computed the slow, literal way: copy the packet,
// set the masked fields to ones, prepend eight 0xFF bytes, CRC-32 it all.
func refICRC(ip []byte) uint32 {
	m := append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, ip[:len(ip)-4]...)
	x := m[8:]
	var udp int
	if x[0]>>4 == 4 {
		x[1], x[8], x[10], x[11] = 0xFF, 0xFF, 0xFF, 0xFF
		udp = 20
	} else {
		x[0] |= 0x0F
		x[1], x[2], x[3], x[7] = 0xFF, 0xFF, 0xFF, 0xFF
		udp = 40
	}
	x[udp+6], x[udp+7] = 0xFF, 0xFF
	x[udp+8+4] = 0xFF
	return crc32IEEE(m)
}

// crc32IEEE is a bitwise CRC-32 (reflected, polynomial 0xEDB88320), so the
// reference shares no code with the table-driven one under test.
func crc32IEEE(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xEDB88320
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

// TestICRCIPv6: the IPv6 mask (traffic class, flow label, hop limit) and a
// change of those fields in transit.
func TestICRCIPv6(t *testing.T) {
	f := Frame{Src: netip.MustParseAddr("fd00::1"), Dst: netip.MustParseAddr("fd00::2"), TOS: 0x68, TTL: 7, Flow: 0xabcde, SrcPort: 1234}
	p := Packet{BTH: BTH{Opcode: UCWriteOnlyImm, PKey: 0xffff, DestQP: 0x123456, PSN: 77}, RETH: RETH{VA: 1, RKey: 2, Length: 5}, ImmDt: ImmDt{Data: 9}, Payload: []byte("hello")}
	ip := f.Append(nil, &p)
	if got, want := binary.LittleEndian.Uint32(ip[len(ip)-4:]), refICRC(ip); got != want {
		t.Fatalf("ICRC %08x, reference %08x", got, want)
	}
	if _, _, err := DecodeIP(ip); err != nil {
		t.Fatal(err)
	}
	// A router rewrites traffic class, flow label and hop limit, and
	// fixes the UDP checksum: still valid.
	ip[0], ip[1], ip[2], ip[3], ip[7] = 0x6b, 0x31, 0x23, 0x45, 1
	binary.BigEndian.PutUint16(ip[46:], 0x1234)
	if err := VerifyICRC(ip); err != nil {
		t.Fatal(err)
	}
	// The payload is covered.
	ip[len(ip)-6] ^= 1
	if err := VerifyICRC(ip); !errors.Is(err, ErrBadICRC) {
		t.Fatalf("flipped payload bit: %v", err)
	}
	// IPv4: TOS, TTL and checksum are masked; the ID is not.
	f4 := Frame{Src: netip.MustParseAddr("10.1.1.1"), Dst: netip.MustParseAddr("10.2.2.2"), TTL: 64, ID: 7}
	ip = f4.Append(nil, &p)
	if got, want := binary.LittleEndian.Uint32(ip[len(ip)-4:]), refICRC(ip); got != want {
		t.Fatalf("IPv4 ICRC %08x, reference %08x", got, want)
	}
	ip[1], ip[8], ip[10], ip[11] = 0xb8, 3, 0x12, 0x34
	ip[32] = 0xC0 // FECN and BECN set on the way
	if err := VerifyICRC(ip); err != nil {
		t.Fatal(err)
	}
	ip[5] = 8
	if err := VerifyICRC(ip); !errors.Is(err, ErrBadICRC) {
		t.Fatalf("changed IP ID: %v", err)
	}
}
