/* SPDX-License-Identifier: MIT */
/* fuzz-dirname.c - rgroup__parse_dirname_ns: what it accepts round-trips
 * exactly through rgroup__format_dirname_ns. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	pid_t pid = 7;
	uint64_t start = 7, id = 7, pidns = 7;
	int r = rgroup__parse_dirname_ns(text, &pid, &start, &pidns, &id);

	FUZZ_ASSERT(fuzz_errno_ok(r) && r <= 0);
	if (r == 0) {
		char name[96];

		/* accepted names are exactly the ones format writes */
		FUZZ_ASSERT(rgroup__format_dirname_ns(name, sizeof(name), pid, start, pidns, id) == 0);
		FUZZ_ASSERT(strcmp(name, text) == 0);
	} else {
		FUZZ_ASSERT(pid == 7 && start == 7 && id == 7 && pidns == 7);
	}
	free(text);
	return 0;
}
