/* SPDX-License-Identifier: MIT */
/* fuzz-stat.c - rgroup__parse_stat_starttime, rgroup__parse_stat_cpu. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	uint64_t start = 7;
	int r = rgroup__parse_stat_starttime(text, &start);

	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	FUZZ_ASSERT(r == 0 || start == 7);
	{
		uint64_t ticks = 7;
		int nice = 99;

		r = rgroup__parse_stat_cpu(text, &ticks, &nice);
		FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
		FUZZ_ASSERT(r == 0 ? nice >= -20 && nice <= 19 : ticks == 7 && nice == 99);
	}
	free(text);
	return 0;
}
