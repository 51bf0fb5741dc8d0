// Package goldencap is the half the IGP codecs' golden captures share
// (isis/packet/testdata, ospf/packet/testdata, and OSPFv3's next): each
// testdata/extract.go picks the packets it wants from the pcap files its
// capture.sh records from real FRR, and writes them as .bin files for the
// codec's golden and fuzz tests. This package reads the pcap files, picks
// by predicate and writes or checks the wanted files, and loads them for
// the tests (Files); frr.sh (sourced by the capture scripts) runs the FRR
// namespaces around it.
//
// An extractor parses the few packet fields it selects on by hand, on
// purpose independent of the codec: the files it writes are what the
// codec is tested against.
package goldencap

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// ReadPcap returns the payloads of an Ethernet pcap file: payload gets
// each frame and returns the bytes wanted from it (nil: skip the frame);
// they are copied. A missing file, or one tcpdump has not yet written its
// header to, gives none; a record still being written ends the list.
func ReadPcap(path string, payload func(frame []byte) []byte) ([][]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if len(b) < 24 {
		return nil, nil // tcpdump has not flushed its header yet
	}
	bo := byteOrder(b)
	if bo == nil {
		return nil, fmt.Errorf("%s: not a pcap file", path)
	}
	if lt := bo.Uint32(b[20:24]); lt != 1 {
		return nil, fmt.Errorf("%s: link type %d, want Ethernet", path, lt)
	}
	var out [][]byte
	for off := 24; off+16 <= len(b); {
		n := int(bo.Uint32(b[off+8:]))
		if off+16+n > len(b) {
			break // record still being written
		}
		f := b[off+16 : off+16+n]
		off += 16 + n
		if p := payload(f); p != nil {
			out = append(out, append([]byte(nil), p...))
		}
	}
	return out, nil
}

// byteOrder is that of the pcap file's header (microsecond or nanosecond
// magic), nil if it is not one.
func byteOrder(b []byte) binary.ByteOrder {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		switch bo.Uint32(b) {
		case 0xa1b2c3d4, 0xa1b23c4d:
			return bo
		}
	}
	return nil
}

// Pred selects a packet.
type Pred func(p []byte) bool

// First is the first packet of ps that ok selects, nil if none.
func First(ps [][]byte, ok Pred) []byte {
	for _, p := range ps {
		if ok(p) {
			return p
		}
	}
	return nil
}

// Last is the last packet of ps that ok selects, nil if none.
func Last(ps [][]byte, ok Pred) []byte {
	var r []byte
	for _, p := range ps {
		if ok(p) {
			r = p
		}
	}
	return r
}

// Largest is the longest packet of ps that ok selects (the first of
// equals), nil if none.
func Largest(ps [][]byte, ok Pred) []byte {
	var r []byte
	for _, p := range ps {
		if ok(p) && len(p) > len(r) {
			r = p
		}
	}
	return r
}

// Smallest is the shortest packet of ps that ok selects (the first of
// equals), nil if none.
func Smallest(ps [][]byte, ok Pred) []byte {
	var r []byte
	for _, p := range ps {
		if ok(p) && (r == nil || len(p) < len(r)) {
			r = p
		}
	}
	return r
}

// And selects what both a and b select.
func And(a, b Pred) Pred { return func(p []byte) bool { return a(p) && b(p) } }

// Concat is the packets of every list, in order.
func Concat(lists ...[][]byte) [][]byte {
	var out [][]byte
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Want is a golden file and the packet picked for it (nil: not seen).
// A missing required file keeps the capture going; the tests skip a
// missing optional one.
type Want struct {
	Name     string
	Required bool
	Pick     []byte
}

// Capture is one pcap file an extractor reads: its flag and what the
// flag's usage says it is.
type Capture struct{ Flag, Usage string }

// Main is an extractor's main: it reads the pcap file of each capture's
// flag (payload picks what a frame carries), lets wants pick from them
// (by flag name) and finishes as Finish says, with -out DIR and -check:
//
//	go run extract.go -FLAG FILE ... -out DIR [-check]
func Main(payload func(frame []byte) []byte, caps []Capture, wants func(pkts map[string][][]byte) []Want) {
	paths := map[string]*string{}
	for _, c := range caps {
		paths[c.Flag] = flag.String(c.Flag, "", c.Usage)
	}
	out := flag.String("out", ".", "directory for the .bin files")
	check := flag.Bool("check", false, "only report whether everything was seen")
	flag.Parse()
	pkts := map[string][][]byte{}
	for name, path := range paths {
		ps, err := ReadPcap(*path, payload)
		Check(err)
		pkts[name] = ps
	}
	Finish(wants(pkts), *out, *check)
}

// Finish reports what was found and missing, and unless check writes the
// picked packets to dir. The exit status is 0 when every required packet
// was found, 1 when one is still missing (nothing written), 2 on an I/O
// error.
func Finish(wants []Want, dir string, check bool) {
	missing := 0
	for _, w := range wants {
		if w.Pick == nil {
			fmt.Println("missing", w.Name)
			if w.Required {
				missing++
			}
			continue
		}
		fmt.Printf("found %s (%d bytes)\n", w.Name, len(w.Pick))
	}
	if missing > 0 {
		os.Exit(1)
	}
	if check {
		return
	}
	for _, w := range wants {
		if w.Pick == nil {
			continue
		}
		Check(os.WriteFile(filepath.Join(dir, w.Name), w.Pick, 0o644))
	}
}

// Check ends the extractor with status 2 on a usage or I/O error.
func Check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(2)
	}
}

// Files are the golden files matching glob, by base name, for a codec's
// tests; none is a failure (the captures are part of the repository).
func Files(t testing.TB, glob string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(glob)
	if err != nil || len(names) == 0 {
		t.Fatalf("no golden files %s: %v", glob, err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(n)] = b
	}
	return out
}
