# shellcheck shell=bash
# Debian packages the project needs, installed when missing (as root), and
# the build directory both commands share. Sourced by scripts/test.sh and
# scripts/demo.sh.

# build: compilers (g++: the C++ example and tests of <rgroup.hpp>),
# meson, ninja, pkg-config, ncurses (rgroup top); demo plots: gnuplot;
# unit tests: cmocka; VM suite: qemu, a static busybox, cpio, static libc
# (libc6-dev); `rgroup top` test: tmux; `rgroup run` on real programs:
# qemu again, the JVM (keytool), and the programs of its compatibility
# test (test/run/test-run-compat.c); abi suite: abigail-tools (abidiff);
# VM tests as a service: systemd (it boots in the guest); package suite:
# dpkg-dev, debhelper, fakeroot, lintian; the Rust bindings' tests:
# Debian's cargo and rustc and the two crates they use (no crates.io);
# native suite: RGROUP_KERNEL_DEPS.
RGROUP_BUILD_DEPS="gcc g++ libc6-dev meson ninja-build pkg-config libncurses-dev gnuplot-nox"
RGROUP_TEST_DEPS="libcmocka-dev qemu-system-x86 busybox-static cpio file tmux openjdk-17-jre-headless
  pigz zstd xz-utils sqlite3 python3 openssl gpg iproute2 procps systemd dbus-daemon login
  abigail-tools dpkg-dev debhelper fakeroot lintian
  cargo rustc librust-libc-dev librust-pkg-config-dev"
# the native kernel (scripts/kernel.sh): Debian's linux-source-6.12 is fetched
# with apt-get download and built with these.
RGROUP_KERNEL_DEPS="gcc make flex bison bc libelf-dev libssl-dev xz-utils patch util-linux"

install_deps() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing Debian packages: ${missing[*]}" >&2
		echo "install them (sudo apt-get install ${missing[*]}) or run this script as root" >&2
		return 1
	fi
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# configure_build DIR -Dtests=true|false: a directory that is not set up
# is set up with that option; one that is set up gets the tests option
# only when it asks for the suites and they are off (the demo leaves them
# off), so that each command works whatever ran before it.
configure_build() {
	local dir=$1 opt=$2 tests
	if [ ! -f "$dir/build.ninja" ]; then
		# Half set up (interrupted, or another meson's): start again.
		if [ -d "$dir/meson-private" ]; then
			meson setup --wipe "$dir" "$opt"
		else
			meson setup "$dir" "$opt"
		fi
		return
	fi
	[ "$opt" = -Dtests=true ] || return 0
	tests=$(meson introspect --buildoptions "$dir" |
		python3 -c 'import json, sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "tests"][0])')
	[ "$tests" = True ] || meson configure "$dir" -Dtests=true
}
