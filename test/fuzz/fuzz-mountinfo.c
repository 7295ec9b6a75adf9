/* SPDX-License-Identifier: MIT */
/* fuzz-mountinfo.c - rgroup__parse_mountinfo, then rgroup__cgroup_dir on
 * what it found: no crash, and a well-formed directory when it succeeds. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rgroup__mount m;
	const char *ctrl, *nl;
	char *text, dir[128];
	int r;

	if (size < 1)
		return 0;
	ctrl = fuzz_ctrl(data[0]);
	text = fuzz_text(data + 1, size - 1);
	memset(&m, 'Z', sizeof(m));
	r = rgroup__parse_mountinfo(text, ctrl, &m);
	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	if (r < 0) {
		FUZZ_ASSERT(m.point[0] == 'Z' && m.root[0] == 'Z');
		goto out;
	}
	FUZZ_ASSERT(m.point[0] == '/' && m.root[0] == '/');
	FUZZ_ASSERT(m.ro == 0 || m.ro == 1);

	/* the last line of the input doubles as a cgroup path */
	nl = strrchr(text, '\n');
	r = rgroup__cgroup_dir(&m, nl ? nl + 1 : text, dir, sizeof(dir));
	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	if (r == 0) {
		size_t n = strlen(dir);

		FUZZ_ASSERT(dir[0] == '/' && !strstr(dir, "//"));
		FUZZ_ASSERT(n == 1 || dir[n - 1] != '/');
	}
out:
	free(text);
	return 0;
}
