/* SPDX-License-Identifier: MIT */
/*
 * test-gov-share.c - how a process's CPU time is divided among its own
 * threads by the rgroup tree, against the reference model (src/model.c):
 * the accuracy tests of the governor backend (issue 4), run on a kernel
 * backend too, where the kernel's split is the reference that shows the
 * harness itself is right.
 *
 * In-process scenarios (test/lib/scenario.h; the benchmark suite prints the
 * same ones side by side on every backend):
 *   flat-1:2:4        three top-level rgroups at nice 6, 3, 0, two busy
 *                     threads each;
 *   nested-tree       A{A1{A1a, A1b}, A2} against B, three levels, a
 *                     different nice value on every level;
 *   vs-plain-threads  two plain busy threads of the process, an rgroup of
 *                     four busy threads (rule 4: it weighs like one of
 *                     them) and one of two at nice 5;
 *   idle-group        one of two groups falls idle, the other takes its CPU.
 * Each entity's share is of the CPU time the scenario's threads got, so
 * other load on the machine does not count; the process's plain threads
 * are entities at their nice weight, as the governor treats them.
 *
 * The test pins its threads to one CPU for the accuracy cases. On two
 * CPUs the kernel's placement decides the split as much as the weights do:
 * where the threads land, how CFS spreads a group's weight over the CPUs,
 * when the load balancer moves one. Here that put nested kernel groups
 * 15-30% off the ideal from run to run (see test-share.c; 65% once in the
 * benchmark's nested-tree on cgroup1), and with the governor it would mix
 * the governor's error with the kernel's. On one CPU the split is the
 * scheduler's (or the governor's) alone. The idle case runs on all CPUs:
 * it is about CPUs left unused, which one CPU could not show.
 *
 * Tolerance: 10% relative, issue 4's target for these scenarios. Pinned
 * kernel runs are within 1-2% here; the error of one nice step is 25%, of
 * a group counted as its threads 100% or more, so a real error fails.
 * Durations: 1 s warm-up (the governor adapts over a few of its periods)
 * and 3 s measured per scenario: on this shared 2-CPU machine under a load
 * of several runnable tasks per CPU, a 3 s window of pinned kernel runs
 * varies by about 1%, well inside the tolerance, and the whole program
 * stays under 30 s. A failing tolerance fails the test, also on the
 * governor, which needs no privilege: there is nothing to skip.
 *
 * The scenario must get MIN_GOT of the CPU for its split to mean
 * anything: 0.05 over 3 s is 150 ms of CPU time, some fifty of the
 * kernel's slices. Not more: under a load of 10-20 runnable tasks per CPU
 * from other engineers' builds and VMs (the 1-minute load average reached
 * 250 during this runs) a pinned scenario got 0.12-0.14 of its CPU
 * at times, and at 0.2-0.35 its split was within 3% of the model.
 */
#include "scenario.h"

#define WARMUP_S  1.0
#define MIN_GOT   0.05
#define MEASURE_S 3.0
#define TOLERANCE 0.10

static char sg[PATH_MAX];
static cpu_set_t all_cpus;

/* Run a scenario on the one CPU and compare every entity with the model. */
static void check_scenario(const struct rgt_scenario *sc)
{
	struct rgt_share sh[RGT_SCN_MAX];
	double got;
	int err, n = rgt_scn_run(sc, WARMUP_S, MEASURE_S, 1, sh, &got, &err);

	CHECK(n >= 0, "set up %s: %s", sc->name, strerror(err));
	if (n < 0)
		return;
	CHECK(got > MIN_GOT, "the scenario got CPU time (%.2f of 1 CPU)", got);
	for (int i = 0; i < n; i++)
		CHECK_NEAR(sh[i].label, sh[i].got, sh[i].want, TOLERANCE);
	CHECK(rgt_wait_no_groups(2.0) == 0, "groups removed");
}

static void flat_1_2_4(void)
{
	struct rgt_scenario s;
	rgt_scn_flat124(&s, 2);
	check_scenario(&s);
}

static void nested_tree(void)
{
	struct rgt_scenario s;
	rgt_scn_nested_tree(&s, 2);
	check_scenario(&s);
}

static void vs_plain_threads(void)
{
	struct rgt_scenario s;
	rgt_scn_vs_plain(&s);
	check_scenario(&s);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * Work conservation, on all CPUs: groups X and Y, as many busy threads
 * each as CPUs; X falls asleep in turns. Y must take the CPU X leaves
 * (rgt_scn_idle() measures how much of it Y used from the time Y's
 * threads were paused, which other load does not move). Bound: 80%, the
 * median of four pairs of 0.5 s phases, looser than the benchmark's 95%
 * target because a test must not fail on noise: under heavy load the
 * kernel backend, which never pauses a thread, showed up to 8% of the
 * freed CPU as "withheld" in single pairs (time spent in interrupts or
 * taken by the hypervisor is neither run nor wait), and a governor decides
 * per period, so a pause or two in half a second weighs more than over the
 * benchmark's longer phases. A governor that kept X's share for X would
 * give Y none of it (0%).
 */
static void idle_group(void)
{
	struct rgt_scenario s = { .name = "idle-group" };
	struct rgt_idle r;
	int ncpu = CPU_COUNT(&all_cpus), err;

	int x = rgt_scn_busy_group(&s, 0, 0, ncpu, "X");
	int y = rgt_scn_busy_group(&s, 0, 0, ncpu, "Y");
	CHECK(sched_setaffinity(0, sizeof(all_cpus), &all_cpus) == 0, "unpin: %s", strerror(errno));
	err = rgt_scn_start(&s);
	CHECK(err == 0, "set up: %s", strerror(err));
	if (!err) {
		rgt_sleep(WARMUP_S);
		rgt_scn_idle(x, y, 4, 0.3, 0.5, &r);
		rgt_scn_stop();
		for (int i = 0; i < r.n; i++)
			fprintf(stderr, "  pair %d: X had %.2f CPUs; with X idle, Y lost %.3f to pauses"
				" (the groups got %.2f CPUs, %.2f with X idle)\n", i, r.freed[i],
				r.withheld[i], r.cpus_both[i], r.cpus_idle[i]);
		qsort(r.taken, r.n, sizeof(r.taken[0]), cmp_double);
		CHECK_NEAR("Y took of X's CPU (median)", r.taken[r.n / 2], 1.0, 0.20);
		CHECK(rgt_wait_no_groups(2.0) == 0, "groups removed");
	}
	CHECK(rgt_pin_one_cpu(NULL) == 0, "pin again: %s", strerror(errno));
}

static const struct rgt_case cases[] = {
	{ "flat_1_2_4", flat_1_2_4 },
	{ "nested_tree", nested_tree },
	{ "vs_plain_threads", vs_plain_threads },
	{ "idle_group", idle_group },
};

int main(int argc, char **argv)
{
	rgt_sg_init();
	if (rgt_pin_one_cpu(&all_cpus) < 0)
		rgt_skip_all("cannot pin to one CPU: %s", strerror(errno));
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s, pinned to one CPU\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
