package isis

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/config"
	"github.com/fared/fared/isis/packet"
)

// The reflood decision on hand-built databases. System n is
// 0000.0000.00nn; every expectation below is worked out by hand from the
// rules in refloodDecision's comment, with the hash of an LSP id
// nnnn.nnnn.00oo.00-00 of originator o (o < 85) being, in Fletcher-16 sums
// over the bytes 00 00 00 00 00 o 00 00: first sum o, second sum 3·o, so
// H = 3o·256 + o = 769·o, and the walk starts at RNL index 769·o mod |RNL|.

func sid(n byte) packet.SystemID { return packet.SystemID{0, 0, 0, 0, 0, n} }

// mapView is a floodView from an undirected edge list.
type mapView map[packet.SystemID]floodNode

func buildView(edges [][2]byte, notCapable ...byte) mapView {
	v := mapView{}
	add := func(a, b byte) {
		n := v[sid(a)]
		n.nbrs = append(n.nbrs, sid(b))
		v[sid(a)] = n
	}
	for _, e := range edges {
		add(e[0], e[1])
		add(e[1], e[0])
	}
	for id, n := range v {
		slices.SortFunc(n.nbrs, compareSys)
		n.reduces = !slices.Contains(notCapable, id[5])
		v[id] = n
	}
	return v
}

func (v mapView) node(id packet.SystemID) (floodNode, bool) { n, ok := v[id]; return n, ok }

// clos: every leaf to every spine.
func clos(spines, leaves []byte) [][2]byte {
	var e [][2]byte
	for _, s := range spines {
		for _, l := range leaves {
			e = append(e, [2]byte{s, l})
		}
	}
	return e
}

// decide runs the decision at self for originator o's LSP from `from`,
// self's neighbours taken from the view, and renders it as
// "n:reason[/by]" sorted by neighbour.
func decide(v mapView, self, from, o byte, copies int) string {
	in := floodInput{self: sid(self), from: sid(from), lsp: packet.MakeLSPID(sid(o), 0, 0), copies: copies}
	n := v[sid(self)]
	in.nbrs = n.nbrs
	var out []string
	for y, ch := range refloodDecision(v, in) {
		s := fmt.Sprintf("%d:%s", y[5], ch.reason)
		if ch.reason == floodOtherReflooder {
			s += fmt.Sprintf("/%d", ch.by[5])
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// expect fails the test when a decision is not the one worked out by hand.
func expect(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func TestFloodHashVectors(t *testing.T) {
	// The draft's examples of the hash (Fletcher-16, fragment >> 3).
	for _, c := range []struct {
		id   packet.LSPID
		want uint16
	}{
		{packet.LSPID{1, 2, 3, 4, 5, 6, 0, 0}, 0x6215},
		{packet.LSPID{1, 2, 3, 4, 5, 6, 0, 7}, 0x6215}, // 7>>3 = 0: one group of 8 fragments
		{packet.LSPID{1, 2, 3, 4, 5, 6, 0, 0x0f}, 0x6316},
		{packet.LSPID{0, 1, 2, 3, 4, 5, 0, 1}, 0x410f},
	} {
		if got := floodHash(c.id); got != c.want {
			t.Errorf("floodHash(%x) = %#04x, want %#04x", c.id, got, c.want)
		}
	}
	if got := floodHash(packet.MakeLSPID(sid(3), 0, 0)); got != 769*3 {
		t.Errorf("hash of originator 3 = %d, want 769·3 = %d (the tests' formula)", got, 769*3)
	}
}

func TestRefloodThreeStage(t *testing.T) {
	// Spines 11, 12; leaves 1..4. Leaf 1 originates; its LSP reaches the
	// spines directly (TN = 1 = originator).
	v := buildView(clos([]byte{11, 12}, []byte{1, 2, 3, 4}))
	// At spine 11 from leaf 1: RNL = {11, 12}; THL = two hops from 1 =
	// {2, 3, 4}; H = 769 mod 2 = 1, the walk starts at 12, which covers
	// 2, 3, 4: spine 11 is never reached and suppresses all three.
	expect(t, "spine 11", decide(v, 11, 1, 1, 1), "1:sender 2:other_reflooder/12 3:other_reflooder/12 4:other_reflooder/12")
	// At spine 12: the walk starts at us: we reflood to every leaf but 1.
	expect(t, "spine 12", decide(v, 12, 1, 1, 1), "1:sender 2:reflooder 3:reflooder 4:reflooder")
	// At leaf 2, from spine 12: RNL = {1, 2, 3, 4}; THL = {11} (1 is in RNL:
	// no path exclusion); H = 769 mod 4 = 1 → RNL[1] = 2 = us: we cover 11.
	expect(t, "leaf 2", decide(v, 2, 12, 1, 1), "11:reflooder 12:sender")
	// At leaf 3 the walk starts at leaf 2, which covers 11: suppressed.
	expect(t, "leaf 3", decide(v, 3, 12, 1, 1), "11:other_reflooder/2 12:sender")
}

func TestRefloodNotCapableNeighbourGetsEverything(t *testing.T) {
	// As above, leaf 3 runs FRR (no capability): spine 11 still sends it
	// the LSP, though spine 12 covers it; the others stay suppressed.
	v := buildView(clos([]byte{11, 12}, []byte{1, 2, 3, 4}), 3)
	expect(t, "decision", decide(v, 11, 1, 1, 1), "1:sender 2:other_reflooder/12 3:neighbour_not_capable 4:other_reflooder/12")
	// A spine that does not run it is skipped in the walk: with 12 on FRR,
	// nobody counts on 12, and 11 (next after 12) covers 2, 3, 4.
	v = buildView(clos([]byte{11, 12}, []byte{1, 2, 3, 4}), 12)
	expect(t, "12 on FRR", decide(v, 11, 1, 1, 1), "1:sender 2:reflooder 3:reflooder 4:reflooder")
}

func TestRefloodRedundancy(t *testing.T) {
	// Spines 11, 12, 13; leaves 1..4; leaf 1's LSP at the spines. RNL =
	// {11, 12, 13}, H = 769 mod 3 = 1: the walk is 12, 13, 11.
	v := buildView(clos([]byte{11, 12, 13}, []byte{1, 2, 3, 4}))
	// One reflooder per two-hop neighbour: 12 covers 2, 3, 4 alone.
	expect(t, "copies 1, spine 13", decide(v, 13, 1, 1, 1), "1:sender 2:other_reflooder/12 3:other_reflooder/12 4:other_reflooder/12")
	// Two: 12 gives each one copy, 13 the second; 11 is not needed.
	expect(t, "copies 2, spine 13", decide(v, 13, 1, 1, 2), "1:sender 2:reflooder 3:reflooder 4:reflooder")
	expect(t, "copies 2, spine 11", decide(v, 11, 1, 1, 2), "1:sender 2:other_reflooder/13 3:other_reflooder/13 4:other_reflooder/13")
}

func TestRefloodFiveStage(t *testing.T) {
	// Pod A: leaves 1, 2 on aggregation 21, 22; pod B: leaves 3, 4 on 23,
	// 24; super spines: plane 31 joins 21 and 23, plane 32 joins 22 and 24.
	e := append(clos([]byte{21, 22}, []byte{1, 2}), clos([]byte{23, 24}, []byte{3, 4})...)
	e = append(e, [2]byte{31, 21}, [2]byte{31, 23}, [2]byte{32, 22}, [2]byte{32, 24})
	v := buildView(e)
	// Leaf 1's LSP at agg 23 from super spine 31: RNL = {21, 23}; THL =
	// {1, 2, 3, 4} less the originator 1 = {2, 3, 4}; H = 769 mod 2 = 1 →
	// RNL[1] = 23 = us: we cover our own neighbours 3 and 4.
	expect(t, "agg 23", decide(v, 23, 31, 1, 1), "31:sender 3:reflooder 4:reflooder")
	// At leaf 3 from agg 23: RNL = {3, 4, 31}; two hops from 23: 24 (via
	// 3, 4) and 21 (via 31). Originator 1 is 3 hops from 23 (23-31-21-1);
	// 21 is 1 hop from 1 = 3-2: on the path, out. THL = {24}. H = 769 mod
	// 3 = 1 → RNL[1] = 4 covers 24 first: leaf 3 suppresses.
	expect(t, "leaf 3", decide(v, 3, 23, 1, 1), "23:sender 24:other_reflooder/4")
	expect(t, "leaf 4", decide(v, 4, 23, 1, 1), "23:sender 24:reflooder")
}

func TestRefloodFailedSpine(t *testing.T) {
	// Spines 11, 12, 13 and leaves 1, 2, 3; spine 12 is dead and its LSP
	// gone: the leaves' one-way links to it do not count. Leaf 1's LSP at
	// leaf 2 from spine 11: RNL = {1, 2, 3}; THL = {13}; H = 769 mod 3 = 1
	// → RNL[1] = 2 = us: we cover 13. Our adjacency to 12 may still be up
	// (hold time): the database cannot vouch for it, so 12 gets the LSP.
	v := buildView(clos([]byte{11, 12, 13}, []byte{1, 2, 3}))
	delete(v, sid(12))
	for id, n := range v {
		n.nbrs = slices.DeleteFunc(slices.Clone(n.nbrs), func(x packet.SystemID) bool { return x == sid(12) })
		v[id] = n
	}
	in := floodInput{self: sid(2), from: sid(11), lsp: packet.MakeLSPID(sid(1), 0, 0), copies: 1,
		nbrs: []packet.SystemID{sid(11), sid(12), sid(13)}}
	got := refloodDecision(v, in)
	want := map[packet.SystemID]floodReason{sid(11): floodSender, sid(12): floodNbrUnknown, sid(13): floodReflooder}
	for y, r := range want {
		if got[y].reason != r {
			t.Errorf("neighbour %d: %s, want %s", y[5], got[y].reason, r)
		}
	}
}

func TestRefloodPartitionedFloodingGraph(t *testing.T) {
	// A partial mesh: leaf 1 on spines 11 and 12; 11 reaches leaves 2 and
	// 3, 12 reaches 3 and 4. At 11 from leaf 1: RNL = {11, 12}, THL = {2,
	// 3, 4}; the walk starts at 12 (769 mod 2 = 1), which covers 3 and 4
	// but not 2; then us: we must cover 2 ourselves.
	e := [][2]byte{{1, 11}, {1, 12}, {11, 2}, {11, 3}, {12, 3}, {12, 4}}
	v := buildView(e)
	expect(t, "decision", decide(v, 11, 1, 1, 1), "1:sender 2:reflooder 3:other_reflooder/12")
	// The originator 99 is not connected to TN in our view (its LSP, and
	// so its links, not here yet): only the originator itself leaves THL.
	in := floodInput{self: sid(11), from: sid(1), lsp: packet.MakeLSPID(sid(99), 0, 0), copies: 1, nbrs: v[sid(11)].nbrs}
	got := refloodDecision(v, in)
	// H: sums 99 and 3·99 = 297 mod 255 = 42, so 42·256 + 99 = 10851
	// (the 769·o formula holds only for o < 85); 10851 mod 2 = 1: 12
	// first again, the same split.
	if got[sid(2)].reason != floodReflooder || got[sid(3)].reason != floodOtherReflooder {
		t.Errorf("originator unknown: %v", got)
	}
}

func TestFloodReasonsThatSend(t *testing.T) {
	send := []floodReason{floodOwnLSP, floodNotCapable, floodNbrUnknown, floodSenderUnknown, floodReflooder, floodOff, floodLAN}
	keep := []floodReason{floodSender, floodSenderCovers, floodOriginPath, floodOtherReflooder}
	for _, r := range send {
		if !r.floods() {
			t.Errorf("%s does not send", r)
		}
	}
	for _, r := range keep {
		if r.floods() {
			t.Errorf("%s sends", r)
		}
	}
}

func TestRefloodCornerCases(t *testing.T) {
	v := buildView(clos([]byte{11, 12}, []byte{1, 2, 3, 4}))
	// Our own LSP (one sent back to us) goes to everyone: the originator
	// floods in full.
	expect(t, "own LSP", decide(v, 11, 1, 11, 1), "1:sender 2:own_lsp 3:own_lsp 4:own_lsp")
	// From a neighbour whose LSP we do not have: no two-hop view, flood.
	w := buildView(clos([]byte{11, 12}, []byte{1, 2, 3, 4}))
	delete(w, sid(1))
	expect(t, "sender unknown", decide(w, 11, 1, 1, 1), "1:sender 2:sender_unknown 3:sender_unknown 4:sender_unknown")
	// From a neighbour whose LSP does not list us yet (a new adjacency):
	// the same.
	x := buildView(append(clos([]byte{12}, []byte{1, 2, 3, 4}), clos([]byte{11}, []byte{2, 3, 4})...))
	in := floodInput{self: sid(11), from: sid(1), lsp: packet.MakeLSPID(sid(1), 0, 0), copies: 1, nbrs: []packet.SystemID{sid(1), sid(2), sid(3), sid(4)}}
	for y, ch := range refloodDecision(x, in) {
		if y != sid(1) && ch.reason != floodSenderUnknown {
			t.Errorf("new adjacency: neighbour %d %s", y[5], ch.reason)
		}
	}
	// An LSP of a neighbour's, received from another neighbour: the
	// originator itself is never reflooded to. Leaf 1's LSP at leaf 2 from
	// 12, where leaf 2 is also adjacent to leaf 1 (a leaf-leaf link).
	y := buildView(append(clos([]byte{11, 12}, []byte{1, 2, 3, 4}), [2]byte{1, 2}))
	if got := decide(y, 2, 12, 1, 1); !strings.Contains(got, "1:sender_covers") {
		t.Errorf("originator as neighbour: %s, want 1 suppressed (TN's neighbour: it has it)", got)
	}
}

func TestFloodViewTwoWayAndLAN(t *testing.T) {
	// The database view: A (1), B (2), C (3) on a LAN whose pseudonode is
	// 0000.0000.0001.01; A–D (4) point-to-point; D lists E (5), E does
	// not list D (one-way: no link). C does not advertise the algorithm.
	now := time.Unix(1000, 0)
	lv := newLevel(2)
	pn := packet.MakeNodeID(sid(1), 1)
	node := func(n byte) packet.NodeID { return packet.MakeNodeID(sid(n), 0) }
	put := func(id packet.NodeID, reduces bool, to ...packet.NodeID) {
		t := &lspTopo{reduces: reduces}
		for _, n := range to {
			t.links = append(t.links, topoLink{nb: n})
		}
		lid := packet.MakeLSPID(id.SystemID(), id.Pseudo(), 0)
		lv.put(lid, &lspEntry{lsp: &packet.LSP{ID: lid}, topo: t, expires: now.Add(time.Hour)})
	}
	put(node(1), true, pn, node(4))
	put(node(2), true, pn)
	put(node(3), false, pn)
	put(pn, false, node(1), node(2), node(3))
	put(node(4), true, node(1), node(5))
	put(node(5), true)
	w := newFloodView(lv, now)
	for _, c := range []struct {
		n       byte
		want    string
		reduces bool
	}{
		{1, "[2 3 4]", true}, {2, "[1 3]", true}, {3, "[1 2]", false}, {4, "[1]", true}, {5, "[]", true},
	} {
		fn, ok := w.node(sid(c.n))
		var got []byte
		for _, x := range fn.nbrs {
			got = append(got, x[5])
		}
		if !ok || fmt.Sprint(got) != c.want || fn.reduces != c.reduces {
			t.Errorf("node %d: ok %v nbrs %v reduces %v, want %s %v", c.n, ok, got, fn.reduces, c.want, c.reduces)
		}
	}
	if _, ok := w.node(sid(9)); ok {
		t.Error("a system without LSP is in the view")
	}
}

func TestRouterCapabilityRoundTrip(t *testing.T) {
	in := &Instance{icfg: &Config{FloodingReduction: true}, cfg: &config.Config{RouterID: netip.MustParseAddr("10.0.0.1")}}
	tl := in.floodCapTLVs()
	if len(tl) != 1 {
		t.Fatalf("TLVs %v", tl)
	}
	u := tl[0].(*packet.Unknown)
	if u.T != 242 || fmt.Sprintf("% x", u.Value) != "0a 00 00 01 00 28 01 02" {
		t.Errorf("TLV %d % x, want 242 with router id 10.0.0.1, flags 0, sub-TLV 40 len 1 algorithm 2", u.T, u.Value)
	}
	if !capReduces(u.Value) {
		t.Error("our own TLV does not read as the capability")
	}
	for _, v := range [][]byte{nil, {1, 2, 3, 4, 0}, {1, 2, 3, 4, 0, 40, 1, 1}, {1, 2, 3, 4, 0, 40, 5, 2}, {1, 2, 3, 4, 0, 19, 1, 0, 40, 1, 2}} {
		want := len(v) == 11
		if capReduces(v) != want {
			t.Errorf("capReduces(% x) = %v, want %v", v, !want, want)
		}
	}
	in.icfg.FloodingReduction = false
	if in.floodCapTLVs() != nil {
		t.Error("capability advertised with reduction off")
	}
}
