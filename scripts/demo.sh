#!/usr/bin/env bash
# The main job: a 3-stage CLOS of fared and FRR routers in network
# namespaces, converged, with bandwidth-weighted ECMP in the kernel of each
# fared leaf. Prints leaf l1's view: FARE's weights next to the kernel's.
# The lab stays up; remove it with: sudo bin/farelab down demo
set -euo pipefail
cd "$(dirname "$0")/.."
topo=${1:-examples/clos3.yaml}
bash scripts/setup.sh
export PATH=$PWD/bin:$PATH
farelab down demo >/dev/null 2>&1 || true
farelab up "$topo"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
say "waiting for l1 to install a weighted route to l2's 10.10.2.0/24"
for i in $(seq 1 120); do
	if farelab exec l1 -- farectl -j fib 2>/dev/null | grep -q '"prefix": "10.10.2.0/24"'; then
		n=$(farelab exec l1 -- farectl -j fib | tr -d ' \n' | grep -o '"group":\[[^]]*\]' | head -1 | grep -o '"id"' | wc -l || true)
		[ "${n:-0}" -ge 4 ] && break
	fi
	sleep 0.5
done

say "l1: IS-IS adjacencies"
farelab exec l1 -- farectl isis neighbors
say "l1: FARE for 10.10.2.0/24 (l2; l2–s2 is 2×25G, summed per neighbour)"
farelab exec l1 -- farectl fare 10.10.2.0/24
say "l1: FARE for 10.10.3.0/24 (l3 advertises Path Bandwidth 20G)"
farelab exec l1 -- farectl fare 10.10.3.0/24
say "l1: routes computed by fared"
farelab exec l1 -- farectl route
say "l1: the kernel's nexthop groups, read back over netlink (16-bit weights)"
farelab exec l1 -- farectl fib
say "l1: ip nexthop (iproute2 6.1 prints only the low 8 bits of 16-bit weights)"
farelab exec l1 -- ip nexthop show
say "l1: ip route"
farelab exec l1 -- ip route show proto isis
say "lab 'demo' is up: try 'sudo bin/farelab exec l1 -- farectl lsdb', then 'sudo bin/farelab down demo'"
