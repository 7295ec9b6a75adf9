#!/usr/bin/env bash
# Build rgroup and run `rgroup demo`: the article's scenarios on this
# machine's kernel, measured against the ideal share. Installs its Debian
# packages when run as root. Arguments go to `rgroup demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps $RGROUP_BUILD_DEPS

build=${RGROUP_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dtests=false
ninja -C "$build" tools/rgroup
exec "$build/tools/rgroup" demo "$@"
