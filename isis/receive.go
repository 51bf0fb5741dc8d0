package isis

import "github.com/fared/fared/isis/packet"

// receive is the entry for every PDU from the wire.
func (in *Instance) receive(c *circuit, src [6]byte, b []byte) {
	if !c.running || c.cfg.Passive {
		return
	}
	c.count("rx_pdus")
	pdu, err := packet.Decode(b)
	if err != nil {
		kind := "malformed"
		if de, ok := err.(*packet.DecodeError); ok {
			kind = de.Kind.String()
		}
		c.reject(kind, "malformed PDU dropped", "err", err, "from", macString(src), "len", len(b))
		return
	}
	h := pdu.PDUHeader()
	if h.IDLen != 0 && h.IDLen != 6 {
		c.reject("id_length", "ID length mismatch", "id_length", h.IDLen, "from", macString(src))
		return
	}
	if h.MaxAreaAddrs != 0 && h.MaxAreaAddrs != 3 {
		c.reject("max_area", "maximum area addresses mismatch", "max_area_addresses", h.MaxAreaAddrs, "offset", 7, "from", macString(src))
		return
	}
	if !c.authOK(pdu, b, src) {
		return
	}
	switch p := pdu.(type) {
	case *packet.P2PHello:
		c.count("rx_p2p_hello")
		c.rxP2PHello(p, src)
	case *packet.LANHello:
		c.count("rx_lan_hello")
		c.rxLANHello(p, src)
	case *packet.LSP:
		c.count("rx_lsp")
		in.rxLSP(c, p, b, src)
	case *packet.CSNP:
		c.count("rx_csnp")
		in.rxCSNP(c, p, src)
	case *packet.PSNP:
		c.count("rx_psnp")
		in.rxPSNP(c, p, src)
	}
}
