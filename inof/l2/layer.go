package l2

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// LayerTypeINOF is the gopacket layer of an iNOF message. Its number is
// the EtherType: unique by construction, and outside the 0..1999 block
// other packages of this repository draw from.
var LayerTypeINOF = gopacket.RegisterLayerType(EtherType, gopacket.LayerTypeMetadata{
	Name:    "iNOF",
	Decoder: gopacket.DecodeFunc(decodeLayer),
})

func init() {
	// Ethernet frames of our EtherType decode into the layer.
	layers.EthernetTypeMetadata[EtherType] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeLayer),
		Name:       "iNOF",
		LayerType:  LayerTypeINOF,
	}
}

// Layer is a Message as a gopacket layer: it decodes after an Ethernet
// header of EtherType 0x88B5 and serializes with gopacket.SerializeLayers.
type Layer struct {
	layers.BaseLayer
	Message
}

// LayerType implements gopacket.Layer.
func (l *Layer) LayerType() gopacket.LayerType { return LayerTypeINOF }

// CanDecode implements gopacket.DecodingLayer.
func (l *Layer) CanDecode() gopacket.LayerClass { return LayerTypeINOF }

// NextLayerType implements gopacket.DecodingLayer: nothing follows.
func (l *Layer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes implements gopacket.DecodingLayer. Bytes after the
// message's length (Ethernet padding) are the payload.
func (l *Layer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	m, err := Decode(data)
	if err != nil {
		return err
	}
	l.Message = m
	n := int(data[2])<<8 | int(data[3])
	l.BaseLayer = layers.BaseLayer{Contents: data[:n], Payload: data[n:]}
	return nil
}

// SerializeTo implements gopacket.SerializableLayer.
func (l *Layer) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	enc := l.Message.AppendTo(nil)
	buf, err := b.PrependBytes(len(enc))
	if err != nil {
		return err
	}
	copy(buf, enc)
	return nil
}

func decodeLayer(data []byte, p gopacket.PacketBuilder) error {
	l := &Layer{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return nil
}
