#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench-possible.sh - native-bench (bench.c) on the native kernel booted
# with several numbers of possible CPUs, 2 of them online: how creation and
# PRIO_RGRP grow with the possible CPUs, as ratios to a thread's costs
# measured side by side in the same boot.
#
# usage: bench-possible.sh [--boots B] [--never-up] [--plot FILE.png]
#                          [--before DATA] [--data FILE] NATIVE-BENCH POSSIBLE...
#        bench-possible.sh [--plot FILE.png] [--before DATA] --from DATA...
#
#   NATIVE-BENCH  the static program (build/test/native/native-bench)
#   POSSIBLE      numbers of possible CPUs, e.g. 2 8 64 255
#   --boots B     boots per number (default 3), interleaved: boot r of
#                 every number before boot r+1 of any, so that the host's
#                 load drifting over the run hits all numbers alike
#   --never-up    boot with maxcpus=2: the other CPUs are possible (and
#                 present) but never brought up, as hotplug slots and
#                 room to grow are; without it they are brought up at
#                 boot and taken offline before the measurement
#   --data FILE   keep every boot's ratios (one line per boot)
#   --plot FILE   a PNG of the median ratios against possible CPUs (gnuplot)
#   --before DATA an earlier run's --data (another kernel), drawn in the
#                 plot beside this one's as "before"
#   --from        boot nothing: the table (and plot) of earlier runs'
#                 --data files together
#
# Each boot is qemu with -smp POSSIBLE, all vCPUs in one TCG thread
# (run-native.sh --single-tcg: hundreds of vCPU threads on a small host
# take minutes to boot); native-bench takes every CPU from
# 2 on offline (RGROUP_NATIVE_BENCH_ONLINE=2) before it measures. (x86
# since 6.9 takes the possible CPUs from the firmware's tables, which
# possible_cpus= can only lower, and a guest under TCG ignores the
# disabled entries of qemu's -smp N,maxcpus=M.) qemu's i440FX machine
# allows at most 255 vCPUs under TCG. A boot may take 15 s per vCPU on a
# loaded 2-CPU host with icount (64 vCPUs: about 8 minutes).
#
# Wall time under TCG on a loaded host moves the ratios by integer
# factors; run-native.sh --single-tcg runs qemu with -icount shift=3, so
# the guest's clocks count instructions instead and each figure is an
# instruction count, the same from boot to boot (RGROUP_VM_ICOUNT= empty:
# the host's clock).
#
# The kernel: $RGROUP_NATIVE_KERNEL, else the cached build, as for
# run-native.sh; the cost figures want RGROUP_KERNEL_DEBUG=0's kernel.
# Prints one line per boot as it goes, then per number the median over
# the boots of each ratio and its range (min..max). Exit 1 when a boot
# failed or was not clean (a splat on the console, e.g. an RCU stall
# report on a loaded host): its figures are still counted, with a note.
set -u -o pipefail
me="bench-possible.sh"
here=$(cd "$(dirname "$0")" && pwd)

boots=3 plot='' data='' from='' before='' append=()
usage() { sed -n '9,11s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--boots) boots=${2?}; shift 2 ;;
	--never-up) append=(--append maxcpus=2); shift ;;
	--plot) plot=${2?}; shift 2 ;;
	--data) data=${2?}; shift 2 ;;
	--before) before=${2?}; shift 2 ;;
	--from) from=1; shift ;;
	-*) usage ;;
	*) break ;;
	esac
done
if [ -n "$plot" ] && ! command -v gnuplot >/dev/null 2>&1; then
	echo "$me: --plot needs gnuplot (Debian package gnuplot-nox)" >&2
	exit 2
fi
work=$(mktemp -d /tmp/rgroup-bench-possible.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
rc=0

# Boot every number of possible CPUs --boots times: a line each to $work/all.
boot_all() {
	bench=$1
	shift
	case $boots in '' | 0 | *[!0-9]*) echo "$me: --boots wants a number, got '$boots'" >&2; exit 2 ;; esac
	[ -x "$bench" ] || { echo "$me: $bench is not an executable" >&2; exit 2; }
	for n in "$@"; do
		case $n in 0 | 1 | *[!0-9]*) echo "$me: a number of possible CPUs >= 2 wanted, got '$n'" >&2; exit 2 ;; esac
		[ "$n" -le 255 ] || { echo "$me: qemu allows at most 255 vCPUs under TCG, got $n" >&2; exit 2; }
	done
	for ((b = 1; b <= boots; b++)); do
		for n in "$@"; do
			log=$work/boot-$n-$b.log
			# more memory with more CPUs: 1,000 rgroups' per-CPU runqueues
			mem=$((1024 + 4 * n))
			RGROUP_NATIVE_BENCH_ONLINE=2 "$here/run-native.sh" --single-tcg --mem "$mem" \
				${append[@]+"${append[@]}"} -- \
				--timeout $((600 + 15 * n)) --smp "$n" "$bench" >"$log" 2>&1
			brc=$?
			line=$(grep '^possible ' "$log")
			if [ -z "$line" ]; then
				echo "$me: boot $b with $n possible CPUs measured nothing (exit $brc):" >&2
				tail -n 20 "$log" >&2
				rc=1
				continue
			fi
			# possible N create R prio_own R prio_tid R
			read -r _ got _ new _ own _ tid <<<"$line"
			if [ "$got" != "$n" ]; then
				echo "$me: boot $b: the guest has $got possible CPUs, not $n" >&2
				rc=1
				continue
			fi
			note=
			if [ "$brc" != 0 ]; then
				# The figures stand, but the run was not clean: say why
				# (under TCG on a loaded host, mostly RCU stall reports).
				note=" (exit $brc: $(grep -m1 -oE 'rcu_sched detected stalls|WARNING:|BUG:|FAIL[^)]*' "$log" || echo see log))"
				rc=1
			fi
			echo "boot $b possible $n create $new prio_own $own prio_tid $tid$note" |
				tee -a "$work/all"
			grep -E '^(pthread_create|setpriority)' "$log" | sed 's/^/    /'
		done
	done
}

if [ -n "$from" ]; then
	[ $# -ge 1 ] || usage
	cat -- "$@" >"$work/all" || exit 2
else
	[ $# -ge 2 ] || usage
	boot_all "$@"
fi
[ -s "$work/all" ] || exit 1
[ -z "$data" ] || cp "$work/all" "$data"

# Median and range over the boots, per number of possible CPUs, of the
# boot lines in file $1.
table() {
	awk '
function med(a, k,   i, j, t) {
	for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
		t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
	}
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
{ n = $4; k = ++cnt[n]; c[n, k] = $6; o[n, k] = $8; t[n, k] = $10; if (!(n in seen)) { seen[n] = 1; ord[++m] = n } }
END {
	printf "# possible  boots  RGROUP_NEW/pthread_create  PRIO_RGRP/PRIO_PROCESS own  by tid among 1000   (median over boots, min..max)\n"
	for (i = 1; i <= m; i++) {
		n = ord[i]; k = cnt[n]
		for (j = 1; j <= k; j++) { x[j] = c[n, j]; y[j] = o[n, j]; z[j] = t[n, j] }
		mc = med(x, k); mo = med(y, k); mt = med(z, k)
		printf "%10d %6d  %6.2f (%.2f..%.2f)  %6.2f (%.2f..%.2f)  %6.2f (%.2f..%.2f)\n", n, k, mc, x[1], x[k], mo, y[1], y[k], mt, z[1], z[k]
	}
}' "$1"
}
table "$work/all" | tee "$work/table"
if [ -n "$before" ]; then
	table "$before" >"$work/before" || exit 2
	[ -s "$work/before" ] || { echo "$me: no boot lines in $before" >&2; exit 2; }
fi

if [ -n "$plot" ]; then
	# cairo draws the dashed lines of "before"; libgd's png does not
	term=png
	gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo && term=pngcairo
	gnuplot <<EOF || rc=1
set terminal $term size 800,500
set output "$plot"
set title "native rgroups, 2 CPUs online: cost / a thread's (median of boots)$([ -z "$before" ] || echo "; dashed: before")"
set xlabel "possible CPUs"
set ylabel "ratio"
set logscale x 2
set logscale y
set termoption noenhanced
set key top left
set grid
set style line 1 linecolor rgb "#1f77b4" pointtype 7
set style line 2 linecolor rgb "#d62728" pointtype 7
set style line 3 linecolor rgb "#2ca02c" pointtype 7
set style line 4 linecolor rgb "#1f77b4" pointtype 6 dashtype 2
set style line 5 linecolor rgb "#d62728" pointtype 6 dashtype 2
set style line 6 linecolor rgb "#2ca02c" pointtype 6 dashtype 2
plot $([ -z "$before" ] || echo "\"$work/before\" using 1:3 with linespoints linestyle 4 title \"before: RGROUP_NEW+join\", \"$work/before\" using 1:5 with linespoints linestyle 5 title \"before: PRIO_RGRP own\", \"$work/before\" using 1:7 with linespoints linestyle 6 title \"before: PRIO_RGRP by tid\",") \
     "$work/table" using 1:3 with linespoints linestyle 1 title "RGROUP_NEW+join / pthread_create+join", \
     "$work/table" using 1:5 with linespoints linestyle 2 title "PRIO_RGRP / PRIO_PROCESS, own group", \
     "$work/table" using 1:7 with linespoints linestyle 3 title "PRIO_RGRP / PRIO_PROCESS, by tid among 1000", \
     1.2 with lines dashtype 3 linecolor rgb "black" title "target 1.2"
EOF
fi
exit "$rc"
