package interop

import (
	"bufio"
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ISISAdj is one row of FRR's `show isis neighbor`.
type ISISAdj struct {
	SystemID  string // hostname when known, as FRR shows it
	Interface string
	Level     string
	State     string // "Up", "Initializing", "Down"
	SNPA      string
}

// ISISNeighbors returns the IS-IS adjacencies of an FRR node.
//
// It parses the text output on purpose: in FRR 8.4.4 `show isis neighbor
// json` keeps only one adjacency per circuit, so on a LAN with several
// neighbours all but the last are missing.
func (l *Lab) ISISNeighbors(ctx context.Context, node string) ([]ISISAdj, error) {
	out, err := l.Vtysh(ctx, node, "show isis neighbor")
	if err != nil {
		return nil, err
	}
	return parseISISNeighbors(out), nil
}

// ISISUp returns an FRR node's Up adjacencies as "neighbour@interface",
// sorted, from the text output (8.4.4's JSON keeps one adjacency per
// circuit).
func (l *Lab) ISISUp(ctx context.Context, node string) ([]string, error) {
	adjs, err := l.ISISNeighbors(ctx, node)
	return UpList(adjs, func(a ISISAdj) (string, bool) { return a.SystemID + "@" + a.Interface, a.State == "Up" }), err
}

// UpList names, sorted, the adjacencies of a neighbour listing that are
// up: name says what an adjacency is called and whether it is up.
func UpList[T any](adjs []T, name func(T) (string, bool)) []string {
	var up []string
	for _, a := range adjs {
		if s, ok := name(a); ok {
			up = append(up, s)
		}
	}
	sort.Strings(up)
	return up
}

func parseISISNeighbors(out string) []ISISAdj {
	var adjs []ISISAdj
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// " r2   seg1   2  Up   2   fae7.8973.c1b7"; skips "Area fabric:"
		// and the header.
		if len(f) < 6 || f[0] == "System" {
			continue
		}
		adjs = append(adjs, ISISAdj{SystemID: f[0], Interface: f[1], Level: f[2], State: f[3], SNPA: f[len(f)-1]})
	}
	return adjs
}

// ISISLSPRow is one row of FRR's `show isis database`.
type ISISLSPRow struct {
	LSPID    string // "hostname.pp-ff" as FRR prints it
	Own      bool   // FRR's own LSP (marked "*")
	Seq      uint32
	Checksum uint16
	Holdtime int // seconds of lifetime left; 0: purged
}

// ISISDatabase returns the rows of an FRR node's `show isis database`,
// from the text output (8.4.4's JSON for it keeps only the last LSP).
func (l *Lab) ISISDatabase(ctx context.Context, node string) ([]ISISLSPRow, error) {
	out, err := l.Vtysh(ctx, node, "show isis database")
	if err != nil {
		return nil, err
	}
	return ParseISISDatabase(out)
}

// isisDBRow is "f1.00-00   *   123  0x00000003  0xabcd   1190   0/0/0".
var isisDBRow = regexp.MustCompile(`^(\S+\.[0-9a-f]{2}-[0-9a-f]{2})\s+(\*?)\s*(\d+)\s+0x([0-9a-f]{8})\s+0x([0-9a-f]{4})\s+(\d+)\s`)

// ParseISISDatabase reads the LSP rows of `show isis database` text (the
// benchmarks' routers under test are not lab nodes); headers and area
// lines are skipped.
func ParseISISDatabase(out string) ([]ISISLSPRow, error) {
	var rows []ISISLSPRow
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := isisDBRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		seq, _ := strconv.ParseUint(m[4], 16, 32)
		ck, _ := strconv.ParseUint(m[5], 16, 16)
		life, _ := strconv.Atoi(m[6])
		rows = append(rows, ISISLSPRow{LSPID: m[1], Own: m[2] == "*", Seq: uint32(seq), Checksum: uint16(ck), Holdtime: life})
	}
	return rows, sc.Err()
}
