#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# repeat-tests.sh - run the README's test command N times, each from a
# fresh clone of this checkout's HEAD, quiet and with RGROUP_TEST_LOAD=2
# (two busy outside processes), and print how often each test failed.
# Not part of CI: a full run takes a quarter of an hour or more.
#
#   scripts/repeat-tests.sh [N] [quiet|loaded|both]     (default 5 both)
#
# Each run: git clone, then ./scripts/test.sh in the clone (it builds,
# reuses the cached kernel of scripts/kernel.sh, and writes meson's JSON
# log); the clone is removed afterwards unless KEEP=1. RGROUP_TEST_STRICT
# is passed through as set. The table: one line per test that failed at
# least once, with its failures per mode, then the runs' wall times and
# their "N passed, N failed" lines.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-5}
modes=${2:-both}
case $modes in
quiet) modes=quiet ;;
loaded) modes=loaded ;;
both) modes="quiet loaded" ;;
*) sed -n '3,9s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/rgroup-repeat.XXXXXX")
# Readable by all, as a clone normally is: the compat tests run programs
# as nobody (runuser, su) that must load the build's preload library.
chmod 755 "$work"
results=$work/results.tsv
: >"$results"
summary=()

for mode in $modes; do
	for i in $(seq "$n"); do
		clone=$work/clone-$mode-$i
		git clone -q "$here" "$clone"
		load=0
		[ "$mode" = loaded ] && load=2
		start=$(date +%s)
		set +e
		(cd "$clone" && RGROUP_TEST_LOAD=$load ./scripts/test.sh) >"$work/$mode-$i.log" 2>&1
		rc=$?
		set -e
		took=$(($(date +%s) - start))
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work/$mode-$i.log" | tail -n 1 || true)
		summary+=("$mode run $i: ${line:-no summary (exit $rc)} in ${took} s")
		echo "${summary[-1]}" >&2
		python3 - "$clone/build/meson-logs/testlog.json" "$mode" >>"$results" <<'PY'
import json, sys
try:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        bad = r["result"] not in ("OK", "EXPECTEDFAIL", "SKIP")
        print(f'{r["name"]}\t{sys.argv[2]}\t{1 if bad else 0}')
except FileNotFoundError:
    print(f'(no test log)\t{sys.argv[2]}\t1')
PY
		[ "${KEEP:-0}" = 1 ] || rm -rf "$clone"
	done
done

echo
python3 - "$results" "$n" $modes <<'PY'
import collections, sys
path, n, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
fails = collections.defaultdict(lambda: collections.Counter())
names = set()
for line in open(path):
    name, mode, bad = line.rstrip("\n").split("\t")
    names.add(name)
    fails[name][mode] += int(bad)
print(f"{'test':40s} " + " ".join(f"{m + ' (of ' + str(n) + ')':>14s}" for m in modes))
shown = 0
for name in sorted(names):
    if sum(fails[name].values()):
        shown += 1
        print(f"{name:40s} " + " ".join(f"{fails[name][m]:>14d}" for m in modes))
if not shown:
    print(f"(no test failed in any of the runs; {len(names)} tests)")
PY
printf '%s\n' "${summary[@]}"
echo "logs: $work"
