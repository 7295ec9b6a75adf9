#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fetch-kernel.sh OUTDIR - fetch Debian's stock kernel for the VM suite.
#
# Downloads the current linux-image-cloud-amd64 kernel package with
# `apt-get download` (no install, no root needed beyond apt's own) and
# unpacks its boot/ directory into OUTDIR. The result is cached: when OUTDIR
# already holds a kernel, nothing is fetched. Prints the vmlinuz path on
# stdout; everything else goes to stderr.
#
# The cloud flavour is used because it is small and has everything the VM
# needs built in (serial console, initramfs, cgroup v2 with the cpu and
# cpuset controllers), so no modules are needed. RGROUP_VM_KERNEL_PKG names
# another meta package (e.g. linux-image-amd64).
#
# Exit status: 0 with the path printed; 77 (skip) when the kernel cannot be
# had here (no apt, no package lists, no network), with the reason.

set -eu

skip() {
	echo "fetch-kernel.sh: cannot fetch the VM kernel: $*" >&2
	exit 77
}

[ $# -eq 1 ] || { echo "usage: fetch-kernel.sh OUTDIR" >&2; exit 2; }
outdir=$1
meta=${RGROUP_VM_KERNEL_PKG:-linux-image-cloud-amd64}

find_kernel() {
	# Only a complete unpack counts: .complete is written last.
	[ -f "$outdir/.complete" ] || return 1
	for k in "$outdir"/boot/vmlinuz-*; do
		[ -f "$k" ] && { echo "$k"; return 0; }
	done
	return 1
}

if k=$(find_kernel); then
	echo "$k"
	exit 0
fi

for tool in apt-cache apt-get dpkg-deb; do
	command -v "$tool" >/dev/null 2>&1 || skip "'$tool' not found (a Debian-like host is needed)"
done

mkdir -p "$outdir" || skip "cannot create $outdir"

# Two test runs may start at once: one fetches, the other waits for it.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$outdir/.lock"
	flock 9
	if k=$(find_kernel); then
		echo "$k"
		exit 0
	fi
fi

# The meta package depends on exactly one versioned image package.
pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/.*Depends: //p' | grep '^linux-image-' | head -n 1)
[ -n "$pkg" ] || skip "apt-cache does not know '$meta' (run 'apt-get update' first)"

work=$(mktemp -d "$outdir/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

echo "fetch-kernel.sh: downloading $pkg into $outdir" >&2
# apt drops privileges to _apt when downloading; the temp dir must let it write.
chmod 0777 "$work"
(cd "$work" && apt-get download -q "$pkg" >&2) || skip "'apt-get download $pkg' failed (network? apt lists?)"
deb=$(find "$work" -maxdepth 1 -name '*.deb' | head -n 1)
[ -n "$deb" ] || skip "'apt-get download $pkg' produced no .deb"

dpkg-deb -x "$deb" "$work/x" || skip "cannot unpack $deb"
ls "$work"/x/boot/vmlinuz-* >/dev/null 2>&1 || skip "$deb holds no boot/vmlinuz-*"

# Only boot/ is kept (vmlinuz, config, System.map); the modules are not used.
rm -rf "${outdir:?}/boot"
mv "$work/x/boot" "$outdir/boot"
basename "$deb" >"$outdir/.complete"

k=$(find_kernel) || skip "unpacked kernel not found in $outdir/boot"
echo "fetch-kernel.sh: kernel ready: $k" >&2
echo "$k"
