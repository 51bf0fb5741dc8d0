// Package packet is the wire codec of fared's in-network computing (INC)
// packets: the INC header that follows RoCEv2's BTH + RETH + ImmDt, and
// the acknowledgements of the IRN transport. The layout is fared's own
// (experimental; docs/inc.md): draft-liu-nfsv4-rocev2 lists the fields but
// gives no format.
//
//	 0      version (high 4 bits) | flags (low 4 bits)
//	 1      collective
//	 2      data type
//	 3      operation
//	 4-5    tree id
//	 6-7    slot
//	 8-11   message id
//	12-13   rank (the sender's child index at the receiving switch; for a
//	        result, the receiver's)
//	14-15   count (elements in the payload)
//
// All fields are big-endian; the payload that follows is the host's
// memory as is: little-endian IEEE 754 values.
package packet

import (
	"encoding/binary"

	"github.com/fared/fared/internal/enum"
)

// HeaderLen is the length of the INC header.
const HeaderLen = 16

// Version is the header version this codec writes and accepts.
const Version = 1

// Flags.
const (
	FlagResult     = 0x1 // aggregation result, travelling towards the leaves
	FlagRetransmit = 0x2 // a retransmission (informational, for counters)
	flagsKnown     = FlagResult | FlagRetransmit
)

// Collective is the collective operation a packet belongs to (the draft's
// list). Only allreduce is aggregated by fared's switches.
type Collective uint8

const (
	AllReduce Collective = 1
	Reduce    Collective = 2
	Broadcast Collective = 3
	Barrier   Collective = 4
)

var collectiveNames = enum.Names[Collective]{AllReduce: "allreduce", Reduce: "reduce", Broadcast: "broadcast", Barrier: "barrier"}

func (c Collective) String() string { return collectiveNames.Name(c, "collective_") }

// DType is the element type of the payload.
type DType uint8

const (
	FP16 DType = 1
	FP32 DType = 2
	FP64 DType = 3
)

// Size is the size of one element in bytes (0 for an unknown type).
func (d DType) Size() int {
	switch d {
	case FP16:
		return 2
	case FP32:
		return 4
	case FP64:
		return 8
	}
	return 0
}

var dtypeNames = enum.Names[DType]{FP16: "fp16", FP32: "fp32", FP64: "fp64"}

func (d DType) String() string { return dtypeNames.Name(d, "dtype_") }

// ParseDType parses "fp16", "fp32" or "fp64".
func ParseDType(s string) (DType, error) { return dtypeNames.Lookup("data type", s) }

// Op is the reduction.
type Op uint8

const (
	Sum Op = 1
	Min Op = 2
	Max Op = 3
)

var opNames = enum.Names[Op]{Sum: "sum", Min: "min", Max: "max"}

func (o Op) String() string { return opNames.Name(o, "op_") }

// ParseOp parses "sum", "min" or "max".
func ParseOp(s string) (Op, error) { return opNames.Lookup("operation", s) }

// Header is the INC header.
type Header struct {
	Flags      uint8
	Collective Collective
	DType      DType
	Op         Op
	Tree       uint16
	Slot       uint16
	Msg        uint32
	Rank       uint16
	Count      uint16
}

// IsResult reports whether the packet carries a result downwards.
func (h *Header) IsResult() bool { return h.Flags&FlagResult != 0 }

// PayloadLen is the payload length the header announces.
func (h *Header) PayloadLen() int { return int(h.Count) * h.DType.Size() }

// DecodeHeader parses the header at the start of b and checks each field
// on its own: version, flags, collective, data type, operation.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, errf(KindTruncated, 0, "%d bytes, need %d", len(b), HeaderLen)
	}
	h := Header{
		Flags:      b[0] & 0x0F,
		Collective: Collective(b[1]),
		DType:      DType(b[2]),
		Op:         Op(b[3]),
		Tree:       binary.BigEndian.Uint16(b[4:]),
		Slot:       binary.BigEndian.Uint16(b[6:]),
		Msg:        binary.BigEndian.Uint32(b[8:]),
		Rank:       binary.BigEndian.Uint16(b[12:]),
		Count:      binary.BigEndian.Uint16(b[14:]),
	}
	switch {
	case b[0]>>4 != Version:
		return h, errf(KindVersion, 0, "version %d, want %d", b[0]>>4, Version)
	case h.Flags&^flagsKnown != 0:
		return h, errf(KindFlags, 0, "unknown flags 0x%x", h.Flags&^flagsKnown)
	case h.Collective < AllReduce || h.Collective > Barrier:
		return h, errf(KindCollective, 1, "collective %d", b[1])
	case h.DType.Size() == 0:
		return h, errf(KindDType, 2, "data type %d", b[2])
	case h.Op < Sum || h.Op > Max:
		return h, errf(KindOp, 3, "operation %d", b[3])
	}
	return h, nil
}

// AppendTo appends the 16-byte header.
func (h *Header) AppendTo(b []byte) []byte {
	b = append(b, Version<<4|h.Flags&0x0F, byte(h.Collective), byte(h.DType), byte(h.Op))
	b = binary.BigEndian.AppendUint16(b, h.Tree)
	b = binary.BigEndian.AppendUint16(b, h.Slot)
	b = binary.BigEndian.AppendUint32(b, h.Msg)
	b = binary.BigEndian.AppendUint16(b, h.Rank)
	return binary.BigEndian.AppendUint16(b, h.Count)
}
