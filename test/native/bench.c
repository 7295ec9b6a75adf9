/* SPDX-License-Identifier: MIT */
/*
 * bench.c - raw costs of the native interface, in one VM boot: figures,
 * not assertions (the program fails only when a call fails).
 *
 *   clone3 + join of a thread:      without a flag / with CLONE_NEWRGRP
 *   pthread_create + join:          plain / after PR_RGROUP_SET_NEXT_NEW
 *   setpriority():                  PRIO_PROCESS / PRIO_RGRP (same thread)
 *   getpriority():                  PRIO_PROCESS / PRIO_RGRP
 *
 * The creating thread is in a top-level rgroup, so that "without a flag"
 * joins an rgroup and CLONE_NEWRGRP nests one. Each pair is measured in
 * alternating blocks (ROUNDS of BLOCK operations each), so that drift of
 * the emulator's speed hits both sides alike; the median block is
 * reported. setpriority alternates two values so every call changes
 * something. The measuring thread and its threads are pinned to CPU 0 of
 * the two vCPUs: a cross-CPU wakeup under TCG waits until the host runs the
 * halted vCPU's thread again, milliseconds on a loaded host, which would
 * drown what is measured (task groups are still made for both CPUs).
 * Also run is a scenario the share test avoids (a busy process beside a
 * nested tree), for the record.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <sched.h>
#include <sys/resource.h>

#define ROUNDS 15
#define BLOCK 200

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

static int failed;
static volatile int go_now = 1;

typedef void (*op_fn)(int i);

/* One stack for the raw threads, reused as pthread_create reuses its own. */
static char raw_stack[64 * 1024] __attribute__((aligned(16)));

static void op_clone3(int i)
{
	struct nt_raw t = { .stack = raw_stack, .stack_size = sizeof(raw_stack) };
	(void)i;
	if (nt_raw_start(&t, 0, nt_rt_wait, (void *)&go_now) < 0)
		failed++;
	nt_raw_join(&t);
}

static void op_clone3_new(int i)
{
	struct nt_raw t = { .stack = raw_stack, .stack_size = sizeof(raw_stack) };
	(void)i;
	if (nt_raw_start(&t, CLONE_NEWRGRP, nt_rt_wait, (void *)&go_now) < 0)
		failed++;
	nt_raw_join(&t);
}

static void *nothing(void *arg)
{
	return arg;
}

static void op_pthread(int i)
{
	pthread_t t;
	(void)i;
	if (nt_pthread(&t, 0, nothing, NULL))
		failed++;
	else
		pthread_join(t, NULL);
}

static void op_pthread_new(int i)
{
	pthread_t t;
	(void)i;
	if (nt_pthread(&t, 1, nothing, NULL))
		failed++;
	else
		pthread_join(t, NULL);
}

static pid_t me;

static void op_prio_process(int i)
{
	if (setpriority(PRIO_PROCESS, me, i & 1))
		failed++;
}

static void op_prio_rgrp(int i)
{
	if (setpriority(PRIO_RGRP, me, i & 1))
		failed++;
}

static void op_getprio_process(int i)
{
	(void)i;
	errno = 0;
	if (getpriority(PRIO_PROCESS, me) == -1 && errno)
		failed++;
}

static void op_getprio_rgrp(int i)
{
	(void)i;
	errno = 0;
	if (getpriority(PRIO_RGRP, me) == -1 && errno)
		failed++;
}

/* Microseconds per operation of a and of b, alternating blocks. */
static void pair(const char *what, const char *na, op_fn a, const char *nb, op_fn b)
{
	double ta[ROUNDS], tb[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = nt_now();
		for (int i = 0; i < BLOCK; i++)
			a(i);
		double t1 = nt_now();
		for (int i = 0; i < BLOCK; i++)
			b(i);
		double t2 = nt_now();
		ta[r] = (t1 - t0) / BLOCK * 1e6;
		tb[r] = (t2 - t1) / BLOCK * 1e6;
	}
	double ma = median(ta, ROUNDS), mb = median(tb, ROUNDS);
	printf("%-28s %-22s %9.2f us   %-26s %9.2f us   ratio %.2f\n", what, na, ma, nb, mb,
	       mb / ma);
	fflush(stdout);
}

static int bench_job(void *p)
{
	cpu_set_t set;
	(void)p;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		failed++;
	me = nt_gettid();
	printf("# native rgroup costs, %d rounds of %d operations, median round; "
	       "the measuring thread is in a top-level rgroup\n", ROUNDS, BLOCK);
	pair("clone3 + join", "plain (joins)", op_clone3, "CLONE_NEWRGRP", op_clone3_new);
	pair("pthread_create + join", "plain (joins)", op_pthread, "PR_RGROUP_SET_NEXT_NEW",
	     op_pthread_new);
	pair("setpriority", "PRIO_PROCESS", op_prio_process, "PRIO_RGRP", op_prio_rgrp);
	pair("getpriority", "PRIO_PROCESS", op_getprio_process, "PRIO_RGRP", op_getprio_rgrp);
	return 0;
}

/* The shares CFS gives where the share test does not look: a busy process
 * beside a nested tree, on two vCPUs. Printed, not judged. */
static void record_shares(void)
{
	static const struct nt_scenario sc = {
		.nprocs = 1, .ngroups = 3, .capacity = 2,
		.g = { { -1, 0, 0, "A (top-level)" },
		       { 0, -2, 2, "A/B" },
		       { 0, 2, 2, "A/D" } },
	};
	struct nt_run *r = calloc(1, sizeof(*r));
	printf("# for the record (not a test): a busy process beside a nested tree\n");
	fflush(stdout);
	if (nt_scn_start(&sc, r) == 0)
		nt_scn_measure(&sc, r, 1.0, 5.0, 0.05);
	else
		failed++;
	nt_scn_stop(&sc, r);
}

int main(void)
{
	struct nt_agent a;

	nt_require_rgroups();
	if (nt_agent_start(&a, 1)) {
		fprintf(stderr, "cannot start a thread in a new rgroup\n");
		return 1;
	}
	nt_agent_run(&a, bench_job, NULL);
	nt_agent_stop(&a);
	record_shares();
	if (failed)
		fprintf(stderr, "FAIL: %d operations failed\n", failed);
	if (nt_check_kernel_log())
		failed++;
	return failed ? 1 : 0;
}
