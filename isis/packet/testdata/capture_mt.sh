#!/usr/bin/env bash
# Capture golden multi-topology IS-IS PDUs (RFC 5120) from real FRR
# (Debian's frr 8.4.4) for the isis/packet tests (issue 27, item 3).
#
# r6 <-veth-> r7, both FRR zebra + isisd with "topology ipv6-unicast" (MT 2:
# TLV 229 in hellos, 222 and 237 in LSPs) and "topology ipv4-multicast"
# (MT 3: a second TLV 222; FRR 8.4.4 sends no TLV 235 for it, so 235 is
# tested by unit round trips only), TE on so the MT IS reachability carries
# sub-TLVs. tcpdump captures on r6 until extract.go -mt has seen a P2P IIH
# with TLV 229 and an LSP with 222 and 237; the raw PDUs (802.3 header and LLC stripped) are written as
# frr_mt_*.bin next to this script. capture.sh's files are left alone (its
# goldens' hand-read values would change on a new capture).
#
# Needs root, frr, tcpdump and go. Everything it creates is removed by the
# EXIT trap (internal/igp/goldencap/frr.sh), also on failure or Ctrl-C.
#
# Usage: sudo ./capture_mt.sh [OUTDIR]     (OUTDIR defaults to this directory)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE}
P=mt$$ # per-run prefix
DAEMON=isisd
KILL9=isisd # see capture.sh: 8.4.4 with mpls-te crashes on SIGTERM
source "$HERE/../../../internal/igp/goldencap/frr.sh"

# node NAME NS N: lo addresses, zebra + isisd of router N with MT 2 and 3.
node() {
	local name=$1 ns=$2 n=$3
	local run=/var/run/frr/$name
	mkdir -p "$run"
	RUNDIRS+=("$run")
	ip -n "$ns" addr add "10.255.0.$n/32" dev lo
	ip -n "$ns" addr add "2001:db8:ff::$n/128" dev lo nodad
	cat >"$TMP/$name-zebra.conf" <<-EOT
		hostname r$n
		interface eth0
		 link-params
		  enable
		  max-bw 1.25e+09
		 exit-link-params
	EOT
	cat >"$TMP/$name-isisd.conf" <<-EOT
		hostname r$n
		interface eth0
		 ip router isis X
		 ipv6 router isis X
		 isis network point-to-point
		 isis hello-interval 1
		interface lo
		 ip router isis X
		 ipv6 router isis X
		 isis passive
		router isis X
		 net 49.0001.0000.0000.000$n.00
		 is-type level-2-only
		 metric-style wide
		 topology ipv6-unicast
		 topology ipv4-multicast
		 mpls-te on
		 mpls-te router-address 10.255.0.$n
		 lsp-gen-interval 1
	EOT
	start_frr "$name" "$ns"
}

mkns "${P}a"
mkns "${P}b"
ip link add eth0 netns "${P}a" type veth peer name eth0 netns "${P}b"
ip -n "${P}a" addr add 10.0.67.6/24 dev eth0
ip -n "${P}b" addr add 10.0.67.7/24 dev eth0
ip -n "${P}a" addr add 2001:db8:67::6/64 dev eth0 nodad
ip -n "${P}b" addr add 2001:db8:67::7/64 dev eth0 nodad
for ns in "${P}a" "${P}b"; do ip -n "$ns" link set eth0 up; done
# The capture runs on the p2p name finish() reads.
capture "${P}a" eth0 p2p isis
sleep 1

node "${P}r6" "${P}a" 6
node "${P}r7" "${P}b" 7

extract -mt "$TMP/p2p.pcap" -out "$OUT"
ip netns exec "${P}a" vtysh -N "${P}r6" -c 'show isis database detail' >"$OUT/frr_mt_database.txt" 2>/dev/null || true
finish LSP 'multi-topology' -A3
