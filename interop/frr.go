package interop

import (
	"context"
	"sort"
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
