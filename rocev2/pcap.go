package rocev2

import (
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// WritePCAP writes Ethernet frames to a new pcap file at path, all stamped
// now: the lab tests hand it to tshark, whose InfiniBand dissector checks
// the frames independently of this codec.
func WritePCAP(path string, frames [][]byte) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := pcapgo.NewWriter(fh)
	err = w.WriteFileHeader(65535, layers.LinkTypeEthernet)
	now := time.Now()
	for _, f := range frames {
		if err != nil {
			break
		}
		err = w.WritePacket(gopacket.CaptureInfo{Timestamp: now, CaptureLength: len(f), Length: len(f)}, f)
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}
