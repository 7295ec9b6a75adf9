/* SPDX-License-Identifier: MIT */
/* fuzz-kgroup.c - rgroup__parse_kgroup (the native kernel's /proc rgroup
 * line): what it accepts is in range, a failure writes nothing. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct rgroup__kgroup g = { .id = 7, .nice = 99 };
	int r = rgroup__parse_kgroup(text, &g);

	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	FUZZ_ASSERT(r == 0 ? g.nice >= -20 && g.nice <= 19 && g.depth <= 32 &&
			     (g.attached == 0 || g.attached == 1)
			   : g.id == 7 && g.nice == 99);
	free(text);
	return 0;
}
