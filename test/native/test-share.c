/* SPDX-License-Identifier: MIT */
/*
 * test-share.c - rules 4 and 5 on the native kernel, on two vCPUs: an
 * rgroup competes under its parent as one entity with the weight of a
 * thread of its nice value; measured CPU time against the reference model
 * (src/model.c), as the kernel's cgroup selftests measure cpu.weight.
 *
 * Each scenario runs in a fresh process C in a cgroup of its own below the
 * test's system group: C forks the single-threaded busy processes, builds
 * its rgroups (an agent thread per rgroup, asleep, plus busy threads),
 * sets their nice values with PRIO_RGRP, and measures with CPU clocks
 * (its own threads' and the other processes') over MEASURE_S seconds after
 * a warm-up. C's main thread sleeps.
 *
 * Tolerance: 5% relative error per compared entity (its fraction of the
 * CPU time the scenario's cgroup got), or 0.005 absolute for an entity
 * under 10% of it; the first of up to four 6 s windows within tolerance
 * passes. Why these: on two CPUs a group's weight is split between the
 * CPUs by its runnable load there (PELT averages) and the load balancer
 * evens loads out in steps, so the kernel's split is exact only on
 * average. The scenarios are built so that it is: every group runs
 * threads on both CPUs, and a single-threaded process never has to win a
 * whole CPU from a group (where CFS leaves it short: a busy process beside
 * a nested rgroup tree got 0.47 of the time instead of 0.5 here, as it
 * would beside a cgroup). In a quiet VM the results are within 0.5%; the
 * margin and the extra windows are for the emulator's host being loaded
 * (TCG; run with one TCG thread, see meson.build). A real error is far
 * larger: a group competing as its four threads instead of as one entity
 * is off by 50-100%, one nice step by 25%.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>

#include "model.h"

#define WARMUP_S 1.0
#define MEASURE_S 6.0
#define TOLERANCE 0.05
#define ATTEMPTS 4

struct scenario {
	const char *name;
	struct nt_scenario sc;
	const char *cpu_max;   /* cpu.max of the scenario's cgroup, or NULL */
	int one_cpu;           /* pin the scenario to CPU 0 */
	/* change a group's nice after the first measurement and measure again */
	int renice_group, renice_to;
};

/* Up to ATTEMPTS windows: the first one within tolerance passes. */
static int measure(const struct scenario *s, struct nt_run *r)
{
	return nt_scn_measure_tries(&s->sc, r, WARMUP_S, MEASURE_S, TOLERANCE, ATTEMPTS) != 0;
}

static int scenario_child(void *p)
{
	const struct scenario *s = p;
	struct nt_run *r = calloc(1, sizeof(*r));
	int err;
	rgt_failures = 0; /* this child's own count */

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (s->one_cpu) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "pin to CPU 0");
	}
	err = nt_scn_start(&s->sc, r);
	CHECK(!err, "set up the scenario: %s", strerror(err));
	if (!err) {
		rgt_failures += measure(s, r);
		if (s->renice_group >= 0) {
			int g = s->renice_group;
			CHECK(nt_setprio(r->agent[g].tid, s->renice_to) == 0, "renice");
			r->nice[g] = s->renice_to;
			fprintf(stderr, "  setpriority(PRIO_RGRP, %s, %d):\n", s->sc.g[g].label,
				s->renice_to);
			rgt_failures += measure(s, r);
		}
	}
	nt_scn_stop(&s->sc, r);
	return rgt_failures ? 1 : 0;
}

static void run_scenario(const struct scenario *s)
{
	char cg[256], path[300], self[300];
	static int seq;
	char name[32];

	snprintf(name, sizeof(name), "share%d", seq++);
	CHECK(nt_cg_make(name, cg, sizeof(cg)) == 0, "mkdir %s", cg);
	if (s->cpu_max) {
		snprintf(path, sizeof(path), "%s/cpu.max", cg);
		CHECK(nt_write_file(path, s->cpu_max) == 0, "cpu.max %s", s->cpu_max);
	}
	/* C and its processes start in the scenario's cgroup */
	snprintf(self, sizeof(self), NT_SG "/self");
	CHECK(nt_cg_move(cg, getpid()) == 0, "into %s", cg);
	int rc = nt_child_run(scenario_child, (void *)s);
	CHECK(nt_cg_move(self, getpid()) == 0, "back");
	CHECK(rc == 0, "%s: the scenario exited %d", s->name, rc);
}

/* Rule 4, the article: two single-threaded processes and an rgroup of four
 * busy threads split their cgroup's CPU time in three. */
static void rule4_article_split(void)
{
	struct scenario sc = {
		.name = "article", .renice_group = -1,
		.sc = { .nprocs = 2, .ngroups = 1, .capacity = 2,
			.g = { { -1, 0, 4, "rgroup of 4 threads" } } },
	};
	run_scenario(&sc);
}

/* Rules 4 and 5 nested: a top-level rgroup A (asleep itself) holds two
 * nested rgroups of two busy threads at nice 0 and 5, beside a top-level
 * rgroup B of two busy threads: A and B get a CPU each, A's is split
 * 1024:335 (the test-share scenario of the cgroup backends, on 2 CPUs). */
static void rule4_nested_nice(void)
{
	struct scenario sc = {
		.name = "nested", .renice_group = -1,
		.sc = { .nprocs = 0, .ngroups = 4, .capacity = 2,
			.g = { { -1, 0, 0, "A (top-level)" },
			       { 0, 0, 2, "A/A1" },
			       { 0, 5, 2, "A/A2" },
			       { -1, 0, 2, "B (top-level)" } } },
	};
	run_scenario(&sc);
}

/* Rule 5: PRIO_RGRP changes a running rgroup's weight: two top-level
 * rgroups of two busy threads, from 1:1 to 1024:335. */
static void rule5_renice(void)
{
	struct scenario sc = {
		.name = "renice", .renice_group = 1, .renice_to = 5,
		.sc = { .nprocs = 0, .ngroups = 2, .capacity = 2,
			.g = { { -1, 0, 2, "A (2 threads)" },
			       { -1, 0, 2, "B (2 threads)" } } },
	};
	run_scenario(&sc);
}

/*
 * Rule 9: the cgroup's cpu.max still caps everything below it, and the
 * article's split inside stays. On one CPU: CFS bandwidth control on two
 * CPUs skews a split by itself (plain sibling cgroups a and b with one busy
 * process each and c with four, under cpu.max of 1 CPU, got 0.24, 0.24 and
 * 0.52 of the time in this VM, not thirds), and what is tested here is
 * that the cap applies to the rgroups and the split below it is theirs.
 */
static void rule9_cpu_max(void)
{
	struct scenario sc = {
		.name = "cpu.max", .cpu_max = "50000 100000", .one_cpu = 1, .renice_group = -1,
		.sc = { .nprocs = 2, .ngroups = 2, .capacity = 0.5, .cpu_max = 1,
			.g = { { -1, 0, 4, "rgroup of 4 threads" },
			       { 0, 3, 2, "nested, nice 3" } } },
	};
	run_scenario(&sc);
}

static const struct rgt_case cases[] = {
	{ "rule4_article_split", rule4_article_split },
	{ "rule4_nested_nice", rule4_nested_nice },
	{ "rule5_renice", rule5_renice },
	{ "rule9_cpu_max", rule9_cpu_max },
};

int main(int argc, char **argv)
{
	nt_require_rgroups();
	int err = nt_cg_init();
	if (err)
		rgt_skip_all("cannot set up cgroups below %s: %s", NT_SG, strerror(-err));
	int rc = rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	nt_cg_cleanup();
	if (nt_check_kernel_log())
		rgt_failures++;
	return rgt_failures ? 1 : rc;
}
