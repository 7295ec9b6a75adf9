#!/usr/bin/env bash
# Soaks (not in CI: they take minutes). Needs root.
#
#   ./scripts/soak.sh [SECONDS]       the mixed soak (default 600 s)
#   ./scripts/soak.sh --churn [N]     test-churn with N thread lifetimes
#                                     (default 1,000,000), one backend
#
# The mixed soak runs six cases side by side, each a loop over registered
# tests of the system and run suites, with their own commands and
# environment (meson introspect), until SECONDS have passed:
#   churn        kernel-churn, governor-churn: rgroups made and ended fast
#   fds          kernel-fds, governor-fds: closefrom, dup2 over the
#                library's descriptors, RLIMIT_NOFILE 64 and 20
#   namespaces   kernel-gc: PID namespaces, processes killed mid-call, gc
#   moves        kernel-migrate rule8_moves_under_creation
#   raw-clones   cgroup1-run, governor-run raw_clone
#   signals      governor-safety signal_reset
# It fails if any run failed, or if an rgroup or test directory under
# the cgroup mounts, or a /dev/shm state or names file of the library's,
# is there at the end that was not there at the start. Other users of
# rgroup on the machine at the same time would show up as leftovers.
#
# --churn: every creation succeeds, no rgroup directory is left,
# descriptors back to the start value, RSS flat after the warm-up (first
# 10%) within the bound test-churn states; docs/HARDENING.md has figures.
#
# Env: RGROUP_BACKEND (--churn; default cgroup1), RGROUP_BUILD_DIR
# (default build-soak).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps $RGROUP_BUILD_DEPS

build=${RGROUP_BUILD_DIR:-build-soak}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dtests=true >/dev/null

churn() {
	local lifetimes=${1:-1000000} start rc
	ninja -C "$build" test/system/test-churn
	start=$(date +%s)
	set +e
	RGROUP_BACKEND=${RGROUP_BACKEND:-cgroup1} "$build/test/system/test-churn" "$lifetimes"
	rc=$?
	set -e
	echo "soak: $lifetimes lifetimes, $(($(date +%s) - start)) s, exit $rc" \
		"($([ $rc -eq 0 ] && echo passed || { [ $rc -eq 77 ] && echo skipped || echo FAILED; }))"
	return $rc
}

if [ "${1:-}" = --churn ]; then
	churn "${2:-}"
	exit
fi

seconds=${1:-600}
ninja -C "$build"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One line per test: NAME ENV... CMD..., from meson's own registry.
meson introspect --tests "$build" | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin):
    env = " ".join(shlex.quote(k + "=" + v) for k, v in t["env"].items())
    print(t["name"], env, " ".join(shlex.quote(c) for c in t["cmd"]))
' >"$work/tests"

# The library's own names: directories below the cgroup mounts, files in
# /dev/shm.
leftovers() {
	{
		find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d \
			\( -name 'rgroup-*' -o -name 'rgtest-*' \) 2>/dev/null
		find /dev/shm -maxdepth 1 -name 'rgroup-*' 2>/dev/null
	} | sort
}
leftovers >"$work/before"

# run_case NAME TEST[:CASE]...: loop over the tests until the deadline.
deadline=$(($(date +%s) + seconds))
run_case() {
	local name=$1 runs=0 failed=0 t test filter line
	shift
	while [ "$(date +%s)" -lt "$deadline" ]; do
		for t in "$@"; do
			test=${t%%:*}
			filter=
			[ "$t" = "$test" ] || filter=${t#*:}
			line=$(grep -m1 "^$test " "$work/tests") || { echo "soak: no test $test" >&2; return 1; }
			runs=$((runs + 1))
			# shellcheck disable=SC2086 # the registry's quoted words
			if ! eval "env ${line#"$test "} $filter" >>"$work/$name.log" 2>&1; then
				failed=$((failed + 1))
				echo "soak: $name: $t failed (run $runs; log $work/$name.log)" >&2
				cp "$work/$name.log" "/tmp/rgroup-soak-$name.log"
			fi
		done
		: >"$work/$name.log"
	done
	echo "$name $runs $failed" >"$work/$name.result"
}

echo "soak: six cases side by side for $seconds s"
pids=()
run_case churn kernel-churn governor-churn & pids+=($!)
run_case fds kernel-fds governor-fds & pids+=($!)
run_case namespaces kernel-gc & pids+=($!)
run_case moves kernel-migrate:rule8_moves_under_creation & pids+=($!)
run_case raw-clones cgroup1-run:raw_clone governor-run:raw_clone & pids+=($!)
run_case signals governor-safety:signal_reset & pids+=($!)
for p in "${pids[@]}"; do
	wait "$p" || true
done

status=0
printf '%-12s %6s %6s\n' case runs failed
for f in "$work"/*.result; do
	read -r name runs failed <"$f"
	printf '%-12s %6s %6s\n' "$name" "$runs" "$failed"
	[ "$failed" -eq 0 ] && [ "$runs" -gt 0 ] || status=1
done
results=("$work"/*.result)
[ ${#results[@]} -eq 6 ] || { echo "soak: a case did not finish"; status=1; }

# Removal is retried for a moment after a test ends.
for _ in $(seq 50); do
	leftovers >"$work/after"
	comm -13 "$work/before" "$work/after" >"$work/new"
	[ -s "$work/new" ] || break
	sleep 0.1
done
if [ -s "$work/new" ]; then
	echo "soak: left behind:"
	cat "$work/new"
	status=1
else
	echo "soak: nothing left behind"
fi
[ $status -eq 0 ] && echo "soak: passed" || echo "soak: FAILED"
exit $status
