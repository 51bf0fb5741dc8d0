#!/usr/bin/env bash
# Capture golden OSPFv2 packets from real FRR (Debian's frr 8.4.4) for the
# ospf/packet tests.
#
# Three FRR nodes, each zebra + ospfd in its own network namespace with an
# FRR path space (-N; the lab is internal/igp/goldencap/frr.sh), in a line:
#
#   r2 --(10.0.12.0/24, p2p, area 0)-- r1 --(10.0.13.0/24, broadcast, area 1)-- r3
#
# r1 is an ABR (summary LSAs type 3 into both areas, type 4 for the ASBR r2
# into area 1), r2 redistributes 192.0.2.0/24 (an address on its lo) as an
# AS-external LSA. All run TE (capability opaque, mpls-te, link-params with
# max-bw/max-rsv-bw/unrsv-bw) and segment routing (router-info area, SRGB,
# prefix SIDs), which makes ospfd originate opaque area LSAs of opaque types
# 1 (TE), 4 (Router Information), 7 (Extended Prefix) and 8 (Extended
# Link). Hello 1 s, dead 4 s on both links.
#
# tcpdump captures `ip proto 89` on both of r1's interfaces until
# extract.go has seen every packet it wants; the OSPF packets (Ethernet and
# IPv4 header, IHL honoured, stripped; trimmed to the IP total length) are
# then written next to this script, with `show ip ospf database` output for
# reference and a tcpdump -vvv check of the TE LSA.
#
# What FRR 8.4.4 sends (the tests pin it down):
#   - one LSU per router with all its opaque LSAs: TE (opaque type 1, one
#     LSA per interface carrying BOTH the Router Address TLV and the Link
#     TLV), Extended Link (8), Extended Prefix (7), Router Information (4);
#   - the RI SR-Algorithm TLV (length 1) padded with 0xff bytes, not zeros;
#   - Extended Link TLVs with sub-TLV 32768 (remote interface address, in
#     the Extended Link registry's experimental range) and two Adj-SIDs;
#   - sometimes two instances of the same LSA in one LSU;
#   - the interface mask in hellos on point-to-point networks.
#
# FRR 8.4.4 quirks handled here:
#   - link params read from zebra.conf at start-up are often not passed on
#     to ospfd; once ospfd is up each interface's link-params are changed
#     (max-rsv-bw 1, then back) until `show ip ospf mpls-te interface`
#     shows them.
#   - ospfd writes /var/run/frr/ospfd-gr.json outside its -N path space
#     (removed afterwards unless it was there before).
#   - FRR insists its user is in the frrvty group, which root is not: the
#     daemons run as frr.
#
# Needs root, frr and tcpdump (apt-get install -y frr tcpdump) and go.
# Everything it creates (namespaces, daemons, run dirs, temp dir) is removed
# by the EXIT trap, also on failure or Ctrl-C.
#
# Usage: sudo ./capture.sh [OUTDIR]     (OUTDIR defaults to this directory)
#        KEEP_PCAP=DIR keeps the two pcap files.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE}
BW=1.25e+09 # bytes/s (10 Gbit/s)
P=po$$ # per-run prefix: concurrent runs and leftovers of other runs never collide
DAEMON=ospfd

# ospfd writes graceful-restart state to /var/run/frr/ospfd-gr.json
# whatever its -N path space; remove it afterwards if this run created it.
GRSTATE=/var/run/frr/ospfd-gr.json
[[ -e $GRSTATE ]] && GRKEEP=1 || GRKEEP=0
cleanup_extra() { ((GRKEEP)) || rm -f "$GRSTATE"; }
source "$HERE/../../../internal/igp/goldencap/frr.sh"

vty() { # vty NODE ARGS...: vtysh inside the node's namespace
	local name=$1
	shift
	ip netns exec "${NS[$name]}" vtysh -N "$P$name" "$@"
}

declare -A NS

# node N NS IFACES NETWORKS EXTRA: start zebra + ospfd for router rN.
#   IFACES   "eth0:p2p eth1:bcast"
#   NETWORKS "10.0.12.0/24:0 ..."  (prefix:area)
#   EXTRA    extra lines under router ospf
node() {
	local n=$1 ns=$2 ifaces=$3 networks=$4 extra=$5
	local name=${P}r$n
	local run=/var/run/frr/$name
	NS[r$n]=$ns
	mkdir -p "$run" "/etc/frr/$name"
	touch "/etc/frr/$name/vtysh.conf" # vtysh -N complains without one
	RUNDIRS+=("$run" "/etc/frr/$name")
	ip -n "$ns" addr add "10.255.0.$n/32" dev lo

	{
		echo "hostname r$n"
		for i in $ifaces; do
			printf 'interface %s\n link-params\n  enable\n  max-bw %s\n  max-rsv-bw %s\n' "${i%%:*}" "$BW" "$BW"
			for c in 0 1 2 3 4 5 6 7; do printf '  unrsv-bw %d %s\n' "$c" "$BW"; done
			printf ' exit-link-params\n!\n'
		done
	} >"$TMP/$name-zebra.conf"
	{
		echo "hostname r$n"
		echo "!"
		for i in $ifaces; do
			echo "interface ${i%%:*}"
			[[ ${i#*:} == p2p ]] && echo " ip ospf network point-to-point"
			echo " ip ospf hello-interval 1"
			echo " ip ospf dead-interval 4"
			echo "!"
		done
		echo "router ospf"
		echo " ospf router-id 10.255.0.$n"
		echo " capability opaque"
		echo " mpls-te on"
		echo " mpls-te router-address 10.255.0.$n"
		echo " router-info area"
		echo " segment-routing on"
		echo " segment-routing global-block 16000 23999"
		echo " segment-routing prefix 10.255.0.$n/32 index $n"
		echo " passive-interface lo"
		for nw in $networks; do echo " network ${nw%%:*} area ${nw#*:}"; done
		[[ -n $extra ]] && echo "$extra"
		echo "!"
	} >"$TMP/$name-ospfd.conf"
	start_frr "$name" "$ns"
}

# nudge N IFACES: re-send link params to ospfd until it reports them.
nudge() {
	local n=$1 ifaces=$2 out
	for _ in $(seq 50); do [[ -S /var/run/frr/${P}r$n/ospfd.vty ]] && break; sleep 0.2; done
	for _ in $(seq 20); do
		out=$(vty "r$n" -c 'show ip ospf mpls-te interface' 2>/dev/null || true)
		local missing=0
		for i in $ifaces; do
			if ! sed -n "/^-- MPLS-TE link parameters for ${i%%:*} /,/^---/p" <<<"$out" | grep -q 'Maximum Bandwidth'; then
				missing=1
				vty "r$n" -c 'configure terminal' -c "interface ${i%%:*}" -c 'link-params' \
					-c 'max-rsv-bw 1' -c "max-rsv-bw $BW" >/dev/null 2>&1 || true
			fi
		done
		((missing)) || return 0
		sleep 0.5
	done
	echo "capture.sh: r$n: ospfd never reported TE link parameters:" >&2
	echo "$out" >&2
	return 1
}

mkns "${P}a" # r1
mkns "${P}b" # r2
mkns "${P}c" # r3
ip link add eth0 netns "${P}a" type veth peer name eth0 netns "${P}b"
ip link add eth1 netns "${P}a" type veth peer name eth0 netns "${P}c"
ip -n "${P}a" addr add 10.0.12.1/24 dev eth0
ip -n "${P}b" addr add 10.0.12.2/24 dev eth0
ip -n "${P}a" addr add 10.0.13.1/24 dev eth1
ip -n "${P}c" addr add 10.0.13.3/24 dev eth0
ip -n "${P}b" addr add 192.0.2.2/24 dev lo # redistributed: AS-external LSA
ip -n "${P}a" link set eth0 up
ip -n "${P}a" link set eth1 up
ip -n "${P}b" link set eth0 up
ip -n "${P}c" link set eth0 up

# Start the captures before the daemons so the whole adjacency bring-up
# (DBD exchange, LSRs, LSUs, acks) is seen.
capture "${P}a" eth0 p2p ip proto 89
capture "${P}a" eth1 bcast ip proto 89
sleep 1 # tcpdump needs a moment to open the interface

node 1 "${P}a" "eth0:p2p eth1:bcast" "10.0.12.0/24:0 10.255.0.1/32:0 10.0.13.0/24:1" ""
node 2 "${P}b" "eth0:p2p" "10.0.12.0/24:0 10.255.0.2/32:0" " redistribute connected"
node 3 "${P}c" "eth0:bcast" "10.0.13.0/24:1 10.255.0.3/32:1" ""
nudge 1 "eth0 eth1"
nudge 2 "eth0"
nudge 3 "eth0"

extract -p2p "$TMP/p2p.pcap" -bcast "$TMP/bcast.pcap" -out "$OUT"

{
	for c in 'show ip ospf database' 'show ip ospf database opaque-area' 'show ip ospf mpls-te interface' \
		'show ip ospf database segment-routing'; do
		echo "### r1: $c"
		vty r1 -c "$c" 2>&1 || true
	done
} >"$OUT/frr_database.txt"

finish LSA 'Maximum Bandwidth' -B3 -A1
