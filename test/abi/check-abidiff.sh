#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The library's ABI against the newest release's, abi/librgroup-X.Y.Z.abi
# (scripts/abi-baseline.sh), with abigail's abidiff, the public header's
# types only. Added symbols are compatible and pass (check-versions.py
# checks their node); any other change fails: a removed or changed
# function, a changed public type. A change that is meant goes into
# abi/librgroup-X.Y.Z.abignore with its reason.
# Usage: check-abidiff.sh LIBRARY SOURCE_DIR
# Exit 0 pass, 1 fail, 77 skip (no abidiff, no debug information).
set -uo pipefail
lib=$1 src=$2

skip() {
	echo "SKIP: $*" >&2
	[ -n "${RGROUP_TEST_STRICT:-}" ] && [ "$RGROUP_TEST_STRICT" != 0 ] && exit 1
	exit 77
}
command -v abidiff >/dev/null || skip "abidiff missing (apt-get install abigail-tools)"
readelf -S -W "$lib" | grep -q ' \.debug_info ' ||
	skip "$lib has no debug information, which abidiff reads (meson's buildtype debug or debugoptimized has it)"

base=$(ls "$src"/abi/librgroup-*.abi 2>/dev/null | sort -V | tail -n 1)
[ -n "$base" ] || { echo "FAIL: no baseline abi/librgroup-X.Y.Z.abi in $src"; exit 1; }
supp=${base%.abi}.abignore
args=(--exported-interfaces-only --headers-dir2 "$src/include")
[ -f "$supp" ] && args+=(--suppressions "$supp")

echo "abidiff ${args[*]} $base $lib"
abidiff "${args[@]}" "$base" "$lib"
rc=$?
# abidiff's status is a bit mask: 1 error, 2 usage, 4 a change, 8 an
# incompatible change.
if [ $((rc & 3)) -ne 0 ]; then
	echo "FAIL: abidiff could not compare (status $rc)"
	exit 1
fi
abidiff --no-added-syms "${args[@]}" "$base" "$lib" >/dev/null
rc2=$?
if [ "$rc2" -ne 0 ]; then
	echo "FAIL: the ABI of $(basename "$base" .abi) changed (abidiff status $rc): see above;" \
	     "keep it, or explain a change that is meant in $(basename "$supp")"
	exit 1
fi
echo "ABI compatible with $(basename "$base" .abi)${supp:+ (suppressions: $(basename "$supp"))}"
