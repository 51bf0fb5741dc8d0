package rocev2

import (
	"encoding/binary"
	"hash/crc32"
)

// ICRCLen is the length of the invariant CRC that ends every packet.
const ICRCLen = 4

// IP header lengths the ICRC code handles.
const (
	IPv4HeaderLen = 20
	IPv6HeaderLen = 40
	UDPHeaderLen  = 8
)

// crcAfterLRH is the CRC-32 register after the eight 0xFF bytes that stand
// for the (absent) InfiniBand LRH, from the standard initial value: every
// ICRC starts from it.
var crcAfterLRH = ^crc32.Update(0, crc32.IEEETable, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})

// ICRC computes the invariant CRC of a RoCEv2 packet. ip starts at the IP
// header (IPv4 without options or IPv6 without extension headers) and ends
// with the packet's 4 ICRC bytes, whose content is ignored. The fields a
// router may change are masked to ones: IPv4 TOS, TTL and header checksum;
// IPv6 traffic class, flow label and hop limit; the UDP checksum; and BTH
// byte 4 (FECN, BECN and reserved bits).
func ICRC(ip []byte) (uint32, error) {
	hl, err := ipUDPLen(ip)
	if err != nil {
		return 0, err
	}
	if len(ip) < hl+BTHLen+ICRCLen {
		return 0, errf(KindTruncated, "ICRC", len(ip), "packet of %d bytes has no room for BTH and ICRC after %d bytes of IP/UDP", len(ip), hl)
	}
	// The masked fields are fed from ones instead of the packet: no copy
	// (a stack copy would escape through crc32's function pointers).
	up := func(c uint32, b []byte) uint32 { return crc32.Update(c, crc32.IEEETable, b) }
	c := ^crcAfterLRH
	if ip[0]>>4 == 4 {
		c = up(c, ip[0:1])
		c = up(c, ones[:1]) // TOS
		c = up(c, ip[2:8])
		c = up(c, ones[:1]) // TTL
		c = up(c, ip[9:10])
		c = up(c, ones[:2]) // header checksum
		c = up(c, ip[12:hl-2])
	} else {
		c = up(c, v6First[:]) // version 6 kept, traffic class high nibble masked
		c = up(c, ones[:3])   // traffic class and flow label
		c = up(c, ip[4:7])
		c = up(c, ones[:1]) // hop limit
		c = up(c, ip[8:hl-2])
	}
	c = up(c, ones[:2]) // UDP checksum
	c = up(c, ip[hl:hl+4])
	c = up(c, ones[:1]) // BTH byte 4: FECN, BECN, reserved
	c = up(c, ip[hl+5:len(ip)-ICRCLen])
	return c, nil
}

var (
	ones    = [4]byte{0xFF, 0xFF, 0xFF, 0xFF}
	v6First = [1]byte{0x6F}
)

// ipUDPLen checks the IP version and the protocol (UDP, no options or
// extension headers) and returns the length of IP plus UDP headers.
func ipUDPLen(ip []byte) (int, error) {
	if len(ip) < 1 {
		return 0, errf(KindTruncated, "IP", 0, "empty packet")
	}
	switch ip[0] >> 4 {
	case 4:
		if len(ip) < IPv4HeaderLen+UDPHeaderLen {
			return 0, errf(KindTruncated, "IPv4", 0, "%d bytes, need %d for IPv4 and UDP", len(ip), IPv4HeaderLen+UDPHeaderLen)
		}
		if ihl := int(ip[0]&0x0F) * 4; ihl != IPv4HeaderLen {
			return 0, errf(KindBadIP, "IPv4", 0, "header length %d: options are not supported", ihl)
		}
		if ip[9] != 17 {
			return 0, errf(KindBadIP, "IPv4", 9, "protocol %d, want UDP (17)", ip[9])
		}
		return IPv4HeaderLen + UDPHeaderLen, nil
	case 6:
		if len(ip) < IPv6HeaderLen+UDPHeaderLen {
			return 0, errf(KindTruncated, "IPv6", 0, "%d bytes, need %d for IPv6 and UDP", len(ip), IPv6HeaderLen+UDPHeaderLen)
		}
		if ip[6] != 17 {
			return 0, errf(KindBadIP, "IPv6", 6, "next header %d, want UDP (17)", ip[6])
		}
		return IPv6HeaderLen + UDPHeaderLen, nil
	}
	return 0, errf(KindBadIP, "IP", 0, "version %d", ip[0]>>4)
}

// PutICRC computes the ICRC of ip (see ICRC) and writes it into its last
// four bytes, in the order it travels (least significant byte first).
func PutICRC(ip []byte) error {
	c, err := ICRC(ip)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(ip[len(ip)-ICRCLen:], c)
	return nil
}

// VerifyICRC checks the ICRC at the end of ip.
func VerifyICRC(ip []byte) error {
	c, err := ICRC(ip)
	if err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(ip[len(ip)-ICRCLen:]); got != c {
		return errf(KindBadICRC, "ICRC", len(ip)-ICRCLen, "got %08x, computed %08x", got, c)
	}
	return nil
}
