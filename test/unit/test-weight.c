/* SPDX-License-Identifier: MIT */
/*
 * test-weight.c - nice values, kernel weights and the cgroup v2 scale.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rgroup.h"
#include "weight.h"

/* The kernel's sched_prio_to_weight[], nice -20..19, typed in again on
 * purpose: a typo in weight.c must not be copied into its own test. */
static const unsigned int kernel_weights[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};

static void test_table(void **state)
{
	(void)state;
	for (int nice = -20; nice <= 19; nice++) {
		unsigned int w = rgroup__nice_to_weight(nice);

		if (w != kernel_weights[nice + 20])
			fail_msg("nice %d: weight %u, kernel has %u", nice, w,
				 kernel_weights[nice + 20]);
	}
	assert_int_equal(rgroup__nice_to_weight(0), 1024);
}

/* Each nice step is the kernel's "about 1.25x" (10% of CPU time against a
 * neighbour): monotonic, and within the rounding of its small entries. */
static void test_steps(void **state)
{
	(void)state;
	for (int nice = -20; nice < 19; nice++) {
		double r = (double)rgroup__nice_to_weight(nice) /
			   rgroup__nice_to_weight(nice + 1);

		if (r < 1.19 || r > 1.29)
			fail_msg("nice %d -> %d: ratio %.3f", nice, nice + 1, r);
	}
}

static void test_clamp(void **state)
{
	static const struct {
		int in, out;
	} cases[] = {
		{ INT_MIN, -20 }, { -1000, -20 }, { -21, -20 }, { -20, -20 },
		{ -19, -19 }, { 0, 0 }, { 18, 18 }, { 19, 19 }, { 20, 19 },
		{ 1000, 19 }, { INT_MAX, 19 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (rgroup__clamp_nice(cases[i].in) != cases[i].out)
			fail_msg("clamp(%d) = %d, expected %d", cases[i].in,
				 rgroup__clamp_nice(cases[i].in), cases[i].out);
	}
	/* out-of-range nice values weigh as the clamped ones, as setpriority() */
	assert_int_equal(rgroup__nice_to_weight(INT_MIN), 88761);
	assert_int_equal(rgroup__nice_to_weight(-21), 88761);
	assert_int_equal(rgroup__nice_to_weight(20), 15);
	assert_int_equal(rgroup__nice_to_weight(INT_MAX), 15);
}

/* The exported function is the same table. */
static void test_public(void **state)
{
	(void)state;
	for (int nice = -25; nice <= 25; nice++)
		assert_int_equal(rgroup_nice_to_weight(nice), rgroup__nice_to_weight(nice));
}

static void test_cgroup2_points(void **state)
{
	static const struct {
		unsigned int weight, cg2;
	} cases[] = {
		{ 1024, 100 },    /* nice 0 */
		{ 88761, 8668 },  /* nice -20: 8668.07 */
		{ 15, 1 },        /* nice 19: 1.46 */
		{ 820, 80 },      /* nice 1: 80.08 */
		{ 1277, 125 },    /* nice -1: 124.71 */
		{ 0, 1 },         /* clamped up */
		{ 1, 1 },
		{ 1029, 100 },    /* 100.49: down */
		{ 1030, 101 },    /* 100.59: up */
		{ 102400, 10000 },
		{ 102405, 10000 },   /* 10000.49: no clamp needed */
		{ 102406, 10000 },   /* 10000.59: clamped */
		{ 2000000, 10000 },  /* clamped down */
		{ UINT_MAX, 10000 }, /* no overflow in the multiplication */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned int r = rgroup__weight_to_cgroup2(cases[i].weight);

		if (r != cases[i].cg2)
			fail_msg("weight %u: cpu.weight %u, expected %u",
				 cases[i].weight, r, cases[i].cg2);
	}
}

/* Round trip with the kernel's own direction: cpu.weight w becomes the
 * weight DIV_ROUND_CLOSEST(w * 1024, 100), which must map back to w. */
static void test_cgroup2_inverse(void **state)
{
	(void)state;
	for (unsigned int w = 1; w <= 10000; w++) {
		unsigned int kw = (w * 1024 + 50) / 100;
		unsigned int back = rgroup__weight_to_cgroup2(kw);

		if (back != w)
			fail_msg("cpu.weight %u -> weight %u -> %u", w, kw, back);
	}
}

/* Every nice value lands within one cgroup v2 step of its exact weight,
 * and the order of nice values is kept (ties only where the scale is
 * coarse, never inverted). */
static void test_cgroup2_nice(void **state)
{
	(void)state;
	for (int nice = -20; nice <= 19; nice++) {
		unsigned int w = rgroup__nice_to_weight(nice);
		double exact = w * 100.0 / 1024;
		unsigned int cg = rgroup__weight_to_cgroup2(w);

		if (cg < exact - 0.5 || cg > exact + 0.5 || cg < 1)
			fail_msg("nice %d: cpu.weight %u for exact %.2f", nice, cg, exact);
		if (nice > -20 && cg > rgroup__weight_to_cgroup2(rgroup__nice_to_weight(nice - 1)))
			fail_msg("nice %d: cpu.weight %u above nice %d's", nice, cg, nice - 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_public),
		cmocka_unit_test(test_cgroup2_points),
		cmocka_unit_test(test_cgroup2_inverse),
		cmocka_unit_test(test_cgroup2_nice),
	};

	return cmocka_run_group_tests_name("weight", tests, NULL, NULL);
}
