#!/bin/sh
# The INC data plane's throughput before and after the per-packet checks
# (docs/inc.md, "What the key protects"), on the same machine in the same
# run: the aggregator's Handle and the whole switch data path
# (BenchmarkDataPath: raw sockets over a veth, parse, aggregate, results
# back) are built from BASE (before the checks) and from this tree, and
# run in turn, ROUNDS times, so a machine whose speed drifts moves both.
#
#   sudo bench/inc/checks.sh BASE [ROUNDS]      (root: namespaces)
#   HANDLE_N=3000000 PATH_N=20000   iterations per run (fixed, so the
#                                   CPU time of a run compares)
#   KEEP=rows.txt                   keep the raw rows
#
# BASE lacks BenchmarkDataPath: this tree's copy runs there with the
# receive path BASE had (recvfrom, no ingress check).
set -eu
base=${1:?usage: checks.sh BASE-REVISION [ROUNDS]}
rounds=${2:-5}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old"
git -C "$root" archive "$base" | tar -x -C "$tmp/old"
cp "$root/inc/aggregator/datapath_bench_test.go" "$tmp/old/inc/aggregator/"
cat > "$tmp/old/inc/aggregator/datapath_checks_test.go" <<'GO'
package aggregator_test

import (
	"net/netip"

	"github.com/fared/fared/inc/aggregator"
	"github.com/fared/fared/inc/client/transport"
)

// Before the per-packet checks: recvfrom, no ingress check.
func openSwitchEndpoint(addr netip.Addr, qp uint32) (*transport.Endpoint, error) {
	return transport.Open(addr, []uint32{qp})
}

func checkIngress(s *aggregator.Switch) error { return nil }
GO
(cd "$tmp/old" && go test -c -o "$tmp/before.test" ./inc/aggregator)
(cd "$root" && go test -c -o "$tmp/after.test" ./inc/aggregator)
# One run: a benchmark with a fixed number of iterations under
# /usr/bin/time; prints "VERSION NAME ns/op" per result line and
# "VERSION NAME-cpu SECONDS" (user + system of the whole process: the
# figure a loaded machine disturbs least).
run() {
	v=$1 bench=$2 n=$3
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$tmp/$v.test" -test.run '^$' -test.bench "^$bench\$" -test.benchtime "${n}x" |
		awk -v v="$v" '/^Benchmark/ { print v, $1, $3 }'
	awk -v v="$v" -v b="$bench" '{ print v, b "-cpu", $1 + $2 }' "$tmp/time"
}
i=0
while [ "$i" -lt "$rounds" ]; do
	i=$((i + 1))
	for v in before after; do
		run "$v" BenchmarkHandle "${HANDLE_N:-3000000}"
		run "$v" BenchmarkDataPath "${PATH_N:-20000}"
	done
done >"$tmp/rows"
[ -n "${KEEP:-}" ] && cp "$tmp/rows" "$KEEP"
echo "median over $rounds interleaved rounds [min-max]; after/before: median of the per-round ratios"
echo "ns/op from go test -bench; *-cpu: CPU seconds (user+system) of the whole benchmark process"
awk '
	{ t[$2, $1] = t[$2, $1] " " $3; names[$2] = 1; r[$2, $1, ++n[$2, $1]] = $3 }
	END {
		for (b in names) {
			k = n[b, "before"]
			for (j = 1; j <= k; j++) ratio[b] = ratio[b] " " r[b, "after", j] / r[b, "before", j]
			print b "|" t[b, "before"] "|" t[b, "after"] "|" ratio[b]
		}
	}' "$tmp/rows" | sort | while IFS='|' read -r name before after ratio; do
	med() { echo "$1" | tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.4g [%.4g-%.4g]", m, a[1], a[NR] }'; }
	printf '%-28s before %s  after %s  after/before %s\n' "$name" "$(med "$before")" "$(med "$after")" "$(med "$ratio")"
done
