/* SPDX-License-Identifier: MIT */
/*
 * test-share.c - CPU distribution on the real kernel against the reference
 * model (src/model.c): rule 4 (an rgroup competes like one sibling thread)
 * and rule 5 (PRIO_RGRP weights), flat and nested.
 *
 * Method (as the kernel's own cgroup selftests do): busy threads and
 * processes, 0.5 s warm-up, then per-thread CPU clocks over MEASURE_S
 * seconds; each group's share of the CPU time the test's system group got
 * is compared with the model's fraction.
 *
 * The test pins itself (and so every thread and child) to one CPU. On
 * several CPUs CFS splits a group's weight among them by its load and the
 * load balancer moves tasks in steps: on this loaded 2-CPU machine and in
 * the 2-vCPU VM, nested groups then come out 15-30% off the ideal from run
 * to run, which says nothing about whether rgroup built the right hierarchy
 * with the right weights. On one CPU the kernel's hierarchical fair share is
 * exact up to tick granularity, so the comparison tests what we set up.
 * (`rgroup demo` and the benchmarks show the multi-CPU behaviour.)
 *
 * Tolerance: 10% relative. Pinned runs here stay within 3% of the model,
 * also with other load on that CPU (shares are taken of the time the test's
 * own system group got); 10% keeps the test stable under noise while any
 * real error (one nice step is 25%, a group competing as its threads
 * rather than as one entity is off by 100% or more) still fails.
 */
#include "scenario.h"

#define MEASURE_S 3.0
#define TOLERANCE 0.10

static char sg[PATH_MAX];
static const double cpus = 1; /* the model's capacity: pinned to one CPU */

/* CPU seconds of a worker and all its kids that stay in its group. */
static double group_cpu(const struct rgt_worker *w)
{
	double s = rgt_thread_cpu(w->tid);
	for (int i = 0; i < w->nkids; i++)
		if (!w->kids[i].new_group)
			s += group_cpu(&w->kids[i]);
	return s;
}

/* Rule 4, the article's scenario: one system group with two
 * single-threaded processes and one rgroup of four busy threads splits its
 * CPU time in three equal parts. */
static void rule4_article_split(void)
{
	struct rgt_worker kids[3] = { { .spin = 1 }, { .spin = 1 }, { .spin = 1 } };
	struct rgt_worker rg = { .spin = 1, .nkids = 3, .kids = kids };
	pid_t p[2] = { rgt_spinner(), rgt_spinner() };

	CHECK(p[0] > 0 && p[1] > 0, "fork");
	CHECK(rgt_worker_start(&rg, RGROUP_NEW) == 0 && rg.err == 0, "create the rgroup");
	rgt_sleep(0.5);
	double a[3] = { rgt_proc_cpu(p[0]), rgt_proc_cpu(p[1]), group_cpu(&rg) };
	struct rgroup_info in = { .sz = sizeof(in) };
	rgroup_id_t id;
	rgroup_of(rg.tid, &id);
	rgroup_info(id, &in);
	double u0 = in.usage_ns / 1e9;
	rgt_sleep(MEASURE_S);
	double b[3] = { rgt_proc_cpu(p[0]), rgt_proc_cpu(p[1]), group_cpu(&rg) };
	rgroup_info(id, &in);
	double u1 = in.usage_ns / 1e9;
	for (int i = 0; i < 2; i++) {
		kill(p[i], SIGKILL);
		waitpid(p[i], NULL, 0);
	}
	rgt_worker_stop(&rg);

	struct model m;
	model_init(&m);
	int root = model_add(&m, -1, 1024, 0);
	int mp[2] = { model_add(&m, root, 1024, 1), model_add(&m, root, 1024, 1) };
	int mrg = model_add(&m, root, 1024, 0);
	for (int i = 0; i < 4; i++)
		model_add(&m, mrg, 1024, 1);
	/* The main thread sleeps; it is in the sgroup with demand 0. */
	model_run(&m, cpus);

	double total = 0, d[3];
	for (int i = 0; i < 3; i++)
		total += d[i] = b[i] - a[i];
	CHECK(total > 0.5, "the system group got CPU time (%.2f s)", total);
	CHECK_NEAR("process 1", d[0] / total, model_fraction(&m, mp[0]), TOLERANCE);
	CHECK_NEAR("process 2", d[1] / total, model_fraction(&m, mp[1]), TOLERANCE);
	CHECK_NEAR("rgroup of 4 threads", d[2] / total, model_fraction(&m, mrg), TOLERANCE);
	/* The library's own usage figure agrees with the thread clocks. */
	CHECK_NEAR("rgroup_info usage vs clocks", u1 - u0, d[2], TOLERANCE);
	CHECK(rgt_wait_no_groups(2.0) == 0, "groups removed");
}

/* Rules 4 and 5 nested: top-level A holds A1 (nice 0) and A2 (nice 5),
 * two busy threads each; top-level B at nice 0 has two busy threads. */
static void rule5_nested_weights(void)
{
	struct rgt_worker a1k = { .spin = 1 }, a2k = { .spin = 1 }, bk = { .spin = 1 };
	struct rgt_worker akids[2] = {
		{ .spin = 1, .new_group = 1, .nkids = 1, .kids = &a1k },
		{ .spin = 1, .new_group = 1, .nkids = 1, .kids = &a2k, .set_nice = 1, .nice = 5 },
	};
	struct rgt_worker a = { .spin = 0, .nkids = 2, .kids = akids };
	struct rgt_worker b = { .spin = 1, .nkids = 1, .kids = &bk };

	CHECK(rgt_worker_start(&a, RGROUP_NEW) == 0 && a.err == 0 && akids[1].err == 0, "create A");
	CHECK(rgt_worker_start(&b, RGROUP_NEW) == 0 && b.err == 0, "create B");
	rgt_sleep(0.5);
	double s0[3] = { group_cpu(&akids[0]), group_cpu(&akids[1]), group_cpu(&b) };
	rgt_sleep(MEASURE_S);
	double s1[3] = { group_cpu(&akids[0]), group_cpu(&akids[1]), group_cpu(&b) };
	rgt_worker_stop(&a);
	rgt_worker_stop(&b);

	struct model m;
	model_init(&m);
	int root = model_add(&m, -1, 1024, 0);
	int ma = model_add(&m, root, 1024, 0);
	int ma1 = model_add(&m, ma, 1024, 0), ma2 = model_add(&m, ma, rgroup_nice_to_weight(5), 0);
	int mb = model_add(&m, root, 1024, 0);
	for (int i = 0; i < 2; i++) {
		model_add(&m, ma1, 1024, 1);
		model_add(&m, ma2, 1024, 1);
		model_add(&m, mb, 1024, 1);
	}
	model_add(&m, ma, 1024, 0); /* A's own thread sleeps */
	model_run(&m, cpus);

	double total = 0, d[3];
	for (int i = 0; i < 3; i++)
		total += d[i] = s1[i] - s0[i];
	CHECK(total > 0.5, "the system group got CPU time (%.2f s)", total);
	CHECK_NEAR("A1 (nice 0, in A)", d[0] / total, model_fraction(&m, ma1), TOLERANCE);
	CHECK_NEAR("A2 (nice 5, in A)", d[1] / total, model_fraction(&m, ma2), TOLERANCE);
	CHECK_NEAR("B (nice 0)", d[2] / total, model_fraction(&m, mb), TOLERANCE);
	CHECK(rgt_wait_no_groups(2.0) == 0, "groups removed");
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
