#!/usr/bin/env bash
# first-hour.sh runs the commands of docs/first-hour.md, exactly: every
# ```sh block of the page, in order, in one bash with -e, -u and pipefail.
# The block after the "first-hour: cleanup" marker runs last, on success
# and on failure. The page is the source; this script has no command of
# its own.
#
#   P=fh1 scripts/first-hour.sh     # namespaces fh1-a, fh1-b (default fh)
#
# Needs root, fared and farectl in $PATH, FRR 8.4 in /usr/lib/frr.
set -euo pipefail
doc=${FIRST_HOUR_DOC:-$(dirname "$0")/../docs/first-hour.md}
work=$(mktemp)
trap 'rm -f "$work"' EXIT
# awk: sh blocks to stdout, the cleanup block into a function.
awk '
	/^<!-- first-hour: cleanup -->$/ { cleanup = 1; next }
	/^```sh$/ { inblock = 1; n++; if (cleanup) print "cleanup() {"; else print "# --- block " n; next }
	/^```$/ && inblock { inblock = 0; if (cleanup) { print "}"; cleanup = 0; done = 1 }; next }
	inblock { print }
	END { if (!done) { print "echo \"first-hour: no cleanup block in the page\" >&2; exit 1" } }
' "$doc" > "$work.steps"
# The cleanup function must exist before the first step runs.
{
	echo 'set -euo pipefail'
	sed -n '/^cleanup() {$/,/^}$/p' "$work.steps"
	echo 'trap cleanup EXIT'
	sed '/^cleanup() {$/,/^}$/d' "$work.steps"
	echo 'echo "first-hour: all steps passed"'
} > "$work"
rm -f "$work.steps"
echo "first-hour: $(grep -c '^# --- block' "$work") blocks from $doc"
bash "$work"
