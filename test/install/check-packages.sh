#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the built Debian packages on this machine, use them as a user
# would, and purge them again, leaving nothing behind:
#   - the files are where Debian wants them (the preload in the private
#     /usr/lib/<triplet>/rgroup/), ldconfig knows the library, whatis
#     knows every page;
#   - the README's example compiles with `pkg-config --cflags --libs
#     rgroup` (and statically with --static) and runs against the
#     installed library;
#   - the installed `rgroup doctor` works and `rgroup run` puts a thread of
#     a program that knows nothing of rgroups into its group (rgroup tree).
# Refuses to touch packages of these names that are already installed.
# Usage: check-packages.sh DEB_DIR SOURCE_DIR     (as root)
# Exit 0 pass, 1 fail.
set -euo pipefail
debdir=$1 src=$2
pkgs=(rgroup librgroup-dev librgroup0)

fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "installing packages needs root"
for p in "${pkgs[@]}"; do
	if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ]; then
		fail "$p is already installed here; this test installs and purges its own build and will not replace it"
	fi
done
debs=()
for p in "${pkgs[@]}"; do
	f=$(ls "$debdir/${p}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || fail "no ${p}_*.deb in $debdir (scripts/package.sh builds them)"
	debs+=("$f")
done
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=/usr/lib/$triplet
work=$(mktemp -d /tmp/rgroup-pkgtest.XXXXXX)
installed=0

purge() {
	[ "$installed" -eq 1 ] || return 0
	installed=0
	dpkg --purge "${pkgs[@]}" >/dev/null
}
trap 'purge; rm -rf "$work"' EXIT

echo "== dpkg -i ${debs[*]##*/}"
dpkg -i "${debs[@]}" >/dev/null
installed=1
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Package} ${Version} ${Status}\n' "$p"
done
dpkg -L "${pkgs[@]}" | sort -u >"$work/files"

echo "== files"
[ -f "$libdir/rgroup/librgroup-preload.so" ] || fail "no preload in $libdir/rgroup/"
[ ! -e "$libdir/librgroup-preload.so" ] || fail "the preload is in the public $libdir"
! grep -q '^/usr/local' "$work/files" || fail "a package installs into /usr/local"
# (/lib is /usr/lib on a merged-/usr system; ldconfig may name either.)
cache=$(ldconfig -p)
grep -Eq "librgroup\.so\.0 \(.*\) => (/usr)?/lib/$triplet/librgroup\.so\.0\$" <<<"$cache" ||
	fail "ldconfig does not know $libdir/librgroup.so.0"
echo "ldconfig: $(grep 'librgroup.so.0 ' <<<"$cache")"
if command -v whatis >/dev/null; then
	for page in $(grep -E '^/usr/share/man/man[137]/' "$work/files" | sed 's|.*/||; s|\.gz$||'); do
		name=${page%.*} sec=${page##*.}
		w=$(whatis -s "$sec" "$name" 2>&1) || fail "whatis does not know $name($sec): $w"
		case $w in *"unknown subject"*) fail "whatis: $w" ;; esac
	done
	echo "whatis: every page has its NAME line, e.g. $(whatis -s 1 rgroup-run)"
else
	echo "whatis: not installed (man-db), pages not checked"
fi

echo "== the README's example, with pkg-config"
awk '/^## Example/ { on = 1 } on && /^```c$/ { code = 1; next } code && /^```$/ { exit } code' \
	"$src/README.md" >"$work/example.c"
[ -s "$work/example.c" ] || fail "no C example under the README's '## Example'"
flags=$(pkg-config --cflags --libs rgroup)
echo "pkg-config --cflags --libs rgroup: $flags"
cc -Wall -Werror -o "$work/example" "$work/example.c" $flags
deps=$(ldd "$work/example")
grep -Eq "librgroup\.so\.0 => (/usr)?/lib/$triplet/librgroup\.so\.0 " <<<"$deps" ||
	fail "the example does not use the installed library: $(grep rgroup <<<"$deps")"
timeout 30 "$work/example" || fail "the example exited with $?"
echo "example: exit 0, linked with $libdir/librgroup.so.0"
sflags=$(pkg-config --static --cflags --libs rgroup)
cc -Wall -Werror -static -o "$work/example-static" "$work/example.c" $sflags
timeout 30 "$work/example-static" || fail "the static example exited with $?"
echo "example, static (pkg-config --static: $sflags): exit 0"

echo "== rgroup doctor"
rgroup --version
out=$(rgroup doctor) || fail "rgroup doctor exited with $?: $out"
echo "$out"

echo "== rgroup run"
plan=$(rgroup run --dry-run -g 'w=worker' -- /bin/true 2>&1)
grep -q "LD_PRELOAD=$libdir/rgroup/librgroup-preload.so\$" <<<"$plan" ||
	fail "rgroup run does not take the installed preload: $plan"
cc -Wall -Werror -o "$work/named" "$src/test/install/named.c" -pthread
mkfifo "$work/in"
rgroup run -g 'w=worker' -- "$work/named" <"$work/in" >"$work/out" 2>&1 &
runner=$!
exec 3>"$work/in"
for _ in $(seq 100); do
	grep -q '^READY' "$work/out" && break
	sleep 0.1
done
read -r _ pid tid < <(grep '^READY' "$work/out") || { exec 3>&-; wait $runner || true; fail "named never got ready: $(cat "$work/out")"; }
tree=$(rgroup tree "$pid") || { exec 3>&-; fail "rgroup tree $pid failed"; }
exec 3>&-
wait $runner || fail "rgroup run -- named exited with $?: $(cat "$work/out")"
echo "$tree"
# The worker's line comes right under its group's line: "'worker' TID".
# A group's line names it (its rule's name, or its directory's); the
# members' lines start with a quote; the plain threads have a line of
# their own.
echo "$tree" | awk -v t="'worker' $tid" -v q="'" '
	/^\(plain threads\)/ { group = ""; next }
	$1 == "GROUP" || $1 == "total" || $1 == "process" || $1 == "SHARE:" { next }
	substr($1, 1, 1) != q && NF >= 5 { group = $1; next }
	index($0, t) && group { found = 1 }
	END { exit !found }' || fail "thread 'worker' ($tid) is in no rgroup"
echo "rgroup run: 'worker' $tid is in a group of its own"

echo "== dpkg --purge"
purge
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = "unknown ok not-installed" ] || fail "$p is still there: $st"
done
left=0
while read -r f; do
	if [ -e "$f" ] && [ ! -d "$f" ]; then
		echo "left behind: $f"
		left=1
	fi
done <"$work/files"
[ -d "$libdir/rgroup" ] && { echo "left behind: $libdir/rgroup/"; left=1; }
grep -q 'librgroup\.so' <<<"$(ldconfig -p)" && { echo "ldconfig still lists librgroup"; left=1; }
[ $left -eq 0 ] || fail "the purge left files behind"
echo "purged: no file of the packages is left, ldconfig has forgotten librgroup"
echo "PASS"
