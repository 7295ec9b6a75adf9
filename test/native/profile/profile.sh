#!/bin/bash
# SPDX-License-Identifier: MIT
#
# profile.sh - where the instructions of a thread in a new rgroup go, on
# the native kernel: the guest's instructions counted by kernel function
# (a qemu plugin, tbcount.c) while create.c makes threads three ways, and
# the split printed by profile.py. Not a test and not run by CI; a tool
# for the cost work on the kernel series (docs/BENCHMARKS.md).
#
# usage: profile.sh [--n N] [--possible P] [--functions K] [--keep DIR]
#
#   --n N          iterations per window (default 4000; about 2 minutes
#                  of one host CPU per boot)
#   --possible P   boot with P possible CPUs (qemu -smp P, at most 255),
#                  2 of them brought up (maxcpus=2), as bench-possible.sh
#                  --never-up does (default 2)
#   --functions K  list the K functions that differ most (default 25)
#   --keep DIR     keep the console and the counts in DIR
#
# Two boots of the kernel run-native.sh picks ($RGROUP_NATIVE_KERNEL, else
# the cached build; the cost figures want RGROUP_KERNEL_DEBUG=0's): one to
# read the kernel's symbols (/proc/kallsyms), one with qemu's -plugin
# running "create N" in one TCG thread with icount (run-native.sh
# --single-tcg). The counts are exact and the same whatever the host's
# load; only the guest's own timing (which CPU a thread lands on, when a
# tick falls) moves them, by a few percent between boots. Needs cc, a
# static libc, python3 and qemu-system-x86_64 7.2 (Debian 12's).
set -euo pipefail
me=profile.sh
here=$(cd "$(dirname "$0")" && pwd)

n=4000 possible=2 top=25 keep=''
usage() { sed -n '10,10s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--n) n=${2?}; shift 2 ;;
	--possible) possible=${2?}; shift 2 ;;
	--functions) top=${2?}; shift 2 ;;
	--keep) keep=${2?}; shift 2 ;;
	*) usage ;;
	esac
done
case $n$possible$top in *[!0-9]*) usage ;; esac
if [ "$possible" -lt 2 ] || [ "$possible" -gt 255 ]; then usage; fi
boot=(--append maxcpus=2 --mem $((512 + 4 * possible)))

die() { echo "$me: $*" >&2; exit 1; }
qemu=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rgroup-profile.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

cc -O2 -Wall -shared -fPIC -o "$tmp/tbcount.so" "$here/tbcount.c"
cc -O2 -Wall -static -pthread -o "$tmp/create" "$here/create.c"

echo "$me: reading the kernel's symbols" >&2
"$here/../run-native.sh" "${boot[@]}" -- --timeout $((600 + 15 * possible)) --smp "$possible" \
	"$tmp/create" --kallsyms >"$tmp/console.txt" 2>&1 ||
	die "the symbol boot failed: $(tail -n 3 "$tmp/console.txt")"
mark=$(awk '$1 == "KS" && $4 == "__x64_sys_sync" { print $2 }' "$tmp/console.txt")
[ -n "$mark" ] || die "no __x64_sys_sync in the kernel's symbols"

# run-in-vm.sh runs the first qemu-system-x86_64 on PATH: this one adds
# the plugin
mkdir "$tmp/bin"
cat >"$tmp/bin/qemu-system-x86_64" <<WRAP
#!/bin/sh
exec "$qemu" -plugin "$tmp/tbcount.so,mark=$mark,out=$tmp/counts.txt" "\$@"
WRAP
chmod 755 "$tmp/bin/qemu-system-x86_64"

echo "$me: counting $n threads made each way" >&2
PATH=$tmp/bin:$PATH "$here/../run-native.sh" --single-tcg "${boot[@]}" -- \
	--timeout $((3600 + 15 * possible)) --smp "$possible" "$tmp/create" "$n" \
	>"$tmp/run.txt" 2>&1 || die "the counted boot failed: $(tail -n 3 "$tmp/run.txt")"
[ -s "$tmp/counts.txt" ] || die "the plugin wrote no counts"
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	cp "$tmp/console.txt" "$tmp/counts.txt" "$tmp/run.txt" "$keep/"
fi
python3 "$here/profile.py" "$tmp/console.txt" "$tmp/counts.txt" "$n" --functions "$top"
