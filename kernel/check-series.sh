#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-series.sh - check each patch of the series on its own, as a
# reviewer bisecting it would: for k = 1..N, the base with patches 1..k
# applied must pass checkpatch --strict (patch k), build, boot in qemu and
# run the VM suite's smoke test. Not in CI (about 3-5 minutes a patch on
# 2 CPUs); run it before changing the series' order or splitting a patch.
#
#   kernel/check-series.sh [FIRST [LAST]]    patches FIRST..LAST (1-based)
#
# Needs what scripts/kernel.sh and test/vm/run-in-vm.sh need, and a build
# directory configured with -Dtests=true (RGROUP_BUILD_DIR, default build)
# for the smoke program. Uses the source package scripts/kernel.sh
# fetched (its cache) and the test configuration without the debug
# fragment. Work and logs: $RGROUP_KERNEL_CACHE/series-check (kept: a
# later run builds incrementally). Prints one line per patch and
# "N passed, N failed".
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${RGROUP_KERNEL_CACHE:-${HOME:-/root}/.cache/rgroup/kernel}
patches=$root/kernel/patches
build=${RGROUP_BUILD_DIR:-$root/build}
jobs=${RGROUP_KERNEL_JOBS:-$(nproc)}
pkg=linux-source-6.12
work=$cache/series-check
mapfile -t series < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$patches/series")
first=${1:-1}
last=${2:-${#series[@]}}

die() { echo "check-series.sh: $*" >&2; exit 1; }

smoke=$build/test/vm/smoke
[ -x "$smoke" ] || die "no $smoke: configure $build with -Dtests=true and build it"
deb=
for d in "$cache"/src/"$pkg"_*.deb; do [ -f "$d" ] && deb=$d; done
[ -n "$deb" ] || die "no $pkg .deb in $cache/src: run scripts/kernel.sh once"

# A fresh tree with patches 1..first-1; later patches go on one by one.
src=$work/$pkg
obj=$work/obj
rm -rf "$work"
mkdir -p "$work/deb" "$work/logs"
dpkg-deb -x "$deb" "$work/deb"
tar -C "$work" -xf "$work/deb/usr/src/$pkg.tar.xz"
rm -rf "$work/deb"
for ((i = 1; i < first; i++)); do
	patch -d "$src" -p1 --quiet --forward <"$patches/${series[i - 1]}" >/dev/null ||
		die "${series[i - 1]} does not apply"
done
make -C "$src" O="$obj" tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
	"$root/kernel/config/qemu.config" >/dev/null

passed=0 failed=0
for ((i = first; i <= last; i++)); do
	p=${series[i - 1]}
	log=$work/logs/$(printf %02d "$i").log
	what=ok
	if ! patch -d "$src" -p1 --forward <"$patches/$p" >"$log" 2>&1; then
		what="does not apply"
	elif ! "$src/scripts/checkpatch.pl" --strict --quiet --no-tree \
		"$patches/$p" >>"$log" 2>&1; then
		what="checkpatch --strict complains"
	elif ! make -C "$src" O="$obj" olddefconfig >>"$log" 2>&1 ||
		! make -C "$src" O="$obj" -j"$jobs" bzImage >>"$log" 2>&1; then
		what="does not build"
	elif ! "$root/test/vm/run-in-vm.sh" --kernel "$obj/arch/x86/boot/bzImage" \
		--timeout 240 --env RGROUP_BACKEND=cgroup2 "$smoke" >>"$log" 2>&1; then
		what="does not boot and pass the smoke test"
	fi
	if [ "$what" = ok ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	printf '%2d %-64s %s\n' "$i" "${p:0:64}" "$what"
	# A patch that did not apply leaves nothing to build the rest on.
	[ "$what" != "does not apply" ] || break
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
