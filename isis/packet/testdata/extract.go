//go:build ignore

// extract pulls raw IS-IS PDUs out of the pcap files written by capture.sh.
// It parses the few PDU fields it selects on by hand, on purpose
// independent of package packet: the golden files it writes are what that
// package is tested against (internal/igp/goldencap reads the pcap files
// and writes the files).
//
//	go run extract.go -p2p p2p.pcap -lan lan.pcap -out DIR [-check]
//	go run extract.go -mt mt.pcap -out DIR [-check]     (capture_mt.sh)
//
// Exit status 0 when every required PDU was found (files written unless
// -check), 1 when something is still missing, 2 on a usage or I/O error.
package main

import (
	"encoding/binary"
	"os"
	"slices"

	gc "github.com/fared/fared/internal/igp/goldencap"
)

func main() {
	if slices.Contains(os.Args[1:], "-mt") {
		mtMain()
		return
	}
	captures := []gc.Capture{
		{Flag: "p2p", Usage: "pcap of the point-to-point scenario"},
		{Flag: "lan", Usage: "pcap of the LAN scenario"},
	}
	gc.Main(isisPDU, captures, func(pkts map[string][][]byte) []gc.Want {
		p2p, lan := pkts["p2p"], pkts["lan"]
		all := gc.Concat(p2p, lan)
		return []gc.Want{
			{Name: "frr_p2p_iih.bin", Required: true, Pick: gc.Last(p2p, isUpP2PHello)},
			{Name: "frr_lan_iih.bin", Required: true, Pick: gc.Last(lan, isLANHelloWithNeighbors)},
			{Name: "frr_lsp_te.bin", Required: true, Pick: gc.Largest(all, isTELSP)},
			{Name: "frr_csnp.bin", Required: true, Pick: gc.First(p2p, isType(25))},
			{Name: "frr_psnp.bin", Required: true, Pick: gc.First(all, isType(27))},
			// Extras that widen the fuzz seeds and golden tests.
			{Name: "frr_lan_csnp.bin", Pick: gc.Last(lan, isType(25))},
			{Name: "frr_lsp_pseudo.bin", Pick: gc.Largest(lan, isPseudoLSP)},
			{Name: "frr_lan_lsp.bin", Pick: gc.Largest(lan, isNonPseudoLiveLSP)},
		}
	})
}

// mtMain picks capture_mt.sh's multi-topology PDUs (RFC 5120): a P2P IIH
// with TLV 229 and 3-way state up, and the largest live LSP holding TLVs
// 222 and 237.
func mtMain() {
	gc.Main(isisPDU, []gc.Capture{{Flag: "mt", Usage: "pcap of the multi-topology scenario"}}, func(pkts map[string][][]byte) []gc.Want {
		mt := pkts["mt"]
		return []gc.Want{
			{Name: "frr_mt_p2p_iih.bin", Required: true, Pick: gc.Last(mt, gc.And(isUpP2PHello, hasTLVs(229)))},
			{Name: "frr_mt_lsp.bin", Required: true, Pick: gc.Largest(mt, gc.And(isNonPseudoLiveLSP, hasTLVs(222, 237)))},
		}
	})
}

// hasTLVs selects a PDU that holds a TLV of each of types.
func hasTLVs(types ...byte) func([]byte) bool {
	return func(p []byte) bool {
		seen := map[byte]bool{}
		for _, tv := range tlvs(p) {
			seen[tv[0][0]] = true
		}
		for _, t := range types {
			if !seen[t] {
				return false
			}
		}
		return true
	}
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

// isisPDU is the IS-IS PDU of an Ethernet frame, 802.3 header and LLC
// stripped, trimmed to the 802.3 length so Ethernet padding is not kept.
func isisPDU(f []byte) []byte {
	if len(f) < 17 {
		return nil
	}
	l := int(binary.BigEndian.Uint16(f[12:14]))
	if l > 1500 || f[14] != 0xfe || f[15] != 0xfe || f[16] != 0x03 || 14+l > len(f) {
		return nil
	}
	pdu := f[17 : 14+l]
	if len(pdu) < 8 || pdu[0] != 0x83 {
		return nil
	}
	return pdu
}
