package goldencap

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// pcap is a little-endian Ethernet pcap file of the frames, the last one
// cut short as tcpdump leaves a record it is still writing.
func pcap(frames [][]byte, partial []byte) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 0xa1b2c3d4)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 4)
	b = append(b, make([]byte, 12)...)
	b = le.AppendUint32(b, 1) // Ethernet
	for _, f := range append(frames, partial) {
		b = append(b, make([]byte, 8)...)
		b = le.AppendUint32(b, uint32(len(f)))
		b = le.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b[:len(b)-len(partial)/2]
}

func TestReadPcapAndPick(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.pcap")
	frames := [][]byte{{1, 'a'}, {0, 'b'}, {1, 'c', 'c'}, {1, 'd'}}
	if err := os.WriteFile(path, pcap(frames, []byte{1, 'e', 'e', 'e'}), 0o644); err != nil {
		t.Fatal(err)
	}
	// The payload is what follows a first byte of 1.
	ps, err := ReadPcap(path, func(f []byte) []byte {
		if f[0] != 1 {
			return nil
		}
		return f[1:]
	})
	if err != nil || len(ps) != 3 {
		t.Fatalf("ReadPcap: %q, %v", ps, err)
	}
	all := func([]byte) bool { return true }
	if string(Largest(ps, all)) != "cc" || string(First(ps, all)) != "a" || string(Last(ps, all)) != "d" || string(Smallest(ps, all)) != "a" {
		t.Errorf("picks: largest %q first %q last %q smallest %q", Largest(ps, all), First(ps, all), Last(ps, all), Smallest(ps, all))
	}
	if First(ps, And(all, func([]byte) bool { return false })) != nil {
		t.Error("And selected what one side refused")
	}
	if ps, err := ReadPcap(filepath.Join(dir, "none.pcap"), nil); err != nil || ps != nil {
		t.Errorf("missing file: %q, %v", ps, err)
	}
	if err := os.WriteFile(path, []byte("not a pcap file at all, but long enough"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPcap(path, nil); err == nil {
		t.Error("a non-pcap file was read")
	}
}
