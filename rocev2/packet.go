package rocev2

// Packet is one decoded RoCEv2 packet: the UDP payload from the BTH to the
// ICRC. Extension headers are present when their Has flag is set (which
// follows from the opcode). Payload aliases the decoded buffer and
// excludes the pad bytes and the ICRC.
type Packet struct {
	BTH BTH

	HasDETH, HasRETH, HasAtomicETH, HasAETH, HasAtomicAckETH, HasImmDt, HasIETH bool

	DETH         DETH
	RETH         RETH
	AtomicETH    AtomicETH
	AETH         AETH
	AtomicAckETH AtomicAckETH
	ImmDt        ImmDt
	IETH         IETH

	Payload []byte
	ICRC    uint32 // as carried (least significant byte first on the wire)
}

// Decode parses a UDP payload: BTH, the extension headers its opcode
// calls for, the payload, the pad and the 4-byte ICRC. It does not verify
// the ICRC, which needs the IP header (VerifyICRC, DecodeIP). A CNP's 16
// reserved bytes are returned as its Payload.
func Decode(b []byte) (Packet, error) {
	var p Packet
	err := p.DecodeFrom(b)
	return p, err
}

// DecodeFrom is Decode into an existing Packet (no allocation).
func (p *Packet) DecodeFrom(b []byte) error {
	*p = Packet{}
	bth, err := DecodeBTH(b)
	p.BTH = bth
	if err != nil {
		return err
	}
	hdrs := opTable[bth.Opcode].hdrs
	off := BTHLen
	for i := range extOrder {
		h := &extOrder[i]
		if hdrs&h.flag == 0 {
			continue
		}
		if len(b) < off+h.size {
			return errf(KindTruncated, h.name, off, "%s needs %d bytes, %d left", bth.Opcode, h.size, len(b)-off)
		}
		h.decode(p, b[off:])
		off += h.size
	}
	if len(b) < off+ICRCLen {
		return errf(KindTruncated, "ICRC", off, "%s: %d bytes after the headers, need %d for the ICRC", bth.Opcode, len(b)-off, ICRCLen)
	}
	end := len(b) - ICRCLen
	if pad := int(bth.PadCount); pad > end-off {
		return errf(KindBadPad, "BTH", 1, "pad count %d but only %d payload bytes", pad, end-off)
	}
	p.Payload = b[off : end-int(bth.PadCount)]
	if bth.Opcode == CNP && len(p.Payload) < CNPLen {
		return errf(KindTruncated, "CNP", off, "%d reserved bytes, need %d", len(p.Payload), CNPLen)
	}
	p.ICRC = uint32(b[end]) | uint32(b[end+1])<<8 | uint32(b[end+2])<<16 | uint32(b[end+3])<<24
	return nil
}

// HeaderLen is the length of the BTH and the extension headers p has.
func (p *Packet) HeaderLen() int { return p.BTH.Opcode.HeaderLen() }

// AppendTo appends BTH, the extension headers the opcode calls for (from
// p's fields, whatever the Has flags say), the payload, zero pad bytes up
// to a multiple of 4 (setting BTH.PadCount), and four zero ICRC bytes: the
// ICRC needs the IP header, so the caller fills it (PutICRC) once the
// packet is framed. An opcode the codec does not know gets no extension
// headers.
func (p *Packet) AppendTo(b []byte) []byte {
	bth := p.BTH
	pad := (4 - len(p.Payload)%4) % 4
	bth.PadCount = uint8(pad)
	if bth.Opcode == CNP {
		pad = 0
		bth.PadCount = 0
	}
	b = bth.AppendTo(b)
	hdrs := opTable[bth.Opcode].hdrs
	for i := range extOrder {
		h := &extOrder[i]
		if hdrs&h.flag == 0 {
			continue
		}
		b = h.appendTo(p, b)
	}
	b = append(b, p.Payload...)
	for range pad {
		b = append(b, 0)
	}
	return append(b, 0, 0, 0, 0)
}

// NewCNP returns the congestion notification packet for destQP: opcode
// 0x81, BECN set, P_Key 0xFFFF, PSN 0 and 16 reserved zero bytes (RoCEv2
// annex A17.9.3).
func NewCNP(destQP uint32) Packet {
	return Packet{BTH: BTH{Opcode: CNP, BECN: true, PKey: DefaultPKey, DestQP: destQP & 0xFFFFFF}}
}
