#!/usr/bin/env bash
# Builds fared's Debian package: fared and farectl (static, -trimpath), the
# bash completion farectl generates (cobra), the example config, the systemd
# unit and the Grafana dashboard, packed by nfpm v2.45.2 (packaging/nfpm.yaml).
#
#   scripts/package.sh [OUTDIR]      (default dist/)
#
# VERSION overrides the package version (Debian form: starts with a digit);
# the default is 0.0.0~git<commit date>.<short hash>. GOARCH cross-builds.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
mkdir -p "$out"
export GOARCH=${GOARCH:-$(go env GOARCH)}
if [ -z "${VERSION:-}" ]; then
	VERSION=$(git log -1 --format='0.0.0~git%cd.%h' --date=format:%Y%m%d 2>/dev/null || echo 0.0.0~dev)
fi
export FARED_VERSION=$VERSION
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
export FARED_STAGE=$stage
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$stage/" ./cmd/fared ./cmd/farectl
# The completion comes from the farectl being packaged (run on this host,
# so built for it when cross-building).
if [ "$GOARCH" = "$(GOARCH= go env GOARCH)" ]; then
	"$stage/farectl" completion bash >"$stage/farectl.bash"
else
	GOARCH= go run ./cmd/farectl completion bash >"$stage/farectl.bash"
fi
go run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2 package --config packaging/nfpm.yaml --packager deb --target "$out/"
