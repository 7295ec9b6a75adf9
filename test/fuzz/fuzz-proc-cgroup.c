/* SPDX-License-Identifier: MIT */
/* fuzz-proc-cgroup.c - rgroup__parse_proc_cgroup: no crash, no overrun of
 * the output buffer, output untouched on failure. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *ctrl;
	char *text, path[64];
	int r;

	if (size < 1)
		return 0;
	ctrl = fuzz_ctrl(data[0]);
	text = fuzz_text(data + 1, size - 1);
	memset(path, 'Z', sizeof(path));
	/* a small buffer, so the too-long path is exercised too */
	r = rgroup__parse_proc_cgroup(text, ctrl, path, sizeof(path));
	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	if (r == 0)
		FUZZ_ASSERT(path[0] == '/' && memchr(path, '\0', sizeof(path)) &&
			    strstr(text, path));
	else
		FUZZ_ASSERT(path[0] == 'Z' && path[sizeof(path) - 1] == 'Z');
	free(text);
	return 0;
}
