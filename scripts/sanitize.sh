#!/usr/bin/env bash
# Build rgroup with sanitizers and run the tests under them, then print
# "N passed, N failed"; exit status 1 if anything failed.
#
#   1. gcc, -Db_sanitize=address,undefined (build-asan): the unit and
#      system suites (the system tests set RGROUP_BACKEND themselves).
#   2. clang, -Db_sanitize=thread -Db_lundef=false -Dtests_static_lib=true
#      (build-tsan): test-concurrency and test-rules of the system suite,
#      the governor's rules, churn, safety and fault-injection tests, and
#      the executor's test on cgroup1 and the governor.
#      The test programs link the static library (librgroup.a), not
#      librgroup.so (-Dtests_static_lib=true): TSan's runtime defines
#      pthread_create() and sigaction() in the program, ahead of the
#      shared library's, so librgroup.so's pthread_create() would be
#      handed TSan's start routine, which must be the first code on the
#      new thread, and run its own instrumented start before it. Linked
#      statically, with the --wrap=pthread_create such a link uses, the
#      program's calls reach the library first, and the library hands the
#      runtime its start as in any static program. The one case that
#      needs the shared library's sigaction() is left out (governor-safety's
#      signal_reset; RGT_STATIC_LIBRARY, test/system/meson.build).
#
# Only the test programs of those suites are built: the static copies for
# the VM and the exec wrappers cannot link with the sanitizer runtimes.
# No suppressions: every report is a finding (docs/HARDENING.md).
#
#   ./scripts/sanitize.sh            both
#   ./scripts/sanitize.sh asan|tsan  one
# Env: SANITIZE_ASAN_DIR, SANITIZE_TSAN_DIR (build directories).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_deps $RGROUP_BUILD_DEPS libcmocka-dev clang || exit 1

asan_dir=${SANITIZE_ASAN_DIR:-build-asan}
tsan_dir=${SANITIZE_TSAN_DIR:-build-tsan}
which=${1:-all}
passed=0
failed=0
skipped=0
failures=()

# Halt on the first report, with stacks; a sanitizer report fails the test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:halt_on_error=1:detect_leaks=1:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}
# die_after_fork=0: rule 7's test makes a fork child of a multi-threaded
# process create threads (its own rgroups), which TSan forbids by default.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0:exitcode=97:second_deadlock_stack=1:die_after_fork=0}

# setup DIR CC OPTIONS...: configure once (reconfigure if it exists).
setup() {
	local dir=$1 cc=$2
	shift 2
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		CC=$cc meson setup "$dir" -Dtests=true "$@" >/dev/null
	fi
}

# The executables of the tests in the given suites (from introspection).
test_exes() {
	local dir=$1
	shift
	python3 - "$dir" "$@" <<'PY'
import json, subprocess, sys, os
d, suites = sys.argv[1], sys.argv[2:]
tests = json.loads(subprocess.check_output(["meson", "introspect", "--tests", d]))
exes = set()
for t in tests:
    if any(s in suites or s.split(":")[-1] in suites for s in t["suite"]):
        exe = t["cmd"][0]
        if exe.startswith(os.path.abspath(d) + "/"):
            exes.add(os.path.relpath(exe, os.path.abspath(d)))
print("\n".join(sorted(exes)))
PY
}

# count DIR: add meson's results in DIR to the totals; a skip is counted
# as one, and fails in strict mode, as in test.sh.
count() {
	local out
	out=$(python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, os, sys
strict = os.environ.get("RGROUP_TEST_STRICT", "0") not in ("", "0")
p = f = s = 0
names = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"] in ("OK", "EXPECTEDFAIL"):
        p += 1
    elif r["result"] == "SKIP" and not strict:
        s += 1
    else:
        f += 1
        names.append(r["name"])
print(p, f, s, " ".join(names))
PY
)
	read -r p f s names <<<"$out"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	[ -n "$names" ] && failures+=("$1: $names")
}

run_asan() {
	echo "== gcc, address + undefined ($asan_dir)"
	setup "$asan_dir" gcc -Db_sanitize=address,undefined -Db_lundef=true || { failed=$((failed + 1)); failures+=("asan: setup"); return; }
	mapfile -t exes < <(test_exes "$asan_dir" unit system)
	if ! ninja -C "$asan_dir" "${exes[@]}"; then
		failed=$((failed + 1)); failures+=("asan: build"); return
	fi
	meson test -C "$asan_dir" --no-rebuild --print-errorlogs --num-processes 1 \
		--suite unit --suite system
	count "$asan_dir"
}

run_tsan() {
	echo "== clang, thread ($tsan_dir)"
	setup "$tsan_dir" clang -Db_sanitize=thread -Db_lundef=false -Dtests_static_lib=true || {
		failed=$((failed + 1)); failures+=("tsan: setup"); return; }
	if ! ninja -C "$tsan_dir" test/system/test-concurrency test/system/test-rules \
		test/system/test-churn test/system/test-governor test/system/test-executor test/system/test-gov-faults; then
		failed=$((failed + 1)); failures+=("tsan: build"); return
	fi
	meson test -C "$tsan_dir" --no-rebuild --print-errorlogs --num-processes 1 \
		kernel-concurrency kernel-rules governor-rules governor-churn governor-safety \
		kernel-executor governor-executor governor-faults
	count "$tsan_dir"
}

case $which in
all) run_asan; run_tsan ;;
asan) run_asan ;;
tsan) run_tsan ;;
*) echo "usage: $0 [all|asan|tsan]" >&2; exit 2 ;;
esac

for f in "${failures[@]}"; do
	echo "failed: $f"
done
echo "$passed passed, $failed failed$([ "$skipped" -eq 0 ] || echo ", $skipped skipped")"
[ "$failed" -eq 0 ]
