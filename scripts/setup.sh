#!/usr/bin/env bash
# Installs what fared's lab and tests need on Debian: FRR (the interop peer),
# iproute2, nftables, tcpdump, ping. Idempotent; run as root.
set -euo pipefail
need=()
for b in /usr/lib/frr/isisd:frr /usr/sbin/nft:nftables /usr/bin/tcpdump:tcpdump /usr/bin/ping:iputils-ping /usr/sbin/ip:iproute2; do
	[ -x "${b%%:*}" ] || need+=("${b##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
# Debian starts the system-wide frr service on install; the lab runs its own
# daemons per namespace, so the global one is not wanted.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet frr 2>/dev/null; then
	systemctl stop frr || true
fi
command -v go >/dev/null || { echo "setup: Go is required (https://go.dev/dl), found none in PATH" >&2; exit 1; }
cd "$(dirname "$0")/.."
go mod download
mkdir -p bin
go build -o bin/ ./cmd/...
