#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Write the ABI baseline of a released version: builds the tag vX.Y.Z in a
# temporary directory (the sources as tagged, nothing else) and writes
# abidw's description of its librgroup.so, the public header's types
# only, to abi/librgroup-X.Y.Z.abi. Run once per release, after tagging;
# test/abi/check-abidiff.sh compares every build against the newest one.
#
#   scripts/abi-baseline.sh v0.2.0
#
# Needs abigail-tools, meson, ninja and a compiler; the build has debug
# information (meson's debugoptimized), which abidw reads.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${1:?usage: $0 vX.Y.Z}
case $tag in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "$0: '$tag' is not a release tag (vX.Y.Z)" >&2; exit 2 ;;
esac
git rev-parse -q --verify "refs/tags/$tag" >/dev/null ||
	{ echo "$0: no tag $tag here (git fetch --tags?)" >&2; exit 1; }
command -v abidw >/dev/null || { echo "$0: abidw missing (apt-get install abigail-tools)" >&2; exit 1; }

work=$(mktemp -d /tmp/rgroup-abi.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
git archive --format=tar "$tag" | tar -x -C "$work/src"
meson setup -Dtests=false --buildtype=debugoptimized "$work/build" "$work/src" >/dev/null
ninja -C "$work/build" >/dev/null
lib=$(find "$work/build" -maxdepth 2 -name 'librgroup.so.*.*.*' -type f | head -n 1)
[ -n "$lib" ] || { echo "$0: $tag built no librgroup.so.X.Y.Z" >&2; exit 1; }

out=abi/librgroup-${tag#v}.abi
abidw --exported-interfaces-only --headers-dir "$work/src/include" --no-corpus-path --no-comp-dir-path --out-file "$out" "$lib"
echo "$out: $(grep -c '<elf-symbol ' "$out") symbols, from $tag ($(git rev-parse --short "$tag^{commit}"))"
