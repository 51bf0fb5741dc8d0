#!/usr/bin/env bash
# Flooding load, reduction off against on (issue 28's goal): the same
# generated 3-stage fabric of fared nodes, the same scripted events (one
# leaf link flapped 5 times, one spine's daemon restarted), LSPs received
# summed over every node. Run as root from the repository:
#   bash bench/flooding/run.sh [SPINES] [LEAVES]
# Everything runs in the lab's own namespaces; each lab is torn down.
set -euo pipefail
cd "$(dirname "$0")/../.."
spines=${1:-4} leaves=${2:-24}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" ./cmd/farelab ./cmd/fared ./cmd/farectl
fl="$bin/farelab"

# poll CMD...: run until it succeeds, at most 120 s.
poll() {
	for _ in $(seq 1 240); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
	echo "not reached: $*" >&2; return 1
}

# total LAB FIELD: FIELD summed over every node's interfaces.
total() {
	local lab=$1 field=$2 sum=0 n
	for node in $("$fl" status "$lab" -j | jq -r '.Nodes[].Name'); do
		n=$("$fl" exec "$node" --lab "$lab" -- farectl -j isis flooding | jq "[.interfaces[].$field] | add // 0")
		sum=$((sum + n))
	done
	echo "$sum"
}

# quiet LAB: the LSPs received, summed, stood still for 3 s (flooding over).
quiet() {
	local lab=$1 a b
	a=$(total "$lab" lsps_received)
	for _ in $(seq 1 40); do
		sleep 3
		b=$(total "$lab" lsps_received)
		[ "$a" = "$b" ] && return 0
		a=$b
	done
	echo "flooding never stopped in $lab" >&2; return 1
}

# synced LAB: every node holds as many LSPs as there are nodes.
synced() {
	local lab=$1 want
	want=$("$fl" status "$lab" -j | jq '.Nodes | length')
	for node in $("$fl" status "$lab" -j | jq -r '.Nodes[].Name'); do
		[ "$("$fl" exec "$node" --lab "$lab" -- farectl -j isis database | jq '[.. | objects | select(has("lsp_id"))] | length')" -ge "$want" ] || return 1
	done
}

for mode in full reduced; do
	lab="fl$mode$$"
	topo="$bin/$mode.yaml"
	"$fl" gen clos3 --spines "$spines" --leaves "$leaves" --flooding "$mode" --name "$lab" >"$topo"
	trap '"$fl" down "$lab" >/dev/null 2>&1 || true; rm -rf "$bin"' EXIT
	"$fl" up "$topo" >/dev/null
	poll synced "$lab"
	quiet "$lab"
	r0=$(total "$lab" lsps_received) d0=$(total "$lab" lsps_duplicate)
	ns=$("$fl" status "$lab" -j | jq -r '.Nodes[] | select(.Name=="l1") | .Netns')
	dev=$(ip -n "$ns" -j link | jq -r '[.[] | select(.ifname != "lo")][0].ifname')
	for _ in 1 2 3 4 5; do
		ip -n "$ns" link set "$dev" down; sleep 2
		ip -n "$ns" link set "$dev" up; sleep 4
	done
	"$fl" restart "$lab" s1 >/dev/null
	poll synced "$lab"
	quiet "$lab"
	r1=$(total "$lab" lsps_received) d1=$(total "$lab" lsps_duplicate)
	echo "$mode: ${spines}x${leaves}, events: LSPs received $((r1 - r0)), duplicates $((d1 - d0)) (start-up: received $r0, duplicates $d0)"
	"$fl" down "$lab" >/dev/null
done
