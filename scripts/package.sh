#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages, as CI builds them: librgroup0, librgroup-dev and
# rgroup from debian/, then lintian, then the install test
# (test/install/check-packages.sh: installs them here, uses them, purges
# them). Prints "N passed, N failed" over those three steps.
#
#   ./scripts/package.sh             build, lintian, install test (root)
#   ./scripts/package.sh --no-install    build and lintian only
#
# The build runs on a copy of the tree (git's files, as they are in the
# working tree) in build-deb/rgroup-X.Y.Z, so that dpkg-buildpackage's
# output lands in build-deb/, not beside the checkout; it builds the
# source package too (from an upstream tarball of the same files), so
# that lintian sees both. Tests are off in the package build
# (DEB_BUILD_OPTIONS=nocheck): CI runs the suites from the tree.
# lintian fails the step on any error or warning that debian/*.lintian-
# overrides does not explain.
set -euo pipefail
cd "$(dirname "$0")/.."

install=1
case ${1:-} in
--no-install) install=0 ;;
"") ;;
*) echo "usage: $0 [--no-install]" >&2; exit 2 ;;
esac
# The install test installs packages on this machine (the test suite's
# exit status 77: skipped, a failure in strict mode).
if [ $install -eq 1 ] && [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: installing the packages needs root (--no-install builds and lints only)"
	exit 77
fi

. scripts/deps.sh
install_deps $RGROUP_BUILD_DEPS dpkg-dev debhelper fakeroot lintian

# The upstream version is the project's; the packages say which.
version=$(dpkg-parsechangelog -S Version)
upstream=${version%-*}
project=$(sed -n "s/^  version : '\(.*\)',\$/\1/p" meson.build | head -n 1)
if [ "$upstream" != "$project" ]; then
	echo "debian/changelog is at $version, meson.build at $project: add a changelog entry (dch -v $project-1)" >&2
	exit 1
fi

# A source tree rgroup-X.Y.Z of git's files as they are in the working
# tree, and its upstream tarball without debian/.
out=${RGROUP_DEB_DIR:-build-deb}
rm -rf "$out"
mkdir -p "$out/rgroup-$upstream"
out=$(cd "$out" && pwd)
tree=$out/rgroup-$upstream
git ls-files -z --cached --others --exclude-standard |
	tar --null -T - -c | tar -x -C "$tree"
tar -C "$out" --exclude="rgroup-$upstream/debian" -cJf "$out/rgroup_$upstream.orig.tar.xz" "rgroup-$upstream"

passed=0 failed=0
step() {
	local name=$1
	shift
	echo "=== $name"
	if "$@"; then
		echo "--- $name: ok"
		passed=$((passed + 1))
		return 0
	fi
	echo "--- $name: FAILED"
	failed=$((failed + 1))
	return 1
}

build() {
	(cd "$tree" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc) >"$out/build.log" 2>&1 ||
		{ tail -n 40 "$out/build.log"; echo "(all of it: $out/build.log)"; return 1; }
	grep -E '^dpkg-gensymbols: warning' "$out/build.log" || true
	ls -l "$out"/*.deb
}

# Tags at error or warning level fail; info, pedantic and experimental
# tags are printed. Overridden tags are listed with the override.
lint() {
	local log
	log=$(lintian --pedantic -I -E --show-overrides --tag-display-limit 0 "$out"/*.changes 2>&1) || true
	grep -v '^running with root privileges' <<<"$log" || true
	if grep -Eq '^[EW]: ' <<<"$log"; then
		echo "lintian: errors or warnings without an override"
		return 1
	fi
	echo "lintian: no errors, no warnings without an override"
}

if step build build; then
	step lintian lint || true
	if [ $install -eq 1 ]; then
		step install bash test/install/check-packages.sh "$out" "$PWD" || true
	fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
