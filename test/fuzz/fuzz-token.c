/* SPDX-License-Identifier: MIT */
/* fuzz-token.c - rgroup__has_token; the first byte picks the token. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const toks[] = { "cpu", "cpuset", "io", "pids" };
	char *text;
	int r;

	if (size < 1)
		return 0;
	text = fuzz_text(data + 1, size - 1);
	r = rgroup__has_token(text, toks[data[0] % 4]);
	FUZZ_ASSERT(r == 0 || r == 1);
	free(text);
	return 0;
}
