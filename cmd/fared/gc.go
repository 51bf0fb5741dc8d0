package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is fared's garbage-collector target when GOGC is not
// set. Go's default (100) lets the heap grow to twice what is live before
// a collection; fared's live heap is mostly its link-state databases and
// the graphs built from them, large arrays without pointers (lsdb.Link,
// spf and fare work arrays) that a collection marks at almost no cost.
// Collecting at 25% growth instead keeps the resident size near what is
// live: on the 6,144-node 5-stage side-by-side (bench/README.md) RSS
// after the sync fell from 224 MB to 140 MB (isisd+zebra: 162 MB) for
// 1.2 s more CPU over the whole sync (4.4 s; FRR's daemons used 37 s).
// GOGC in the environment still wins, as for any Go program.
const defaultGCPercent = 25

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}
