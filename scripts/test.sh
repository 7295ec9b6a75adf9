#!/usr/bin/env bash
# Build rgroup and run every test suite (unit, system, vm, native, tools,
# install, abi, package), then print "N passed, N failed". The native suite boots the
# patched kernel of kernel/, built first by scripts/kernel.sh (cached). Installs its Debian packages when run
# as root.
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

# The native suite boots the patched kernel: build it first (cached: seconds).
if [ -z "${RGROUP_NATIVE_KERNEL:-}" ] && { [ $# -eq 0 ] || [[ " $* " == *" native "* ]]; }; then
	RGROUP_NATIVE_KERNEL=$(scripts/kernel.sh | tail -n 1) || RGROUP_NATIVE_KERNEL=
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
trap stop_hogs EXIT
for _ in $(seq "${RGROUP_TEST_LOAD:-0}"); do
	sh -c 'while :; do :; done' &
	hogs+=($!)
done
[ ${#hogs[@]} -eq 0 ] || echo "outside load: ${#hogs[@]} busy processes (${hogs[*]})"

rm -f "$build/meson-logs/testlog.json"
set +e
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
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
