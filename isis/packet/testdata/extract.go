//go:build ignore

// extract pulls raw IS-IS PDUs out of the pcap files written by capture.sh.
// It parses pcap and the few PDU fields it selects on by hand, on purpose
// independent of package packet: the golden files it writes are what that
// package is tested against.
//
//	go run extract.go -p2p p2p.pcap -lan lan.pcap -out DIR [-check]
//
// Exit status 0 when every required PDU was found (files written unless
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

type frame struct {
	src string // capture it came from
	pdu []byte
}

func main() {
	p2p := flag.String("p2p", "", "pcap of the point-to-point scenario")
	lan := flag.String("lan", "", "pcap of the LAN scenario")
	out := flag.String("out", ".", "directory for the .bin files")
	check := flag.Bool("check", false, "only report whether everything was seen")
	flag.Parse()

	var p2pPDUs, lanPDUs []frame
	var err error
	if p2pPDUs, err = readISIS(*p2p, "p2p"); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(2)
	}
	if lanPDUs, err = readISIS(*lan, "lan"); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(2)
	}

	type want struct {
		name     string
		required bool
		pick     []byte
	}
	wants := []*want{
		{name: "frr_p2p_iih.bin", required: true, pick: last(p2pPDUs, isUpP2PHello)},
		{name: "frr_lan_iih.bin", required: true, pick: last(lanPDUs, isLANHelloWithNeighbors)},
		{name: "frr_lsp_te.bin", required: true, pick: largest(append(append([]frame{}, p2pPDUs...), lanPDUs...), isTELSP)},
		{name: "frr_csnp.bin", required: true, pick: first(p2pPDUs, isType(25))},
		{name: "frr_psnp.bin", required: true, pick: first(append(append([]frame{}, p2pPDUs...), lanPDUs...), isType(27))},
		// Extras that widen the fuzz seeds and golden tests.
		{name: "frr_lan_csnp.bin", pick: last(lanPDUs, isType(25))},
		{name: "frr_lsp_pseudo.bin", pick: largest(lanPDUs, isPseudoLSP)},
		{name: "frr_lan_lsp.bin", pick: largest(lanPDUs, isNonPseudoLiveLSP)},
	}
	missing := 0
	for _, w := range wants {
		if w.pick == nil {
			if w.required {
				missing++
				fmt.Println("missing", w.name)
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

func first(fs []frame, ok func([]byte) bool) []byte {
	for _, f := range fs {
		if ok(f.pdu) {
			return f.pdu
		}
	}
	return nil
}

func last(fs []frame, ok func([]byte) bool) []byte {
	var r []byte
	for _, f := range fs {
		if ok(f.pdu) {
			r = f.pdu
		}
	}
	return r
}

func largest(fs []frame, ok func([]byte) bool) []byte {
	var r []byte
	for _, f := range fs {
		if ok(f.pdu) && len(f.pdu) > len(r) {
			r = f.pdu
		}
	}
	return r
}

func isType(t byte) func([]byte) bool {
	return func(p []byte) bool { return len(p) > 8 && p[4]&0x1f == t }
}

// tlvs walks the TLV area; nil if the PDU's TLVs do not parse.
func tlvs(p []byte) [][2][]byte {
	if len(p) < 10 {
		return nil
	}
	hl := int(p[1])
	var out [][2][]byte
	for i := hl; i < len(p); {
		if i+2 > len(p) {
			return nil
		}
		t, l := p[i], int(p[i+1])
		if i+2+l > len(p) {
			return nil
		}
		out = append(out, [2][]byte{{t}, p[i+2 : i+2+l]})
		i += 2 + l
	}
	return out
}

func isUpP2PHello(p []byte) bool {
	if !isType(17)(p) {
		return false
	}
	for _, tv := range tlvs(p) {
		if tv[0][0] == 240 && len(tv[1]) == 15 && tv[1][0] == 0 {
			return true
		}
	}
	return false
}

func isLANHelloWithNeighbors(p []byte) bool {
	if !isType(16)(p) {
		return false
	}
	for _, tv := range tlvs(p) {
		if tv[0][0] == 6 {
			return true
		}
	}
	return false
}

func lspLifetime(p []byte) int { return int(binary.BigEndian.Uint16(p[10:12])) }

func isTELSP(p []byte) bool {
	if !isType(20)(p) || len(p) < 27 || lspLifetime(p) == 0 {
		return false
	}
	for _, tv := range tlvs(p) {
		if tv[0][0] != 22 {
			continue
		}
		v := tv[1]
		for len(v) >= 11 {
			sl := int(v[10])
			if 11+sl > len(v) {
				break
			}
			s := v[11 : 11+sl]
			for len(s) >= 2 && 2+int(s[1]) <= len(s) {
				if s[0] == 9 {
					return true
				}
				s = s[2+int(s[1]):]
			}
			v = v[11+sl:]
		}
	}
	return false
}

func isPseudoLSP(p []byte) bool {
	return isType(20)(p) && len(p) >= 27 && lspLifetime(p) > 0 && p[18] != 0
}

func isNonPseudoLiveLSP(p []byte) bool {
	return isType(20)(p) && len(p) >= 27 && lspLifetime(p) > 0 && p[18] == 0
}

// readISIS returns the IS-IS PDUs of an Ethernet pcap, 802.3 header and LLC
// stripped, trimmed to the 802.3 length so Ethernet padding is not kept.
func readISIS(path, tag string) ([]frame, error) {
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
	var out []frame
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
		if len(f) < 17 {
			continue
		}
		l := int(binary.BigEndian.Uint16(f[12:14]))
		if l > 1500 || f[14] != 0xfe || f[15] != 0xfe || f[16] != 0x03 {
			continue
		}
		if 14+l > len(f) {
			continue
		}
		pdu := f[17 : 14+l]
		if len(pdu) < 8 || pdu[0] != 0x83 {
			continue
		}
		out = append(out, frame{src: tag, pdu: append([]byte(nil), pdu...)})
	}
	return out, nil
}
