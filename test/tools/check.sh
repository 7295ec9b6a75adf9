# SPDX-License-Identifier: MIT
# check.sh - what the tools suite's shell tests share (sourced), as
# test/lib/check.h is for the C tests: exit 0 pass, 1 fail, 77 skip; a
# skip says why, and with RGROUP_TEST_STRICT=1 (CI) it is a failure.
fails=0

# skip WHY: the whole test cannot run here.
skip() {
	if [ -n "${RGROUP_TEST_STRICT:-}" ] && [ "${RGROUP_TEST_STRICT}" != 0 ]; then
		echo "FAIL (strict mode, would skip): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}
# fail WHAT: one check failed; the test goes on.
fail() {
	echo "  FAIL: $*" >&2
	fails=$((fails + 1))
}
ok() {
	echo "ok $*" >&2
}
# finish: the exit status from the failures counted.
finish() {
	if [ "$fails" != 0 ]; then
		echo "$fails failure(s)" >&2
		exit 1
	fi
	exit 0
}
