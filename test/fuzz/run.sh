#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build every libFuzzer target of the parsers (src/kernel-text/parse.c, the rules of
# `rgroup run` in src/run/run-spec.c, and the governor's state file in
# src/governor/governor-state.c, with the helpers they call: the sources of meson's
# rgroup-internal) with clang (ASan + UBSan) and
# run each for N seconds (default 10), starting from test/fuzz/corpus/,
# as many at a time as there are CPUs (FUZZ_JOBS=N to choose).
# New inputs go to a scratch directory, never into the source tree; it
# is removed after a run that found nothing, unless FUZZ_OUT named it.
#
#   test/fuzz/run.sh [seconds] [target...]     e.g. run.sh 60 mountinfo
#
# Not part of `meson test`: fuzzing is open-ended, the suites are not.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=${1:-10}
[ $# -gt 0 ] && shift
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/rgroup-fuzz.XXXXXX")}
cc=${CC_FUZZ:-clang}
mkdir -p "$out"

if [ $# -gt 0 ]; then
	targets="$*"
else
	targets=$(cd "$here" && ls fuzz-*.c | sed 's/^fuzz-//; s/\.c$//')
fi

# One target: build it, run it, and leave its report in $out/report-$t
# and "pass" or "fail" in $out/result-$t (the jobs below run side by side).
one() {
	t=$1
	bin="$out/fuzz-$t"
	{
		if ! "$cc" -g -O1 -std=gnu11 -D_GNU_SOURCE \
			-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
			-I"$top/include" -I"$top/src/kernel-text" -I"$top/src/governor" -I"$top/src/core" -I"$top/src/run" \
			"$here/fuzz-$t.c" "$top/src/kernel-text/parse.c" "$top/src/governor/governor-state.c" \
			"$top/src/kernel-text/locate.c" "$top/src/core/weight.c" "$top/src/run/run-spec.c" -o "$bin"; then
			echo "FAIL fuzz-$t: it does not build"
			echo fail >"$out/result-$t"
			return
		fi
		mkdir -p "$out/corpus-$t"
		echo "== fuzz-$t: ${secs}s"
		# the scratch corpus first: libFuzzer writes new inputs there
		if ! "$bin" -max_total_time="$secs" -max_len=16384 -print_final_stats=1 \
			-artifact_prefix="$out/crash-$t-" \
			"$out/corpus-$t" "$here/corpus/$t" 2>"$out/fuzz-$t.log"; then
			echo "FAIL fuzz-$t: see $out/fuzz-$t.log and $out/crash-$t-*"
			tail -30 "$out/fuzz-$t.log"
			echo fail >"$out/result-$t"
		else
			grep -E '^stat::number_of_executed_units' "$out/fuzz-$t.log" || true
			echo pass >"$out/result-$t"
		fi
	} >"$out/report-$t" 2>&1
}

# As many targets at a time as there are CPUs (FUZZ_JOBS), in batches
# (every target runs for the same time): each is one process, and a
# fuzzer's result does not depend on how fast it runs.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: FUZZ_JOBS wants a number above 0, got '$jobs'" >&2; exit 2 ;; esac
n=0
for t in $targets; do
	one "$t" &
	n=$((n + 1))
	[ $((n % jobs)) -ne 0 ] || wait
done
wait

status=0
passed=0
failed=0
for t in $targets; do
	cat "$out/report-$t" 2>/dev/null
	if [ "$(cat "$out/result-$t" 2>/dev/null)" = pass ]; then
		passed=$((passed + 1))
	else
		[ -e "$out/result-$t" ] || echo "FAIL fuzz-$t: no result"
		status=1
		failed=$((failed + 1))
	fi
done
if [ $status -eq 0 ] && [ -z "${FUZZ_OUT:-}" ]; then
	rm -rf "$out"
else
	echo "output in $out"
fi
echo "$passed passed, $failed failed"
exit $status
