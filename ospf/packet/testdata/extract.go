//go:build ignore

// extract pulls raw OSPFv2 packets out of the pcap files written by
// capture.sh. It parses IPv4 and the few OSPF fields it selects on by
// hand, on purpose independent of package packet: the golden files it
// writes are what that package is tested against (internal/igp/goldencap
// reads the pcap files and writes the files).
//
//	go run extract.go -p2p p2p.pcap -bcast bcast.pcap -out DIR [-check]
//
// Exit status 0 when every required packet was found (files written unless
// -check), 1 when something is still missing, 2 on a usage or I/O error.
package main

import (
	"encoding/binary"

	gc "github.com/fared/fared/internal/igp/goldencap"
)

func main() {
	captures := []gc.Capture{
		{Flag: "p2p", Usage: "pcap of r1's point-to-point interface"},
		{Flag: "bcast", Usage: "pcap of r1's broadcast interface"},
	}
	gc.Main(ospfPacket, captures, func(pkts map[string][][]byte) []gc.Want {
		p2p, bcast := pkts["p2p"], pkts["bcast"]
		all := gc.Concat(p2p, bcast)
		return []gc.Want{
			{Name: "frr_hello.bin", Required: true, Pick: gc.Last(p2p, helloWithNeighbors)},
			{Name: "frr_hello_bcast.bin", Required: true, Pick: gc.Last(bcast, helloDRBDR)},
			{Name: "frr_dbd.bin", Required: true, Pick: gc.Largest(all, dbdWithHeaders)},
			{Name: "frr_lsr.bin", Required: true, Pick: gc.Largest(all, isType(3))},
			{Name: "frr_lsu_router.bin", Required: true, Pick: gc.Smallest(all, lsuWith(hasRouterLinks))},
			{Name: "frr_lsu_te.bin", Required: true, Pick: gc.Smallest(all, gc.And(from(1), lsuWith(isTEMaxBW)))},
			{Name: "frr_lsu_network.bin", Required: true, Pick: gc.Smallest(bcast, lsuWith(lsaType(2)))},
			{Name: "frr_lsu_summary.bin", Required: true, Pick: gc.Smallest(all, lsuWith(lsaType(3)))},
			{Name: "frr_lsu_asbr_summary.bin", Required: true, Pick: gc.Smallest(bcast, lsuWith(lsaType(4)))},
			{Name: "frr_lsu_external.bin", Required: true, Pick: gc.Smallest(all, lsuWith(lsaType(5)))},
			{Name: "frr_lsack.bin", Required: true, Pick: gc.Largest(all, isType(5))},
			// FRR 8.4.4 floods all of a router's opaque LSAs (TE, Extended
			// Link, Extended Prefix, Router Information) in one LSU, so the TE
			// and Extended Prefix goldens are r1's and r2's bundle.
			{Name: "frr_lsu_extprefix.bin", Required: true, Pick: gc.Smallest(all, gc.And(from(2), lsuWith(opaque(7))))},
			// Extras: the tests skip what is not there.
			{Name: "frr_dbd_init.bin", Pick: gc.First(all, dbdInit)},
		}
	})
}

func isType(t byte) func([]byte) bool {
	return func(p []byte) bool { return len(p) >= 24 && p[0] == 2 && p[1] == t }
}

// from: sent by router 10.255.0.n.
func from(n byte) func([]byte) bool {
	return func(p []byte) bool { return len(p) >= 24 && p[4] == 10 && p[5] == 255 && p[6] == 0 && p[7] == n }
}

func helloWithNeighbors(p []byte) bool { return isType(1)(p) && len(p) >= 48 }

func helloDRBDR(p []byte) bool {
	return isType(1)(p) && len(p) >= 48 &&
		binary.BigEndian.Uint32(p[36:]) != 0 && binary.BigEndian.Uint32(p[40:]) != 0
}

func dbdWithHeaders(p []byte) bool { return isType(2)(p) && len(p) >= 32+20 }
func dbdInit(p []byte) bool        { return isType(2)(p) && len(p) == 32 && p[30]&4 != 0 }

// lsas splits an LSU into its LSAs; nil if it does not parse.
func lsas(p []byte) [][]byte {
	if !isType(4)(p) || len(p) < 28 {
		return nil
	}
	n := int(binary.BigEndian.Uint32(p[24:]))
	var out [][]byte
	for i, off := 0, 28; i < n; i++ {
		if off+20 > len(p) {
			return nil
		}
		l := int(binary.BigEndian.Uint16(p[off+18:]))
		if l < 20 || off+l > len(p) {
			return nil
		}
		out = append(out, p[off:off+l])
		off += l
	}
	return out
}

func lsuWith(ok func([]byte) bool) func([]byte) bool {
	return func(p []byte) bool {
		for _, l := range lsas(p) {
			if ok(l) {
				return true
			}
		}
		return false
	}
}

func lsaType(t byte) func([]byte) bool {
	return func(l []byte) bool { return l[3] == t && age(l) < 3600 }
}

func age(l []byte) int { return int(binary.BigEndian.Uint16(l)) }

func hasRouterLinks(l []byte) bool {
	return lsaType(1)(l) && len(l) >= 24 && binary.BigEndian.Uint16(l[22:]) >= 2
}

func opaque(ot byte) func([]byte) bool {
	return func(l []byte) bool { return l[3] == 10 && l[4] == ot && age(l) < 3600 && len(l) > 20 }
}

// isTEMaxBW: a TE LSA (opaque type 1) with a Link TLV (2) carrying a
// Maximum Bandwidth sub-TLV (6).
func isTEMaxBW(l []byte) bool {
	if !opaque(1)(l) {
		return false
	}
	for _, tv := range tlvs(l[20:]) {
		if tv.t != 2 {
			continue
		}
		for _, s := range tlvs(tv.v) {
			if s.t == 6 && len(s.v) == 4 {
				return true
			}
		}
	}
	return false
}

type tlv struct {
	t uint16
	v []byte
}

func tlvs(b []byte) []tlv {
	var out []tlv
	for len(b) >= 4 {
		t, n := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		if 4+n > len(b) {
			return out
		}
		out = append(out, tlv{t, b[4 : 4+n]})
		b = b[min(len(b), 4+(n+3)&^3):]
	}
	return out
}

// ospfPacket is the OSPF packet (the IP payload of protocol 89) of an
// Ethernet frame, trimmed to the IPv4 total length so Ethernet padding is
// not kept; nil for anything else and for fragments.
func ospfPacket(f []byte) []byte {
	if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:14]) != 0x0800 {
		return nil
	}
	ip := f[14:]
	ihl := int(ip[0]&0x0f) * 4
	tot := int(binary.BigEndian.Uint16(ip[2:4]))
	if ip[0]>>4 != 4 || ip[9] != 89 || ihl < 20 || tot < ihl || tot > len(ip) {
		return nil
	}
	if fo := binary.BigEndian.Uint16(ip[6:8]); fo&0x3fff != 0 {
		return nil // fragment
	}
	return ip[ihl:tot]
}
