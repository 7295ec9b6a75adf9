#!/bin/sh
# SPDX-License-Identifier: MIT
# In the VM (busybox sh): `rgroup doctor` where a program really runs, a
# systemd service or a container (run-in-vm.sh --systemd, --container),
# picks the expected backend by itself and names the place and its fix.
#
#   where.sh RGROUP BACKEND PLACE FIX [CGROUP]
#
# RGROUP: the static rgroup command; BACKEND: the backend it must report
# for the process (automatic choice; RGROUP_BACKEND must not be set);
# PLACE and FIX: extended regular expressions the lines "  a ..." under
# "where this process runs:" and its "  fix: ..." line must match.
# CGROUP: a cgroup v2 path (below /sys/fs/cgroup) made for the check and
# entered first, to reproduce a layout such as a login session's
# (/user.slice/user-1000.slice/session-1.scope); removed afterwards.
# Exit 0 when all hold, 1 when one does not.
[ $# -eq 4 ] || [ $# -eq 5 ] || { echo "usage: where.sh RGROUP BACKEND PLACE FIX [CGROUP]" >&2; exit 1; }
rgroup=$1 backend=$2 place=$3 fix=$4 cgroup=${5:-}
fail() { echo "FAIL: $*"; exit 1; }

if [ -n "$cgroup" ]; then
	cg=/sys/fs/cgroup
	home=$(sed -n 's/^0:://p' /proc/self/cgroup)
	mkdir -p "$cg$cgroup" || fail "cannot make $cg$cgroup"
	echo $$ >"$cg$cgroup/cgroup.procs" || fail "cannot enter $cg$cgroup"
	# Back home and the made groups removed, deepest first, however it ends.
	leave() {
		d=$cgroup
		echo $$ >"$cg$home/cgroup.procs"
		while [ -n "$d" ] && [ "$d" != / ]; do
			rmdir "$cg$d" 2>/dev/null
			d=${d%/*}
		done
	}
	trap leave EXIT
fi

[ -z "${RGROUP_BACKEND+set}" ] || fail "RGROUP_BACKEND is set: the choice must be the library's own"
out=$("$rgroup" doctor)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "rgroup doctor exited $rc"
got=$(echo "$out" | sed -n 's/^backend for this process: //p')
[ "$got" = "$backend" ] || fail "backend $got, expected $backend"
where=$(echo "$out" | sed -n '/^where this process runs:$/,/^$/p')
[ -n "$where" ] || fail "no 'where this process runs' section"
echo "$where" | sed -n 2p | grep -Eq -- "^  $place" || fail "place is not '$place': $(echo "$where" | sed -n 2p)"
echo "$where" | grep -Eq -- "^  fix: $fix" || fail "no fix matching '$fix'"
echo "ok: backend $backend, place and fix as expected"
