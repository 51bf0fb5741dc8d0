package rocev2

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// gopacket layer types, registered in the application range (1000-1999)
// at 1791-1799, and the BTH decoder on UDP port 4791.
var (
	LayerTypeBTH          = gopacket.RegisterLayerType(1791, gopacket.LayerTypeMetadata{Name: "BTH", Decoder: gopacket.DecodeFunc(decodeRoCE)})
	LayerTypeRETH         = gopacket.RegisterLayerType(1792, gopacket.LayerTypeMetadata{Name: "RETH"})
	LayerTypeAETH         = gopacket.RegisterLayerType(1793, gopacket.LayerTypeMetadata{Name: "AETH"})
	LayerTypeImmDt        = gopacket.RegisterLayerType(1794, gopacket.LayerTypeMetadata{Name: "ImmDt"})
	LayerTypeDETH         = gopacket.RegisterLayerType(1795, gopacket.LayerTypeMetadata{Name: "DETH"})
	LayerTypeAtomicETH    = gopacket.RegisterLayerType(1796, gopacket.LayerTypeMetadata{Name: "AtomicETH"})
	LayerTypeAtomicAckETH = gopacket.RegisterLayerType(1797, gopacket.LayerTypeMetadata{Name: "AtomicAckETH"})
	LayerTypeIETH         = gopacket.RegisterLayerType(1798, gopacket.LayerTypeMetadata{Name: "IETH"})
	LayerTypeCNP          = gopacket.RegisterLayerType(1799, gopacket.LayerTypeMetadata{Name: "CNP"})
	LayerTypeICRC         = gopacket.RegisterLayerType(1790, gopacket.LayerTypeMetadata{Name: "ICRC"})
)

func init() {
	layers.RegisterUDPPortLayerType(UDPPort, LayerTypeBTH)
}

// Layer types of the gopacket view. Each embeds its header, so a decoded
// layer reads like the codec's struct: pkt.Layer(LayerTypeBTH).(*BTHLayer).PSN.
type (
	BTHLayer struct {
		layers.BaseLayer
		BTH
	}
	RETHLayer struct {
		layers.BaseLayer
		RETH
	}
	AETHLayer struct {
		layers.BaseLayer
		AETH
	}
	ImmDtLayer struct {
		layers.BaseLayer
		ImmDt
	}
	DETHLayer struct {
		layers.BaseLayer
		DETH
	}
	AtomicETHLayer struct {
		layers.BaseLayer
		AtomicETH
	}
	AtomicAckETHLayer struct {
		layers.BaseLayer
		AtomicAckETH
	}
	IETHLayer struct {
		layers.BaseLayer
		IETH
	}
	// CNPLayer is the 16 reserved bytes of a CNP.
	CNPLayer struct{ layers.BaseLayer }
	// ICRCLayer is the trailing invariant CRC. It is not checked here:
	// that needs the IP header (VerifyICRC on the network layer's bytes).
	ICRCLayer struct {
		layers.BaseLayer
		ICRC uint32
	}
)

func (*BTHLayer) LayerType() gopacket.LayerType          { return LayerTypeBTH }
func (*RETHLayer) LayerType() gopacket.LayerType         { return LayerTypeRETH }
func (*AETHLayer) LayerType() gopacket.LayerType         { return LayerTypeAETH }
func (*ImmDtLayer) LayerType() gopacket.LayerType        { return LayerTypeImmDt }
func (*DETHLayer) LayerType() gopacket.LayerType         { return LayerTypeDETH }
func (*AtomicETHLayer) LayerType() gopacket.LayerType    { return LayerTypeAtomicETH }
func (*AtomicAckETHLayer) LayerType() gopacket.LayerType { return LayerTypeAtomicAckETH }
func (*IETHLayer) LayerType() gopacket.LayerType         { return LayerTypeIETH }
func (*CNPLayer) LayerType() gopacket.LayerType          { return LayerTypeCNP }
func (*ICRCLayer) LayerType() gopacket.LayerType         { return LayerTypeICRC }

// decodeRoCE decodes the whole transport part of the UDP payload at once
// (which extension headers follow depends on the BTH opcode) and adds one
// layer per header, the payload, and the ICRC.
func decodeRoCE(data []byte, pb gopacket.PacketBuilder) error {
	var p Packet
	if err := p.DecodeFrom(data); err != nil {
		return err
	}
	off := 0
	base := func(n int) layers.BaseLayer {
		b := layers.BaseLayer{Contents: data[off : off+n], Payload: data[off+n:]}
		off += n
		return b
	}
	pb.AddLayer(&BTHLayer{BaseLayer: base(BTHLen), BTH: p.BTH})
	hdrs := opTable[p.BTH.Opcode].hdrs
	for i := range extOrder {
		if h := &extOrder[i]; hdrs&h.flag != 0 && h.layer != nil {
			pb.AddLayer(h.layer(&p, base(h.size)))
		}
	}
	if p.BTH.Opcode == CNP {
		pb.AddLayer(&CNPLayer{BaseLayer: base(CNPLen)})
	} else if len(p.Payload) > 0 {
		pl := gopacket.Payload(p.Payload)
		pb.AddLayer(&pl)
		pb.SetApplicationLayer(&pl)
	}
	end := len(data) - ICRCLen
	pb.AddLayer(&ICRCLayer{BaseLayer: layers.BaseLayer{Contents: data[end:]}, ICRC: p.ICRC})
	return nil
}

// SerializeTo writes the header (gopacket.SerializableLayer). FixLengths
// has no meaning here: the BTH's PadCount is written as set.
func (l *BTHLayer) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, l.BTH.AppendTo(nil))
}

// SerializeTo writes the header.
func (l *RETHLayer) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, l.RETH.AppendTo(nil))
}

// SerializeTo writes the header.
func (l *AETHLayer) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, l.AETH.AppendTo(nil))
}

// SerializeTo writes the header.
func (l *ImmDtLayer) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, l.ImmDt.AppendTo(nil))
}

// SerializeTo writes the 16 reserved zero bytes.
func (l *CNPLayer) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return prepend(b, make([]byte, CNPLen))
}

// SerializeTo appends the ICRC value as set (compute it with PutICRC over
// the serialized IP packet).
func (l *ICRCLayer) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	t, err := b.AppendBytes(ICRCLen)
	if err != nil {
		return err
	}
	t[0], t[1], t[2], t[3] = byte(l.ICRC), byte(l.ICRC>>8), byte(l.ICRC>>16), byte(l.ICRC>>24)
	return nil
}

func prepend(b gopacket.SerializeBuffer, h []byte) error {
	t, err := b.PrependBytes(len(h))
	if err != nil {
		return err
	}
	copy(t, h)
	return nil
}
