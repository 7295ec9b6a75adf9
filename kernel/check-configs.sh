#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-configs.sh - build what the series touches under the configurations
# a maintainer's test robots use: for each of allyesconfig and
# allmodconfig, apply the whole series, check that CONFIG_SCHED_RGROUP=y
# took, and compile every object of a file the series changes, the
# directories they live in (kernel/sched/, kernel/cgroup/) and the uapi
# header test (usr/include/). Not the whole kernel (hours on 2 CPUs): the
# files the series changes and their neighbours. Not in CI.
#
#   kernel/check-configs.sh [CONFIG...]   default: allyesconfig allmodconfig
#
# Uses the source package scripts/kernel.sh fetched (its cache). Work and
# logs: $RGROUP_KERNEL_CACHE/config-check. Prints one line per
# configuration and "N passed, N failed".
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${RGROUP_KERNEL_CACHE:-${HOME:-/root}/.cache/rgroup/kernel}
patches=$root/kernel/patches
jobs=${RGROUP_KERNEL_JOBS:-$(nproc)}
pkg=linux-source-6.12
work=$cache/config-check
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(allyesconfig allmodconfig)

die() { echo "check-configs.sh: $*" >&2; exit 1; }

deb=
for d in "$cache"/src/"$pkg"_*.deb; do [ -f "$d" ] && deb=$d; done
[ -n "$deb" ] || die "no $pkg .deb in $cache/src: run scripts/kernel.sh once"

src=$work/$pkg
rm -rf "$work"
mkdir -p "$work/deb" "$work/logs"
dpkg-deb -x "$deb" "$work/deb"
tar -C "$work" -xf "$work/deb/usr/src/$pkg.tar.xz"
rm -rf "$work/deb"
mapfile -t series < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$patches/series")
for p in "${series[@]}"; do
	patch -d "$src" -p1 --quiet --forward <"$patches/$p" >/dev/null || die "$p does not apply"
done

# The C files the series changes, as objects, and the directories of its
# new code. kernel/sched/ builds a few objects that include its other .c
# files (build_policy.c, build_utility.c): the directory, not those files.
mapfile -t objects < <(for p in "${series[@]}"; do
	sed -n 's|^+++ b/\(.*\)\.c$|\1.o|p' "$patches/$p"
done | grep -v '^kernel/sched/' | sort -u)
targets=(prepare "${objects[@]}" kernel/sched/ kernel/cgroup/ usr/include/)

passed=0 failed=0
for c in "${configs[@]}"; do
	obj=$work/obj-$c
	log=$work/logs/$c.log
	what=ok
	if ! make -C "$src" O="$obj" "$c" >"$log" 2>&1; then
		what="make $c failed"
	elif ! grep -q '^CONFIG_SCHED_RGROUP=y' "$obj/.config"; then
		what="CONFIG_SCHED_RGROUP is not set by $c"
	elif ! make -C "$src" O="$obj" -j"$jobs" "${targets[@]}" >>"$log" 2>&1; then
		what="does not build (see $log)"
	elif grep -E 'warning:' "$log" | grep -E 'sched/|cgroup|fork\.c|exit\.c|sys\.c|exec\.c|proc/base\.c' >&2; then
		what="warnings in the series' files (see $log)"
	fi
	if [ "$what" = ok ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	printf '%-14s %s\n' "$c" "$what"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
