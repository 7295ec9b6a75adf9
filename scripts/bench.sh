#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench.sh - build and run the benchmark suite (bench/rgroup-bench.c, then
# bench/executor-bench.c: the executor against a plain thread pool) on
# every backend available: cgroup1 and the governor on this machine, one
# after the other, cgroup2 in the qemu VM (test/vm/run-in-vm.sh) when
# qemu is there, and native in the VM on the patched kernel when
# scripts/kernel.sh has built it. Prints each run's table, then every figure side by side
# (one column per backend), and writes the figures as JSON. See
# docs/BENCHMARKS.md.
#
# usage: scripts/bench.sh [--out FILE] [--builddir DIR] [--quick] [--no-vm]
#                         [--backends "cgroup1 governor"] [--vm-scale-small] [--vm-smp N]
#
#   --out FILE        JSON output (default bench-results.json)
#   --builddir DIR    meson build directory (default build-bench)
#   --quick           fewer blocks, 1 s accuracy runs, scale 1,000/100
#   --no-vm           only this machine's backends
#   --backends LIST   this machine's backends, in order (default
#                     "cgroup1 governor")
#   --vm-scale-small  scale test in the VM with 2,000 threads / 200 rgroups
#                     (default: the full 10,000 / 1,000 there too)
#
# Needs root (it makes and removes its own system groups). Exit 0 when the
# suite ran; figures that miss their targets do not change the exit status.

set -u -o pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=bench-results.json builddir=build-bench quick='' vm=1 vm_small='' vm_smp=${RGROUP_VM_SMP:-2}
backends='cgroup1 governor'
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2?}; shift 2 ;;
	--builddir) builddir=${2?}; shift 2 ;;
	--quick) quick=1; shift ;;
	--no-vm) vm=''; shift ;;
	--backends) backends=${2?}; shift 2 ;;
	--vm-scale-small) vm_small=1; shift ;;
	--vm-smp) vm_smp=${2?}; shift 2 ;;
	*) sed -n '12,13s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done

cd "$here" || exit 1
if [ "$(id -u)" != 0 ]; then
	echo "bench.sh: needs root (it makes its own system groups)" >&2
	exit 77
fi
[ -d "$builddir" ] || meson setup "$builddir" >/dev/null || exit 1
ninja -C "$builddir" bench/rgroup-bench bench/rgroup-bench-static \
	bench/executor-bench bench/executor-bench-static >/dev/null ||
	ninja -C "$builddir" >/dev/null || exit 1

args=() xargs=()
[ -n "$quick" ] && args+=(--blocks 7 --measure 1 --scale-threads 1000 --scale-groups 100) && xargs+=(--blocks 7)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# This machine's backends one after the other, each a whole run of the
# program (a process picks its backend once).
for be in $backends; do
	echo "### $be on this machine ($(nproc) CPUs, $(uname -r))"
	RGROUP_BACKEND=$be "$builddir/bench/rgroup-bench" "${args[@]}" >"$tmp/host-$be.log" 2>&1
	rc=$?
	grep -v '^RGBENCH ' "$tmp/host-$be.log"
	[ $rc = 0 ] || echo "bench.sh: $be run exited $rc" >&2
	grep '^RGBENCH ' "$tmp/host-$be.log" | sed 's/^RGBENCH //' >>"$tmp/host.json"
	RGROUP_BACKEND=$be "$builddir/bench/executor-bench" "${xargs[@]}" >"$tmp/host-x-$be.log" 2>&1 ||
		echo "bench.sh: $be executor-bench exited $?" >&2
	grep -v '^RGBENCH ' "$tmp/host-x-$be.log"
	grep '^RGBENCH ' "$tmp/host-x-$be.log" | sed 's/^RGBENCH //' >>"$tmp/host.json"
	echo
done

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
		xstatic=$builddir/bench/executor-bench-static
		if [ -x "$xstatic" ] && test/vm/run-in-vm.sh --kernel "$builddir/vm-kernel" --timeout 600 \
			--smp "$vm_smp" --env RGROUP_BACKEND=cgroup2 "$xstatic" "${xargs[@]}" >"$tmp/vm-x.log" 2>>"$tmp/vm.err"; then
			tr -d '\r' <"$tmp/vm-x.log" | sed -n '/^executor-bench:/,/^RGROUP-VM-EXIT/p' | grep -v -e '^RGBENCH ' -e '^RGROUP-VM-EXIT'
			tr -d '\r' <"$tmp/vm-x.log" | grep '^RGBENCH ' | sed 's/^RGBENCH //' >>"$tmp/vm.json"
		else
			echo "bench.sh: executor-bench in the VM failed or skipped" >&2
		fi
	fi
fi

# The native backend: the same two programs in the VM on the patched kernel
# of kernel/ (cached by scripts/kernel.sh; RGROUP_NATIVE_KERNEL overrides),
# through test/native/run-native.sh, which also checks the console for
# splats. Note: scripts/kernel.sh builds the debug kernel (lockdep) by
# default; RGROUP_KERNEL_DEBUG=0 scripts/kernel.sh gives the one without.
native_status="not run (--no-vm)"
if [ -n "$vm" ]; then
	nk=${RGROUP_NATIVE_KERNEL:-$(scripts/kernel.sh --cached 2>/dev/null | tail -n 1)}
	if [ ! -f "$nk" ]; then
		native_status="skipped: no native kernel (scripts/kernel.sh builds it)"
	elif [ ! -x "$builddir/bench/rgroup-bench-static" ]; then
		native_status="skipped: no static build (libc.a missing?)"
	else
		echo
		echo "### native in the VM (qemu, $vm_smp vCPUs, $nk)"
		native_status="ran on $nk"
		for prog in rgroup-bench executor-bench; do
			pargs=("${args[@]}")
			[ $prog = executor-bench ] && pargs=("${xargs[@]}")
			if RGROUP_NATIVE_KERNEL=$nk RGROUP_VM_MEM=${RGROUP_VM_MEM:-2048} test/native/run-native.sh -- \
				--timeout 600 --smp "$vm_smp" --env RGROUP_BACKEND=native \
				"$builddir/bench/$prog-static" "${pargs[@]}" >"$tmp/native-$prog.log" 2>>"$tmp/native.err"; then
				tr -d '\r' <"$tmp/native-$prog.log" | sed -n "/^$prog:/,/^RGROUP-VM-EXIT/p" |
					grep -v -e '^RGBENCH ' -e '^RGROUP-VM-EXIT'
			else
				native_status="failed (see below)"
				tail -n 20 "$tmp/native.err" >&2
			fi
			tr -d '\r' <"$tmp/native-$prog.log" | grep '^RGBENCH ' | sed 's/^RGBENCH //' >>"$tmp/vm.json"
		done
	fi
fi
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

# Every figure side by side: one row per figure, one column per backend
# (median; "!" where it misses its target), in the order of first output.
# An accuracy figure's name carries its run's mean error; the row goes by
# the name without it.
echo
echo "### side by side (median; ! = target missed)"
jq -r 'def ordered: reduce .[] as $x ([]; if any(.[]; . == $x) then . else . + [$x] end);
	[.results[] | select(.median != null) | .name |= sub(" \\(mean [^)]*\\)"; "")
	 | .key = .section + "/" + .name] as $r
	| ($r | map(.backend) | ordered) as $bs
	| (["figure", "target"] + $bs | @tsv),
	  ($r | map(.key) | ordered | .[] as $k
	   | ($r | map(select(.key == $k))) as $row
	   | [$row[0].name, ($row[0].target // "-")]
	     + [$bs[] as $b | ($row | map(select(.backend == $b)) | .[0])
	        | if . == null then "-" else
	            "\(.median * 1000 | round / 1000)\(if .met == false then " !" else "" end)" end]
	   | @tsv)' "$out" |
	awk -F'\t' '{ printf "%-52s %8s", $1, $2; for (i = 3; i <= NF; i++) printf " %14s", $i; printf "\n" }'
echo
echo "VM: $vm_status"
echo "native: $native_status"
echo "wrote $out ($((end - start)) s)"
left=$(find /sys/fs/cgroup -name 'rgtest-main-*' 2>/dev/null | while read -r d; do
	pid=${d##*-}; [ -d "/proc/$pid" ] || echo "$d"; done)
[ -z "$left" ] || echo "bench.sh: note: system groups of processes that are gone (this or another run's): $left" >&2
exit 0
