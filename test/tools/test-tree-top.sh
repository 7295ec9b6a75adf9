#!/bin/sh
# SPDX-License-Identifier: MIT
# test-tree-top.sh RGROUP TREE-HELPER BUSY-EXIT - `rgroup tree` and `rgroup top`
# against a real process with a known rgroup tree (tree-helper.c), once on
# the kernel backend the harness names in RGROUP_BACKEND (cgroup1 here) and
# once on the governor, whose tree the tools read from its state file.
#
#   tree --json   names, ids, parents, depth, nice, weight, thread counts,
#                 the backend; governor: paused time per group
#   tree          the text form names the backend and every group
#   top           in tmux (100x30): the groups are on screen, s sorts,
#                 q quits with status 0; in 20x5 and when shrunk to 8x2 it
#                 keeps running; when the process exits, top exits 0
#   bad input     not a number, no such PID, a PID without rgroups,
#                 another user's process: exit 1 and one line on stderr;
#                 top without a PID and no terminal: exit 1
#   tree (no PID) lists the helper with its backend and 3 groups, not a
#                 process without rgroups
#   state file    (governor) mode 0600, gone when the process has exited,
#                 also when it exits with rgroup threads running (busy-exit);
#                 stale files (a dead pid; a live pid with another start
#                 time; another process's text under a live name) are
#                 ignored by tree, listed by gc --dry-run and removed by
#                 gc (in a directory of the test's own: the test never
#                 removes what it did not make)
#
# Exit 0 pass, 1 fail, 77 skip (with the reason; RGROUP_TEST_STRICT=1
# turns a skip into a failure). Every process, tmux server and cgroup it
# makes is removed, also on failure.
set -u

RGROUP=$1
HELPER=$2
BUSY_EXIT=$3
. "$(dirname "$0")/check.sh"

[ "$(id -u)" = 0 ] || skip "needs root: the helper makes a system group of its own"
command -v tmux >/dev/null 2>&1 || skip "tmux is not installed (Debian package tmux)"
: "${RGROUP_BACKEND:=cgroup1}"
kernel_backend=$RGROUP_BACKEND

work=$(mktemp -d /tmp/rgroup-test-tools.XXXXXX) || exit 1
sock=rgtest-tools-$$
hpid=
statefile=
fakes=
livepid=
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
	remove_dead_helper_state
	[ -n "$livepid" ] && kill "$livepid" 2>/dev/null
	rm -f $fakes
	rm -rf "$work"
}
# A governor helper that was killed leaves its state file: remove it (its
# name is this helper's alone), once the helper is gone.
remove_dead_helper_state() {
	if [ -n "$statefile" ] && ! kill -0 "$hpid" 2>/dev/null; then
		rm -f "$statefile" "$statefile.tmp"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# check_backend BACKEND: every check below against a helper on BACKEND
# (the body keeps the indentation it had before it became a function).
check_backend() {
backend=$1
export RGROUP_BACKEND=$backend
echo "# ---- backend $backend" >&2
rm -f "$work/facts"

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
statefile=$(awk '$1 == "state" { print $2 }' "$work/facts")
echo "# helper $pid: $(echo $names)" >&2

# The governor publishes its tree a quarter second after a change, later
# on a loaded machine: wait (at most 10 s) until tree shows every fact
# (at once on cgroupfs), then check verbosely below.
tree_matches() {
	"$RGROUP" tree "$pid" --json >"$work/tree.json" 2>/dev/null || return 1
	grep -qF "\"plain\":{\"threads\":$plain," "$work/tree.json" || return 1
	awk '$1 == "group" { $1 = ""; $2 = ""; sub(/^  /, ""); print }' "$work/facts" |
	while IFS= read -r prefix; do
		grep -qF "$prefix" "$work/tree.json" || echo x
	done | grep -q x && return 1
	return 0
}
for _ in $(seq 100); do
	tree_matches && break
	sleep 0.1
done
if [ -n "$statefile" ] && [ ! -f "$statefile" ]; then
	fail "the governor wrote no state file $statefile (does backend-governor.c call rgroup__publish()?)"
	kill -TERM "$hpid"; wait "$hpid"; hpid=
	return
fi

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
	grep -qF "\"backend\":\"$backend\"" "$work/tree.json" ||
		fail "tree --json does not name the backend $backend"
	if [ "$backend" = governor ]; then
		npaused=$(grep -c '"throttled_s":[0-9]' "$work/tree.json")
		[ "$npaused" = 3 ] || fail "tree --json: paused time for $npaused groups, expected 3"
		grep -qF "\"state\":\"$statefile\"" "$work/tree.json" ||
			fail "tree --json does not name the state file $statefile"
	fi
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
	grep -q "backend $backend" "$work/tree.txt" || fail "tree: does not say 'backend $backend'"
	if [ "$backend" = governor ]; then
		grep -q 'PAUSED(s)' "$work/tree.txt" || fail "tree: no PAUSED(s) column"
	fi
	[ "$fails" = "$before" ] || cat "$work/tree.txt" >&2
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
# screen_has NAME PATTERN: wait (at most 5 s: the machine may be loaded)
# until session NAME shows PATTERN; its screen lands in $work/NAME.screen.
screen_has() {
	for _ in $(seq 50); do
		tmux_ capture-pane -p -t "$1" >"$work/$1.screen" 2>/dev/null
		grep -q -- "$2" "$work/$1.screen" && return 0
		sleep 0.1
	done
	return 1
}

echo "# top 100x30" >&2
before=$fails
run_top big 100 30 -d 0.5
# (a capture may catch a screen half drawn: wait for each piece)
for n in $names; do
	screen_has big "$n" || fail "top: $n not on screen"
done
grep -q '%' "$work/big.screen" || fail "top: no shares"
grep -q 'IDEAL' "$work/big.screen" || fail "top: no column header"
grep -q "), backend $backend, every" "$work/big.screen" || fail "top: does not name the backend $backend"
cp "$work/big.screen" "$work/big1.screen"
tmux_ send-keys -t big s
screen_has big 'sort: share' || fail "top: s did not switch the sort to share"
tmux_ send-keys -t big +
screen_has big 'every 0.6s' || fail "top: + did not lengthen the interval"
tmux_ send-keys -t big q
rc=$(wait_rc big)
[ "$rc" = 0 ] || fail "top: q gave exit status $rc"
[ "$fails" = "$before" ] || cat "$work/big1.screen" "$work/big.screen" >&2
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
screen_has tiny 'rgroup top' || fail "top: nothing drawn in a small terminal"
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
	bad 2 $cmd "$pid" extra
done
bad 1 top   # no PID: one line (the only user needs a terminal here, or there are several or none)
bad 2 top -d 0 "$pid"
bad 2 top -s bogus "$pid"
bad 2 tree --bogus "$pid"
"$RGROUP" tree 2>/dev/null | grep -q "^ *$plainpid " && fail "tree (no PID) lists $plainpid, which has no rgroup"
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

# ---- tree without a PID: the processes that use rgroups ------------------------
echo "# tree (no PID)" >&2
before=$fails
if "$RGROUP" tree >"$work/list.txt" 2>"$work/list.err"; then
	awk -v p="$pid" -v b="$backend" '$1 == p && $3 == b && $4 == 3 { f = 1 } END { exit !f }' \
		"$work/list.txt" || fail "tree lists no line '$pid ... $backend 3 ...': $(cat "$work/list.txt")"
else
	fail "tree (no PID): exit $?: $(cat "$work/list.err")"
fi
if "$RGROUP" tree --json >"$work/list.json" 2>"$work/list.err"; then
	grep -qF "{\"pid\":$pid,\"comm\":" "$work/list.json" || fail "tree --json lists no $pid"
	if command -v jq >/dev/null 2>&1; then
		jq -e --argjson p "$pid" '.processes | map(select(.pid == $p and .groups == 3)) | length == 1' \
			"$work/list.json" >/dev/null || fail "tree --json (no PID): not valid, or $pid not with 3 groups"
	fi
else
	fail "tree --json (no PID): exit $?: $(cat "$work/list.err")"
fi
[ "$fails" = "$before" ] && ok "tree (no PID)"

[ "$backend" = governor ] && check_state_files

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
screen_has gone 'has exited' || fail "top: no 'has exited' message"
tmux_ kill-server >/dev/null 2>&1   # the next backend reuses the session names
if [ -n "$statefile" ]; then
	[ -e "$statefile" ] && fail "the state file $statefile is still there after the process exited"
	statefile=
fi
[ "$fails" = "$before" ] && ok "top when the process exits"
}

# ---- governor state files ------------------------------------------------
# A pid that no process has now (one that just exited).
dead_pid() {
	while :; do
		sh -c 'exit 0' &
		d=$!
		wait "$d"
		kill -0 "$d" 2>/dev/null || { echo "$d"; return; }
	done
}

check_state_files() {
	echo "# state files" >&2
	before=$fails
	mode=$(stat -c '%a %u %F' "$statefile" 2>/dev/null)
	[ "$mode" = "600 $(id -u) regular file" ] ||
		fail "state file $statefile: '$mode', expected mode 600, owner $(id -u), a regular file"
	# exit() with rgroup threads running: the process is gone at once, so
	# the file must go on the way out, not when the governor notices.
	for i in 1 2 3; do
		busyfile=$("$BUSY_EXIT" 2>"$work/busy.err") ||
			{ fail "busy-exit: $(cat "$work/busy.err")"; break; }
		if [ -e "$busyfile" ]; then
			rm -f "$busyfile"
			fail "busy-exit (run $i): its state file $busyfile outlived the process"
			break
		fi
	done

	# Stale files in /dev/shm, made here (removed by cleanup): a dead pid's,
	# a live pid's under another start time, and the helper's text under the
	# live `sleep` process's real name.
	sleep 300 &
	livepid=$!
	dpid=$(dead_pid)
	livestart=$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$livepid/stat")
	stale_dead=/dev/shm/rgroup-$dpid-12345.state
	stale_start=/dev/shm/rgroup-$livepid-$((livestart + 1)).state
	stale_text=/dev/shm/rgroup-$livepid-$livestart.state
	fakes="$stale_dead $stale_start $stale_text"
	for f in $fakes; do
		cp "$statefile" "$f" || fail "cannot make $f"
	done
	bad 1 tree "$dpid"
	grep -q 'no process' "$work/bad.err" || fail "tree of a dead pid with a state file: $(cat "$work/bad.err")"
	bad 1 tree "$livepid"
	grep -q 'does not use rgroup' "$work/bad.err" ||
		fail "tree followed a stale state file: $(cat "$work/bad.err")"
	"$RGROUP" gc --dry-run >"$work/gc.out" 2>"$work/gc.err"
	grep -qx "would remove $stale_dead" "$work/gc.out" ||
		fail "gc --dry-run does not list $stale_dead: $(grep state "$work/gc.out")"
	grep -qx "would remove $stale_start" "$work/gc.out" ||
		fail "gc --dry-run does not list $stale_start (start time of another process)"
	grep -qF "$statefile" "$work/gc.out" && fail "gc --dry-run lists the live helper's state file"
	grep -qF "$stale_text" "$work/gc.out" && fail "gc --dry-run lists a live process's name"
	[ -e "$stale_dead" ] || fail "gc --dry-run removed $stale_dead"

	# The removal, in a directory of the test's own.
	mkdir "$work/shm"
	for f in "rgroup-$dpid-12345.state" "rgroup-$dpid-12345.state.tmp" \
		 "rgroup-$livepid-$((livestart + 1)).state" "rgroup-$livepid-$livestart.state" \
		 "rgroup-$dpid-012345.state" "rgroup-$dpid-12345.statex" "rgroup-$dpid-1.txt"; do
		cp "$statefile" "$work/shm/$f"
	done
	ln -s /dev/null "$work/shm/rgroup-$dpid-7.state"
	mkdir "$work/shm/rgroup-$dpid-8.state"
	"$RGROUP" gc "$work/shm" >"$work/gc.out" 2>"$work/gc.err" ||
		fail "gc $work/shm: exit $?: $(cat "$work/gc.err")"
	left=$(ls "$work/shm" | LC_ALL=C sort | tr '\n' ' ')
	want=$(printf '%s\n' "rgroup-$dpid-012345.state" "rgroup-$dpid-1.txt" \
		"rgroup-$dpid-12345.statex" "rgroup-$dpid-7.state" "rgroup-$dpid-8.state" \
		"rgroup-$livepid-$livestart.state" | LC_ALL=C sort | tr '\n' ' ')
	[ "$left" = "$want" ] || fail "gc $work/shm left '$left', expected '$want'"
	grep -qx '3 state files removed' "$work/gc.out" ||
		fail "gc: no count of 3 state files: $(cat "$work/gc.out")"
	kill "$livepid"; wait "$livepid" 2>/dev/null
	livepid=
	rm -f $fakes
	fakes=
	[ "$fails" = "$before" ] && ok "state files"
}

check_backend "$kernel_backend"
check_backend governor

finish
