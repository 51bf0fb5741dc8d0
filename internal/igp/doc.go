// Package igp is what the link-state routing protocol modules (isis,
// ospf, and OSPFv3 next) share where the logic is the same: the instance
// scaffolding around the event loop (Base: the module methods that only
// post to the loop, the initial-convergence gate, log-once, the BFD
// sessions of the adjacencies, Collect for the API's views), the checks
// of a config section's interfaces and prefixes and the BFD settings'
// inheritance (config.go), the words of a reload report (report.go), the
// API's error mapping and bandwidth override route (api.go), and the
// Prometheus collector that asks the loop at scrape time (metrics.go).
// Below it: keyauth, the key-chain algorithms and rejections the packet
// codecs share; goldencap, the FRR golden captures of the codecs'
// testdata; igptest, the modules' test helpers.
//
// What differs between the protocols stays in their packages: packet
// formats, adjacency and flooding rules, what a reload can apply in
// place. docs/architecture.md, "How to add a routing protocol", says how
// a new protocol uses this.
package igp
