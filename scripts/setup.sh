#!/usr/bin/env bash
# Installs what fared's lab and tests need on Debian: FRR (the interop peer),
# BIRD 2 (a second OSPF peer), lldpd, redis-server (the SONiC backend),
# tshark (RoCEv2 decoding), ns-3 (the sim's cross-check), iproute2,
# nftables, tcpdump, ping, strace. Idempotent; run as root.
set -euo pipefail
need=()
for b in /usr/lib/frr/isisd:frr /usr/sbin/nft:nftables /usr/bin/tcpdump:tcpdump /usr/bin/ping:iputils-ping /usr/sbin/ip:iproute2 \
	/usr/sbin/bird:bird2 /usr/sbin/lldpd:lldpd /usr/bin/redis-server:redis-server /usr/bin/tshark:tshark \
	/usr/bin/strace:strace /usr/bin/g++:g++ /usr/bin/pkg-config:pkg-config \
	/usr/include/ns3/core-module.h:libns3-dev /usr/include/gsl/gsl_rng.h:libgsl-dev \
	/usr/share/bash-completion/bash_completion:bash-completion /usr/bin/curl:curl /usr/bin/setpriv:util-linux \
	/usr/bin/dpkg-deb:dpkg /usr/bin/systemd-analyze:systemd; do
	[ -e "${b%%:*}" ] || need+=("${b##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture: no.
	echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
# Debian starts the system-wide frr service on install; the lab runs its own
# daemons per namespace, so the global one is not wanted.
# The same holds for bird, lldpd and redis: tests start their own.
for svc in frr bird lldpd redis-server; do
	if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet $svc 2>/dev/null; then
		systemctl stop $svc || true
	fi
done
command -v go >/dev/null || { echo "setup: Go is required (https://go.dev/dl), found none in PATH" >&2; exit 1; }
cd "$(dirname "$0")/.."
go mod download
mkdir -p bin
go build -o bin/ ./cmd/...
