#!/usr/bin/env bash
# The system suite on a loaded machine: two busy outside processes (plain
# shell loops, started and stopped by scripts/test.sh) compete for the
# CPUs while it runs. Every CPU-split test must still pass: each measures
# what the library controls and says why its tolerance holds under load.
# Prints "N passed, N failed" like test.sh; arguments go to meson test.
#
#   ./scripts/load-test.sh
#   RGROUP_TEST_STRICT=1 ./scripts/load-test.sh     as CI runs it
set -euo pipefail
cd "$(dirname "$0")/.."
RGROUP_TEST_LOAD=${RGROUP_TEST_LOAD:-2} exec ./scripts/test.sh --suite system "$@"
