package packet

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fared/fared/rocev2"
)

// TestTsharkRETHLength: Wireshark's InfiniBand dissector, independent of
// this codec, reads our INC data packets as RDMA WRITE Only with
// Immediate whose RETH DMA length is the whole message (INC header and
// elements), with no malformed or expert mark; and ring data likewise.
func TestTsharkRETHLength(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but tshark is not installed")
		}
		t.Skip("tshark not installed")
	}
	eth := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00}
	var frames [][]byte
	var want []int
	for _, c := range []struct {
		dt    DType
		count int
	}{{FP32, 256}, {FP16, 3}} {
		d := Data{DestQP: 0x101, PSN: 7, VA: 4096, RKey: 5, Hdr: Header{Collective: AllReduce, DType: c.dt, Op: Sum, Tree: 1, Count: uint16(c.count)},
			Payload: make([]byte, c.count*c.dt.Size())}
		frames = append(frames, AppendINC(bytes.Clone(eth), &frame, rocev2.DefaultPKey, &d))
		want = append(want, 16+c.count*c.dt.Size()) // by hand: INC header + elements
	}
	frames = append(frames, AppendRing(bytes.Clone(eth), &frame, rocev2.DefaultPKey, 7, 1, 64, 2, []byte("hello")))
	want = append(want, 5)
	pcap := filepath.Join(t.TempDir(), "inc.pcap")
	if err := rocev2.WritePCAP(pcap, frames); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tshark", "-n", "-r", pcap, "-d", "udp.port==4791,infiniband", "-T", "fields", "-E", "separator=|",
		"-e", "infiniband.bth.opcode", "-e", "infiniband.reth.dmalen", "-e", "_ws.malformed", "-e", "_ws.expert").Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "Running as user") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(frames) {
		t.Fatalf("tshark printed %d lines for %d frames:\n%s", len(lines), len(frames), out)
	}
	for i, l := range lines {
		op := uint8(OpData)
		if i == len(frames)-1 {
			op = uint8(OpRing)
		}
		if w := fmt.Sprintf("%d|%d||", op, want[i]); l != w {
			t.Errorf("frame %d: tshark %q, want %q (opcode|DMA length|malformed|expert)", i+1, l, w)
		}
	}
}
