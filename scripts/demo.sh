#!/usr/bin/env bash
# The main job: a 3-stage CLOS of fared and FRR routers in network
# namespaces, converged, with bandwidth-weighted ECMP in the kernel of each
# fared leaf. Prints leaf l1's view: FARE's weights next to the kernel's.
# Then the modules on the same fabric: iNOF (hosts told about their zone
# peers), QoS on l1's host port, and an INC allreduce of three hosts
# aggregated in the fabric.
# The lab stays up; remove it with: bin/farelab down demo (as a user: sudo ...)
set -euo pipefail
cd "$(dirname "$0")/.."
topo=${1:-examples/clos3.yaml}
bash scripts/setup.sh
export PATH=$PWD/bin:$PATH
farelab down demo >/dev/null 2>&1 || true
farelab up "$topo"
x() { farelab exec "$1" --lab demo -- "${@:2}"; }

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
say "waiting for l1 to install a weighted route to l2's 10.10.2.0/24"
for i in $(seq 1 120); do
	n=$(x l1 farectl -j fare 10.10.2.0/24 2>/dev/null | grep -c '"kernel_weight": [1-9]' || true)
	if [ "${n:-0}" -ge 4 ] && x l1 farectl -j fib 2>/dev/null | grep -q '"prefix": "10.10.2.0/24"'; then
		break
	fi
	sleep 0.5
done

say "l1: IS-IS adjacencies"
x l1 farectl isis neighbors
say "l1: FARE for 10.10.2.0/24 (l2; l2–s2 is 2×25G, summed per neighbour)"
x l1 farectl fare 10.10.2.0/24
say "l1: FARE for 10.10.3.0/24 (l3 advertises Path Bandwidth 20G)"
x l1 farectl fare 10.10.3.0/24
say "l1: routes computed by fared"
x l1 farectl route
say "l1: the kernel's nexthop groups, read back over netlink (16-bit weights)"
x l1 farectl fib
say "l1: ip nexthop (iproute2 6.1 prints only the low 8 bits of 16-bit weights)"
x l1 ip nexthop show
say "l1: ip route"
x l1 ip route show proto isis

say "iNOF: h1 (zone storage-a) is told about h2 when both have registered"
for i in $(seq 1 120); do
	x h1 farectl -j inof events 2>/dev/null | grep -q '"host": "h2"' && break
	sleep 0.5
done
say "h1: notifications received (the hook would run nvme connect)"
x h1 farectl inof events
say "l1: every host of the fabric, learnt from agents, LLDP (tgt) and IBGP"
x l1 farectl inof hosts
say "l1: IBGP sessions to the two route reflectors"
x l1 farectl inof peers
say "l1: BFD sessions: one speaker per node, shared by IS-IS and iNOF's BGP (clients)"
x l1 farectl bfd sessions

say "QoS: l1's host port h1-1 (linux backend: what this kernel can and cannot do)"
x l1 farectl qos status

say "INC: waiting for the five aggregating switches to register with the manager on s1"
for i in $(seq 1 120); do
	n=$(x s1 farectl -j inc switches 2>/dev/null | grep -c '"alive": true' || true)
	[ "${n:-0}" -ge 5 ] && break
	sleep 0.5
done
x s1 farectl inc switches
say "INC: an fp32 allreduce of 4 MB by h1, h2, h3, summed in the fabric (each rank checks the result)"
for r in 0 1 2; do
	x h$((r + 1)) fareinc allreduce --manager 10.255.0.1:7791 --group demo --rank $r --ranks 3 --size 4MB --dtype fp32 --op sum >"/tmp/fared-demo-inc.$r" 2>&1 &
done
wait
for r in 0 1 2; do
	printf 'h%d: ' $((r + 1))
	cat "/tmp/fared-demo-inc.$r"
done
say "the switches' aggregation counters (the manager chose the tree from the LSDB)"
for i in $(seq 1 20); do # the data plane publishes its counters every few ms
	busy=0
	for n in s1 s2 l1 l2 l3; do
		x $n farectl inc switch | sed -n 2p | grep -q '^slots in use 0;' || busy=1
	done
	[ $busy = 0 ] && break
	sleep 0.1
done
for n in s1 s2 l1 l2 l3; do
	printf '%s: ' $n
	x $n farectl inc switch | sed -n 2p
done

say "lab 'demo' is up: try 'bin/farelab exec l1 --lab demo -- farectl lsdb', then 'bin/farelab down demo' (as a user, prefix sudo)"
