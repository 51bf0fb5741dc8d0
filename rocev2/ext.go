package rocev2

import (
	"encoding/binary"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// Extension header lengths.
const (
	RETHLen         = 16
	AETHLen         = 4
	ImmDtLen        = 4
	DETHLen         = 8
	AtomicETHLen    = 28
	AtomicAckETHLen = 8
	IETHLen         = 4
	CNPLen          = 16 // the reserved bytes that pad a CNP
)

// RETH is the RDMA Extended Transport Header: the target of an RDMA write
// or read.
type RETH struct {
	VA     uint64 // virtual address
	RKey   uint32
	Length uint32 // DMA length of the whole message
}

// DecodeRETH parses b[:16].
func DecodeRETH(b []byte) (RETH, error) {
	if len(b) < RETHLen {
		return RETH{}, errf(KindTruncated, "RETH", 0, "%d bytes, need %d", len(b), RETHLen)
	}
	return RETH{VA: binary.BigEndian.Uint64(b), RKey: binary.BigEndian.Uint32(b[8:]), Length: binary.BigEndian.Uint32(b[12:])}, nil
}

// AppendTo appends the 16-byte header.
func (h *RETH) AppendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, h.VA)
	b = binary.BigEndian.AppendUint32(b, h.RKey)
	return binary.BigEndian.AppendUint32(b, h.Length)
}

// AETH syndromes (top three bits of the syndrome byte).
const (
	SyndromeACK      = 0x00 // low five bits: credit count
	SyndromeRNRNAK   = 0x20 // low five bits: timer
	SyndromeNAK      = 0x60 // low five bits: NAK code
	NAKPSNSeqError   = 0x00
	NAKInvalidReq    = 0x01
	NAKRemoteAccess  = 0x02
	NAKRemoteOpError = 0x03
)

// AETH is the ACK Extended Transport Header.
type AETH struct {
	Syndrome uint8
	MSN      uint32 // 24 bits
}

// DecodeAETH parses b[:4].
func DecodeAETH(b []byte) (AETH, error) {
	if len(b) < AETHLen {
		return AETH{}, errf(KindTruncated, "AETH", 0, "%d bytes, need %d", len(b), AETHLen)
	}
	return AETH{Syndrome: b[0], MSN: uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])}, nil
}

// AppendTo appends the 4-byte header.
func (h *AETH) AppendTo(b []byte) []byte {
	return append(b, h.Syndrome, byte(h.MSN>>16), byte(h.MSN>>8), byte(h.MSN))
}

// IsNAK reports whether the syndrome is a NAK (of any code).
func (h *AETH) IsNAK() bool { return h.Syndrome&0xE0 == SyndromeNAK }

// ImmDt is the Immediate Data Extended Transport Header.
type ImmDt struct{ Data uint32 }

// DecodeImmDt parses b[:4].
func DecodeImmDt(b []byte) (ImmDt, error) {
	if len(b) < ImmDtLen {
		return ImmDt{}, errf(KindTruncated, "ImmDt", 0, "%d bytes, need %d", len(b), ImmDtLen)
	}
	return ImmDt{Data: binary.BigEndian.Uint32(b)}, nil
}

// AppendTo appends the 4-byte header.
func (h *ImmDt) AppendTo(b []byte) []byte { return binary.BigEndian.AppendUint32(b, h.Data) }

// DETH is the Datagram Extended Transport Header (UD).
type DETH struct {
	QKey  uint32
	SrcQP uint32 // 24 bits
}

// DecodeDETH parses b[:8].
func DecodeDETH(b []byte) (DETH, error) {
	if len(b) < DETHLen {
		return DETH{}, errf(KindTruncated, "DETH", 0, "%d bytes, need %d", len(b), DETHLen)
	}
	return DETH{QKey: binary.BigEndian.Uint32(b), SrcQP: binary.BigEndian.Uint32(b[4:]) & 0xFFFFFF}, nil
}

// AppendTo appends the 8-byte header.
func (h *DETH) AppendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, h.QKey)
	return binary.BigEndian.AppendUint32(b, h.SrcQP&0xFFFFFF)
}

// AtomicETH is the Atomic Extended Transport Header.
type AtomicETH struct {
	VA      uint64
	RKey    uint32
	SwapAdd uint64
	Compare uint64
}

// DecodeAtomicETH parses b[:28].
func DecodeAtomicETH(b []byte) (AtomicETH, error) {
	if len(b) < AtomicETHLen {
		return AtomicETH{}, errf(KindTruncated, "AtomicETH", 0, "%d bytes, need %d", len(b), AtomicETHLen)
	}
	return AtomicETH{VA: binary.BigEndian.Uint64(b), RKey: binary.BigEndian.Uint32(b[8:]),
		SwapAdd: binary.BigEndian.Uint64(b[12:]), Compare: binary.BigEndian.Uint64(b[20:])}, nil
}

// AppendTo appends the 28-byte header.
func (h *AtomicETH) AppendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, h.VA)
	b = binary.BigEndian.AppendUint32(b, h.RKey)
	b = binary.BigEndian.AppendUint64(b, h.SwapAdd)
	return binary.BigEndian.AppendUint64(b, h.Compare)
}

// AtomicAckETH carries the original remote data of an atomic operation.
type AtomicAckETH struct{ Orig uint64 }

// DecodeAtomicAckETH parses b[:8].
func DecodeAtomicAckETH(b []byte) (AtomicAckETH, error) {
	if len(b) < AtomicAckETHLen {
		return AtomicAckETH{}, errf(KindTruncated, "AtomicAckETH", 0, "%d bytes, need %d", len(b), AtomicAckETHLen)
	}
	return AtomicAckETH{Orig: binary.BigEndian.Uint64(b)}, nil
}

// AppendTo appends the 8-byte header.
func (h *AtomicAckETH) AppendTo(b []byte) []byte { return binary.BigEndian.AppendUint64(b, h.Orig) }

// IETH is the Invalidate Extended Transport Header.
type IETH struct{ RKey uint32 }

// DecodeIETH parses b[:4].
func DecodeIETH(b []byte) (IETH, error) {
	if len(b) < IETHLen {
		return IETH{}, errf(KindTruncated, "IETH", 0, "%d bytes, need %d", len(b), IETHLen)
	}
	return IETH{RKey: binary.BigEndian.Uint32(b)}, nil
}

// AppendTo appends the 4-byte header.
func (h *IETH) AppendTo(b []byte) []byte { return binary.BigEndian.AppendUint32(b, h.RKey) }

// extHeader describes one extension header: its flag and size, its name
// (for errors), and how a Packet decodes it from b (at least size bytes;
// the Has flag is set too), appends it, and shows it as a gopacket layer
// (nil: no layer of its own).
type extHeader struct {
	flag     uint8
	size     int
	name     string
	decode   func(p *Packet, b []byte)
	appendTo func(p *Packet, b []byte) []byte
	layer    func(p *Packet, l layers.BaseLayer) gopacket.Layer
}

// extOrder lists the extension headers in wire order: one row per header
// serves Decode, AppendTo, HeaderLen and the gopacket view.
var extOrder = [...]extHeader{
	{hasDETH, DETHLen, "DETH",
		func(p *Packet, b []byte) { p.DETH, _ = DecodeDETH(b); p.HasDETH = true },
		func(p *Packet, b []byte) []byte { return p.DETH.AppendTo(b) },
		func(p *Packet, l layers.BaseLayer) gopacket.Layer { return &DETHLayer{BaseLayer: l, DETH: p.DETH} }},
	{hasRETH, RETHLen, "RETH",
		func(p *Packet, b []byte) { p.RETH, _ = DecodeRETH(b); p.HasRETH = true },
		func(p *Packet, b []byte) []byte { return p.RETH.AppendTo(b) },
		func(p *Packet, l layers.BaseLayer) gopacket.Layer { return &RETHLayer{BaseLayer: l, RETH: p.RETH} }},
	{hasAtomicETH, AtomicETHLen, "AtomicETH",
		func(p *Packet, b []byte) { p.AtomicETH, _ = DecodeAtomicETH(b); p.HasAtomicETH = true },
		func(p *Packet, b []byte) []byte { return p.AtomicETH.AppendTo(b) },
		func(p *Packet, l layers.BaseLayer) gopacket.Layer {
			return &AtomicETHLayer{BaseLayer: l, AtomicETH: p.AtomicETH}
		}},
	{hasAETH, AETHLen, "AETH",
		func(p *Packet, b []byte) { p.AETH, _ = DecodeAETH(b); p.HasAETH = true },
		func(p *Packet, b []byte) []byte { return p.AETH.AppendTo(b) },
		func(p *Packet, l layers.BaseLayer) gopacket.Layer { return &AETHLayer{BaseLayer: l, AETH: p.AETH} }},
	{hasAtomicAckETH, AtomicAckETHLen, "AtomicAckETH",
		func(p *Packet, b []byte) { p.AtomicAckETH, _ = DecodeAtomicAckETH(b); p.HasAtomicAckETH = true },
		func(p *Packet, b []byte) []byte { return p.AtomicAckETH.AppendTo(b) },
		func(p *Packet, l layers.BaseLayer) gopacket.Layer {
			return &AtomicAckETHLayer{BaseLayer: l, AtomicAckETH: p.AtomicAckETH}
		}},
	{hasImmDt, ImmDtLen, "ImmDt",
		func(p *Packet, b []byte) { p.ImmDt, _ = DecodeImmDt(b); p.HasImmDt = true },
		func(p *Packet, b []byte) []byte { return p.ImmDt.AppendTo(b) },
		func(p *Packet, l layers.BaseLayer) gopacket.Layer { return &ImmDtLayer{BaseLayer: l, ImmDt: p.ImmDt} }},
	{hasIETH, IETHLen, "IETH",
		func(p *Packet, b []byte) { p.IETH, _ = DecodeIETH(b); p.HasIETH = true },
		func(p *Packet, b []byte) []byte { return p.IETH.AppendTo(b) },
		func(p *Packet, l layers.BaseLayer) gopacket.Layer { return &IETHLayer{BaseLayer: l, IETH: p.IETH} }},
	// A CNP's 16 reserved bytes are decoded as its payload (and shown as
	// a CNPLayer in the payload's place); encoded as zeros if it has none.
	{hasCNP, 0, "CNP",
		func(*Packet, []byte) {},
		func(p *Packet, b []byte) []byte {
			if len(p.Payload) == 0 {
				b = append(b, make([]byte, CNPLen)...)
			}
			return b
		},
		nil},
}
