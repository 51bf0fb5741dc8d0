# frr.sh: the FRR lab the IGP codecs' golden captures share, sourced by
# isis/packet/testdata/capture.sh and ospf/packet/testdata/capture.sh
# (after `set -euo pipefail`). A capture script sets
#   P       a per-run prefix of namespace and FRR instance names
#   DAEMON  the routing daemon next to zebra (isisd, ospfd)
# and may define cleanup_extra (run by the EXIT trap) and on_wait (run
# while extract.go still misses something, with the seconds waited).
#
# Each FRR node is zebra + $DAEMON in its own network namespace with an
# FRR path space (-N). Everything created here (namespaces, daemons, run
# dirs, the temp dir $TMP) is removed by the EXIT trap, also on failure or
# Ctrl-C. Needs root, frr, tcpdump and go.

FRR=/usr/lib/frr
TIMEOUT=${CAPTURE_TIMEOUT:-120}

[[ $(id -u) -eq 0 ]] || { echo "capture.sh: needs root" >&2; exit 1; }
for b in "$FRR/zebra" "$FRR/$DAEMON" tcpdump vtysh go ip; do
	command -v "$b" >/dev/null || { echo "capture.sh: $b not found (apt-get install -y frr tcpdump)" >&2; exit 1; }
done

TMP=$(mktemp -d "/tmp/${P}.XXXXXX")
chmod 755 "$TMP"
chown frr:frr "$TMP"
NSES=()
RUNDIRS=()
BGPIDS=()
DAEMONS=() # "daemon:pid"
KILL9=${KILL9:-} # daemons stopped with SIGKILL at once

cleanup() {
	local rc=$?
	set +e
	for pid in "${BGPIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for d in "${DAEMONS[@]}"; do
		if [[ " $KILL9 " == *" ${d%%:*} "* ]]; then kill -9 "${d#*:}"; else kill "${d#*:}"; fi 2>/dev/null
	done
	for d in "${DAEMONS[@]}"; do
		pid=${d#*:}
		for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
		{ wait "$pid"; } 2>/dev/null
		# FRR's per-process crash-log dir, left behind by a killed daemon.
		rm -rf "/var/tmp/frr/${d%%:*}.$pid"
	done
	for pid in "${BGPIDS[@]}"; do { wait "$pid"; } 2>/dev/null; done
	for ns in "${NSES[@]}"; do ip netns del "$ns" 2>/dev/null; done
	for d in "${RUNDIRS[@]}"; do rm -rf "$d"; done
	declare -F cleanup_extra >/dev/null && cleanup_extra
	if [[ $rc -ne 0 ]]; then
		echo "capture.sh: failed (rc $rc); FRR logs:" >&2
		tail -n 20 "$TMP"/*.log >&2 2>/dev/null
	fi
	rm -rf "$TMP"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkns() {
	ip netns add "$1"
	NSES+=("$1")
	ip -n "$1" link set lo up
}

# capture NS IFACE NAME FILTER...: tcpdump on IFACE of NS into $TMP/NAME.pcap.
capture() {
	local ns=$1 ifc=$2 name=$3
	shift 3
	ip netns exec "$ns" tcpdump -U -n -i "$ifc" -w "$TMP/$name.pcap" "$@" 2>"$TMP/tcpdump-$name.log" &
	BGPIDS+=($!)
}

# start_frr NAME NS: start zebra and $DAEMON of FRR instance NAME in NS,
# from $TMP/NAME-zebra.conf and $TMP/NAME-$DAEMON.conf.
start_frr() {
	local name=$1 ns=$2
	local run=/var/run/frr/$name
	chown frr:frr "$run"
	# -N puts the zserv socket and vty sockets under $run; -P 0: no TCP
	# vty. FRR insists its user is in the frrvty group, which root is
	# not: run as frr.
	local common=(-N "$name" -u frr -g frr -P 0)
	# Foreground daemons in the background: $! is then the daemon's own pid
	# (ip netns exec execs), which names FRR's /var/tmp/frr/<daemon>.<pid>.
	daemon() {
		ip netns exec "$ns" "$FRR/$1" "${common[@]}" -f "$TMP/$name-$1.conf" -i "$TMP/$name-$1.pid" \
			--log "file:$TMP/$name-$1.log" </dev/null >>"$TMP/$name-$1.out" 2>&1 &
		DAEMONS+=("$1:$!")
	}
	daemon zebra
	for _ in $(seq 50); do [[ -S $run/zserv.api ]] && break; sleep 0.1; done
	daemon "$DAEMON"
}

# extract ARGS...: run extract.go (next to the capture script) until it
# has seen every required packet, then write the files.
extract() {
	local start=$SECONDS
	until go run "$HERE/extract.go" "$@" -check >"$TMP/check.out" 2>&1; do
		if ((SECONDS - start > TIMEOUT)); then
			cat "$TMP/check.out" >&2
			echo "capture.sh: not everything seen in ${TIMEOUT}s" >&2
			exit 1
		fi
		declare -F on_wait >/dev/null && on_wait $((SECONDS - start))
		sleep 2
	done
	go run "$HERE/extract.go" "$@"
}

# finish WHAT PATTERN CONTEXT...: the human check that the TE maximum
# bandwidth reached the wire (tcpdump -vvv of the p2p capture must show
# PATTERN, with grep's CONTEXT options), then KEEP_PCAP=DIR keeps the pcap
# files, and the last word names what was written.
finish() {
	local what=$1 pattern=$2
	shift 2
	echo "--- tcpdump -vvv of the TE $what (p2p capture)"
	tcpdump -r "$TMP/p2p.pcap" -vvv -n 2>/dev/null | grep -i -m3 "$@" "$pattern" || {
		echo "capture.sh: tcpdump shows no $pattern sub-TLV" >&2
		exit 1
	}
	[[ -n ${KEEP_PCAP:-} ]] && cp "$TMP"/*.pcap "$KEEP_PCAP/"
	echo "capture.sh: wrote golden packets to $OUT"
}
