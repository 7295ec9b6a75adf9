/* SPDX-License-Identifier: MIT */
/* fuzz-kgroup.c - rgroup__parse_kgroup and rgroup__parse_kgroup_list (the
 * native kernel's /proc rgroup and rgroups lines): what they accept is in
 * range, a failure writes nothing. */
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
	struct rgroup__kgroup l = { .id = 7, .nice = 99 };
	r = rgroup__parse_kgroup_list(text, &l);
	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	FUZZ_ASSERT(r == 0 ? l.nice >= -20 && l.nice <= 19 && l.depth <= 32 && l.attached == 0
			   : l.id == 7 && l.nice == 99);
	free(text);
	return 0;
}
