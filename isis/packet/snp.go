package packet

// CSNP is a complete sequence numbers PDU (ISO 10589 9.10/9.11): LSP
// entries for every LSP in [Start, End].
type CSNP struct {
	Header
	SourceID NodeID // system id + 0 (circuit id byte, 0 per ISO 10589)
	Start    LSPID
	End      LSPID
	TLVs     TLVs
}

// PSNP is a partial sequence numbers PDU (ISO 10589 9.12/9.13).
type PSNP struct {
	Header
	SourceID NodeID
	TLVs     TLVs
}

// AppendTo appends the CSNP with its PDU length filled in.
func (c *CSNP) AppendTo(b []byte) []byte {
	return appendPDU(b, c.Header, func(b []byte) []byte {
		b = append(append(b, 0, 0), c.SourceID[:]...)
		return append(append(b, c.Start[:]...), c.End[:]...)
	}, c.TLVs)
}

// AppendTo appends the PSNP with its PDU length filled in.
func (c *PSNP) AppendTo(b []byte) []byte {
	return appendPDU(b, c.Header, func(b []byte) []byte { return append(append(b, 0, 0), c.SourceID[:]...) }, c.TLVs)
}

func decodeCSNP(h Header, p []byte) (*CSNP, error) {
	m := &CSNP{Header: h}
	copy(m.SourceID[:], p[10:17])
	copy(m.Start[:], p[17:25])
	copy(m.End[:], p[25:33])
	var err error
	m.TLVs, err = decodeTLVs(p, CSNPHeaderLen)
	return m, err
}

func decodePSNP(h Header, p []byte) (*PSNP, error) {
	m := &PSNP{Header: h}
	copy(m.SourceID[:], p[10:17])
	var err error
	m.TLVs, err = decodeTLVs(p, PSNPHeaderLen)
	return m, err
}
