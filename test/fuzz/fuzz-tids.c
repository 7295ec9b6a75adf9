/* SPDX-License-Identifier: MIT */
/* fuzz-tids.c - rgroup__parse_tids: count, at most max stored, nothing on failure. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	pid_t tids[8];
	int r;

	memset(tids, 0, sizeof(tids));
	r = rgroup__parse_tids(text, tids, 8);
	FUZZ_ASSERT(fuzz_errno_ok(r));
	for (int i = 0; i < 8; i++)
		FUZZ_ASSERT((r < 0 || i >= r) ? tids[i] == 0 : tids[i] > 0);
	free(text);
	return 0;
}
