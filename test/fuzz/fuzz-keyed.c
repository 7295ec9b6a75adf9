/* SPDX-License-Identifier: MIT */
/* fuzz-keyed.c - rgroup__parse_keyed: documented errors only,
 * output untouched on failure. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {
		"usage_usec", "user_usec", "nr_periods", "a", "max", "cpu",
	};
	const char *key;
	uint64_t v = 42;
	char *text;
	int r;

	if (size < 1)
		return 0;
	key = keys[data[0] % (sizeof(keys) / sizeof(keys[0]))];
	text = fuzz_text(data + 1, size - 1);
	r = rgroup__parse_keyed(text, key, &v);
	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	if (r < 0)
		FUZZ_ASSERT(v == 42);
	free(text);
	return 0;
}
