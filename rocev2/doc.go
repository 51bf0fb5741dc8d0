// Package rocev2 is the RoCEv2 wire codec: the InfiniBand transport headers
// that ride on UDP port 4791 (BTH and the extension headers RETH, AETH,
// ImmDt, DETH, AtomicETH, AtomicAckETH, IETH), the congestion notification
// packet (CNP), and the invariant CRC (ICRC) that ends every packet.
//
// The codec is plain functions over byte slices, in the style of the other
// packet codecs of fared: Decode(b) (T, error) and AppendTo(b) []byte, with
// typed errors that say which header and which offset is at fault. The
// gopacket layers in layers.go wrap the same code for tools (pcap readers,
// tests) and are registered on UDP 4791 at init.
//
// The ICRC covers the IP and UDP headers with their variant fields masked
// (IPv4 TOS, TTL and checksum; IPv6 traffic class, flow label and hop
// limit; the UDP checksum), so it survives routing but not a change of the
// IPv4 identification field. A sender that wants a valid ICRC must choose
// the IP ID itself: with a plain UDP socket the kernel picks it after the
// ICRC has been computed. fared's senders use raw sockets (IP_HDRINCL).
package rocev2

// UDPPort is the RoCEv2 destination port (IANA "roce").
const UDPPort = 4791
