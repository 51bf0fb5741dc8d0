package packet

import (
	"encoding/binary"

	"github.com/fared/fared/rocev2"
)

// The RoCEv2 encapsulations INC uses.
//
//   - INC data and results: UC RDMA WRITE Only with Immediate (0x2B):
//     BTH + RETH + ImmDt + INC header + payload. RETH.VA is the payload's
//     byte offset in the collective's buffer, RETH.R_Key the group key,
//     RETH.Length the DMA length of the whole message: everything after
//     the ImmDt up to the pad, i.e. the INC header and the elements. Each
//     packet is a WRITE Only, a message of its own, and IBTA has a
//     responder check that an Only packet's payload is exactly the RETH
//     DMA length (a length error otherwise): counting the elements only
//     would make a real RNIC drop every packet. ImmDt repeats the message
//     id, as an RNIC would report it in the completion.
//   - Ring (point-to-point) data: UC RDMA WRITE Only (0x2A): BTH + RETH +
//     payload, RETH.VA the byte offset in the receiver's buffer, RETH.Length
//     the payload's length (the whole message, as for INC data).
//   - ACK and NACK of the IRN transport: RC Acknowledge (0x11) with an
//     AETH. An ACK carries in BTH.PSN the last PSN received in order (the
//     IBA meaning); a NACK (AETH syndrome "NAK, PSN sequence error")
//     carries in BTH.PSN the expected PSN, i.e. the cumulative ack, and in
//     the AETH MSN field the PSN that triggered it (IRN's selective ack).
const (
	OpData = rocev2.UCWriteOnlyImm
	OpRing = rocev2.UCWriteOnly
	OpAck  = rocev2.RCAcknowledge
)

// Packet kinds Parse returns.
type Kind uint8

const (
	KindINC  Kind = iota + 1 // INC data or result
	KindRing                 // ring data
	KindACK                  // cumulative ack
	KindNACK                 // IRN NACK
)

// Data is the variable part of an INC packet.
type Data struct {
	DestQP  uint32
	PSN     uint32
	Hdr     Header
	VA      uint64 // byte offset of the payload in the buffer
	RKey    uint32 // group key
	Payload []byte // Hdr.Count elements
}

// AppendINC appends a whole INC IP packet: framing f, BTH (with P_Key
// pkey, the sender's partition), RETH, ImmDt, INC header, payload, pad
// and ICRC.
func AppendINC(b []byte, f *rocev2.Frame, pkey uint16, d *Data) []byte {
	start := len(b)
	b = f.AppendHeaders(b)
	pad := (4 - len(d.Payload)%4) % 4
	bth := rocev2.BTH{Opcode: OpData, PadCount: uint8(pad), PKey: pkey, DestQP: d.DestQP & 0xFFFFFF, PSN: d.PSN & rocev2.PSNMask}
	b = bth.AppendTo(b)
	b = binary.BigEndian.AppendUint64(b, d.VA)
	b = binary.BigEndian.AppendUint32(b, d.RKey)
	b = binary.BigEndian.AppendUint32(b, uint32(HeaderLen+len(d.Payload))) // the whole message
	b = binary.BigEndian.AppendUint32(b, d.Hdr.Msg)
	b = d.Hdr.AppendTo(b)
	b = append(b, d.Payload...)
	b = append(b, zeros[:pad+rocev2.ICRCLen]...)
	f.Finish(b[start:])
	return b
}

// AppendRing appends a ring data packet (UC RDMA WRITE Only).
func AppendRing(b []byte, f *rocev2.Frame, pkey uint16, destQP, psn uint32, va uint64, rkey uint32, payload []byte) []byte {
	start := len(b)
	b = f.AppendHeaders(b)
	pad := (4 - len(payload)%4) % 4
	bth := rocev2.BTH{Opcode: OpRing, PadCount: uint8(pad), PKey: pkey, DestQP: destQP & 0xFFFFFF, PSN: psn & rocev2.PSNMask}
	b = bth.AppendTo(b)
	b = binary.BigEndian.AppendUint64(b, va)
	b = binary.BigEndian.AppendUint32(b, rkey)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, payload...)
	b = append(b, zeros[:pad+rocev2.ICRCLen]...)
	f.Finish(b[start:])
	return b
}

// AppendACK appends a cumulative ACK: every PSN up to and including last
// was received.
func AppendACK(b []byte, f *rocev2.Frame, pkey uint16, destQP, last uint32) []byte {
	p := rocev2.Packet{BTH: rocev2.BTH{Opcode: OpAck, PKey: pkey, DestQP: destQP & 0xFFFFFF, PSN: last & rocev2.PSNMask},
		AETH: rocev2.AETH{Syndrome: rocev2.SyndromeACK | 0x1F}}
	return f.Append(b, &p)
}

// AppendNACK appends an IRN NACK: every PSN before cum was received, trig
// arrived out of order.
func AppendNACK(b []byte, f *rocev2.Frame, pkey uint16, destQP, cum, trig uint32) []byte {
	p := rocev2.Packet{BTH: rocev2.BTH{Opcode: OpAck, PKey: pkey, DestQP: destQP & 0xFFFFFF, PSN: cum & rocev2.PSNMask},
		AETH: rocev2.AETH{Syndrome: rocev2.SyndromeNAK | rocev2.NAKPSNSeqError, MSN: trig & rocev2.PSNMask}}
	return f.Append(b, &p)
}

var zeros [8]byte

// Parsed is one received packet.
type Parsed struct {
	Frame rocev2.Frame
	RoCE  rocev2.Packet
	Kind  Kind
	Hdr   Header // KindINC
	// Payload: INC elements (KindINC) or ring bytes (KindRing).
	Payload []byte
	// IfIndex is the interface the packet came in on, when the receive
	// path says (0: unknown). Not part of the wire: Parse leaves it alone.
	IfIndex int
}

// PSN is the packet's BTH PSN: for a NACK the cumulative ack, for an ACK
// the last PSN received in order.
func (p *Parsed) PSN() uint32 { return p.RoCE.BTH.PSN }

// Trigger is a NACK's triggering PSN.
func (p *Parsed) Trigger() uint32 { return p.RoCE.AETH.MSN }

// Parse decodes an IP packet as a raw socket returns it: framing, RoCEv2
// headers, ICRC, and the INC header. rocev2 errors (*rocev2.DecodeError)
// and INC errors (*Error) say what was wrong.
func Parse(ip []byte, p *Parsed) error {
	if err := rocev2.DecodeIPInto(ip, &p.Frame, &p.RoCE); err != nil {
		return err
	}
	r := &p.RoCE
	bth := p.Frame.HeaderLen()                  // offsets in errors count from the IP header
	inc := bth + rocev2.BTHLen + rocev2.RETHLen // INC header (after ImmDt below)
	switch r.BTH.Opcode {
	case OpData:
		inc += rocev2.ImmDtLen
		h, err := DecodeHeader(r.Payload)
		if err != nil {
			err.(*Error).Offset += inc
			return err
		}
		p.Kind, p.Hdr, p.Payload = KindINC, h, r.Payload[HeaderLen:]
		if len(p.Payload) != h.PayloadLen() {
			return errf(KindLength, inc+14, "count %d × %d bytes = %d, payload has %d", h.Count, h.DType.Size(), h.PayloadLen(), len(p.Payload))
		}
	case OpRing:
		p.Kind, p.Payload = KindRing, r.Payload
	case OpAck:
		p.Kind = KindACK
		if r.AETH.IsNAK() {
			p.Kind = KindNACK
		}
	default:
		return errf(KindOpcode, bth, "RoCEv2 opcode %s is not used by INC", r.BTH.Opcode)
	}
	// A WRITE Only is a whole message: its RETH DMA length is the RDMA
	// payload's (for INC data the INC header and the elements), as a
	// responder checks it.
	if r.HasRETH && int(r.RETH.Length) != len(r.Payload) {
		return errf(KindLength, bth+rocev2.BTHLen+12, "RETH DMA length %d, the message has %d bytes", r.RETH.Length, len(r.Payload))
	}
	return nil
}
