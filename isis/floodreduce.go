package isis

import (
	"slices"

	"github.com/fared/fared/isis/packet"
)

// Distributed flooding reduction after draft-ietf-lsr-distoptflood: a
// router that receives a new LSP from a neighbour (the transmitting
// neighbour, TN) works out from its database which of TN's other
// neighbours will carry the LSP one hop further, and refloods only to the
// neighbours it is itself chosen for. Every router that runs the algorithm
// computes the same choice from the same database, without a leader.
//
// The decision is a pure function of the database's two-hop neighbourhood
// (a floodView) and the LSP (who originated it, who sent it, its id): the
// unit tests drive it with hand-built databases.

// floodView is what the decision reads of one level's database: for a
// system, its two-way neighbours (both LSPs list the link; a LAN's
// pseudonode stands for links to every system on the LAN) and whether it
// advertises the algorithm. ok is false when the database holds no live
// LSP of the system.
type floodView interface {
	node(id packet.SystemID) (n floodNode, ok bool)
}

// floodNode is one system as the decision sees it.
type floodNode struct {
	nbrs    []packet.SystemID // two-way neighbours, sorted, without duplicates
	reduces bool              // advertises distributed flooding reduction
}

// floodInput is one received LSP and where we stand.
type floodInput struct {
	self   packet.SystemID
	from   packet.SystemID // TN: the neighbour the LSP came from
	lsp    packet.LSPID    // its originator is lsp.SystemID()
	nbrs   []packet.SystemID
	copies int // reflooders each two-hop neighbour of TN needs (1: the draft's)
}

// floodReason says why a neighbour gets an LSP or not. The values are
// published (farectl isis flooding, the counters flood_<reason>).
type floodReason string

const (
	// Flooded.
	floodOwnLSP        floodReason = "own_lsp"               // we originated it: everyone gets it
	floodNotCapable    floodReason = "neighbour_not_capable" // the neighbour does not run the algorithm (FRR)
	floodNbrUnknown    floodReason = "neighbour_unknown"     // no two-way link to it in the database yet
	floodSenderUnknown floodReason = "sender_unknown"        // TN's neighbours are not known: full flooding
	floodReflooder     floodReason = "reflooder"             // we are chosen to cover this neighbour
	// Not flooded.
	floodSender         floodReason = "sender"          // it came from there
	floodSenderCovers   floodReason = "sender_covers"   // TN's own neighbour: TN (or its sender) flooded it
	floodOriginPath     floodReason = "origin_path"     // the originator, or on TN's shortest path to it
	floodOtherReflooder floodReason = "other_reflooder" // another of TN's neighbours is chosen for it
)

// floods reports whether the reason sends the LSP.
func (r floodReason) floods() bool {
	switch r {
	case floodOwnLSP, floodNotCapable, floodNbrUnknown, floodSenderUnknown, floodReflooder, floodOff, floodLAN:
		return true
	}
	return false
}

// floodChoice is the decision for one neighbour; by names the reflooder
// that covers it (other_reflooder).
type floodChoice struct {
	reason floodReason
	by     packet.SystemID
}

// refloodDecision decides, for each of our neighbours, whether we reflood
// the LSP to it (draft-ietf-lsr-distoptflood's reflooder selection):
//
//  1. An LSP we originated goes to every neighbour (the originator always
//     floods in full). Nothing goes back to TN.
//  2. RNL, the remote neighbour list, is TN's two-way neighbours in system
//     id order (we are one of them). If the database does not show TN, or
//     does not show us among TN's neighbours, the two-hop view is
//     incomplete and we flood to everyone: fail safe.
//  3. THL, the two-hop list, is every system two hops from TN (a neighbour
//     of an RNL member that is neither TN nor in RNL), without the LSP's
//     originator and without the systems on a shortest path from TN to the
//     originator (they had the LSP before TN did).
//  4. The walk over RNL starts at index H mod |RNL|, H the Fletcher-16
//     checksum of the LSP id with its fragment number shifted right by 3
//     (floodHash): successive LSPs and originators spread the reflooding
//     over different RNL members, and the 8 fragments of a group share one.
//     Each member in turn covers the THL members it is adjacent to; a THL
//     member covered copies times leaves the list. Members that do not
//     advertise the algorithm are skipped (nobody relies on them). When
//     the walk reaches us, we reflood to the THL members still listed that
//     are our neighbours, and stop.
//  5. A neighbour that does not advertise the algorithm, or that the
//     database does not show as our two-way neighbour yet, gets the LSP
//     whatever the walk said: nodes that do not run it keep full flooding.
func refloodDecision(v floodView, in floodInput) map[packet.SystemID]floodChoice {
	out := make(map[packet.SystemID]floodChoice, len(in.nbrs))
	if in.lsp.SystemID() == in.self {
		return all(out, in, floodOwnLSP)
	}
	tn, ok := v.node(in.from)
	if !ok || !sortedHas(tn.nbrs, in.self) {
		return all(out, in, floodSenderUnknown)
	}
	rnl := tn.nbrs
	thl := twoHops(v, in.from, rnl)
	onPath := originPath(v, in, rnl, thl)
	for x := range onPath {
		delete(thl, x)
	}
	mine, coveredBy := walkRNL(v, in, rnl, thl)
	for _, y := range in.nbrs {
		out[y] = neighbourChoice(v, in, y, rnl, onPath, mine, coveredBy)
	}
	return out
}

// all gives every neighbour but the sender the same reason.
func all(out map[packet.SystemID]floodChoice, in floodInput, r floodReason) map[packet.SystemID]floodChoice {
	for _, y := range in.nbrs {
		out[y] = floodChoice{reason: r}
		if y == in.from {
			out[y] = floodChoice{reason: floodSender}
		}
	}
	return out
}

// neighbourChoice is the decision for one neighbour y (step 5 first: the
// fail-safe reasons win over the walk).
func neighbourChoice(v floodView, in floodInput, y packet.SystemID, rnl []packet.SystemID,
	onPath map[packet.SystemID]bool, mine map[packet.SystemID]bool, coveredBy map[packet.SystemID]packet.SystemID) floodChoice {
	if y == in.from {
		return floodChoice{reason: floodSender}
	}
	n, ok := v.node(y)
	switch {
	case !ok || !sortedHas(n.nbrs, in.self):
		return floodChoice{reason: floodNbrUnknown}
	case !n.reduces:
		return floodChoice{reason: floodNotCapable}
	case sortedHas(rnl, y):
		return floodChoice{reason: floodSenderCovers, by: in.from}
	case y == in.lsp.SystemID() || onPath[y]:
		return floodChoice{reason: floodOriginPath}
	case mine[y]:
		return floodChoice{reason: floodReflooder}
	}
	return floodChoice{reason: floodOtherReflooder, by: coveredBy[y]}
}

// twoHops is THL before the originator's path is taken out: the systems
// two hops from tn.
func twoHops(v floodView, tn packet.SystemID, rnl []packet.SystemID) map[packet.SystemID]bool {
	thl := map[packet.SystemID]bool{}
	for _, r := range rnl {
		n, ok := v.node(r)
		if !ok {
			continue
		}
		for _, x := range n.nbrs {
			if x != tn && !sortedHas(rnl, x) {
				thl[x] = true
			}
		}
	}
	return thl
}

// originPath is the originator and the THL members on a shortest path
// from TN to it: with d the originator's distance from TN, a system two
// hops from TN is on such a path when it is d-2 hops from the originator.
// Only an originator three or more hops from TN has any; the breadth-first
// search from it stops at TN's distance.
func originPath(v floodView, in floodInput, rnl []packet.SystemID, thl map[packet.SystemID]bool) map[packet.SystemID]bool {
	o := in.lsp.SystemID()
	path := map[packet.SystemID]bool{o: true}
	if o == in.from || sortedHas(rnl, o) || thl[o] {
		return path
	}
	dist := map[packet.SystemID]int{o: 0}
	frontier := []packet.SystemID{o}
	for d := 1; len(frontier) > 0; d++ {
		var next []packet.SystemID
		for _, s := range frontier {
			n, _ := v.node(s)
			for _, x := range n.nbrs {
				if _, seen := dist[x]; !seen {
					dist[x] = d
					next = append(next, x)
				}
			}
		}
		if _, found := dist[in.from]; found {
			break
		}
		frontier = next
	}
	dTN, found := dist[in.from]
	if !found {
		return path // the originator is not connected to TN in our view: exclude only it
	}
	for x := range thl {
		if dx, ok := dist[x]; ok && dx == dTN-2 {
			path[x] = true
		}
	}
	return path
}

// walkRNL runs step 4: it returns the THL members we reflood to, and for
// each member covered before our turn the RNL member that covered it last.
func walkRNL(v floodView, in floodInput, rnl []packet.SystemID, thl map[packet.SystemID]bool) (mine map[packet.SystemID]bool, coveredBy map[packet.SystemID]packet.SystemID) {
	mine, coveredBy = map[packet.SystemID]bool{}, map[packet.SystemID]packet.SystemID{}
	copies := max(in.copies, 1)
	count := map[packet.SystemID]int{}
	start := int(floodHash(in.lsp)) % len(rnl)
	for i := 0; i < len(rnl) && len(thl) > 0; i++ {
		r := rnl[(start+i)%len(rnl)]
		n, ok := v.node(r)
		if r == in.self {
			for _, x := range n.nbrs {
				if thl[x] {
					mine[x] = true
				}
			}
			return mine, coveredBy
		}
		if !ok || !n.reduces {
			continue
		}
		for _, x := range n.nbrs {
			if !thl[x] {
				continue
			}
			coveredBy[x] = r
			if count[x]++; count[x] >= copies {
				delete(thl, x)
			}
		}
	}
	return mine, coveredBy
}

// floodHash is the draft's hash of an LSP id: the Fletcher-16 checksum
// (sums modulo 255, the second sum in the high byte) of the 8-byte id with
// the fragment number shifted right by 3 bits.
func floodHash(id packet.LSPID) uint16 {
	id[7] >>= 3
	var a, b uint32
	for _, c := range id {
		a = (a + uint32(c)) % 255
		b = (b + a) % 255
	}
	return uint16(b<<8 | a)
}

func sortedHas(s []packet.SystemID, x packet.SystemID) bool {
	_, ok := slices.BinarySearchFunc(s, x, func(a, b packet.SystemID) int { return compareSys(a, b) })
	return ok
}

func compareSys(a, b packet.SystemID) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}
