/* SPDX-License-Identifier: MIT */
/*
 * test-share.c - CPU distribution on the real kernel against the reference
 * model (src/model/model.c): rule 4 (an rgroup competes like one sibling thread)
 * and rule 5 (PRIO_RGRP weights), flat and nested. The scenarios are the
 * ones `rgroup demo` shows (src/scenario/scenario.h).
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
 * divided. Judged by the one rule of test/lib/judge.h (median of five
 * windows, 2 points + 5%); a window counts when the system group got
 * MIN_CPUS of its CPU, and one that cannot get that says so.
 */
#include "judge.h"
#include "scenario.h"
#include "sgroup.h"

#define WARMUP_S   0.5
#define MIN_CPUS   0.2     /* of the one CPU, per window */
#define USAGE_TOL  0.10    /* the library's usage figure against the clocks */

static char sg[PATH_MAX];

/* The usage the library reports for the group whose leader is node i. */
static double lib_usage(int i)
{
	struct rgroup_info in = { .sz = sizeof(in) };
	rgroup_id_t id;

	if (rgroup_of(scn_cur.n[i].tid, &id) < 0 || rgroup_info(id, &in) < 0)
		return -1;
	return in.usage_ns / 1e9;
}

/* Run sc on the one CPU and judge every entity against the model; with
 * `usage` (a group's node), also compare the library's usage of that group
 * with the threads' clocks over the same time. */
static void check_split(const struct scn_table *sc, int usage)
{
	double u0 = 0, u1 = 0, v0[SCN_MAX], v1[SCN_MAX];
	int err = scn_start(sc);

	CHECK(err == 0, "set up %s: %s failed: %s", sc->name, scn_cur.what, strerror(err));
	if (err)
		return;
	scn_sleep(WARMUP_S);
	if (usage) {
		u0 = lib_usage(usage);
		scn_read(v0);
	}
	rgt_scn_judge(sc->name, 1, MIN_CPUS, 0, NULL);
	if (usage) {
		u1 = lib_usage(usage);
		scn_read(v1);
	}
	scn_stop();
	/* The library's own usage figure agrees with the thread clocks. */
	if (usage)
		CHECK_NEAR("rgroup_info usage vs clocks", u1 - u0,
			   scn_subtree(v1, usage) - scn_subtree(v0, usage), USAGE_TOL);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

/* Rule 4, the article's scenario: one system group with two
 * single-threaded processes and one rgroup of four busy threads splits its
 * CPU time in three equal parts. */
static void rule4_article_split(void)
{
	struct scn_table s;

	scn_article(&s, 'P', getpriority(PRIO_PROCESS, 0));
	check_split(&s, 3);
}

/* Rules 4 and 5 nested: top-level A holds A1 (nice 0) and A2 (nice 5),
 * two busy threads each; top-level B, three nice steps lower, has two. */
static void rule5_nested_weights(void)
{
	struct scn_table s;

	scn_nested_weights(&s, getpriority(PRIO_PROCESS, 0));
	check_split(&s, 0);
}

static const struct rgt_case cases[] = {
	{ "rule4_article_split", rule4_article_split },
	{ "rule5_nested_weights", rule5_nested_weights },
};

int main(int argc, char **argv)
{
	rgt_sg_init();
	if (scn_pin_one_cpu(NULL) < 0)
		rgt_skip_all("cannot pin to one CPU: %s", strerror(errno));
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s, pinned to one CPU\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
