#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# kernel.sh - build the rgroup kernel for the project's qemu harness and
# print the path of its bzImage as the last line of output.
#
#   scripts/kernel.sh            build (or find in the cache) the test kernel
#   scripts/kernel.sh --cached   only print the cached kernel's path (exit 1
#                                if it is not built yet); never builds
#   scripts/kernel.sh --key      print the cache key and exit
#
# Steps: fetch Debian's linux-source-6.12 with `apt-get download` (into the
# cache, `apt-get update` first when the package is unknown), unpack it,
# apply kernel/patches/ in `series` order with `patch -p1`, configure
# `make tinyconfig` + kernel/config/qemu.config + kernel/config/debug.config
# (lockdep, KASAN, kmemleak, fault injection; RGROUP_KERNEL_DEBUG=0 leaves
# it out), check
# that every option of the fragments took, and build bzImage with
# -j$(nproc). Installs its build dependencies (scripts/deps.sh) as root.
#
# The result is cached under a key: the hash of the source package's
# version, the series, the patches, the fragments and this recipe. A cached
# run takes a second or two.
#
# Environment:
#   RGROUP_KERNEL_CACHE  cache directory (default ~/.cache/rgroup/kernel)
#   RGROUP_KERNEL_JOBS   make -j (default: nproc)
#   RGROUP_KERNEL_DEBUG  0: build without kernel/config/debug.config
#   RGROUP_KERNEL_DEB    use this linux-source-6.12 .deb instead of fetching
#   RGROUP_KERNEL_KEEP   1: keep the build tree (cache/build-KEY) afterwards
#
# Progress goes to stderr, the build log to cache/KEY/build.log.
set -euo pipefail

me=kernel.sh
root=$(cd "$(dirname "$0")/.." && pwd)
pkg=linux-source-6.12
recipe=1 # bump when the steps below change what gets built
cache=${RGROUP_KERNEL_CACHE:-${HOME:-/root}/.cache/rgroup/kernel}
jobs=${RGROUP_KERNEL_JOBS:-$(nproc)}
debug=${RGROUP_KERNEL_DEBUG:-1}
mode=build

case ${1:-} in
--cached) mode=cached ;;
--key) mode=key ;;
'') ;;
*) sed -n '5,9s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac

say() { echo "$me: $*" >&2; }
die() { say "FAIL: $*"; exit 1; }

patches=$root/kernel/patches
fragments=("$root/kernel/config/qemu.config")
[ "$debug" = 0 ] || fragments+=("$root/kernel/config/debug.config")
[ -f "$patches/series" ] || die "no $patches/series"

series() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$patches/series"; }

# The source package: a given .deb, or the candidate version apt knows.
deb_version() { dpkg-deb -f "$1" Version; }
source_version() {
	if [ -n "${RGROUP_KERNEL_DEB:-}" ]; then
		deb_version "$RGROUP_KERNEL_DEB"
		return
	fi
	local v
	v=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	if [ -z "$v" ] || [ "$v" = "(none)" ]; then
		[ "$mode" = build ] || return 1
		say "apt does not know $pkg: apt-get update"
		apt-get update -qq >&2 || true
		v=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	fi
	[ -n "$v" ] && [ "$v" != "(none)" ] || return 1
	echo "$v"
}

version=$(source_version) || die "cannot tell the version of $pkg (no apt lists? run apt-get update)"
key=$({
	echo "recipe $recipe $pkg $version debug=$debug"
	series
	for p in $(series); do sha256sum <"$patches/$p"; done
	for f in "${fragments[@]}"; do sha256sum <"$f"; done
} | sha256sum | cut -c1-16)

if [ "$mode" = key ]; then
	echo "$key"
	exit 0
fi

out=$cache/$key
if [ -f "$out/bzImage" ]; then
	say "cached: $pkg $version + $(series | wc -l) patches (key $key)"
	echo "$out/bzImage"
	exit 0
fi
[ "$mode" = cached ] && { say "not built yet (key $key): run scripts/kernel.sh"; exit 1; }

# --- build -------------------------------------------------------------------

# shellcheck source=scripts/deps.sh
. "$root/scripts/deps.sh"
# shellcheck disable=SC2086 # a list of package names
install_deps $RGROUP_KERNEL_DEPS >&2 || die "missing build dependencies"

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -f "$out/bzImage" ]; then # another run built it meanwhile
	echo "$out/bzImage"
	exit 0
fi

start=$(date +%s)
deb=${RGROUP_KERNEL_DEB:-}
if [ -z "$deb" ]; then
	for d in "$cache"/src/"${pkg}"_*.deb; do
		if [ -f "$d" ] && [ "$(deb_version "$d")" = "$version" ]; then
			deb=$d
			break
		fi
	done
fi
if [ -z "$deb" ]; then
	say "fetching $pkg $version (apt-get download, ~140 MB)"
	rm -rf "$cache/src"
	mkdir -p "$cache/src"
	(cd "$cache/src" && apt-get download "$pkg=$version" >&2) || die "apt-get download $pkg failed"
	for d in "$cache"/src/"${pkg}"_*.deb; do deb=$d; done
	[ -f "$deb" ] || die "apt-get download left no $pkg .deb in $cache/src"
fi

build=$cache/build-$key
rm -rf "$build"
mkdir -p "$build/deb" "$out.tmp"
log=$out.tmp/build.log
say "unpacking $(basename "$deb")"
dpkg-deb -x "$deb" "$build/deb"
tar -C "$build" -xf "$build/deb/usr/src/$pkg.tar.xz"
rm -rf "$build/deb"
src=$build/$pkg

say "applying $(series | wc -l) patches"
for p in $(series); do
	patch -d "$src" -p1 --quiet --forward <"$patches/$p" >>"$log" 2>&1 ||
		die "patch $p does not apply to $pkg $version (see $log)"
done

say "configuring: tinyconfig + ${fragments[*]##*/}"
obj=$build/obj
{
	make -C "$src" O="$obj" tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${fragments[@]}"
	make -C "$src" O="$obj" olddefconfig
} >>"$log" 2>&1 || die "configuration failed (see $log)"
# Every option a fragment asks for must have taken (a dependency missing in
# this source would silently drop it).
untaken=
while read -r line; do
	case $line in
	CONFIG_*=*) opt=${line%%=*} want=${line#*=} ;;
	"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} want=n ;;
	*) continue ;;
	esac
	got=$(sed -n "s/^$opt=//p" "$obj/.config")
	[ -n "$got" ] || got=n
	[ "$got" = "$want" ] || untaken+=" $opt=$want(got $got)"
done < <(cat "${fragments[@]}")
[ -z "$untaken" ] || die "configuration options did not take:$untaken"

say "building bzImage with -j$jobs (about 9 minutes on 2 quiet CPUs; log: $log)"
if ! make -C "$src" O="$obj" -j"$jobs" bzImage >>"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "the kernel build failed (see $log)"
fi

cp "$obj/arch/x86/boot/bzImage" "$obj/.config" "$out.tmp/"
mv "$out.tmp/.config" "$out.tmp/config"
echo "$pkg $version, patches: $(series | tr '\n' ' ')" >"$out.tmp/source"
rm -rf "$out"
mv "$out.tmp" "$out"
[ "${RGROUP_KERNEL_KEEP:-0}" = 1 ] || rm -rf "$build"
say "built in $(($(date +%s) - start)) s (key $key)"
echo "$out/bzImage"
