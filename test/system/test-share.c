/* SPDX-License-Identifier: MIT */
/*
 * test-share.c - CPU distribution on the real kernel against the reference
 * model (src/model.c): rule 4 (an rgroup competes like one sibling thread)
 * and rule 5 (PRIO_RGRP weights), flat and nested. The scenarios are the
 * ones `rgroup demo` shows (test/lib/scenario.h).
 *
 * Method (as the kernel's own cgroup selftests do): busy threads and
 * processes, 0.5 s warm-up, then per-thread CPU clocks over MEASURE_S
 * seconds; each group's share of the CPU time the test's system group got
 * is compared with the model's fraction.
 *
 * The test pins itself (and so every thread and child) to one CPU. On
 * several CPUs CFS splits a group's weight among them by its load and the
 * load balancer moves tasks in steps, so nested groups come out well off
 * the ideal from run to run (docs/BENCHMARKS.md, "Pinned or not"), which
 * says nothing about whether rgroup built the right hierarchy with the
 * right weights. On one CPU the kernel's hierarchical fair share is exact
 * up to tick granularity, so the comparison tests what we set up.
 * (`rgroup demo` and the benchmarks show the multi-CPU behaviour.)
 *
 * Under load: every share is of the CPU time the test's own system group
 * got, and the system group competes with outside tasks as one entity, so
 * other load changes how much time there is to divide, not how it is
 * divided. What load can do is leave too little to measure: the
 * measurement goes on past MEASURE_S until the time divided is at least
 * MIN_CPU_S (a scheduler slice of a few milliseconds is then a small part
 * of the smallest share), for at most DEADLINE_S, which covers a system
 * group that gets a fortieth of its CPU.
 *
 * Tolerance: 10% relative. The error of one nice step is 25%, of a group
 * competing as its threads rather than as one entity 100% or more, so any
 * real error still fails; pinned runs stay within a few percent, also
 * with the load stage's two busy outside processes (scripts/load-test.sh).
 */
#include "scenario.h"

#define WARMUP_S   0.5
#define MEASURE_S  3.0
#define MIN_CPU_S  0.5
#define DEADLINE_S 20.0
#define TOLERANCE  0.10

static char sg[PATH_MAX];

/* The usage the library reports for the group whose leader is node i. */
static double lib_usage(int i)
{
	struct rgroup_info in = { .sz = sizeof(in) };
	rgroup_id_t id;

	if (rgroup_of(rgt_scn.n[i].tid, &id) < 0 || rgroup_info(id, &in) < 0)
		return -1;
	return in.usage_ns / 1e9;
}

/* Run sc on the one CPU and compare every entity with the model; with
 * `usage` (a group's node), also the library's usage of that group with
 * the threads' clocks. */
static void check_split(const struct rgt_scenario *sc, int usage)
{
	const struct rgt_window w = {
		.window = 0.5, .seconds = MEASURE_S, .min_cpu_s = MIN_CPU_S, .deadline = DEADLINE_S,
	};
	struct rgt_share sh[RGT_SCN_MAX];
	double zero[RGT_SCN_MAX] = { 0 }, d[RGT_SCN_MAX], span, u0 = 0, u1 = 0, got;
	int n, enough, err = rgt_scn_start(sc);

	CHECK(err == 0, "set up %s: %s failed: %s", sc->name, rgt_scn.what, strerror(err));
	if (err)
		return;
	rgt_sleep(WARMUP_S);
	if (usage)
		u0 = lib_usage(usage);
	enough = rgt_scn_measure(&w, d, &span, NULL, NULL) == 0;
	if (usage)
		u1 = lib_usage(usage);
	rgt_scn_stop();

	n = rgt_scn_compare(zero, d, span, 1, sh, &got);
	CHECK(enough, "the system group got %.2f s of CPU time in %.0f s, too little to "
	      "measure", got * span, DEADLINE_S);
	for (int i = 0; i < n; i++)
		CHECK_NEAR(sh[i].label, sh[i].got, sh[i].want, TOLERANCE);
	/* The library's own usage figure agrees with the thread clocks. */
	if (usage)
		CHECK_NEAR("rgroup_info usage vs clocks", u1 - u0, rgt_scn_subtree(d, usage),
			   TOLERANCE);
	CHECK(rgt_wait_no_groups(2.0) == 0, "groups removed");
}

/* Rule 4, the article's scenario: one system group with two
 * single-threaded processes and one rgroup of four busy threads splits its
 * CPU time in three equal parts. */
static void rule4_article_split(void)
{
	struct rgt_scenario s;

	rgt_scn_article(&s, 'P', getpriority(PRIO_PROCESS, 0));
	check_split(&s, 3);
}

/* Rules 4 and 5 nested: top-level A holds A1 (nice 0) and A2 (nice 5),
 * two busy threads each; top-level B, three nice steps lower, has two. */
static void rule5_nested_weights(void)
{
	struct rgt_scenario s;

	rgt_scn_nested_weights(&s, getpriority(PRIO_PROCESS, 0));
	check_split(&s, 0);
}

static const struct rgt_case cases[] = {
	{ "rule4_article_split", rule4_article_split },
	{ "rule5_nested_weights", rule5_nested_weights },
};

int main(int argc, char **argv)
{
	rgt_sg_init();
	if (rgt_pin_one_cpu(NULL) < 0)
		rgt_skip_all("cannot pin to one CPU: %s", strerror(errno));
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s, pinned to one CPU\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
