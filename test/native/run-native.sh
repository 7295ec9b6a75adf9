#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run-native.sh - run one native-kernel selftest in the VM on the patched
# kernel (kernel/patches), through test/vm/run-in-vm.sh.
#
# usage: run-native.sh [--mem MB] [--single-tcg] [--append ARGS] -- RUN-IN-VM-ARGS...
#
#   --mem MB       guest memory (default RGROUP_VM_MEM or 512)
#   --append ARGS  more kernel command line (e.g. slub_debug=F)
#   --single-tcg   run-in-vm.sh --single-tcg: without KVM, all vCPUs in
#                  one TCG thread on clocks that count the guest's
#                  instructions, for the CPU-share tests (run-in-vm.sh
#                  says why). The other tests keep a thread per vCPU and
#                  the host's clock: races need real parallelism.
#
# The kernel: $RGROUP_NATIVE_KERNEL (scripts/test.sh sets it from
# scripts/kernel.sh), else the cached build (scripts/kernel.sh --cached).
# The tests never build it: a cold build takes ~10 minutes, longer than a
# test may. No kernel is a skip with its reason (a failure when
# RGROUP_TEST_STRICT=1).
#
# Added to the guest: slab_nomerge (exact per-cache counts for the leak
# tests), loglevel=4 (warnings on the console), the RGROUP_NATIVE_*
# variables of the environment. Besides the program's own check of the
# kernel log, the console is searched here for splats (lockdep,
# might_sleep, BUG, WARNING, oops, RCU stall, panic), which fail the test
# even when the program passed, e.g. after it finished.

set -u -o pipefail
me=run-native.sh
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

strict() { [ -n "${RGROUP_TEST_STRICT:-}" ] && [ "${RGROUP_TEST_STRICT}" != 0 ]; }
skip() {
	if strict; then
		echo "$me: FAIL (strict mode, would skip): $*" >&2
		exit 1
	fi
	echo "$me: SKIP: $*" >&2
	exit 77
}

mem=${RGROUP_VM_MEM:-512}
single=
append=
while [ $# -gt 0 ]; do
	case $1 in
	--mem) mem=$2; shift 2 ;;
	--single-tcg) single=1; shift ;;
	--append) append+=" $2"; shift 2 ;;
	--) shift; break ;;
	*) echo "$me: unknown option $1" >&2; exit 2 ;;
	esac
done

kernel=${RGROUP_NATIVE_KERNEL:-}
if [ -z "$kernel" ]; then
	kernel=$("$root/scripts/kernel.sh" --cached 2>/dev/null | tail -n 1) ||
		skip "no native kernel: build it with scripts/kernel.sh (scripts/test.sh does), or set RGROUP_NATIVE_KERNEL"
fi
[ -f "$kernel" ] || skip "native kernel '$kernel' does not exist"

envs=()
while IFS='=' read -r k _; do
	envs+=(--env "$k=${!k}")
done < <(env | grep '^RGROUP_NATIVE_[A-Z_]*=' | grep -v '^RGROUP_NATIVE_KERNEL=')

log=$(mktemp)
trap 'rm -f "$log"' EXIT
RGROUP_VM_MEM=$mem \
	RGROUP_VM_APPEND="slab_nomerge loglevel=4$append ${RGROUP_VM_APPEND:-}" \
	"$root/test/vm/run-in-vm.sh" --kernel "$kernel" ${single:+--single-tcg} "${envs[@]}" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

pattern='WARNING:|BUG:|Oops|Call Trace:|general protection fault|possible recursive locking|possible circular locking|inconsistent lock state|suspicious RCU usage|sleeping function called from invalid context|INFO: rcu|self-detected stall|hung_task|Kernel panic|kernel BUG|suspected memory leak'
if grep -Eq "$pattern" "$log"; then
	echo "$me: FAIL: the kernel console shows a splat:" >&2
	grep -E "$pattern" "$log" | head -n 20 >&2
	exit 1
fi
exit "$rc"
