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
 * All pinned to one CPU.
 * Each entity's share is of the CPU time the scenario's threads got, so
 * other load on the machine does not count; the process's plain threads
 * are entities at their nice weight, as the governor treats them.
 *
 * The test pins its threads to one CPU for the accuracy cases. On two
 * CPUs the kernel's placement decides the split as much as the weights do:
 * where the threads land, how CFS spreads a group's weight over the CPUs,
 * when the load balancer moves one; nested kernel groups then land well
 * off the ideal from run to run (docs/BENCHMARKS.md, "Pinned or not"),
 * and with the governor it would mix the governor's error with the
 * kernel's. On one CPU the split is the scheduler's (or the governor's)
 * alone; the idle case too (see there).
 *
 * Tolerance: 10% relative, issue 4's target for these scenarios. The
 * error of one nice step is 25%, of a group counted as its threads 100%
 * or more, so a real error fails.
 *
 * Under load (scripts/load-test.sh: two busy outside processes, and on a
 * shared machine whatever else runs): the shares are of the CPU time the
 * scenario's threads got, so how much time there is does not count, only
 * how it is divided. One thing outside load does change for the
 * governor: its rounds are counted in CPU time but end after four round
 * lengths of wall time, so while the process gets less than about a
 * quarter of its CPU the rounds end before the quotas are used and the
 * split drifts towards the kernel's, one thread one share. That is
 * outside what the governor can divide; so on the governor the accuracy
 * cases measure in half-second windows and keep only those in which the
 * scenario got at least MIN_CPUS of its CPU, until the kept ones span
 * MEASURE_S seconds and hold MIN_CPU_S of CPU time (a slice of a few
 * milliseconds is then a small part of the smallest share), within
 * DEADLINE_S (then the case fails: the machine was too busy to measure).
 * On a kernel backend, whose split does not depend on how much the system
 * group gets (it competes as one entity, and may get little), every
 * window counts, until MIN_CPU_S. With the load stage's two
 * processes the pinned test keeps nearly every window (the load balancer
 * moves them to the other CPU, as the test's threads cannot move), and
 * three seconds of kept windows hold a few hundred of the governor's
 * rounds, so one round's error is well inside the tolerance (figures:
 * docs/BENCHMARKS.md, "Under load"). Durations: 1 s warm-up (the
 * governor adapts over a few of its periods).
 *
 * A failing tolerance fails the test, also on the governor, which needs no
 * privilege: there is nothing to skip.
 */
#include "scenario.h"

#define WARMUP_S   1.0
#define MEASURE_S  3.0
#define MIN_CPUS   0.3
#define MIN_CPU_S  0.9
#define DEADLINE_S 20.0
#define TOLERANCE  0.10

static char sg[PATH_MAX];

/* Run a scenario on the one CPU and compare every entity with the model,
 * over the windows in which it got at least MIN_CPUS of that CPU. */
static void check_scenario(const struct rgt_scenario *sc)
{
	/* The kernel's split does not depend on how much CPU the system
	 * group gets: every window counts there. */
	const struct rgt_window w = {
		.window = 0.5, .seconds = MEASURE_S, .min_cpus = rgt_kernel() ? 0 : MIN_CPUS,
		.min_cpu_s = MIN_CPU_S, .deadline = DEADLINE_S,
	};
	struct rgt_share sh[RGT_SCN_MAX];
	double zero[RGT_SCN_MAX] = { 0 }, d[RGT_SCN_MAX], span, got;
	int n, kept, windows, enough, err = rgt_scn_start(sc);

	CHECK(err == 0, "set up %s: %s failed: %s", sc->name, rgt_scn.what, strerror(err));
	if (err)
		return;
	rgt_sleep(WARMUP_S);
	enough = rgt_scn_measure(&w, d, &span, &kept, &windows) == 0;
	rgt_scn_stop();
	n = rgt_scn_compare(zero, d, span, 1, sh, &got);
	fprintf(stderr, "  kept %d of %d half-second windows (%.1f s, %.2f of the CPU)\n",
		kept, windows, span, got);
	CHECK(enough, "the machine was too busy to measure: in %.0f s the scenario got "
	      "%.2f s of CPU time in windows with at least %.1f of its CPU (%.1f s of them)",
	      DEADLINE_S, got * span, w.min_cpus, span);
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
 * Work conservation: groups X and Y of two busy threads each, pinned to
 * one CPU like the other cases; X falls asleep in turns. Y must take the
 * CPU X leaves: rgt_scn_idle() measures, with X asleep, the part of the
 * CPU Y could have used that the library's pauses took ("lost"; from the
 * time Y's threads were blocked, which only a pause does to a spinning
 * thread). A governor that kept X's share for X would leave the CPU idle
 * half the time and lose Y half (0.5); one that gives it to Y, nothing
 * but the odd pause at a round's edge. Bound: 0.2, the median of four
 * pairs of 0.5 s phases. Both of its terms come from the same phase, so
 * outside load, which changes from phase to phase, does not move it as it
 * moves the benchmark's "taken" (the part of X's CPU, measured in the
 * other phase, that Y used; printed beside it).
 *
 * Why one CPU: on several, with outside load heavier on one CPU than on
 * the other, Y's thread on the freer CPU used its quota first and was
 * paused while its sibling still had quota, so Y lost CPU to other
 * processes, not to X: a figure of where outside load runs, up to half in
 * single pairs in the load stage (docs/BENCHMARKS.md, "Under load"). The
 * benchmark keeps the all-CPU figure; this test asks what the governor
 * does with an idle group's share. The kernel backend, which never
 * pauses, loses time only to interrupts and the hypervisor.
 */
static void idle_group(void)
{
	struct rgt_scenario s = { .name = "idle-group" };
	struct rgt_idle r;
	int err;

	int x = rgt_scn_busy_group(&s, 0, 0, 2, "X");
	int y = rgt_scn_busy_group(&s, 0, 0, 2, "Y");
	err = rgt_scn_start(&s);
	CHECK(err == 0, "set up: %s failed: %s", rgt_scn.what, strerror(err));
	if (!err) {
		rgt_sleep(WARMUP_S);
		rgt_scn_idle(x, y, 4, 0.3, 0.5, &r);
		rgt_scn_stop();
		for (int i = 0; i < r.n; i++)
			fprintf(stderr, "  pair %d: with X idle, Y lost %.3f of %.2f CPUs to pauses "
				"(%.0f%%); X had %.2f CPUs, Y took %.0f%% of them\n", i,
				r.withheld[i], r.cpus_idle[i], 100 * r.lost[i], r.freed[i],
				100 * r.taken[i]);
		qsort(r.lost, r.n, sizeof(r.lost[0]), cmp_double);
		CHECK_NEAR("Y's CPU lost, X idle (median)", r.lost[r.n / 2], 0.0, 0.20);
		CHECK(rgt_wait_no_groups(2.0) == 0, "groups removed");
	}
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
	if (rgt_pin_one_cpu(NULL) < 0)
		rgt_skip_all("cannot pin to one CPU: %s", strerror(errno));
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s, pinned to one CPU\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
