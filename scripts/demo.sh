#!/usr/bin/env bash
# Build rgroup and run `rgroup demo`: the article's scenarios on this
# machine's kernel, measured against the ideal share. Installs its Debian
# packages when run as root. Arguments go to `rgroup demo`.
#
# A fresh build directory is configured without the test suites (quicker,
# and the demo needs none of their packages); one that exists is used as
# it is: only the command is built. ./scripts/test.sh turns the suites on
# in the same directory when it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps $RGROUP_BUILD_DEPS

build=${RGROUP_BUILD_DIR:-build}
configure_build "$build" -Dtests=false
ninja -C "$build" tools/rgroup
exec "$build/tools/rgroup" demo "$@"
