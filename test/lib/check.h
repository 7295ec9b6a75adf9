/* SPDX-License-Identifier: MIT */
/*
 * check.h - the small harness of the system and VM tests (check.c).
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

extern int rgt_failures;        /* CHECKs failed so far */
extern int rgt_skipped_case;    /* the running case skipped (not strict) */

/* RGROUP_TEST_STRICT is set (and not "0"): a skip fails. */
int rgt_strict(void);

/* The whole program cannot run here: exit 77 (or 1 in strict mode). */
void rgt_skip_all(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* One case cannot run here: it is reported and, in strict mode, fails. */
void rgt_skip_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run the cases whose name contains any of argv[1..] (all without
 * arguments); the exit status: 0, 1 (a CHECK failed, or no case matched)
 * or 77 (a case skipped). */
int rgt_main(const struct rgt_case *cases, size_t n, int argc, char **argv);

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

#define RGT_MAIN(cases)                                                      \
	int main(int argc, char **argv)                                      \
	{                                                                    \
		return rgt_main(cases, sizeof(cases) / sizeof(cases[0]),     \
				argc, argv);                                 \
	}

#endif /* RGROUP_TEST_CHECK_H */
