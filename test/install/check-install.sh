#!/usr/bin/env bash
# Install into a staging directory (DESTDIR), check that every promised file
# is there, and build a program that uses only DESIGN.md §5 with
# `pkg-config --cflags --libs rgroup` against it, then run it.
# Usage: check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
stage=$(mktemp -d /tmp/rgroup-stage.XXXXXX)
trap 'rm -rf "$stage"' EXIT

meson install -C "$build" --no-rebuild --destdir "$stage" --quiet
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
libdir=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"][0])')
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
root=$stage$prefix

fail=0
for f in include/rgroup.h include/rgroup.hpp bin/rgroup share/man/man1/rgroup.1 share/man/man7/rgroup.7 \
	 share/man/man3/rgroup_thread_create.3 share/man/man3/rgroup_setpriority.3 \
	 share/man/man3/rgroup_getpriority.3 share/man/man3/rgroup_backend.3 \
	 share/man/man1/rgroup-run.1 share/man/man3/rgroup_set_cpus.3 share/man/man3/rgroup_set_cap.3; do
	[ -e "$root/$f" ] || { echo "FAIL: not installed: $prefix/$f"; fail=1; }
done
for f in librgroup.so librgroup.a pkgconfig/rgroup.pc rgroup/librgroup-preload.so; do
	[ -e "$stage$libdir/$f" ] || { echo "FAIL: not installed: $libdir/$f"; fail=1; }
done
[ $fail -eq 0 ] || exit 1

export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_LIBDIR=$stage$libdir/pkgconfig
flags=$(pkg-config --cflags --libs rgroup)
echo "pkg-config --cflags --libs rgroup: $flags"
cc -Wall -Werror -o "$stage/fixed-points" "$src/test/install/fixed-points.c" $flags
LD_LIBRARY_PATH=$stage$libdir "$stage/fixed-points"
# The C++ header builds against the installed C header alone.
c++ -std=c++17 -Wall -Werror -o "$stage/query-vs-compaction-cxx" "$src/examples/query-vs-compaction.cpp" $flags
# The Rust crate builds against it too, found by pkg-config (the same
# variables); cargo's target directory is the Rust tests' (test/rust).
if command -v cargo >/dev/null; then
	cp -a "$src/bindings/rust" "$stage/rust"
	set -- --offline --quiet --manifest-path "$stage/rust/Cargo.toml" --target-dir "$build/rust/target" \
		--example query_vs_compaction
	if [ -d /usr/share/cargo/registry ]; then
		set -- --config 'source.crates-io.replace-with="debian"' \
			--config 'source.debian.directory="/usr/share/cargo/registry"' "$@"
	fi
	cargo build "$@"
	echo "the Rust crate builds against the installed library"
fi
# Nothing installed links test code: the test library's names start with
# rgt_ (test/lib). meson installs unstripped, so a missing symbol table
# is a failure of the check, not a pass.
for f in "$root/bin/rgroup" "$stage$libdir/librgroup.so" "$stage$libdir/librgroup.a" \
	 "$stage$libdir/rgroup/librgroup-preload.so"; do
	syms=$(nm "$f" 2>/dev/null || true)
	[ -n "$syms" ] || { echo "FAIL: no symbol table in $f: cannot check it for test code"; exit 1; }
	if echo "$syms" | grep -E ' [A-Za-z] rgt_' >/dev/null; then
		echo "FAIL: $f contains test code:"
		echo "$syms" | grep -E ' [A-Za-z] rgt_' | head -n 5
		exit 1
	fi
done
echo "no installed file contains the tests' code (rgt_*)"
[ ! -e "$stage$libdir/librgroup-preload.so" ] ||
	{ echo "FAIL: the preload is in the public library directory $libdir"; exit 1; }
# The installed command runs too, and finds the preload in its private
# directory below the library's.
LD_LIBRARY_PATH=$stage$libdir "$root/bin/rgroup" --version
plan=$(LD_LIBRARY_PATH=$stage$libdir "$root/bin/rgroup" run --dry-run -g 'x=y' -- /bin/true 2>&1 || true)
echo "$plan" | grep -q "LD_PRELOAD=$stage$libdir/rgroup/librgroup-preload.so" ||
	{ echo "FAIL: rgroup run does not find the installed preload:"; echo "$plan"; exit 1; }
