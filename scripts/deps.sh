# shellcheck shell=bash
# Debian packages the project needs, installed when missing (as root).
# Sourced by scripts/test.sh and scripts/demo.sh.

# build: compiler, meson, ninja, pkg-config, ncurses (rgroup top);
# demo plots: gnuplot; unit tests: cmocka; VM suite: qemu, a static
# busybox, cpio, static libc (libc6-dev); `rgroup top` test: tmux;
# native suite: RGROUP_KERNEL_DEPS.
RGROUP_BUILD_DEPS="gcc libc6-dev meson ninja-build pkg-config libncurses-dev gnuplot-nox"
RGROUP_TEST_DEPS="libcmocka-dev qemu-system-x86 busybox-static cpio file tmux"
# the native kernel (scripts/kernel.sh): Debian's linux-source-6.1 is fetched
# with apt-get download and built with these.
RGROUP_KERNEL_DEPS="gcc make flex bison bc libelf-dev xz-utils patch util-linux"

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
