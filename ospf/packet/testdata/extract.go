//go:build ignore

// extract pulls raw OSPFv2 packets out of the pcap files written by
// capture.sh. It parses pcap, IPv4 and the few OSPF fields it selects on by
// hand, on purpose independent of package packet: the golden files it
// writes are what that package is tested against.
//
//	go run extract.go -p2p p2p.pcap -bcast bcast.pcap -out DIR [-check]
//
// Exit status 0 when every required packet was found (files written unless
// -check), 1 when something is still missing, 2 on a usage or I/O error.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	p2p := flag.String("p2p", "", "pcap of r1's point-to-point interface")
	bcast := flag.String("bcast", "", "pcap of r1's broadcast interface")
	out := flag.String("out", ".", "directory for the .bin files")
	check := flag.Bool("check", false, "only report whether everything was seen")
	flag.Parse()

	p2pPkts, err := readOSPF(*p2p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(2)
	}
	bcPkts, err := readOSPF(*bcast)
	if err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(2)
	}
	all := append(append([][]byte{}, p2pPkts...), bcPkts...)

	type want struct {
		name     string
		required bool
		pick     []byte
	}
	wants := []*want{
		{name: "frr_hello.bin", required: true, pick: last(p2pPkts, helloWithNeighbors)},
		{name: "frr_hello_bcast.bin", required: true, pick: last(bcPkts, helloDRBDR)},
		{name: "frr_dbd.bin", required: true, pick: largest(all, dbdWithHeaders)},
		{name: "frr_lsr.bin", required: true, pick: largest(all, isType(3))},
		{name: "frr_lsu_router.bin", required: true, pick: smallest(all, lsuWith(hasRouterLinks))},
		{name: "frr_lsu_te.bin", required: true, pick: smallest(all, and(from(1), lsuWith(isTEMaxBW)))},
		{name: "frr_lsu_network.bin", required: true, pick: smallest(bcPkts, lsuWith(lsaType(2)))},
		{name: "frr_lsu_summary.bin", required: true, pick: smallest(all, lsuWith(lsaType(3)))},
		{name: "frr_lsu_asbr_summary.bin", required: true, pick: smallest(bcPkts, lsuWith(lsaType(4)))},
		{name: "frr_lsu_external.bin", required: true, pick: smallest(all, lsuWith(lsaType(5)))},
		{name: "frr_lsack.bin", required: true, pick: largest(all, isType(5))},
		// FRR 8.4.4 floods all of a router's opaque LSAs (TE, Extended
		// Link, Extended Prefix, Router Information) in one LSU, so the TE
		// and Extended Prefix goldens are r1's and r2's bundle.
		{name: "frr_lsu_extprefix.bin", required: true, pick: smallest(all, and(from(2), lsuWith(opaque(7))))},
		// Extras: the tests skip what is not there.
		{name: "frr_dbd_init.bin", pick: first(all, dbdInit)},
	}
	missing := 0
	for _, w := range wants {
		if w.pick == nil {
			fmt.Println("missing", w.name)
			if w.required {
				missing++
			}
			continue
		}
		fmt.Printf("found %s (%d bytes)\n", w.name, len(w.pick))
	}
	if missing > 0 {
		os.Exit(1)
	}
	if *check {
		return
	}
	for _, w := range wants {
		if w.pick == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(*out, w.name), w.pick, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "extract:", err)
			os.Exit(2)
		}
	}
}

func first(ps [][]byte, ok func([]byte) bool) []byte {
	for _, p := range ps {
		if ok(p) {
			return p
		}
	}
	return nil
}

func last(ps [][]byte, ok func([]byte) bool) []byte {
	var r []byte
	for _, p := range ps {
		if ok(p) {
			r = p
		}
	}
	return r
}

func largest(ps [][]byte, ok func([]byte) bool) []byte {
	var r []byte
	for _, p := range ps {
		if ok(p) && len(p) > len(r) {
			r = p
		}
	}
	return r
}

func smallest(ps [][]byte, ok func([]byte) bool) []byte {
	var r []byte
	for _, p := range ps {
		if ok(p) && (r == nil || len(p) < len(r)) {
			r = p
		}
	}
	return r
}

func isType(t byte) func([]byte) bool {
	return func(p []byte) bool { return len(p) >= 24 && p[0] == 2 && p[1] == t }
}

// from: sent by router 10.255.0.n.
func from(n byte) func([]byte) bool {
	return func(p []byte) bool { return len(p) >= 24 && p[4] == 10 && p[5] == 255 && p[6] == 0 && p[7] == n }
}

func and(a, b func([]byte) bool) func([]byte) bool {
	return func(p []byte) bool { return a(p) && b(p) }
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

// readOSPF returns the OSPF packets (IP payloads of protocol 89) of an
// Ethernet pcap, trimmed to the IPv4 total length so Ethernet padding is not
// kept.
func readOSPF(path string) ([][]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if len(b) < 24 {
		return nil, nil // tcpdump has not flushed its header yet
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo = binary.LittleEndian
	default:
		switch binary.BigEndian.Uint32(b) {
		case 0xa1b2c3d4, 0xa1b23c4d:
			bo = binary.BigEndian
		default:
			return nil, fmt.Errorf("%s: not a pcap file", path)
		}
	}
	if lt := bo.Uint32(b[20:24]); lt != 1 {
		return nil, fmt.Errorf("%s: link type %d, want Ethernet", path, lt)
	}
	var out [][]byte
	for off := 24; ; {
		if off+16 > len(b) {
			break
		}
		n := int(bo.Uint32(b[off+8:]))
		if off+16+n > len(b) {
			break // record still being written
		}
		f := b[off+16 : off+16+n]
		off += 16 + n
		if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:14]) != 0x0800 {
			continue
		}
		ip := f[14:]
		ihl := int(ip[0]&0x0f) * 4
		tot := int(binary.BigEndian.Uint16(ip[2:4]))
		if ip[0]>>4 != 4 || ip[9] != 89 || ihl < 20 || tot < ihl || tot > len(ip) {
			continue
		}
		if fo := binary.BigEndian.Uint16(ip[6:8]); fo&0x3fff != 0 {
			continue // fragment
		}
		out = append(out, append([]byte(nil), ip[ihl:tot]...))
	}
	return out, nil
}
