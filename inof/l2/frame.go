package l2

import (
	"errors"
	"fmt"
	"net"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// MinFrame is the shortest Ethernet frame without FCS: shorter messages
// are padded, and the header's length tells the receiver where they end.
const MinFrame = 60

// EncodeFrame builds the Ethernet frame carrying m from src to dst.
func EncodeFrame(dst, src net.HardwareAddr, m *Message) ([]byte, error) {
	buf := gopacket.NewSerializeBuffer()
	eth := &layers.Ethernet{DstMAC: dst, SrcMAC: src, EthernetType: EtherType}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, &Layer{Message: *m}); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if len(b)-14 > MaxLen {
		return nil, fmt.Errorf("inof l2 %s: %d bytes, more than %d", m.Type, len(b)-14, MaxLen)
	}
	for len(b) < MinFrame {
		b = append(b, 0)
	}
	return b, nil
}

// Frame is a decoded Ethernet frame carrying an iNOF message.
type Frame struct {
	Dst, Src net.HardwareAddr
	Message
}

// ErrNotINOF: the frame is not of our EtherType (a raw socket bound to
// it never sees one; a capture may).
var ErrNotINOF = errors.New("inof l2: not an iNOF frame")

// DecodeFrame decodes an Ethernet frame with gopacket's Ethernet layer
// and ours. An error from the message is a *DecodeError (offsets from the
// start of the iNOF header, 14 bytes into the frame).
func DecodeFrame(b []byte) (Frame, error) {
	var eth layers.Ethernet
	var msg Layer
	p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &msg)
	p.IgnoreUnsupported = true
	var got []gopacket.LayerType
	err := p.DecodeLayers(b, &got)
	var de *DecodeError
	if errors.As(err, &de) {
		return Frame{}, de
	}
	if err != nil {
		return Frame{}, fmt.Errorf("inof l2: ethernet: %w", err)
	}
	if len(got) < 2 || got[1] != LayerTypeINOF {
		return Frame{}, ErrNotINOF
	}
	return Frame{Dst: eth.DstMAC, Src: eth.SrcMAC, Message: msg.Message}, nil
}
