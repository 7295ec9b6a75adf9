#!/bin/sh
# Run one test target of the Rust bindings (bindings/rust) with cargo,
# against this build's librgroup, offline:
#
#   cargo-test.sh BUILD_DIR SOURCE_DIR TARGET [HARNESS ARGS...]
#
# TARGET is a file of rgroup/tests; "unit" also builds the examples.
# The crate is copied into BUILD_DIR/rust/src and built there, so that
# cargo writes its lock file and its target directory into the build tree,
# never into the source (a newer cargo's lock file would stop an older
# one). pkg-config finds the library through meson's uninstalled .pc;
# Debian's packaged crates (librust-*-dev) stand in for crates.io.
set -eu
build=$(realpath "$1") src=$(realpath "$2") target=$3
shift 3
mkdir -p "$build/rust/src"
rm -rf "$build/rust/src/rgroup" "$build/rust/src/rgroup-sys"
cp -a "$src/bindings/rust/Cargo.toml" "$src/bindings/rust/rgroup" "$src/bindings/rust/rgroup-sys" "$build/rust/src/"
export PKG_CONFIG_PATH="$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
set -- --offline --manifest-path "$build/rust/src/Cargo.toml" --target-dir "$build/rust/target" \
	--test "$target" $([ "$target" != unit ] || echo --examples) -- "$@"
if [ -d /usr/share/cargo/registry ]; then
	exec cargo test --config 'source.crates-io.replace-with="debian"' \
		--config 'source.debian.directory="/usr/share/cargo/registry"' "$@"
fi
exec cargo test "$@"
