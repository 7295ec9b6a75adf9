#!/bin/sh
# SPDX-License-Identifier: MIT
# test-demo.sh RGROUP - `rgroup demo` as a newcomer runs it (as root), on
# the kernel backend RGROUP_BACKEND names and on the governor:
#
#   tables     scenario (a) with its three groups at an ideal of a third,
#              (b) with A, A1, A2, B at the model's ideal, every nice
#              value as set; exit status 0: every group within the demo's
#              10%, also under outside load (then the demo counts (a) as
#              measured on one CPU, where the split is the weights alone;
#              (b) always runs there)
#   sgroup     the demo's system group is made, left and removed (kernel
#              backend); none on the governor
#   --plot     one PNG per scenario (gnuplot)
#   SIGINT     stops the demo at once: "interrupted", exit 1, its group
#              removed and no process of it left
#   usage      a bad option: exit 2
#
# Exit 0 pass, 1 fail, 77 skip (with the reason; RGROUP_TEST_STRICT=1
# turns a skip into a failure). What the demo makes, it removes itself;
# the test only checks that it did.
set -u

RGROUP=$1
. "$(dirname "$0")/check.sh"

[ "$(id -u)" = 0 ] || skip "needs root: the demo makes its system group only as root"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed (Debian package gnuplot-nox)"
: "${RGROUP_BACKEND:=cgroup1}"
kernel_backend=$RGROUP_BACKEND

work=$(mktemp -d /tmp/rgroup-test-demo.XXXXXX) || exit 1
dpid=
cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# has FILE PATTERN WHAT: the demo's output holds a line matching PATTERN.
has() {
	grep -Eq "$2" "$1" || fail "$3: no line matching '$2'"
}

# The system group the demo said it made, "" if none.
made_group() {
	sed -n 's/^system group: made \([^ ]*\) .*/\1/p' "$1"
}

# run BACKEND: one whole run with --plot; checks its tables. 4 s per
# scenario, the demo's default: a split over both CPUs needs it when
# another test runs beside this one.
run() {
	backend=$1
	out=$work/$backend.out
	echo "# demo on $backend" >&2
	RGROUP_BACKEND=$backend "$RGROUP" demo --seconds 4 --plot "$work/$backend.png" \
		>"$out" 2>"$work/$backend.err"
	rc=$?
	cat "$out" "$work/$backend.err" >&2
	[ "$rc" = 0 ] || fail "$backend: exit status $rc"
	has "$out" "^backend: $backend; " "$backend"
	if [ "$backend" = governor ]; then
		has "$out" '^\(a\) in this process' "governor (a)"
		has "$out" '^  thread 1 +1 .* 33\.3% ' "governor (a)"
		has "$out" '^  thread 2 +1 .* 33\.3% ' "governor (a)"
		[ -z "$(made_group "$out")" ] || fail "governor: a system group was made"
	else
		has "$out" '^\(a\) one system group' "$backend (a)"
		has "$out" '^  process 1 +1 .* 33\.3% ' "$backend (a)"
		has "$out" '^  process 2 +1 .* 33\.3% ' "$backend (a)"
		g=$(made_group "$out")
		if [ -z "$g" ]; then
			fail "$backend: no system group made"
		else
			has "$out" "^system group: moved back to .* and removed $g\$" "$backend"
			[ ! -e "$g" ] || fail "$backend: $g is still there"
		fi
	fi
	has "$out" '^  rgroup R +4 .* 33\.3% ' "$backend (a)"
	has "$out" '^  rgroup A +1 idle .* 66\.1% ' "$backend (b)"
	has "$out" '^    rgroup A1 +2 +0 +1024 .* 49\.8% ' "$backend (b)"
	has "$out" '^    rgroup A2 +2 +5 +335 .* 16\.3% ' "$backend (b)"
	has "$out" '^  rgroup B +2 +3 +526 .* 33\.9% ' "$backend (b)"
	grep -q 'nice not as set' "$out" && fail "$backend: a nice value was not as set"
	nested=$(sed -n 's/^  nested split within \([0-9.]*\)% of ideal$/\1/p' "$out")
	if [ -z "$nested" ]; then
		fail "$backend: no verdict for (b)"
	elif ! awk -v w="$nested" 'BEGIN { exit !(w <= 10) }'; then
		fail "$backend: (b), pinned to one CPU, is $nested% off its ideal (allowed 10%)"
	fi
	for png in "$work/$backend.png" "$work/$backend-nested.png"; do
		[ -s "$png" ] || fail "$backend: no plot $png"
	done
}

run "$kernel_backend"
run governor

# SIGINT in the middle of (a): it stops, says so and cleans up.
echo "# SIGINT" >&2
RGROUP_BACKEND=$kernel_backend "$RGROUP" demo --seconds 60 >"$work/int.out" 2>&1 &
dpid=$!
for _ in $(seq 100); do
	grep -q '^(a)' "$work/int.out" 2>/dev/null && break
	sleep 0.1
done
sleep 1   # its processes and threads are running now
kids=$(cat /proc/"$dpid"/task/*/children 2>/dev/null)
kill -INT "$dpid"
for _ in $(seq 100); do
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$dpid" 2>/dev/null; then
	fail "the demo still runs 10 s after SIGINT"
else
	wait "$dpid"
	rc=$?
	dpid=
	cat "$work/int.out" >&2
	[ "$rc" = 1 ] || fail "SIGINT: exit status $rc, expected 1"
	grep -q '^  interrupted$' "$work/int.out" || fail "SIGINT: no 'interrupted'"
	g=$(made_group "$work/int.out")
	[ -n "$g" ] && [ -e "$g" ] && fail "SIGINT: $g is still there"
	[ -n "$kids" ] || fail "SIGINT: the demo had no busy processes of its own to stop"
	for k in $kids; do
		kill -0 "$k" 2>/dev/null && fail "SIGINT: its process $k still runs"
	done
fi

echo "# usage" >&2
"$RGROUP" demo --bogus >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "demo --bogus: exit status $rc, expected 2"

finish
