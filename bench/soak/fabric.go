// Package soak runs a chaos soak on a lab: two mixed fared/FRR 3-stage
// fabrics (one IS-IS, one OSPF) under random link flaps, packet loss
// (nftables), kill -9 of fared, isisd and ospfd, and graceful restarts;
// after each burst of chaos it waits for the fabric to settle and checks
// invariants: identical databases, kernel = computed routes with no
// orphan nexthop objects, every loopback reachable from every leaf, no
// goroutine or fd growth in fared, no panic or crash in any log.
//
// Every random choice comes from one seeded generator in one goroutine,
// so a seed replays the same sequence of events (timing aside).
package soak

// Topology is the soak lab: in each fabric two spines and three leaves,
// every leaf on both spines with unequal bandwidths (so fared writes real
// weights), fared and FRR mixed at both stages. fared nodes expose
// Prometheus metrics (go_goroutines) on the namespace's loopback.
const Topology = `name: soak
defaults: {hello-interval: 1s, hello-multiplier: 3, log-level: info}
nodes:
  is1: {kind: fared, protocol: isis, config: {metrics: {listen: "127.0.0.1:9342"}}}
  is2: {kind: frr, protocol: isis}
  il1: {kind: fared, protocol: isis, config: {metrics: {listen: "127.0.0.1:9342"}}}
  il2: {kind: frr, protocol: isis}
  il3: {kind: fared, protocol: isis, config: {metrics: {listen: "127.0.0.1:9342"}}}
  os1: {kind: frr, protocol: ospf}
  os2: {kind: fared, protocol: ospf, config: {metrics: {listen: "127.0.0.1:9342"}}}
  ol1: {kind: fared, protocol: ospf, config: {metrics: {listen: "127.0.0.1:9342"}}}
  ol2: {kind: frr, protocol: ospf}
  ol3: {kind: fared, protocol: ospf, config: {metrics: {listen: "127.0.0.1:9342"}}}
links:
  - {a: il1, b: is1, bandwidth: 100G}
  - {a: il1, b: is2, bandwidth: 40G}
  - {a: il2, b: is1, bandwidth: 100G}
  - {a: il2, b: is2, bandwidth: 100G}
  - {a: il3, b: is1, bandwidth: 40G}
  - {a: il3, b: is2, bandwidth: 100G}
  - {a: ol1, b: os1, bandwidth: 100G}
  - {a: ol1, b: os2, bandwidth: 40G}
  - {a: ol2, b: os1, bandwidth: 100G}
  - {a: ol2, b: os2, bandwidth: 100G}
  - {a: ol3, b: os1, bandwidth: 40G}
  - {a: ol3, b: os2, bandwidth: 100G}
`

// metricsURL is where fared nodes of Topology serve metrics, inside their
// namespace.
const metricsURL = "http://127.0.0.1:9342/metrics"

// isLeaf: leaves of Topology are il*/ol*.
func isLeaf(node string) bool { return len(node) > 1 && node[1] == 'l' }
