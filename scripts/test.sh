#!/usr/bin/env bash
# Build rgroup and run every test suite (unit, system, vm, native, tools,
# install, abi, package), then print "N passed, N failed". The native suite boots the
# patched kernel of kernel/, built by scripts/kernel.sh (cached; when it is
# not, in the background while the other suites run). Installs its Debian
# packages when run as root.
#
#   ./scripts/test.sh                 all suites
#   ./scripts/test.sh --suite unit    one suite (arguments go to meson test)
#
# A test that cannot run here (not root, no qemu) skips and says why;
# with RGROUP_TEST_STRICT=1 (CI) a skip counts as a failure. The build
# directory may have been made by ./scripts/demo.sh (without the suites):
# they are turned on. RGROUP_TEST_LOAD=N runs N busy outside processes
# while the tests run (scripts/load-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps $RGROUP_BUILD_DEPS $RGROUP_TEST_DEPS

build=${RGROUP_BUILD_DIR:-build}
configure_build "$build" -Dtests=true
ninja -C "$build"

# The native suite boots the patched kernel of scripts/kernel.sh (cached:
# seconds). Uncached, for a run of every suite, it is built in the
# background at the lowest CPU priority while the other suites run (their
# host tests leave CPU time idle, which the build takes; what it takes
# beyond that is the load the tests are made to stand), and the native
# suite runs once it is there. For one suite, it is built first.
kernel_pid=
kernel_out=$build/kernel-build.out
if [ -z "${RGROUP_NATIVE_KERNEL:-}" ] && { [ $# -eq 0 ] || [[ " $* " == *" native "* ]]; }; then
	if RGROUP_NATIVE_KERNEL=$(scripts/kernel.sh --cached 2>/dev/null | tail -n 1); then
		:
	elif [ $# -eq 0 ]; then
		# Its packages now: the package suite's dpkg must not meet its apt.
		install_deps $RGROUP_KERNEL_DEPS || true
		echo "the native suite's kernel is not built yet: building it while the other suites run (log: $kernel_out)"
		# In this run's session (a session of its own would be an autogroup
		# of its own, which weighs as much as nice 0, whatever its nice).
		kernel_t0=$SECONDS
		nice -n 19 scripts/kernel.sh >"$kernel_out" 2>&1 &
		kernel_pid=$!
		RGROUP_NATIVE_KERNEL=
	else
		RGROUP_NATIVE_KERNEL=$(scripts/kernel.sh | tail -n 1) || RGROUP_NATIVE_KERNEL=
	fi
	export RGROUP_NATIVE_KERNEL
fi

# Busy outside processes, started here and stopped here (by their pids).
hogs=()
stop_hogs() {
	for p in ${hogs[@]+"${hogs[@]}"}; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	hogs=()
}
# An interrupted run stops the kernel's build too: kernel.sh, its make and
# their children, found before any is stopped.
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}
stop_all() {
	stop_hogs
	if [ -n "$kernel_pid" ]; then
		kill -TERM "$kernel_pid" $(descendants "$kernel_pid") 2>/dev/null || true
		wait "$kernel_pid" 2>/dev/null || true
	fi
}
trap stop_all EXIT
for _ in $(seq "${RGROUP_TEST_LOAD:-0}"); do
	sh -c 'while :; do :; done' &
	hogs+=($!)
done
[ ${#hogs[@]} -eq 0 ] || echo "outside load: ${#hogs[@]} busy processes (${hogs[*]})"

logs=$build/meson-logs
rm -f "$logs/testlog.json" "$logs/testlog-other.json" "$logs/testlog-native.json"
set +e
if [ -z "$kernel_pid" ]; then
	meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
else
	meson test -C "$build" --print-errorlogs --num-processes 2 --no-suite native --logbase testlog-other
	echo "waiting for the native suite's kernel ($kernel_out)"
	if wait "$kernel_pid"; then
		RGROUP_NATIVE_KERNEL=$(tail -n 1 "$kernel_out")
		echo "the native suite's kernel: built in $((SECONDS - kernel_t0)) s, $RGROUP_NATIVE_KERNEL"
	else
		tail -n 20 "$kernel_out"
		RGROUP_NATIVE_KERNEL=
	fi
	kernel_pid=
	meson test -C "$build" --print-errorlogs --num-processes 2 --suite native --logbase testlog-native
	cat "$logs/testlog-other.json" "$logs/testlog-native.json" >"$logs/testlog.json" 2>/dev/null
fi
set -e
stop_hogs

# One line per test in meson's log; skips fail in strict mode.
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, os, sys
strict = os.environ.get("RGROUP_TEST_STRICT", "0") not in ("", "0")
passed = failed = skipped = 0
try:
    log = open(sys.argv[1])
except FileNotFoundError:
    print("no test ran (is the build directory configured with -Dtests=true?)")
    log = []
    failed = 1
for line in log:
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif r == "SKIP" and not strict:
        skipped += 1
    else:
        failed += 1
if passed + failed + skipped == 0:
    print("no test ran")
    failed = 1
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
