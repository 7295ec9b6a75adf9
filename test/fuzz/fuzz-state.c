/* SPDX-License-Identifier: MIT */
/* fuzz-state.c - rgroup__parse_state (the governor's state file, read by the
 * rgroup tool from a directory anyone may write to): every group it hands
 * over is well-formed, the header is written only on success; and
 * rgroup__parse_statename accepts exactly what rgroup__format_statename
 * writes. The first byte picks which. */
#include "fuzz.h"

static int check_group(void *arg, const struct rgroup__state_group *g)
{
	int *n = arg;

	FUZZ_ASSERT(g->id > 0 && g->depth >= 1 && g->depth <= RGROUP_MAX_DEPTH);
	FUZZ_ASSERT((g->parent == 0) == (g->depth == 1));
	FUZZ_ASSERT(g->nice >= -20 && g->nice <= 19);
	(*n)++;
	return 0;
}

static void fuzz_name(const char *text)
{
	pid_t pid = 7;
	uint64_t start = 7;
	int tmp = 7, r = rgroup__parse_statename(text, &pid, &start, &tmp);

	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	if (r == 0) {
		char name[64];

		FUZZ_ASSERT(rgroup__format_statename(name, sizeof(name), pid, start, tmp) == 0);
		FUZZ_ASSERT(strcmp(name, text) == 0);
	} else {
		FUZZ_ASSERT(pid == 7 && start == 7 && tmp == 7);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data + (size > 0), size - (size > 0));
	struct rgroup__state h = { .pid = -7 };
	pid_t tids[4] = { 0 };
	int n = 0, r;

	if (size > 0 && data[0] & 1) {
		fuzz_name(text);
	} else {
		r = rgroup__parse_state(text, &h, tids, 4, check_group, &n);
		FUZZ_ASSERT(fuzz_errno_ok(r) || r == -ENOTSUP);
		FUZZ_ASSERT(r <= 0);
		if (r == 0)
			FUZZ_ASSERT(h.pid > 0 && h.version == RGROUP__STATE_VERSION &&
				    h.backend[0] && (h.truncated == 0 || h.truncated == 1));
		else
			FUZZ_ASSERT(h.pid == -7);
		for (int i = 0; i < 4; i++)
			FUZZ_ASSERT(tids[i] >= 0);
	}
	free(text);
	return 0;
}
