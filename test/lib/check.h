/* SPDX-License-Identifier: MIT */
/*
 * check.h - the small harness of the system and VM tests.
 *
 * These programs run against the real kernel, also statically linked inside
 * the VM (where no test library is installed), so they follow liburing's
 * convention: exit 0 pass, 1 fail, 77 skip. A skip always says why; with
 * RGROUP_TEST_STRICT=1 (CI) a skip is a failure.
 *
 * A test program lists its cases in a table and calls rgt_main(); a case
 * returns nothing and records failures with CHECK()/CHECK_NEAR().
 */
#ifndef RGROUP_TEST_CHECK_H
#define RGROUP_TEST_CHECK_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rgt_case {
	const char *name;
	void (*fn)(void);
};

static int rgt_failures;
static int rgt_skipped_case;

static inline int rgt_strict(void)
{
	const char *s = getenv("RGROUP_TEST_STRICT");
	return s && *s && strcmp(s, "0") != 0;
}

/* The whole program cannot run here: exit 77 (or 1 in strict mode). */
static inline void __attribute__((noreturn, format(printf, 1, 2)))
rgt_skip_all(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, rgt_strict() ? "FAIL (strict mode, would skip): " : "SKIP: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(rgt_strict() ? 1 : 77);
}

/* One case cannot run here: it is reported and, in strict mode, fails. */
static inline void __attribute__((format(printf, 1, 2)))
rgt_skip_case(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, rgt_strict() ? "  FAIL (strict mode, would skip): " : "  skip: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (rgt_strict())
		rgt_failures++;
	else
		rgt_skipped_case = 1;
}

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "  FAIL %s:%d: %s: ", __FILE__,      \
				__LINE__, #cond);                            \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			rgt_failures++;                                      \
		}                                                            \
	} while (0)

/* A measured fraction against the model's, with a relative tolerance. */
#define CHECK_NEAR(what, actual, expected, tol)                              \
	do {                                                                 \
		double a_ = (actual), e_ = (expected);                       \
		double err_ = e_ != 0 ? fabs(a_ - e_) / e_ : fabs(a_);       \
		fprintf(stderr, "  %-28s actual %.4f expected %.4f error %5.1f%% (tolerance %.0f%%)%s\n", \
			(what), a_, e_, 100 * err_, 100 * (tol),             \
			err_ <= (tol) ? "" : "  <-- FAIL");                  \
		if (err_ > (tol))                                            \
			rgt_failures++;                                      \
	} while (0)

static inline int rgt_main(const struct rgt_case *cases, size_t n, int argc,
			   char **argv)
{
	int ran = 0, any_skipped = 0;
	for (size_t i = 0; i < n; i++) {
		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		int before = rgt_failures;
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

#define RGT_MAIN(cases)                                                      \
	int main(int argc, char **argv)                                      \
	{                                                                    \
		return rgt_main(cases, sizeof(cases) / sizeof(cases[0]),     \
				argc, argv);                                 \
	}

#endif /* RGROUP_TEST_CHECK_H */
