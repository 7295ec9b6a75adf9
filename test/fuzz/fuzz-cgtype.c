/* SPDX-License-Identifier: MIT */
/* fuzz-cgtype.c - rgroup__parse_cgtype: only the four names. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	int r = rgroup__parse_cgtype(text);

	FUZZ_ASSERT(r == -EINVAL || (r >= RGROUP__CG_DOMAIN && r <= RGROUP__CG_THREADED));
	free(text);
	return 0;
}
