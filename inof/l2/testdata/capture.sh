#!/bin/sh
# How lldpd_custom_tlv.bin and lldpd_shutdown.bin were made (root, Debian
# lldpd 1.0.16): stock lldpd in a namespace sends the iNOF TLV configured
# with lldpcli; tcpdump on the peer records it, then the shutdown LLDPDU
# (TTL 0) lldpd sends when it stops. The frames are the first and the last
# record of the pcap, without the pcap headers.
#
# oui-info: 01 04 "tgt1" (host id), 02 01 02 (role target),
#           03 0f "nqn.2014-08.org" (NQN).
set -e
ip netns add lcapA; ip netns add lcapB
trap 'ip netns del lcapA; ip netns del lcapB' EXIT
ip link add ta netns lcapA type veth peer name tb netns lcapB
ip -n lcapA link set ta up; ip -n lcapB link set tb up
ip -n lcapA addr add 10.9.0.1/31 dev ta; ip -n lcapA addr add fd00::1/64 dev ta
d=$(mktemp -d); chmod 755 $d
cat > $d/lldpd.conf <<'CONF'
configure system hostname tgt1
configure lldp tx-interval 1
configure lldp custom-tlv oui 02,46,44 subtype 1 oui-info 01,04,74,67,74,31,02,01,02,03,0f,6e,71,6e,2e,32,30,31,34,2d,30,38,2e,6f,72,67
CONF
ip netns exec lcapB timeout 8 tcpdump -Z root -i tb -w $d/lldp.pcap -U ether proto 0x88cc &
sleep 2
ip netns exec lcapA lldpd -u $d/lldpd.sock -I ta -p $d/lldpd.pid -O $d/lldpd.conf
sleep 4; kill $(cat $d/lldpd.pid); wait
echo "frames in $d/lldp.pcap"
