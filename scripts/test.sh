#!/usr/bin/env bash
# Build rgroup and run every test suite (unit, system, vm), then print
# "N passed, N failed". Installs its Debian packages when run as root.
#
#   ./scripts/test.sh                 all suites
#   ./scripts/test.sh --suite unit    one suite (arguments go to meson test)
#
# A test that cannot run here (not root, no qemu) skips and says why;
# with RGROUP_TEST_STRICT=1 (CI) a skip counts as a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps $RGROUP_BUILD_DEPS $RGROUP_TEST_DEPS

build=${RGROUP_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build"
ninja -C "$build"

# The native suite boots the patched kernel: build it first (cached: seconds).
if [ -z "${RGROUP_NATIVE_KERNEL:-}" ] && { [ $# -eq 0 ] || [[ " $* " == *" native "* ]]; }; then
	RGROUP_NATIVE_KERNEL=$(scripts/kernel.sh | tail -n 1) || RGROUP_NATIVE_KERNEL=
	export RGROUP_NATIVE_KERNEL
fi

set +e
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
set -e

# One line per test in meson's log; skips fail in strict mode.
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, os, sys
strict = os.environ.get("RGROUP_TEST_STRICT", "0") not in ("", "0")
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif r == "SKIP" and not strict:
        skipped += 1
    else:
        failed += 1
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
