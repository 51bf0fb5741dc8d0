// Package fare turns the shortest-path DAG of package spf into weighted
// next hops, per draft-xu-lsr-fare §4–5 as made precise in the project's
// architecture ("FARE math"). It is pure: Compute, Update, Readvertise and
// Quantize read immutable snapshots and return new values. Bandwidths are
// in the wire unit, bytes per second.
//
// # Capacity
//
//	bw(X,M)   = Σ Maximum Link Bandwidth of X's shortest-path links to M
//	            (parallel links summed per neighbour node; a higher-metric
//	            parallel link is not on a shortest path and not counted)
//	cap(D→D)  = ∞
//	cap(X→D)  = Σ over X's DAG children M on a path to D of min(bw(X,M), cap(M→D))
//	w(N)      = min(bw(Self,N), cap(N→D), PB)       for first hop N, prefix P of D
//
// Absent Path Bandwidth (PB) is no cap. For a 3-stage CLOS w is the draft's
// min(upstream, downstream, PB); for a 5-stage CLOS cap() sums the
// super-spine paths behind each local spine.
//
// Pseudonodes: links leaving a pseudonode carry no bandwidth and count as
// unconstrained, so a path through a LAN is limited once by the LAN link of
// the router entering it: cap(X→D) via pseudonode P = min(bw(X,P), Σ over
// P's members M of cap(M→D)). At Self, each router N behind a LAN is its own
// first hop with bw(Self,N) = bw(Self,P) (Self's link to the pseudonode).
//
// Several equal-cost advertisers (anycast): per first hop,
// w(N) = min(bw(Self,N), Σ_D min(cap(N→D), PB_D)): the downstream capacity
// is summed over the advertisers reached through N, and Self's link to N,
// being one physical resource, caps the sum once.
//
// A neighbour's weight is split over Self's parallel links to it in
// proportion to each link's bandwidth (one kernel next hop per link).
//
// # Values from the wire
//
//	link bandwidth absent    unknown: the route falls back to ECMP (below)
//	NaN, negative, -Inf      0: the link is unusable (counted)
//	0                        0: unusable (counted)
//	+Inf                     largest finite float32 (counted)
//	Path Bandwidth absent    no cap
//	PB NaN, negative, -Inf   0 (counted) → every weight 0 → zero-capacity fallback
//	PB 0                     0 (counted), same
//	PB +Inf                  largest finite float32 = no cap (counted)
//
// Anomalies counts each kind; link counters cover the links on the
// shortest-path DAG (each once), path counters each selected advertisement.
//
// # Modes and fallbacks (Route.Mode)
//
//   - "weighted": all bandwidths on the route's paths are known.
//   - "ecmp-missing-bandwidth": some link on a path to the prefix has no
//     Maximum Link Bandwidth sub-TLV. Weights computed from partial data
//     would be guesses (an unknown hop is neither 0 nor ∞), so the route
//     uses equal weights over its usable next hops — those whose known
//     capacity is not zero. BGP weighted ECMP behaves the same way when some
//     paths lack a link-bandwidth community (FRR resorts to regular ECMP;
//     SR OS weights only when every next hop has one). It keeps a partial
//     rollout of TE advertisements from shifting traffic, and gives plain
//     ECMP when no router advertises bandwidth at all.
//   - "ecmp-zero-capacity": every first hop has weight 0 (zero links, zero
//     or NaN Path Bandwidth). SPF found the prefix reachable and FARE never
//     withdraws reachability: all next hops get equal weights.
//   - "ecmp": Options.ECMPOnly; bandwidths are ignored entirely.
//
// Next hops with weight 0 are listed in Route.Unused, not in NextHops.
// JSON output never carries +Inf: "unconstrained" is printed as the largest
// finite float32 (Unconstrained), as in the Path Bandwidth default.
//
// # Re-advertisement
//
// Readvertise(PB, r, D) = min(PB, cap(Self→D)) with
// cap(Self→D) = Σ_N min(bw(Self,N), cap(N→D)) — the Path Bandwidth an L1/L2
// router or ABR puts on a leaked prefix. Links without bandwidth count as
// unconstrained there (re-advertisement never invents a constraint).
//
// # Quantisation
//
// Quantize scales weights so that the largest becomes the kernel maximum
// (255 for 8-bit nexthop_grp weights, 65535 with weight_high), rounds,
// keeps every non-zero weight at least 1 and divides by the GCD, so equal
// ratios give identical vectors (100/40/40 and 5/2/2 both give 5/2/2, one
// kernel group). It reports the worst share error in percentage points.
//
// # Computation
//
// Capacities are needed only from Self's first hops to prefix advertisers.
// Advertisers with the same DAG parents share one compiled program (see
// cap.go): the ancestor sub-DAG is reduced once per class by series
// reduction (single-input chains collapse into thresholds), leaving per
// advertiser a handful of evaluations of f(c) = Σ min(t_j, c). A group of
// thresholds keeps only its distinct values, with counts and prefix sums:
// links come in a few speeds, so a 64-threshold group of a 5-stage fabric
// is a short branch-free scan, and the prefix sums, added one threshold at
// a time in ascending order, are the same numbers a sorted list gives. A
// 3-stage fabric has one class whose program is direct (every cap is an
// input: a gather by precomputed positions); a 5-stage fabric one per pod.
//
// The common route — one advertiser, every neighbour with one link from
// Self — is written in one pass (weightedOne) from per-neighbour records
// aligned with the route's first-hop set. spf stores each distinct set
// once, so the alignment is computed once per set, not per route. A route
// that turns out not to be weighted, and every other route, takes the
// general pass. Whatever the path, the same floating-point operations run
// in the same order (hence the "0 + x" that turns -0 into 0 as a sum
// would): results are bit-identical to the definition above.
//
// Scratch memory is recycled (the last workspace is kept, others go through
// a sync.Pool); outputs are allocated in a few large blocks. Topology and
// bandwidths are read from lsdb.Graph.Links, 20 bytes each (addresses are
// apart, in Graph.Addrs), through the DAG's EdgeLinks. Update recomputes
// only the routes whose advertisers lie below a changed link (or whose
// advertisements changed) and shares the other Route values with the
// previous Table.
package fare
