/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what the libFuzzer targets of src/kernel-text/parse.c share.
 *
 * The parsers take NUL-terminated text, so each input is copied into a
 * buffer of exactly its size plus the NUL: AddressSanitizer then catches
 * any read past the end. The first input byte, where a target needs it,
 * picks the controller or key, so the corpus can reach every branch.
 */
#ifndef RGROUP_FUZZ_H
#define RGROUP_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "governor-state.h"
#include "parse.h"
#include "weight.h"

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Controllers to ask for: NULL is the cgroup v2 line/mount. */
static inline const char *fuzz_ctrl(uint8_t b)
{
	static const char *const ctrls[] = {
		NULL, "cpu", "cpuacct", "cpuset", "name=systemd", "memory",
	};

	return ctrls[b % (sizeof(ctrls) / sizeof(ctrls[0]))];
}

/* A failed check is a crash, which is what libFuzzer reports. */
#define FUZZ_ASSERT(cond)                                                    \
	do {                                                                 \
		if (!(cond))                                                 \
			__builtin_trap();                                    \
	} while (0)

/* Only the documented errors ever come back. */
static inline int fuzz_errno_ok(int r)
{
	return r >= 0 || r == -EINVAL || r == -ENOENT || r == -ENAMETOOLONG ||
	       r == -ERANGE;
}

#endif /* RGROUP_FUZZ_H */
