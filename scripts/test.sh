#!/usr/bin/env bash
# Runs every test, lab tests included (they need root and FRR; with CI=true a
# missing prerequisite is a failure, not a skip).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
go vet ./...
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt needed: $unformatted" >&2; exit 1; fi
go test -count=1 -timeout 25m ./...
# The packages where goroutines meet (reload, mailbox, API) once more under
# the race detector, and the live-change lab tests, whose route watcher reads
# the lab while the test adds and removes links (about a minute).
go test -count=1 -race ./daemon/... ./rib/... ./api/... ./internal/loop/...
go test -count=1 -race -timeout 10m -run 'TestLive(ISIS|OSPF)$' ./interop/scenarios/
