#!/usr/bin/env bash
# The full soak: test-churn with 1,000,000 thread lifetimes in rgroups (8
# creator threads, nested groups, PRIO_RGRP changes, fork+exit children).
# Checks as in the system suite's shortened run: every creation succeeds,
# no rgroup directory is left, descriptors back to the start value, RSS
# flat after the warm-up (first 10%) within the bound test-churn states.
# About 2-4 minutes on a 2-CPU machine (docs/HARDENING.md has the figures).
#
#   ./scripts/soak.sh                 1,000,000 lifetimes, backend cgroup1
#   ./scripts/soak.sh 5000000         another count
# Env: RGROUP_BACKEND (default cgroup1), RGROUP_BUILD_DIR (default build-soak).
# Needs root (it makes a system group of its own, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps $RGROUP_BUILD_DEPS

build=${RGROUP_BUILD_DIR:-build-soak}
lifetimes=${1:-1000000}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dtests=true >/dev/null
ninja -C "$build" test/system/test-churn

start=$(date +%s)
set +e
RGROUP_BACKEND=${RGROUP_BACKEND:-cgroup1} "$build/test/system/test-churn" "$lifetimes"
rc=$?
set -e
echo "soak: $lifetimes lifetimes, $(( $(date +%s) - start )) s, exit $rc" \
	"($( [ $rc -eq 0 ] && echo passed || { [ $rc -eq 77 ] && echo skipped || echo FAILED; } ))"
exit $rc
