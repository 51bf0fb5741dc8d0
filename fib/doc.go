// Package fib writes fared's weighted ECMP routes into the Linux kernel as
// netlink nexthop objects and nexthop groups, and reads them back.
//
// # Model
//
// Sync takes the full desired state ([]Route) and reconciles the kernel
// with it. Each distinct (gateway, ifindex) is one nexthop object. A route
// with one next hop points at that object (RTA_NH_ID); a route with
// several points at a group. Weights are divided by their GCD (and on
// kernels without 16-bit weights scaled so the largest is 256), so 100/40
// and 5/2 are the same content and share one group. Routes are written
// with Config.Protocol (default 187, isis), Config.Metric (default 20) in
// Config.Table, IPv4 and IPv6 alike.
//
// # Id allocation and recognising our objects
//
// Nexthop ids are allocated from [IDBase, IDBase+IDCount) (default
// 0x0FA00000, 1<<20 ids), round robin, always with NLM_F_CREATE|NLM_F_EXCL
// so an id someone else holds is never overwritten. An object is ours iff
// its id is in that range AND its nh_protocol is Config.Protocol; objects in
// the range with another protocol are reserved (never reused, never
// touched). Routes are ours iff they are in Config.Table with
// Config.Protocol. Probe uses throw-away ids at 0xFFFFFF00 and deletes
// them again.
//
// # Refcounting
//
// A group's reference count is the number of our routes that point at it;
// it is recounted from the route table after every Sync rather than
// incremented edge by edge, so a request failing half way cannot make it
// drift. A group is deleted when its count is 0 after the route stage; a
// nexthop object is deleted when no route and no remaining group uses it.
//
// # Order of a Sync (each stage one batch: many requests per sendmsg,
// then the ACKs; every request has NLM_F_ACK and a failure is reported as
// an *OpError naming the object)
//
//  1. new nexthop objects
//  2. new groups
//  3. routes added (RTM_NEWROUTE, CREATE|EXCL) or repointed (REPLACE:
//     atomic); see "Other protocols' routes"
//  4. groups rewritten in place (reweight)
//  5. stale routes deleted
//  6. unreferenced groups deleted
//  7. unreferenced nexthop objects deleted
//
// In the code (sync.go) a pass holds what the stages hand each other,
// and each stage is one of its methods, in this order: nexthops, groups
// (decideGroups, planRewrites, createGroups), routes and retryExisting,
// rewriteGroups, deleteStale, deleteUnusedGroups, deleteUnusedNexthops.
//
// Routes leave a group (3) before it is rewritten (4), and objects are
// deleted only after nothing references them, so no packet ever meets a
// missing nexthop.
//
// The route stage is the one that takes time (100,000 routes: ~0.4 s,
// nearly all of it the kernel inserting inside our sendmsg), so it is a
// stream: a second goroutine sends chunks (256 routes first, doubling)
// and reads their answers while the caller encodes the next routes and
// files the answers of the last chunk. New groups stream the same way (a
// 3-stage leaf creates one per leaf). What fared adds to the kernel's
// own work is then what comes before the first route: validating the
// input and deciding objects and groups, which is done once per distinct
// set of next hops (a hopSet), not per route: a fabric's table has a few
// hundred sets over many thousand routes. bench/ceiling measures the
// result against a bare netlink loop that replays fib's objects with
// fib's own encoder and chunking (internal/nlmsg), so the difference is
// what fib adds, not another encoding. Input is validated before stage 1: weight 0, a missing
// interface index, an IPv4 gateway for an IPv6 prefix or a prefix given
// twice fail the whole Sync with nothing written. Kernel errors are per
// object: the rest is applied, the prefix concerned keeps what it had.
//
// One bad member never blocks a Sync. A next hop whose nexthop object the
// kernel refuses (its interface was deleted: "Invalid device index"; or is
// down and LinkDown was not called yet: "Nexthop device is not up") is
// left out of every route of this Sync: each is installed with its other
// members (weights reduced again, no renormalisation), a route left with
// one member uses that plain nexthop, and only a route left with none
// keeps what it had. The failure is reported as an *OpError and retried
// next time. If the kernel says a group or route names a nexthop id it
// does not have (EINVAL, "Invalid nexthop id" / "Nexthop id does not
// exist": an interface deleted before Monitor's LinkDown ran deletes its
// nexthops behind our back), Sync re-reads our objects (one nexthop dump)
// and does the whole Sync once more from the kernel's state; only that
// second pass's errors are returned.
//
// # Other protocols' routes
//
// The kernel keeps one route per key: table, prefix, metric (and for
// IPv4 the TOS), whatever the protocol or type. RTM_NEWROUTE with
// CREATE|REPLACE would therefore overwrite a static route, a blackhole or
// another daemon's route that happens to use our metric, and our later
// withdrawal would leave the prefix with nothing. So a prefix we do not
// hold is always added with NLM_F_CREATE|NLM_F_EXCL; only a route of
// ours is repointed with NLM_F_REPLACE (without CREATE: if someone deleted
// it, the kernel answers ENOENT and the prefix is added exclusively). When
// the kernel answers EEXIST, the FIB reads the routes of that family once
// (only then: the 100k-route path reads nothing) and looks at the holder:
//
//   - our protocol (an operator's `ip route add ... proto isis`, a second
//     writer): ours, as on Adopt; it is taken over with REPLACE;
//   - any other protocol: a conflict. The prefix is not installed, one
//     log line (warning) names prefix, protocol and type, and it is
//     listed in Stats.Conflicts / FIB.Conflicts (RoutesConflicting
//     counts them). The objects it would use are kept. Each later Sync
//     retries the exclusive add (one message per conflicting prefix, no
//     read): once the other route is gone, ours is installed and one log
//     line says so, as when the prefix is withdrawn meanwhile.
//
// Withdrawal deletes with our protocol in the request; the kernel matches
// it, so another protocol's route for the prefix (same metric: we never
// installed ours; other metric: both were there) is never deleted. Routes
// of other protocols with another metric are no conflict: both are in the
// kernel and the lower metric forwards. The FIB keeps the configured
// metric (default 20); see docs/config.md for why. Not covered: if
// someone deletes one of our routes and installs theirs under the same
// key between two Syncs, our next repoint of that prefix replaces theirs
// (the kernel offers no replace-if-protocol; we do not monitor routes).
// The RTA_MULTIPATH fallback follows the same rules, but its repoint is
// netlink's CREATE|REPLACE.
//
// FRR 8.4.4's zebra, for comparison, sends every route with CREATE|REPLACE
// and metric 20, and avoids overwriting by keeping its own RIB: it reads
// other protocols' kernel routes as "kernel" routes of distance 0, which
// win selection, so it never installs over them, and it installs its own
// when the kernel route is deleted (it listens to route notifications).
//
// # Reweight in place
//
// When none of the routes of group G keeps G's current content, G is
// rewritten with RTM_NEWNEXTHOP|NLM_F_REPLACE under the same id to the
// content most of its routes now want (if no other group already has it).
// Those routes need no message at all: a bandwidth change that moves the
// weights of N groups costs N messages, whatever the number of routes.
// Routes of G that want something else are repointed first. The same path
// re-adds a member that came back after a link down. Note: with the
// kernel default net.ipv4.nexthop_compat_mode=1 the kernel itself still
// emits one route notification per affected route (and dumps routes with
// expanded next hops); fared should run with nexthop_compat_mode=0, which
// makes a reweight one kernel notification per group.
//
// # Start-up adoption and shutdown
//
// Adopt (or the first Sync, which adopts if Adopt was not called) reads
// our nexthop objects, groups and routes back from the kernel and takes
// them over without changing them, so forwarding continues across a
// restart, including after kill -9. The first Sync then finds most
// objects already right and only adds, repoints and deletes the
// difference. Duplicates left by a crash (two objects for one gateway, two
// groups with one content), groups of the wrong type or bucket count, and
// routes of ours with another metric are kept until nothing needs them
// and then deleted. Close with KeepOnShutdown leaves everything for the
// next run; otherwise it removes our routes, then groups, then nexthops.
//
// # Link down
//
// Observed on Linux 6.18: on admin down and on carrier loss the kernel
// deletes every nexthop object on the device (not merely marks it dead as
// it does for legacy routes). That removes the member from its groups at
// once; the remaining members keep their weights (no renormalisation);
// a group that loses its last member is deleted, and so is every route
// that used a deleted nexthop or group. Nothing comes back on link up.
// LinkDown(ifindex) does the same deletion itself (for when the daemon
// notices first, e.g. an adjacency loss), re-reads our objects so the
// FIB's state is the kernel's, and makes later Syncs leave out members on
// that link until LinkUp (the kernel refuses nexthops on a down device).
// A prefix left with no usable member is counted in Stats.RoutesUnresolved
// and is absent from the kernel until a Sync gives it a live next hop.
// Monitor calls LinkDown/LinkUp on oper-state changes before passing the
// event on, so the state follows the kernel without waiting for IS-IS.
//
// # Resilient groups
//
// With Config.Resilient, groups are NEXTHOP_GRP_TYPE_RES with the given
// buckets (default 128) and idle/unbalanced timers (clock_t in the message,
// 1/100 s). The kernel does not allow the bucket count of an existing
// group to change, so adopted groups with another count are not reused;
// timers and members/weights can be replaced in place.
//
// # Files
//
//   - fib.go: the types, Open/Close, id allocation, the group index, link
//     down/up and refresh
//   - sync.go: Sync and its stages; normalise.go: validation and the
//     sharing of next-hop sets (hopSet) before stage 1
//   - adopt.go: Adopt; flush.go: Flush; multipath.go: the RTA_MULTIPATH
//     fallback; neighbor.go: local repair (NeighborDown)
//   - conflict.go: other protocols' routes; weights.go: weight reduction
//   - conn.go: the socket, batches and the streaming sender; netlink.go,
//     dump.go: fib's side of the encoding (internal/nlmsg writes the
//     requests) and the decoding of the kernel's answers
//   - probe.go: capabilities; lookup.go: route lookups by flow;
//     ingress.go: the RPF ingress sets (Interfaces) and WatchRoutes
//
// # Old kernels
//
// Probe tries a blackhole nexthop (nexthop objects, 5.3), a group with a
// member weight of 1000 (weight_high, 6.12: older kernels reject the then
// reserved byte with EINVAL) and a resilient group (5.13). Without nexthop
// objects the FIB writes RTA_MULTIPATH routes with rtnh_hops = weight-1
// (8 bits), one message per route per change.
package fib
