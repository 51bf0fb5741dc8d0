#!/usr/bin/env bash
# Capture golden IS-IS PDUs from real FRR (Debian's frr 8.4.4) for the
# isis/packet tests.
#
# Two scenarios run side by side, each FRR node being zebra + isisd in its
# own network namespace with an FRR path space (-N; the lab is
# internal/igp/goldencap/frr.sh):
#   p2p: r1 <-veth-> r2, "isis network point-to-point"
#   lan: r3, r4, r5 each on a veth to a Linux bridge in a switch namespace
# tcpdump captures on r1 and r3 until extract.go has seen a P2P IIH, an L2
# LAN IIH, an L2 LSP carrying TLV 22 with sub-TLV 9, a CSNP and a PSNP; the
# raw PDUs (802.3 header and LLC FE FE 03 stripped) are then written next to
# this script.
#
# Needs root, frr and tcpdump (apt-get install -y frr tcpdump) and go.
# Everything it creates (namespaces, daemons, run dirs, temp dir) is removed
# by the EXIT trap, also on failure or Ctrl-C.
#
# Usage: sudo ./capture.sh [OUTDIR]     (OUTDIR defaults to this directory)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE}
P=pk$$ # per-run prefix: concurrent runs and leftovers of other runs never collide
DAEMON=isisd
# isisd gets SIGKILL: 8.4.4 with mpls-te crashes in its SIGTERM handler
# (double free in ls_edge_del_all), which only adds noise.
KILL9=isisd
source "$HERE/../../../internal/igp/goldencap/frr.sh"

# node NAME NS N IFTYPE: configure lo and start zebra + isisd for router N.
node() {
	local name=$1 ns=$2 n=$3 iftype=$4
	local run=/var/run/frr/$name
	mkdir -p "$run"
	RUNDIRS+=("$run")
	ip -n "$ns" addr add "10.255.0.$n/32" dev lo
	ip -n "$ns" addr add "2001:db8:ff::$n/128" dev lo nodad

	cat >"$TMP/$name-zebra.conf" <<-EOF
		hostname r$n
		!
		interface eth0
		 link-params
		  enable
		  max-bw 1.25e+09
		 exit-link-params
		!
	EOF
	local p2p=""
	[[ $iftype == p2p ]] && p2p=" isis network point-to-point"
	cat >"$TMP/$name-isisd.conf" <<-EOF
		hostname r$n
		!
		interface eth0
		 ip router isis X
		 ipv6 router isis X
		$p2p
		 isis hello-interval 1
		!
		interface lo
		 ip router isis X
		 ipv6 router isis X
		 isis passive
		!
		router isis X
		 net 49.0001.0000.0000.000$n.00
		 is-type level-2-only
		 metric-style wide
		 mpls-te on
		 mpls-te router-address 10.255.0.$n
		 lsp-gen-interval 1
		!
	EOF
	start_frr "$name" "$ns"
}

# --- p2p: r1 -- r2
mkns "${P}a"
mkns "${P}b"
ip link add eth0 netns "${P}a" type veth peer name eth0 netns "${P}b"
ip -n "${P}a" addr add 10.0.12.1/24 dev eth0
ip -n "${P}b" addr add 10.0.12.2/24 dev eth0
ip -n "${P}a" addr add 2001:db8:12::1/64 dev eth0 nodad
ip -n "${P}b" addr add 2001:db8:12::2/64 dev eth0 nodad

# --- lan: r3, r4, r5 on a bridge in namespace ${P}s
mkns "${P}s"
ip -n "${P}s" link add br0 type bridge stp_state 0 forward_delay 0
for n in 3 4 5; do
	mkns "${P}$n"
	ip link add eth0 netns "${P}$n" type veth peer name "p$n" netns "${P}s"
	ip -n "${P}s" link set "p$n" master br0 up
	ip -n "${P}$n" addr add "10.0.100.$n/24" dev eth0
	ip -n "${P}$n" addr add "2001:db8:100::$n/64" dev eth0 nodad
done
ip -n "${P}s" link set br0 up

for ns in "${P}a" "${P}b" "${P}3" "${P}4" "${P}5"; do ip -n "$ns" link set eth0 up; done
# Start the captures before the daemons so the first hellos, CSNPs and the
# initial LSP exchange are all seen.
capture "${P}a" eth0 p2p isis
capture "${P}3" eth0 lan isis
sleep 1 # tcpdump needs a moment to open the interface

node "${P}r1" "${P}a" 1 p2p
node "${P}r2" "${P}b" 2 p2p
for n in 3 4 5; do node "${P}r$n" "${P}$n" "$n" lan; done

# FRR acks LSPs with PSNPs on p2p circuits; if the initial exchange went
# by without one, an LSP change forces a new flood and ack.
kicked=0
on_wait() {
	if (($1 > 30 && !kicked)) && grep -q 'missing frr_psnp' "$TMP/check.out"; then
		vtysh -N "${P}r2" -c 'conf t' -c 'router isis X' -c 'set-overload-bit' >/dev/null
		kicked=1
	fi
}
extract -p2p "$TMP/p2p.pcap" -lan "$TMP/lan.pcap" -out "$OUT"

# For reference: FRR's own view of the database.
ip netns exec "${P}a" vtysh -N "${P}r1" -c 'show isis database detail' >"$OUT/frr_database.txt" 2>/dev/null || true
finish LSP 'maximum link bandwidth' -B2 -A2
