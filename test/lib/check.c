/* SPDX-License-Identifier: MIT */
/* check.c - the test harness: skips, strict mode, the table of cases. */
#include "check.h"

int rgt_failures;
int rgt_skipped_case;

int rgt_strict(void)
{
	const char *s = getenv("RGROUP_TEST_STRICT");

	return s && *s && strcmp(s, "0") != 0;
}

/* "SKIP: why" (or, in strict mode, the failure it becomes) on stderr. */
static void say_skip(const char *indent, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s%s", indent,
		rgt_strict() ? "FAIL (strict mode, would skip): " : *indent ? "skip: " : "SKIP: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void rgt_skip_all(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_skip("", fmt, ap);
	va_end(ap);
	exit(rgt_strict() ? 1 : 77);
}

void rgt_skip_case(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_skip("  ", fmt, ap);
	va_end(ap);
	if (rgt_strict())
		rgt_failures++;
	else
		rgt_skipped_case = 1;
}

int rgt_main(const struct rgt_case *cases, size_t n, int argc, char **argv)
{
	int ran = 0, any_skipped = 0;

	for (size_t i = 0; i < n; i++) {
		int before = rgt_failures;

		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		rgt_skipped_case = 0;
		fprintf(stderr, "# %s\n", cases[i].name);
		cases[i].fn();
		ran++;
		any_skipped |= rgt_skipped_case;
		fprintf(stderr, "%s %s\n",
			rgt_failures > before ? "not ok" :
			rgt_skipped_case ? "skip" : "ok", cases[i].name);
	}
	if (!ran) {
		fprintf(stderr, "no case matched\n");
		return 1;
	}
	if (rgt_failures)
		return 1;
	return any_skipped ? 77 : 0;
}
