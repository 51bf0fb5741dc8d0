// Package spf computes shortest paths over an lsdb.Graph: the shortest-path
// DAG from the computing router (Graph.Self) with all equal-cost paths, the
// first hops of every node, the best routes to prefixes, and the RFC 8405
// SPF back-off delay. It is a pure package: every function works on
// immutable snapshots and returns new immutable values.
//
// # Shortest paths (Run)
//
//   - Dijkstra from Self over link metrics, with uint64 distances (a path
//     whose sum would overflow is ignored). Self == -1 gives an empty Result.
//   - Every equal-cost predecessor is kept: the DAG holds an edge u→v when
//     dist(u) + metric = dist(v). Parallel links u→v are one edge carrying
//     all of its shortest (lowest-metric) links; higher-metric parallel
//     links are not on the DAG.
//   - Overload bit: an overloaded node is reachable (its own prefixes are
//     routed) but its links are never relaxed, so it is never transit.
//     Self's own overload bit does not stop Self from using its links.
//   - Pseudonodes (IS-IS LAN pseudonodes, OSPF networks) are transit
//     vertices. At equal distance a pseudonode settles before a router, so
//     the zero-metric pseudonode→member links always point from an earlier
//     to a later settled node. The DAG only ever points from an earlier to a
//     later settled node; a zero-metric link between two routers at the same
//     distance (not produced by IS-IS or OSPF) therefore appears in one
//     direction only, which keeps the DAG acyclic.
//   - Links are taken as lsdb gives them (already two-way checked).
//
// # How Run computes (why the structures look as they do)
//
//   - Settle order is observable: it orders every node's DAG parents, and
//     fare sums capacities in that order (floating point: the order matters
//     in the last bit). The indexed binary heap therefore stays; its sifts
//     move a hole instead of swapping, which places every item where the
//     swap-based sift did, so ties break as they always have.
//   - DAG entries are written while relaxing, straight into a range of a
//     scratch array owned by the child: the range of the child's own links
//     (two-way checked links give a node at least as many links as DAG
//     parents), overwritten from its start when the child's distance
//     drops. When Dijkstra ends each range holds exactly its node's
//     entries in production order, and the DAG is laid out by one forward
//     copy at prefix-sum positions: no candidate list, no sort, no second
//     look at the links. Parallel links more numerous one way than back
//     can overflow a range; Run then starts again with exact ranges
//     (incoming link counts).
//   - Without parallel links every edge has one entry: EdgeLinkStart is
//     0, 1, 2, … and all such Results share one read-only sequence.
//   - First-hop sets are bitsets over the neighbours while computing, then
//     each distinct set is stored once (in a fabric most nodes share one of
//     a few sets: the 6,144 nodes of the 5-stage benchmark fabric have 18);
//     FirstHops returns the same slice for nodes with the same set.
//   - A Result holds no bandwidth: consumers read Graph.Links through
//     EdgeLinks, so a bandwidth-only change costs the DAG nothing.
//   - Scratch (per-node state, entry ranges, heap) is recycled across runs;
//     the hot loops are functions of their own with few live slices, so
//     that the compiler keeps them in registers.
//
// # First hops
//
// The first hops of a node are the neighbours of Self through which it is
// reached on a shortest path: real routers whose DAG parent is Self, or
// whose DAG parent is a pseudonode that has Self as a DAG parent (the router
// behind the LAN). A pseudonode is never a first hop. Result.Neighbors lists
// all first hops; SelfLinks(n) gives Self's links that reach neighbour n —
// several for parallel links, Self's link to the pseudonode for a router on
// a LAN (and both when a router is reached over a LAN and a point-to-point
// link at equal cost).
//
// # Routes
//
// Routes makes one Route per prefix. A prefix that Self advertises is
// local and skipped. Among the advertisements of reachable nodes the kind
// decides first — IS-IS: up (up/down bit clear) before down, internal
// before external; OSPF (RFC 2328 §11, §16): intra-area, inter-area,
// type-1 external, type-2 external — then the lowest Dist(advertiser) +
// prefix metric wins, except that type-2 externals compare their type-2
// metric first and the distance second (§16.4(6)). Equal best
// advertisements from several advertisers are all kept (anycast) and
// their first hops merged.
//
// An advertiser may be a pseudonode: OSPF gives a transit network's subnet
// to its network vertex, so its cost includes the cost of the router's
// interface onto the network (§16.1).
//
// An OSPF external with a forwarding address (§16.4(3)) is routed toward
// the address: the longest intra- or inter-area route covering it gives the
// distance and the exits (Source.Node, whose first hops the route takes);
// with none, the advertisement is not used. Such prefixes are decided after
// every internal route is known, in a second pass that costs nothing when
// no forwarding address is present.
//
// # Route-only recompute
//
// When only bandwidths or prefixes changed, the DAG stays valid.
// SameTopology compares Self, node ids, pseudonode and overload flags,
// link endpoints and metrics (one pass, no allocation); TopologyDiff does
// the same and also lists the links whose bandwidth changed. Reuse (and
// ReuseChanged, its form taking that list) rebinds the DAG to the new Graph,
// sharing every DAG slice: a Result holds no bandwidth, consumers read it
// from Graph.Links through EdgeLinks, so a bandwidth change costs the DAG
// nothing. Both fall back to Run if the graphs do not even have the same
// sizes.
//
// # SPF delay (RFC 8405)
//
// Delay implements the QUIET / SHORT_WAIT / LONG_WAIT state machine with
// INITIAL/SHORT/LONG_SPF_DELAY, TIME_TO_LEARN_INTERVAL and
// HOLDDOWN_INTERVAL (defaults 0, 200 ms, 5 s, 500 ms, 10 s; why the first
// is 0: DefaultDelayConfig). It owns no timers: the learn and holddown
// timers are deadlines applied lazily, in time order, whenever the machine
// is consulted; the SPF timer is the time Event returns, which the caller arms
// itself and acknowledges with Ran. Time is always passed in (or read from
// the injected clock), so the machine is deterministic under test.
//
// # SPF log
//
// Log is a ring of the last 64 runs (LogEntry: time, trigger, "full" or
// "route-only", duration, node count, routes changed), for farectl.
package spf
