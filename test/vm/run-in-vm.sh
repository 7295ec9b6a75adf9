#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run-in-vm.sh - run one statically linked test program on a real cgroup v2
# kernel: Debian's stock kernel booted by qemu with a throw-away initramfs
# holding busybox and the program.
#
# usage: run-in-vm.sh --kernel VMLINUZ|DIR --timeout SECS [--env K=V ...]
#                     [--user UID[:GID] --runas RUNAS] [--file FILE ...]
#                     [--dynamic FILE ...] [--smp N] [--single-tcg]
#                     [--late-cpus] [--keep] [--shell]
#                     [--systemd [--unit FILE] [--unit-prop KEY=VALUE ...]]
#                     [--container rw|ro]
#                     PROGRAM [ARGS...]
#
#   --kernel   a kernel image, or a cache directory: when it holds no kernel
#              yet, fetch-kernel.sh fills it (this is the only network use).
#   --timeout  seconds the whole VM may run before it is killed (a failure).
#   --env      exported in the guest before PROGRAM runs (repeatable).
#              RGROUP_TEST_STRICT is passed through from the host if set.
#   --user     run PROGRAM as this uid (gid defaults to the uid) inside a
#              delegated cgroup /sys/fs/cgroup/sg-test/user, as systemd's
#              Delegate=yes would give it. Needs --runas, the static helper
#              built from runas.c.
#   --file     also put FILE in the guest's /test (repeatable), for a
#              PROGRAM that runs other programs; an ELF must be static.
#   --dynamic  also put FILE at its own absolute path in the guest, with
#              the shared libraries and dynamic loader it needs (ldd) at
#              theirs (repeatable): for dynamically linked programs that
#              PROGRAM runs (rgroup run's tests).
#   --systemd  boot the host's systemd as PID 1 instead of the busybox init
#              below, and run PROGRAM as the service rgroup-vm.service
#              (DefaultDependencies=no, its output on the console, the
#              --env variables in its environment), which powers the VM
#              off when it ends; systemd sets up cgroup2 itself, as on a
#              real machine. Not with --user or --shell.
#   --unit     with --systemd: the service's unit file is FILE (an example
#              unit under test); a drop-in replaces its ExecStart= with
#              PROGRAM and adds what the VM needs, the rest stays as FILE
#              says.
#   --unit-prop a line KEY=VALUE for the service's [Service] section
#              (repeatable), e.g. Delegate=yes.
#   --container run PROGRAM as a container runtime with cgroup v2 runs a
#              container's process: in the delegated group sg-test (cpu
#              enabled for it by its parent), in a cgroup namespace of its
#              own (util-linux unshare --cgroup --mount) with cgroupfs
#              mounted again on /sys/fs/cgroup, its root at sg-test;
#              read-write (rw) or read-only (ro), as runtimes mount it
#              for unprivileged containers. Not with --user or --systemd.
#   --smp      vCPUs (default 2, or RGROUP_VM_SMP).
#   --single-tcg  for a PROGRAM that measures CPU shares: without KVM, run
#              every vCPU in one TCG thread (-accel tcg,thread=single) on
#              clocks that count the guest's instructions (-icount
#              shift=3; RGROUP_VM_ICOUNT sets the shift, empty keeps the
#              host's clock). With a thread per vCPU on the host's clock,
#              a loaded host stops one vCPU and not the other, and the
#              guest's time runs on while the host does not run it: the
#              guest's kernel charges that time to whichever task was on
#              the vCPU, so a busy host hands out the guest's CPU time at
#              random. With icount the guest's time stops with its
#              instructions. Other programs keep a thread per vCPU and the
#              host's clock: races need real parallelism.
#   --late-cpus boot with one CPU up (maxcpus=1) and bring the others up
#              before PROGRAM runs: Debian's 6.1 kernel hangs bringing up
#              its second CPU at boot on qemu 7.2's icount (--single-tcg),
#              and not when it is brought up later. Not with --systemd.
#   --keep     keep the temp dir (initramfs, init, console log); also
#              RGROUP_VM_KEEP=1.
#   --shell    after PROGRAM, give an interactive busybox shell on the
#              console instead of powering off (no timeout; leave it with
#              'exit' or Ctrl-A x); also RGROUP_VM_SHELL=1.
#
# A guest that stops (no heartbeat, a line that init writes every 5 s to
# the guest's second serial port, for RGROUP_VM_STALL seconds, default 60)
# is killed then, not at --timeout, after printing where its vCPUs were
# (qemu's monitor; needs python3).
#
# Other knobs: RGROUP_VM_ACCEL=kvm|tcg forces the accelerator (and then
# --single-tcg leaves it as it is), RGROUP_VM_ICOUNT=SHIFT runs TCG with
# qemu's -icount shift=SHIFT (one instruction is 2^SHIFT ns of the
# guest's clocks, whatever the host's load: for share tests and cost
# measurements; one TCG thread),
# RGROUP_VM_APPEND adds kernel command line arguments, RGROUP_VM_MEM
# overrides -m 512, RGROUP_VM_BUSYBOX names a
# static busybox other than /bin/busybox.
#
# The guest layout PROGRAM sees: cgroup2 on /sys/fs/cgroup with +cpu (and
# +cpuset) enabled at the root, PROGRAM in the "system group"
# /sys/fs/cgroup/sg-test (or sg-test/user with --user), a tmpfs on /tmp.
#
# Exit status: PROGRAM's (0 pass, 1 fail, 77 skip). 1 when the guest never
# reported PROGRAM's exit (kernel panic, crash of init, timeout). 77 when a
# piece of the environment is missing (qemu, busybox-static, cpio, the
# kernel), with the reason; with RGROUP_TEST_STRICT=1 that is a failure.

set -u -o pipefail

me=run-in-vm.sh
here=$(cd "$(dirname "$0")" && pwd)

strict() { [ -n "${RGROUP_TEST_STRICT:-}" ] && [ "${RGROUP_TEST_STRICT}" != 0 ]; }

skip() {
	if strict; then
		echo "$me: FAIL (strict mode, would skip): $*" >&2
		exit 1
	fi
	echo "$me: SKIP: $*" >&2
	exit 77
}

die() {
	echo "$me: FAIL: $*" >&2
	exit 1
}

usage() {
	sed -n '8,11s/^# \{0,1\}//p' "$0" >&2
	echo "(options are described at the top of $0)" >&2
	exit 2
}

# The guest's heartbeat: a line every 5 s on its second serial port, which
# qemu writes to $tmp/heartbeat (the watcher below looks at that file; the
# console stays the program's). It stays in the root cgroup, and the OOM
# killer leaves it alone; under --systemd it starts before /proc and /dev
# are mounted and writes once systemd has mounted them.
heartbeat='(while :; do echo -1000 >/proc/self/oom_score_adj; [ -c /dev/ttyS1 ] && echo alive >/dev/ttyS1; sleep 5; done) 2>/dev/null &'

# Quote a string for the guest's busybox sh (which lacks bash's $'...').
shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

smp=${RGROUP_VM_SMP:-2} kernel='' timeout_s='' user='' runas='' keep=${RGROUP_VM_KEEP:-} shell=${RGROUP_VM_SHELL:-}
systemd='' sd='' container='' unit_file='' single='' late_cpus=''
[ "$keep" = 0 ] && keep=
[ "$shell" = 0 ] && shell=
envs=()
files=()
dynamic=()
unit_props=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=${2?}; shift 2 ;;
	--timeout) timeout_s=${2?}; shift 2 ;;
	--env) envs+=("${2?}"); shift 2 ;;
	--user) user=${2?}; shift 2 ;;
	--runas) runas=${2?}; shift 2 ;;
	--file) files+=("${2?}"); shift 2 ;;
	--dynamic) dynamic+=("${2?}"); shift 2 ;;
	--smp) smp=${2?}; shift 2 ;;
	--single-tcg) single=1; shift ;;
	--late-cpus) late_cpus=1; shift ;;
	--systemd) systemd=1; shift ;;
	--unit-prop) unit_props+=("${2?}"); shift 2 ;;
	--unit) unit_file=${2?}; shift 2 ;;
	--container) container=${2?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--shell) shell=1; shift ;;
	--) shift; break ;;
	-*) echo "$me: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ] || [ -z "$kernel" ] || [ -z "$timeout_s" ]; then usage; fi
prog=$1
shift

case $timeout_s in '' | *[!0-9]*) die "--timeout wants whole seconds, got '$timeout_s'" ;; esac
case $smp in '' | 0 | *[!0-9]*) die "--smp wants a number of vCPUs, got '$smp'" ;; esac
for kv in "${envs[@]+"${envs[@]}"}"; do
	[[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants K=V, got '$kv'"
done
# A test program that hangs says where, before the VM's timeout kills it
# silently: the harness's watchdog (test/lib/check.c), 20 s earlier.
if [ "$timeout_s" -gt 60 ] && [[ " ${envs[*]+"${envs[*]}"} " != *" RGROUP_TEST_WATCHDOG="* ]]; then
	envs+=("RGROUP_TEST_WATCHDOG=$((timeout_s - 20))")
fi
for kv in "${unit_props[@]+"${unit_props[@]}"}"; do
	[[ $kv =~ ^[A-Za-z][A-Za-z0-9]*=.*$ && $kv != *$'\n'* ]] || die "--unit-prop wants KEY=VALUE on one line, got '$kv'"
done
if [ -n "$systemd" ]; then
	[ -z "$user" ] || die "--systemd runs PROGRAM as a service as root; --user is not for it"
	[ -z "$shell" ] || die "--systemd has no shell after PROGRAM"
	[ -z "$late_cpus" ] || die "--late-cpus brings CPUs up from the busybox init, not with --systemd"
	[ -z "$unit_file" ] || [ -f "$unit_file" ] || die "unit file '$unit_file' does not exist"
elif [ ${#unit_props[@]} -gt 0 ] || [ -n "$unit_file" ]; then
	die "--unit and --unit-prop are for --systemd"
fi
case $container in
'' | rw | ro) ;;
*) die "--container wants rw or ro (how cgroupfs is mounted in it), got '$container'" ;;
esac
if [ -n "$container" ]; then
	[ -z "$user$systemd" ] || die "--container is not for --user or --systemd"
fi
if [ -n "${RGROUP_TEST_STRICT+set}" ]; then
	envs+=("RGROUP_TEST_STRICT=$RGROUP_TEST_STRICT")
fi
uid='' gid=''
if [ -n "$user" ]; then
	uid=${user%%:*}
	gid=${user#*:}
	[ "$gid" = "$user" ] && gid=$uid
	[[ $uid =~ ^[0-9]+$ && $gid =~ ^[0-9]+$ ]] || die "--user wants UID[:GID] (numbers), got '$user'"
	[ -n "$runas" ] || die "--user needs --runas (the static helper built from test/vm/runas.c)"
fi

# --- the pieces, each a skip with its reason when missing --------------------

qemu=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
command -v cpio >/dev/null || skip "cpio not found (apt-get install cpio)"
command -v gzip >/dev/null || skip "gzip not found"
command -v timeout >/dev/null || skip "timeout not found (coreutils)"
command -v readelf >/dev/null || command -v file >/dev/null ||
	skip "neither readelf nor file found, cannot check that programs are static"

# Static means: an ELF without a program interpreter (static-pie included).
is_static() {
	if command -v readelf >/dev/null; then
		readelf -h "$1" >/dev/null 2>&1 || return 1
		! readelf -lW "$1" 2>/dev/null | grep -q 'Requesting program interpreter\|[[:space:]]INTERP[[:space:]]'
	else
		file -L "$1" | grep -q 'ELF.*\(statically linked\|static-pie linked\)'
	fi
}

busybox=
for b in ${RGROUP_VM_BUSYBOX:-/bin/busybox /usr/bin/busybox}; do
	[ -x "$b" ] && is_static "$b" && { busybox=$b; break; }
done
[ -n "$busybox" ] || skip "no statically linked busybox (apt-get install busybox-static)"

{ [ -f "$prog" ] && [ -x "$prog" ]; } || die "program '$prog' is not an executable file"
is_static "$prog" || die "program '$prog' is not a statically linked ELF (it has a program interpreter); link it with -static"
for f in "${files[@]+"${files[@]}"}"; do
	[ -f "$f" ] || die "file '$f' does not exist"
	[ "$(basename "$f")" != "$(basename "$prog")" ] || die "file '$f' has the program's name"
	if [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then
		is_static "$f" || die "file '$f' is not a statically linked ELF (it has a program interpreter); link it with -static"
	fi
done
for f in "${dynamic[@]+"${dynamic[@]}"}"; do
	case $f in /*) ;; *) die "--dynamic wants an absolute path, got '$f'" ;; esac
	[ -f "$f" ] || die "file '$f' does not exist"
done
if [ ${#dynamic[@]} -gt 0 ]; then
	command -v ldd >/dev/null || skip "ldd not found (libc-bin), needed for --dynamic"
fi
if [ -n "$systemd" ]; then
	for f in /lib/systemd/systemd /usr/lib/systemd/systemd; do
		[ -x "$f" ] && { sd=$f; break; }
	done
	[ -n "$sd" ] || skip "no systemd to boot (apt-get install systemd)"
	command -v ldd >/dev/null || skip "ldd not found (libc-bin), needed for --systemd"
	dynamic+=("$sd")
fi
unshare_bin=
if [ -n "$container" ]; then
	if ! unshare_bin=$(command -v unshare) || ! "$unshare_bin" --help 2>&1 | grep -q -- '--cgroup'; then
		skip "no unshare with --cgroup (util-linux), needed for --container"
	fi
	command -v ldd >/dev/null || skip "ldd not found (libc-bin), needed for --container"
	dynamic+=("$unshare_bin")
fi
if [ -n "$user" ]; then
	{ [ -f "$runas" ] && [ -x "$runas" ]; } || die "runas helper '$runas' is not an executable file"
	is_static "$runas" || die "runas helper '$runas' is not statically linked"
fi

if [ -f "$kernel" ]; then
	vmlinuz=$kernel
elif [ ! -d "$kernel" ] && { [ ! -d "$(dirname "$kernel")" ] || [[ $(basename "$kernel") =~ ^(vmlinuz|bzImage) ]]; }; then
	# Looks like a mistyped image rather than a cache dir: do not mkdir -p it.
	die "kernel '$kernel' does not exist (a cache directory's parent must exist)"
else
	# A cache directory: filled on first use, so configuring stays offline.
	rc=0
	vmlinuz=$("$here/fetch-kernel.sh" "$kernel") || rc=$?
	[ $rc -eq 0 ] || { [ $rc -eq 77 ] && skip "no kernel in '$kernel' and fetching one failed (see above)"; die "fetch-kernel.sh failed ($rc)"; }
fi
[ -r "$vmlinuz" ] || skip "kernel '$vmlinuz' is not readable"

# KVM only when the CPU advertises virtualization and /dev/kvm opens: some
# sandboxes offer a /dev/kvm that creates VMs but cannot run this guest.
accel=${RGROUP_VM_ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qw -e vmx -e svm /proc/cpuinfo 2>/dev/null &&
		(exec 3<>/dev/kvm) 2>/dev/null; then
		accel=kvm
	fi
	if [ -n "$single" ] && [ "$accel" = tcg ]; then
		accel=tcg,thread=single
		RGROUP_VM_ICOUNT=${RGROUP_VM_ICOUNT-3}
	fi
fi

# --- the initramfs -------------------------------------------------------------

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rgroup-vm.XXXXXX") || die "mktemp failed"
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	if [ -n "$keep" ]; then
		echo "$me: kept $tmp (initramfs.gz, root/init, console.log)" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

root=$tmp/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,test} || die "cannot populate $root"
cp "$busybox" "$root/bin/busybox" || die "cannot copy busybox"
pname=$(basename "$prog")
cp "$prog" "$root/test/$pname" || die "cannot copy $prog"
[ -n "$user" ] && { cp "$runas" "$root/bin/runas" || die "cannot copy $runas"; }
for f in "${files[@]+"${files[@]}"}"; do
	cp "$f" "$root/test/" || die "cannot copy $f"
done
# A dynamic program and what it needs, each at its own path.
for f in "${dynamic[@]+"${dynamic[@]}"}"; do
	for dep in "$f" $(ldd "$f" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p'); do
		[ -e "$root$dep" ] && continue
		mkdir -p "$root$(dirname "$dep")" && cp -L "$dep" "$root$dep" || die "cannot copy $dep"
	done
done

guest_cmd=$(shq "/test/$pname")
guest_args=
for a in "$@"; do guest_args+=" $(shq "$a")"; done

# systemd's quoting of one word of a command line: in double quotes, with
# \ and " escaped and $ (variables) and % (specifiers) doubled. A value
# of Environment= expands no variables: only % is doubled there (sdqv).
sdq() { printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g; s/\$/$$/g; s/%/%%/g')"; }
sdqv() { printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g; s/%/%%/g')"; }

# --systemd: the busybox init only puts busybox's applets in place and
# becomes systemd, which mounts /proc, /sys, /dev, /run and cgroup2 and
# starts default.target: PROGRAM's service, a unit (generated, or --unit's)
# and a drop-in that runs PROGRAM in it. The service reports PROGRAM's
# exit status (systemd's $EXIT_STATUS, as root: "+", whatever User= the
# service has) and powers the VM off.
write_systemd() {
	local u=$root/etc/systemd/system kv a
	mkdir -p "$u" "$root/run" "$root/var/tmp" || die "cannot populate $root/etc"
	: >"$root/etc/machine-id"
	printf 'NAME="rgroup VM test"\nID=rgroup-vm\n' >"$root/etc/os-release"
	# uid 1000 for services with User=1000, as on the other VM tests.
	printf 'root:x:0:0:root:/tmp:/bin/sh\nrgtest:x:1000:1000::/tmp:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\nrgtest:x:1000:\n' >"$root/etc/group"
	cat >"$u/default.target" <<EOF
[Unit]
Description=rgroup VM test
Wants=rgroup-vm.service
EOF
	if [ -n "$unit_file" ]; then
		cp "$unit_file" "$u/rgroup-vm.service" || die "cannot copy $unit_file"
	else
		printf '[Unit]\nDescription=rgroup VM test: %s\n\n[Service]\nType=exec\n' "$pname" \
			>"$u/rgroup-vm.service"
	fi
	mkdir -p "$u/rgroup-vm.service.d" || die "cannot populate $u"
	{
		cat <<EOF
[Unit]
DefaultDependencies=no
SuccessAction=poweroff-immediate
FailureAction=poweroff-immediate

[Service]
StandardOutput=tty
StandardError=tty
TTYPath=/dev/console
ExecStopPost=+/bin/sh -c 'echo "RGROUP-VM-EXIT \$\$EXIT_STATUS" >/dev/console'
ExecStart=
EOF
		printf 'ExecStart=%s' "$(sdq "/test/$pname")"
		for a in "$@"; do printf ' %s' "$(sdq "$a")"; done
		printf '\n'
		for kv in "${envs[@]+"${envs[@]}"}"; do
			printf 'Environment=%s\n' "$(sdqv "$kv")"
		done
		for kv in "${unit_props[@]+"${unit_props[@]}"}"; do
			printf '%s\n' "$kv"
		done
	} >"$u/rgroup-vm.service.d/vm.conf"
	cat >"$root/init" <<EOF
#!/bin/busybox sh
# Generated by run-in-vm.sh --systemd: become systemd (PID 1).
/bin/busybox --install -s /bin
$heartbeat
exec $sd
EOF
}

if [ -n "$systemd" ]; then
	write_systemd "$@"
else
{
	cat <<'EOF'
#!/bin/busybox sh
# Generated by run-in-vm.sh: set up cgroup2, run the test, report, power off.
/bin/busybox --install -s /bin
export PATH=/bin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
EOF
	if [ -n "$late_cpus" ]; then
		cat <<'EOF'
for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ "$(cat $c)" = 1 ] || echo 1 >$c || echo "init: cannot bring up ${c%/online}"
done
EOF
	fi
	cat <<'EOF'
mount -t devtmpfs devtmpfs /dev 2>/dev/null
EOF
	# Not with --shell: nothing watches it (and there is no second port).
	[ -n "$shell" ] || printf '%s\n' "$heartbeat"
	cat <<'EOF'
mount -t cgroup2 cgroup2 /sys/fs/cgroup || echo "init: cannot mount cgroup2"
# A tmpfs on /tmp; what the initramfs put under /tmp (--dynamic files of a
# build directory there) is copied onto it, not hidden by it.
mkdir /.tmp-image && mv /tmp/* /.tmp-image/ 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /tmp
cp -a /.tmp-image/. /tmp/ && rm -rf /.tmp-image
cg=/sys/fs/cgroup
echo +cpu >$cg/cgroup.subtree_control || echo "init: cannot enable +cpu at the root"
echo +cpuset >$cg/cgroup.subtree_control || echo "init: cannot enable +cpuset at the root"
mkdir $cg/sg-test || echo "init: cannot create $cg/sg-test"
EOF
	for kv in "${envs[@]+"${envs[@]}"}"; do
		echo "export ${kv%%=*}=$(shq "${kv#*=}")"
	done
	if [ -n "$container" ]; then
		# The runtime's side: the container's group is sg-test, which the
		# root enables cpu for; its processes (here init too, as a
		# container's own init would be) live there. The container's side:
		# a cgroup namespace rooted at sg-test and cgroupfs mounted anew (in
		# place of the host's, as on a runtime's fresh /sys: the same
		# superblock cannot be mounted on itself).
		cat <<EOF
echo \$\$ >\$cg/sg-test/cgroup.procs || echo "init: cannot move into \$cg/sg-test"
$unshare_bin --cgroup --mount --propagation private /bin/sh -c 'umount /sys/fs/cgroup && mount -t cgroup2 -o nosuid,nodev,noexec,$container cgroup2 /sys/fs/cgroup || { echo "init: cannot mount cgroup2 in the container"; exit 125; }; exec "\$@"' sh $guest_cmd$guest_args
rc=\$?
EOF
	elif [ -z "$user" ]; then
		cat <<EOF
echo \$\$ >\$cg/sg-test/cgroup.procs || echo "init: cannot move into \$cg/sg-test"
$guest_cmd$guest_args
rc=\$?
EOF
	else
		# sg-test must have no processes of its own to pass controllers to
		# the delegated child (no internal processes), so init stays in the
		# root cgroup and only the program moves.
		cat <<EOF
echo +cpu >\$cg/sg-test/cgroup.subtree_control || echo "init: cannot enable +cpu in sg-test"
echo +cpuset >\$cg/sg-test/cgroup.subtree_control || echo "init: cannot enable +cpuset in sg-test"
d=\$cg/sg-test/user
mkdir \$d && chown $uid:$gid \$d \$d/cgroup.procs \$d/cgroup.threads \$d/cgroup.subtree_control ||
	echo "init: cannot delegate \$d to $uid:$gid"
sh -c 'echo \$\$ >/sys/fs/cgroup/sg-test/user/cgroup.procs && exec /bin/runas $uid $gid "\$@"' sh $guest_cmd$guest_args
rc=\$?
EOF
	fi
	cat <<'EOF'
echo "RGROUP-VM-EXIT $rc"
EOF
	if [ -n "$shell" ]; then
		cat <<'EOF'
echo "init: shell (exit it to power off)"
setsid cttyhack sh
EOF
	fi
	echo 'poweroff -f'
} >"$root/init"
fi
chmod 0755 "$root/init"

(cd "$root" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet | gzip -1) >"$tmp/initramfs.gz" ||
	die "cannot build the initramfs"

# --- boot ----------------------------------------------------------------------

# no_timer_check: the kernel's boot-time check that the IO-APIC delivers
# timer interrupts waits a fixed number of delay loops; a TCG guest on a
# loaded host can miss it and panics ("IO-APIC + timer doesn't work!").
# KVM guests skip the check by themselves.
qargs=(-m "${RGROUP_VM_MEM:-512}" -smp "$smp" -accel "$accel"
	-no-reboot -nographic -kernel "$vmlinuz" -initrd "$tmp/initramfs.gz"
	-append "console=ttyS0 quiet panic=-1 no_timer_check ${late_cpus:+maxcpus=1 }${systemd:+systemd.show_status=error }${RGROUP_VM_APPEND:-}")
# qboot (qemu-system-data) boots faster than SeaBIOS and prints nothing.
[ -f /usr/share/qemu/qboot.rom ] && qargs+=(-bios /usr/share/qemu/qboot.rom)
if [ -n "${RGROUP_VM_ICOUNT:-}" ]; then
	case $RGROUP_VM_ICOUNT in *[!0-9]*) die "RGROUP_VM_ICOUNT wants a shift (0-10), got '$RGROUP_VM_ICOUNT'" ;; esac
	[ "${accel%%,*}" = tcg ] || die "RGROUP_VM_ICOUNT needs TCG (RGROUP_VM_ACCEL=tcg), not $accel"
	qargs+=(-icount "shift=$RGROUP_VM_ICOUNT")
fi

# The heartbeat's port, and the monitor for dump_vcpus on a unix socket
# (whose path has a limit of 107 bytes: with a longer $TMPDIR the dump is
# left out).
if [ -z "$shell" ]; then
	qargs+=(-pidfile "$tmp/qemu.pid" -serial stdio -serial "file:$tmp/heartbeat")
	[ ${#tmp} -le 99 ] && qargs+=(-monitor "unix:$tmp/monitor,server,nowait")
fi

# Where each vCPU is (registers from qemu's monitor), for a stopped guest.
dump_vcpus() {
	command -v python3 >/dev/null || { echo "(python3 not found: no register dump)"; return; }
	[ -S "$tmp/monitor" ] || { echo "(no monitor socket: \$TMPDIR is too long for one)"; return; }
	python3 - "$tmp/monitor" <<'PY'
import re, socket, sys
def reply(s):
    b = b''
    while not b.endswith(b'(qemu) '):
        d = s.recv(65536)
        if not d:
            break
        b += d
    return b.decode(errors='replace').replace('\r', '')
try:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sys.argv[1])
    reply(s)
    s.sendall(b'info registers -a\n')
    out = reply(s)
except OSError as e:
    sys.exit(f"(qemu's monitor did not answer: {e}; qemu itself is stuck)")
for line in out.splitlines():
    if re.match(r'(CPU#|RAX=|RSI=|R8 =|R12=|RIP=)', line):
        print(line)
PY
}

# The watcher: after the first heartbeat, none for stall_s seconds means
# the guest stopped, or its kernel is stuck on every CPU (a soft-lockup or
# RCU stall report may then be above). It ends when $tmp/done appears.
stall_s=${RGROUP_VM_STALL:-60}
case $stall_s in '' | *[!0-9]*) die "RGROUP_VM_STALL wants whole seconds, got '$stall_s'" ;; esac
watch_guest() {
	local size=0 now last
	while [ ! -e "$tmp/done" ]; do
		sleep 1
		now=$(stat -c %s "$tmp/heartbeat" 2>/dev/null) || now=0
		if [ "$now" != "$size" ]; then
			size=$now last=$(date +%s)
			continue
		fi
		[ "$size" -gt 0 ] && [ $(($(date +%s) - last)) -ge "$stall_s" ] || continue
		{
			echo "$me: no heartbeat from the guest for ${stall_s}s: it stopped; its vCPUs:"
			dump_vcpus
		} >&2
		: >"$tmp/stalled"
		# qemu ends on TERM from its main loop; if that is what is stuck, KILL.
		kill "$(cat "$tmp/qemu.pid")" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[ -e "$tmp/done" ] && return
			sleep 1
		done
		kill -KILL "$(cat "$tmp/qemu.pid")" 2>/dev/null
		return
	done
}

echo "$me: booting $(basename "$vmlinuz") ($accel) with $pname${user:+ as uid $user}${systemd:+ as a service of $sd}${container:+ in a container (cgroupfs $container)}" >&2
start=$(date +%s)
if [ -n "$shell" ]; then
	# Interactive: the console is the terminal (Ctrl-A x quits qemu).
	"$qemu" "${qargs[@]}" 2>&1 | tee "$tmp/console.log"
	qrc=$?
else
	watch_guest &
	wpid=$!
	# stdin is not the console: qemu must not put a terminal in raw mode.
	# (qemu's messages go with the console; the shell's own, "Killed"
	# when the watcher or the timeout ends qemu, do not.)
	{
		timeout -k 10 "$timeout_s" "$qemu" "${qargs[@]}" </dev/null 2>&1 |
			sed -u 's/\r$//' | tee "$tmp/console.log"
		qrc=${PIPESTATUS[0]}
	} 2>/dev/null
	: >"$tmp/done"
	wait "$wpid"
fi
elapsed=$(($(date +%s) - start))

code=$(tr -d '\r' <"$tmp/console.log" | sed -n 's/^RGROUP-VM-EXIT \([0-9][0-9]*\)$/\1/p' | tail -n 1)
if [ -z "$code" ]; then
	if [ -e "$tmp/stalled" ]; then
		die "the guest stopped after $((elapsed - stall_s))s (no heartbeat for ${stall_s}s) and was killed, $pname did not finish"
	fi
	if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
		die "timeout: the VM ran longer than ${timeout_s}s and was killed, $pname did not finish"
	fi
	die "the guest never reported $pname's exit status (qemu exit $qrc after ${elapsed}s: kernel panic or init died? see the console output above)"
fi
echo "$me: $pname exited $code in the VM (${elapsed}s including boot)" >&2
exit "$code"
