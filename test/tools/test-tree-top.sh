#!/bin/sh
# SPDX-License-Identifier: MIT
# test-tree-top.sh RGROUP TREE-HELPER - `rgroup tree` and `rgroup top`
# against a real process with a known rgroup tree (tree-helper.c).
#
#   tree --json   names, ids, parents, depth, nice, weight, thread counts
#   tree          the text form names every group
#   top           in tmux (100x30): the groups are on screen, s sorts,
#                 q quits with status 0; in 20x5 and when shrunk to 8x2 it
#                 keeps running; when the process exits, top exits 0
#   bad input     not a number, no such PID, a PID without rgroups,
#                 another user's process: exit 1 and one line on stderr;
#                 no PID: exit 2
#
# Exit 0 pass, 1 fail, 77 skip (with the reason; RGROUP_TEST_STRICT=1
# turns a skip into a failure). Every process, tmux server and cgroup it
# makes is removed, also on failure.
set -u

RGROUP=$1
HELPER=$2
fails=0

skip() {
	if [ -n "${RGROUP_TEST_STRICT:-}" ] && [ "${RGROUP_TEST_STRICT}" != 0 ]; then
		echo "FAIL (strict mode, would skip): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}
fail() {
	echo "  FAIL: $*" >&2
	fails=$((fails + 1))
}
ok() {
	echo "ok $*" >&2
}

[ "$(id -u)" = 0 ] || skip "needs root: the helper makes a system group of its own"
command -v tmux >/dev/null 2>&1 || skip "tmux is not installed (Debian package tmux)"
: "${RGROUP_BACKEND:=cgroup1}"
export RGROUP_BACKEND

work=$(mktemp -d /tmp/rgroup-test-tools.XXXXXX) || exit 1
sock=rgtest-tools-$$
hpid=
tmux_() { tmux -L "$sock" -f /dev/null "$@"; }

cleanup() {
	tmux_ kill-server >/dev/null 2>&1
	if [ -n "$hpid" ] && kill -0 "$hpid" 2>/dev/null; then
		kill -TERM "$hpid" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$hpid" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$hpid" 2>/dev/null
		wait "$hpid" 2>/dev/null
		# A killed helper leaves its system group (and rgroups): remove
		# them bottom-up; only the names this helper made.
		for mnt in /sys/fs/cgroup/cpu /sys/fs/cgroup; do
			[ -d "$mnt" ] || continue
			find "$mnt" -maxdepth 3 -type d -name "rgtest-*-$hpid" 2>/dev/null |
			while read -r d; do
				find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
			done
		done
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- the helper -------------------------------------------------------
"$HELPER" "$work/facts" 2>"$work/helper.err" &
hpid=$!
for _ in $(seq 100); do
	[ -f "$work/facts" ] && break
	kill -0 "$hpid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -f "$work/facts" ]; then
	wait "$hpid"; rc=$?
	hpid=
	cat "$work/helper.err" >&2
	[ "$rc" = 77 ] && skip "the helper cannot run here: $(cat "$work/helper.err")"
	echo "FAIL: the helper did not start (exit $rc)" >&2
	exit 1
fi
pid=$(awk '$1 == "pid" { print $2 }' "$work/facts")
plain=$(awk '$1 == "plain" { print $2 }' "$work/facts")
names=$(awk '$1 == "group" { print $2 }' "$work/facts")
echo "# helper $pid: $(echo $names)" >&2

# ---- tree --json --------------------------------------------------------
echo "# tree --json" >&2
if "$RGROUP" tree "$pid" --json >"$work/tree.json" 2>"$work/tree.err"; then
	before=$fails
	awk '$1 == "group" { $1 = ""; $2 = ""; sub(/^  /, ""); print }' "$work/facts" |
	while IFS= read -r prefix; do
		grep -qF "$prefix" "$work/tree.json" || { echo "  FAIL: tree --json lacks: $prefix" >&2; echo x; }
	done >"$work/missing"
	[ -s "$work/missing" ] && fail "tree --json does not show the tree (output below)"
	grep -qF "\"plain\":{\"threads\":$plain," "$work/tree.json" ||
		fail "tree --json: expected $plain plain threads"
	ngroups=$(grep -c '^{"name":"rgroup-' "$work/tree.json")
	[ "$ngroups" = 3 ] || fail "tree --json: $ngroups groups, expected 3"
	if command -v jq >/dev/null 2>&1; then
		jq -e '.groups | length == 3' "$work/tree.json" >/dev/null ||
			fail "tree --json is not valid JSON with 3 groups"
	fi
	[ "$fails" = "$before" ] || cat "$work/tree.json" >&2
	[ "$fails" = "$before" ] && ok "tree --json"
else
	fail "tree --json exit $?: $(cat "$work/tree.err")"
fi

echo "# tree" >&2
if "$RGROUP" tree "$pid" >"$work/tree.txt" 2>"$work/tree.err"; then
	before=$fails
	for n in $names; do
		grep -qF "$n" "$work/tree.txt" || fail "tree: $n missing"
	done
	grep -q '^total' "$work/tree.txt" || fail "tree: no total line"
	[ "$fails" = "$before" ] && ok "tree"
else
	fail "tree exit $?: $(cat "$work/tree.err")"
fi

# ---- top in tmux ---------------------------------------------------------
# run_top NAME WIDTH HEIGHT [ARGS]: top in a detached tmux session; its
# exit status lands in $work/NAME.rc.
run_top() {
	n=$1 w=$2 h=$3
	shift 3
	rm -f "$work/$n.rc"
	tmux_ new-session -d -s "$n" -x "$w" -y "$h" \
		"'$RGROUP' top $pid $*; echo \$? >'$work/$n.rc'; sleep 60"
}
wait_rc() {
	for _ in $(seq 50); do
		[ -f "$work/$1.rc" ] && { cat "$work/$1.rc"; return; }
		sleep 0.1
	done
	echo none
}

echo "# top 100x30" >&2
before=$fails
run_top big 100 30 -d 0.5
sleep 2
tmux_ capture-pane -p -t big >"$work/big.screen"
for n in $names; do
	grep -qF "$n" "$work/big.screen" || fail "top: $n not on screen"
done
grep -q 'IDEAL' "$work/big.screen" || fail "top: no column header"
grep -q '%' "$work/big.screen" || fail "top: no measured shares"
tmux_ send-keys -t big s
sleep 0.5
tmux_ capture-pane -p -t big >"$work/big2.screen"
grep -q 'sort: share' "$work/big2.screen" || fail "top: s did not switch the sort to share"
tmux_ send-keys -t big +
sleep 0.3
tmux_ capture-pane -p -t big | grep -q 'every 0.6s' || fail "top: + did not lengthen the interval"
tmux_ send-keys -t big q
rc=$(wait_rc big)
[ "$rc" = 0 ] || fail "top: q gave exit status $rc"
[ "$fails" = "$before" ] || cat "$work/big.screen" >&2
[ "$fails" = "$before" ] && ok "top 100x30"

echo "# top 20x5, then 8x2" >&2
before=$fails
run_top tiny 20 5 -d 0.2
sleep 1
tmux_ send-keys -t tiny s + - s
sleep 0.5
tmux_ resize-window -t tiny -x 8 -y 2 2>/dev/null
sleep 0.7
tmux_ resize-window -t tiny -x 30 -y 3 2>/dev/null
sleep 0.5
[ -f "$work/tiny.rc" ] && fail "top died in a tiny terminal (status $(cat "$work/tiny.rc"))"
tmux_ capture-pane -p -t tiny | grep -q 'rgroup top' || fail "top: nothing drawn in a small terminal"
tmux_ send-keys -t tiny q
rc=$(wait_rc tiny)
[ "$rc" = 0 ] || fail "top (tiny): q gave exit status $rc"
[ "$fails" = "$before" ] && ok "top tiny"

# ---- bad input ----------------------------------------------------------
# bad EXPECTED-STATUS ARGS...: status as expected and one line on stderr.
bad() {
	want=$1
	shift
	"$RGROUP" "$@" >/dev/null 2>"$work/bad.err"
	st=$?
	lines=$(wc -l <"$work/bad.err")
	if [ "$st" != "$want" ]; then
		fail "rgroup $*: exit $st, expected $want ($(cat "$work/bad.err"))"
	elif [ "$want" = 1 ] && [ "$lines" != 1 ]; then
		fail "rgroup $*: $lines lines on stderr, expected 1: $(cat "$work/bad.err")"
	else
		echo "  rgroup $*: $st: $(head -n 1 "$work/bad.err")" >&2
	fi
}
echo "# bad input" >&2
before=$fails
sleep 300 &
plainpid=$!
for cmd in tree top; do
	bad 1 $cmd abc
	bad 1 $cmd -- -5
	bad 1 $cmd 12x
	bad 1 $cmd 2147483647
	bad 1 $cmd "$plainpid"
	bad 2 $cmd
	bad 2 $cmd "$pid" extra
done
bad 2 top -d 0 "$pid"
bad 2 top -s bogus "$pid"
bad 2 tree --bogus "$pid"
kill "$plainpid"; wait "$plainpid" 2>/dev/null
if command -v setpriv >/dev/null 2>&1 && [ -x "$RGROUP" ] &&
   setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$RGROUP" tree "$pid" \
		>/dev/null 2>"$work/bad.err"
	st=$?
	if [ "$st" != 1 ] || [ "$(wc -l <"$work/bad.err")" != 1 ] ||
	   ! grep -q 'another user' "$work/bad.err"; then
		fail "another user's process: exit $st: $(cat "$work/bad.err")"
	else
		echo "  (as nobody) rgroup tree $pid: 1: $(cat "$work/bad.err")" >&2
	fi
else
	echo "  skip: another user's process (setpriv cannot switch to uid 65534 here)" >&2
fi
[ "$fails" = "$before" ] && ok "bad input"

# ---- the process goes away while top watches ------------------------------
echo "# top when the process exits" >&2
before=$fails
run_top gone 100 30 -d 0.2
sleep 1
kill -TERM "$hpid"
for _ in $(seq 50); do
	kill -0 "$hpid" 2>/dev/null || break
	sleep 0.1
done
wait "$hpid"
hrc=$?
[ "$hrc" = 0 ] || fail "the helper exited with $hrc: $(cat "$work/helper.err")"
hpid=
rc=$(wait_rc gone)
[ "$rc" = 0 ] || fail "top: exit status $rc after the process exited, expected 0"
tmux_ capture-pane -p -t gone | grep -q 'has exited' || fail "top: no 'has exited' message"
[ "$fails" = "$before" ] && ok "top when the process exits"

if [ "$fails" != 0 ]; then
	echo "$fails failure(s)" >&2
	exit 1
fi
exit 0
