/* SPDX-License-Identifier: MIT */
/*
 * test-model.c - the reference model of the ideal hierarchical weighted
 * share: the worked examples of DESIGN.md, hand-computed water-filling
 * cases, and invariants over random trees.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"

#define TOL 1e-9

#define assert_near(actual, expected)                                        \
	do {                                                                 \
		double a_ = (actual), e_ = (expected);                       \
		if (!(fabs(a_ - e_) <= TOL))                                 \
			fail_msg("%s = %.12f, expected %.12f", #actual, a_, e_); \
	} while (0)

static struct model m;

/* DESIGN.md rule 4: a system group with two single-threaded processes and
 * one rgroup of four busy threads on 2 CPUs: three equal parts. */
static void test_article(void **state)
{
	int sg, p1, p2, rg, t[4];

	(void)state;
	model_init(&m);
	sg = model_add(&m, -1, 1024, 0);
	p1 = model_add(&m, sg, 1024, 1);
	p2 = model_add(&m, sg, 1024, 1);
	rg = model_add(&m, sg, 1024, 0);
	for (int i = 0; i < 4; i++)
		t[i] = model_add(&m, rg, 1024, 1);
	assert_int_equal(model_run(&m, 2), 0);

	assert_near(m.nodes[sg].share, 2);
	assert_near(m.nodes[sg].total_demand, 6);
	assert_near(m.nodes[p1].share, 2.0 / 3);
	assert_near(m.nodes[p2].share, 2.0 / 3);
	assert_near(m.nodes[rg].share, 2.0 / 3);
	assert_near(model_fraction(&m, p1), 1.0 / 3);
	assert_near(model_fraction(&m, rg), 1.0 / 3);
	assert_near(model_fraction(&m, sg), 1);
	for (int i = 0; i < 4; i++)
		assert_near(m.nodes[t[i]].share, 1.0 / 6);
}

/* Flat groups of weights 1:2:4, two busy threads each, on 2 CPUs. */
static void test_flat_weights(void **state)
{
	int g[3];

	(void)state;
	model_init(&m);
	for (int i = 0; i < 3; i++) {
		g[i] = model_add(&m, -1, 1 << i, 0);
		model_add(&m, g[i], 1024, 1);
		model_add(&m, g[i], 1024, 1);
	}
	assert_int_equal(model_run(&m, 2), 0);
	assert_near(m.nodes[g[0]].share, 2.0 / 7);
	assert_near(m.nodes[g[1]].share, 4.0 / 7);
	assert_near(m.nodes[g[2]].share, 8.0 / 7);
	assert_near(model_fraction(&m, g[2]), 4.0 / 7);
}

/* A thread cannot use more than one CPU: weight 1024 vs 4096 with one
 * thread each on 2 CPUs get one CPU each, the weights do not matter. */
static void test_caps(void **state)
{
	int a, b, ta, tb;

	(void)state;
	model_init(&m);
	a = model_add(&m, -1, 1024, 0);
	ta = model_add(&m, a, 1024, 1);
	b = model_add(&m, -1, 4096, 0);
	tb = model_add(&m, b, 1024, 1);
	assert_int_equal(model_run(&m, 2), 0);
	assert_near(m.nodes[a].share, 1);
	assert_near(m.nodes[b].share, 1);
	assert_near(m.nodes[ta].share, 1);
	assert_near(m.nodes[tb].share, 1);

	/* on one CPU the weights decide: 1:4 */
	assert_int_equal(model_run(&m, 1), 0);
	assert_near(m.nodes[a].share, 0.2);
	assert_near(m.nodes[b].share, 0.8);
}

/* More CPUs than demand: the pool is the demand, everyone is saturated. */
static void test_idle_capacity(void **state)
{
	int sg, t1, t2;

	(void)state;
	model_init(&m);
	sg = model_add(&m, -1, 1024, 0);
	t1 = model_add(&m, sg, 1024, 1);
	t2 = model_add(&m, sg, 15, 0.5);
	assert_int_equal(model_run(&m, 8), 0);
	assert_near(m.nodes[sg].share, 1.5);
	assert_near(m.nodes[t1].share, 1);
	assert_near(m.nodes[t2].share, 0.5);
	assert_near(model_fraction(&m, t1), 1 / 1.5);
}

/* Idle members take nothing, whatever their weight; an empty group
 * (no leaves) is an idle leaf. */
static void test_idle_members(void **state)
{
	int sg, big, busy, empty;

	(void)state;
	model_init(&m);
	sg = model_add(&m, -1, 1024, 0);
	big = model_add(&m, sg, 88761, 0);
	busy = model_add(&m, sg, 15, 1);
	empty = model_add(&m, sg, 88761, 5);
	model_add(&m, empty, 1024, 0);
	model_add(&m, empty, 1024, 0);
	assert_int_equal(model_run(&m, 1), 0);
	assert_near(m.nodes[big].share, 0);
	assert_near(m.nodes[empty].share, 0);
	assert_near(m.nodes[empty].total_demand, 0); /* inner demand ignored */
	assert_near(m.nodes[busy].share, 1);

	/* nothing busy at all: everything 0, fractions 0, no NaN */
	model_init(&m);
	sg = model_add(&m, -1, 1024, 0);
	busy = model_add(&m, sg, 1024, 0);
	assert_int_equal(model_run(&m, 4), 0);
	assert_near(m.nodes[sg].share, 0);
	assert_near(model_fraction(&m, busy), 0);
}

/* Two levels: the split inside A does not change A against B. */
static void test_nested(void **state)
{
	int sg, a, b, a1, a2, a2t[3], bt;

	(void)state;
	model_init(&m);
	sg = model_add(&m, -1, 1024, 0);
	a = model_add(&m, sg, 1024, 0);
	b = model_add(&m, sg, 1024, 0);
	a1 = model_add(&m, a, 2048, 1);
	a2 = model_add(&m, a, 1024, 0);
	for (int i = 0; i < 3; i++)
		a2t[i] = model_add(&m, a2, 1024, 1);
	bt = model_add(&m, b, 1024, 1);
	assert_int_equal(model_run(&m, 1), 0);
	assert_near(m.nodes[a].share, 0.5);
	assert_near(m.nodes[b].share, 0.5);
	assert_near(m.nodes[bt].share, 0.5);
	assert_near(m.nodes[a1].share, 1.0 / 3);
	assert_near(m.nodes[a2].share, 1.0 / 6);
	for (int i = 0; i < 3; i++)
		assert_near(m.nodes[a2t[i]].share, 1.0 / 18);

	/* 3 CPUs: B's single thread saturates at 1, A gets 2, and inside A
	 * the thread a1 (fair 4/3) saturates at 1 and a2 takes the rest */
	assert_int_equal(model_run(&m, 3), 0);
	assert_near(m.nodes[b].share, 1);
	assert_near(m.nodes[a].share, 2);
	assert_near(m.nodes[a1].share, 1);
	assert_near(m.nodes[a2].share, 1);
	assert_near(m.nodes[a2t[0]].share, 1.0 / 3);
}

/* Water-filling over several rounds, hand-computed. Weights 1:2:4,
 * demands 0.3, 0.5, 10, 2 CPUs. Level 2/7: the second child (fair 0.571)
 * saturates at 0.5. Then 1.5 over weights 1+4, level 0.3: the first child
 * is exactly at its demand 0.3 and saturates. The third gets 1.2. */
static void test_waterfill_rounds(void **state)
{
	int c[3];

	(void)state;
	model_init(&m);
	c[0] = model_add(&m, -1, 1, 0.3);
	c[1] = model_add(&m, -1, 2, 0.5);
	c[2] = model_add(&m, -1, 4, 10);
	assert_int_equal(model_run(&m, 2), 0);
	assert_near(m.nodes[c[0]].share, 0.3);
	assert_near(m.nodes[c[1]].share, 0.5);
	assert_near(m.nodes[c[2]].share, 1.2);

	/* equal weights, demands 0.2 0.5 2 2 on 3 CPUs: 0.2 and 0.5 saturate,
	 * the two big ones split the remaining 2.3 */
	model_init(&m);
	model_add(&m, -1, 1, 0.2);
	model_add(&m, -1, 1, 0.5);
	model_add(&m, -1, 1, 2);
	model_add(&m, -1, 1, 2);
	assert_int_equal(model_run(&m, 3), 0);
	assert_near(m.nodes[0].share, 0.2);
	assert_near(m.nodes[1].share, 0.5);
	assert_near(m.nodes[2].share, 1.15);
	assert_near(m.nodes[3].share, 1.15);
}

/* Siblings need not be contiguous: interleaving the additions changes
 * nothing. */
static void test_order(void **state)
{
	struct model m2;
	int a, b;

	(void)state;
	model_init(&m);
	a = model_add(&m, -1, 1024, 0);
	b = model_add(&m, -1, 2048, 0);
	model_add(&m, a, 1024, 1);
	model_add(&m, b, 1024, 1);
	model_add(&m, a, 1024, 1);
	model_add(&m, b, 1024, 1);
	assert_int_equal(model_run(&m, 1.5), 0);

	model_init(&m2);
	int a2 = model_add(&m2, -1, 1024, 0);
	model_add(&m2, a2, 1024, 1);
	model_add(&m2, a2, 1024, 1);
	int b2 = model_add(&m2, -1, 2048, 0);
	model_add(&m2, b2, 1024, 1);
	model_add(&m2, b2, 1024, 1);
	assert_int_equal(model_run(&m2, 1.5), 0);

	assert_near(m.nodes[a].share, 0.5);
	assert_near(m.nodes[b].share, 1.0);
	assert_near(m.nodes[a].share, m2.nodes[a2].share);
	assert_near(m.nodes[b].share, m2.nodes[b2].share);
}

static void test_errors(void **state)
{
	struct model_node bad[2];

	(void)state;
	model_init(&m);
	assert_int_equal(model_add(&m, 0, 1024, 1), -1);     /* no node 0 yet */
	assert_int_equal(model_add(&m, -2, 1024, 1), -1);
	assert_int_equal(model_add(&m, -1, 0, 1), -1);
	assert_int_equal(model_add(&m, -1, -5, 1), -1);
	assert_int_equal(model_add(&m, -1, NAN, 1), -1);
	assert_int_equal(model_add(&m, -1, 1024, -1), -1);
	assert_int_equal(model_add(&m, -1, 1024, INFINITY), -1);
	assert_int_equal(m.n, 0);

	for (int i = 0; i < MODEL_MAX_NODES; i++)
		assert_int_equal(model_add(&m, i - 1, 1024, 1), i);
	assert_int_equal(model_add(&m, 0, 1024, 1), -1);
	assert_int_equal(model_run(&m, 1), 0); /* a 256-deep chain */
	assert_near(m.nodes[MODEL_MAX_NODES - 1].share, 1);

	assert_int_equal(model_run(&m, -1), -EINVAL);
	assert_int_equal(model_run(&m, NAN), -EINVAL);

	/* a child before its parent: rejected, nothing written */
	memset(bad, 0, sizeof(bad));
	bad[0] = (struct model_node){ .parent = 1, .weight = 1, .demand = 1, .share = 42 };
	bad[1] = (struct model_node){ .parent = -1, .weight = 1, .share = 42 };
	assert_int_equal(model_solve(bad, 2, 1), -EINVAL);
	assert_near(bad[0].share, 42);
	bad[0].parent = 0; /* its own parent */
	assert_int_equal(model_solve(bad, 2, 1), -EINVAL);
	assert_int_equal(model_solve(NULL, 0, 1), 0);
	assert_near(model_fraction(&m, -1), 0);
	assert_near(model_fraction(&m, MODEL_MAX_NODES), 0);
}

/* A small deterministic generator: the same trees on every machine. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / (double)(1ull << 53);
}

/*
 * Invariants on random trees, which a hand-computed case could miss:
 * the pool gets min(capacity, demand); each node's children add up to it
 * exactly; no node gets more than it wants; and among siblings the
 * unsaturated ones all have the same share per weight, which no saturated
 * one exceeds (otherwise the excess was not given back by weight).
 */
static void test_invariants(void **state)
{
	(void)state;
	for (int iter = 0; iter < 500; iter++) {
		double cap = 0.25 + 16 * rnd(), top = 0, pool = 0;

		model_init(&m);
		int n = 2 + (int)(rnd() * (MODEL_MAX_NODES - 2));
		for (int i = 0; i < n; i++) {
			int parent = i == 0 || rnd() < 0.1 ? -1 : (int)(rnd() * i);
			double demand = rnd() < 0.2 ? 0 : rnd() < 0.5 ? 1 : rnd();

			assert_true(model_add(&m, parent, 15 + rnd() * 88746, demand) == i);
		}
		assert_int_equal(model_run(&m, cap), 0);

		for (int i = 0; i < n; i++) {
			if (m.nodes[i].parent == -1) {
				top += m.nodes[i].total_demand;
				pool += m.nodes[i].share;
			}
		}
		if (fabs(pool - fmin(cap, top)) > 1e-9)
			fail_msg("iter %d: pool %.12f, expected min(%f, %f)", iter, pool, cap, top);

		for (int p = -1; p < n; p++) {
			double sum = 0, level = -1, max_sat = 0;
			int kids = 0;

			for (int i = p + 1; i < n; i++) {
				const struct model_node *c = &m.nodes[i];

				if (c->parent != p)
					continue;
				kids++;
				sum += c->share;
				if (c->share > c->total_demand + 1e-9)
					fail_msg("iter %d node %d: share %f > demand %f",
						 iter, i, c->share, c->total_demand);
				if (c->share < c->total_demand - 1e-9) {
					double l = c->share / c->weight;

					if (level >= 0 && fabs(l - level) > 1e-9 * fmax(1, level))
						fail_msg("iter %d node %d: level %g vs sibling %g",
							 iter, i, l, level);
					level = l;
				} else if (c->total_demand > 0) {
					max_sat = fmax(max_sat, c->share / c->weight);
				}
			}
			if (p >= 0 && kids && fabs(sum - m.nodes[p].share) > 1e-9)
				fail_msg("iter %d node %d: children sum %.12f, share %.12f",
					 iter, p, sum, m.nodes[p].share);
			if (level >= 0 && max_sat > level * (1 + 1e-9))
				fail_msg("iter %d under %d: saturated level %g > unsaturated %g",
					 iter, p, max_sat, level);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_article),
		cmocka_unit_test(test_flat_weights),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_idle_capacity),
		cmocka_unit_test(test_idle_members),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_waterfill_rounds),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_invariants),
	};

	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
