#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench.sh - build and run the benchmark suite (bench/rgroup-bench.c) on
# every backend available: cgroup1 on this machine, cgroup2 in the qemu VM
# (test/vm/run-in-vm.sh) when qemu is there. Prints the table and writes
# the same figures as JSON. See docs/BENCHMARKS.md.
#
# usage: scripts/bench.sh [--out FILE] [--builddir DIR] [--quick] [--no-vm]
#                         [--vm-scale-small] [--vm-smp N]
#
#   --out FILE        JSON output (default bench-results.json)
#   --builddir DIR    meson build directory (default build-bench)
#   --quick           fewer blocks, 1 s accuracy runs, scale 1,000/100
#   --no-vm           only this machine's backend
#   --vm-scale-small  scale test in the VM with 2,000 threads / 200 rgroups
#                     (default: the full 10,000 / 1,000 there too)
#
# Needs root (it makes and removes its own system groups). Exit 0 when the
# suite ran; figures that miss their targets do not change the exit status.

set -u -o pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=bench-results.json builddir=build-bench quick='' vm=1 vm_small='' vm_smp=${RGROUP_VM_SMP:-2}
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2?}; shift 2 ;;
	--builddir) builddir=${2?}; shift 2 ;;
	--quick) quick=1; shift ;;
	--no-vm) vm=''; shift ;;
	--vm-scale-small) vm_small=1; shift ;;
	--vm-smp) vm_smp=${2?}; shift 2 ;;
	*) sed -n '9,10s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done

cd "$here" || exit 1
if [ "$(id -u)" != 0 ]; then
	echo "bench.sh: needs root (it makes its own system groups)" >&2
	exit 77
fi
[ -d "$builddir" ] || meson setup "$builddir" >/dev/null || exit 1
ninja -C "$builddir" bench/rgroup-bench bench/rgroup-bench-static >/dev/null ||
	ninja -C "$builddir" >/dev/null || exit 1

args=()
[ -n "$quick" ] && args+=(--blocks 7 --measure 1 --scale-threads 1000 --scale-groups 100)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

echo "### cgroup1 on this machine ($(nproc) CPUs, $(uname -r))"
RGROUP_BACKEND=cgroup1 "$builddir/bench/rgroup-bench" "${args[@]}" >"$tmp/host.log" 2>&1
rc=$?
grep -v '^RGBENCH ' "$tmp/host.log"
[ $rc = 0 ] || echo "bench.sh: cgroup1 run exited $rc" >&2

vm_status="not run (--no-vm)"
if [ -n "$vm" ]; then
	static=$builddir/bench/rgroup-bench-static
	if ! command -v qemu-system-x86_64 >/dev/null; then
		vm_status="skipped: no qemu-system-x86_64"
	elif [ ! -x "$static" ]; then
		vm_status="skipped: no static build (libc.a missing?)"
	else
		vargs=("${args[@]}")
		if [ -z "$quick" ] && [ -n "$vm_small" ]; then
			vargs+=(--scale-threads 2000 --scale-groups 200)
		fi
		echo
		echo "### cgroup2 in the VM (qemu, $vm_smp vCPUs, Debian stock kernel)"
		RGROUP_VM_MEM=${RGROUP_VM_MEM:-2048} test/vm/run-in-vm.sh --kernel "$builddir/vm-kernel" \
			--timeout 600 --smp "$vm_smp" --env RGROUP_BACKEND=cgroup2 \
			"$static" "${vargs[@]}" >"$tmp/vm.log" 2>"$tmp/vm.err"
		vrc=$?
		tr -d '\r' <"$tmp/vm.log" | sed -n '/^rgroup-bench:/,/^RGROUP-VM-EXIT/p' | grep -v -e '^RGBENCH ' -e '^RGROUP-VM-EXIT'
		if [ $vrc = 0 ]; then
			vm_status="ran"
		else
			vm_status="failed or skipped (exit $vrc): $(tail -n 3 "$tmp/vm.err" | tr '\n' ' ')"
			tail -n 20 "$tmp/vm.err" >&2
		fi
		tr -d '\r' <"$tmp/vm.log" | grep '^RGBENCH ' | sed 's/^RGBENCH //' >"$tmp/vm.json"
	fi
fi
grep '^RGBENCH ' "$tmp/host.log" | sed 's/^RGBENCH //' >"$tmp/host.json"
cat "$tmp/host.json" "$tmp/vm.json" 2>/dev/null >"$tmp/all.json"

end=$(date +%s)
jq -s --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg kernel "$(uname -r)" \
	--arg nproc "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --arg cpu "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)" \
	--arg rev "$(git -C "$here" rev-parse --short HEAD 2>/dev/null)$(git -C "$here" status --porcelain -- src include 2>/dev/null | grep -q . && echo '+uncommitted src changes')" \
	--arg vm "$vm_status" --arg quick "${quick:-0}" --argjson secs $((end - start)) \
	'{machine: {date: $date, kernel: $kernel, nproc: ($nproc | tonumber), cpu: $cpu, load: $load},
	  library_revision: $rev,
	  quick: ($quick == "1"), vm: $vm, seconds: $secs, results: .}' \
	"$tmp/all.json" >"$out" || { echo "bench.sh: cannot write $out" >&2; exit 1; }

echo
echo "### targets"
jq -r '.results[] | select(.target != null) |
	[.backend, .name, (.median | tostring), .target, (if .met then "met" else "NOT met" end)] | @tsv' "$out" |
	awk -F'\t' '{ printf "%-8s %-52s %10.4g %8s  %s\n", $1, $2, $3, $4, $5 }'
echo
echo "VM: $vm_status"
echo "wrote $out ($((end - start)) s)"
left=$(find /sys/fs/cgroup -name 'rgtest-main-*' 2>/dev/null | while read -r d; do
	pid=${d##*-}; [ -d "/proc/$pid" ] || echo "$d"; done)
[ -z "$left" ] || echo "bench.sh: note: system groups of processes that are gone (this or another run's): $left" >&2
exit 0
