/* SPDX-License-Identifier: MIT */
/*
 * judge.h - the one rule by which every CPU-share test judges a split.
 *
 * The rule:
 *
 *   Measure RGT_JUDGE_WINDOWS windows (5) of window_s seconds each (1 s
 *   unless a test needs longer), keeping only windows in which the
 *   measured set got at least min_cpus CPUs; each entity's statistic is
 *   the median of its per-window values (a share of the set's CPU time,
 *   or CPUs used for a rate), compared with the median of the reference
 *   model's values for the same windows. It passes when
 *
 *       |median - expected| <= RGT_JUDGE_POINTS + RGT_JUDGE_REL * expected
 *
 *   that is 2 points of share plus 5% of the expected value.
 *
 * Why these numbers. The kernel counts CPU time exactly (ns per thread),
 * so the error of a window is in how the time was handed out, not in how
 * it was counted: at any instant a runnable entity may be up to about one
 * slice ahead or behind its share (EEVDF's lag is bounded by the slice,
 * 3 ms base, scaled up with the CPUs; the governor's rounds are a few ms),
 * and preemption waits for the next tick (4 ms at HZ 250). A few entities
 * each off by slice + tick, about 7 ms, in a window of 1 s is under one
 * point; two points leave room for a window that starts or ends in the
 * middle of such a lag, for the reader's own scheduling, and for the
 * governor's pauses. On several CPUs the kernel spreads a group's weight
 * over the CPUs by load averages (PELT, 32 ms half-life) that follow the
 * load with a lag, and load balancing moves tasks in steps of one task's
 * load: errors that scale with the share, hence the relative term. The
 * median of five windows drops the odd window in which another process, a
 * migration or the host stole the CPU from one entity and not from the
 * others; the first window to pass, or one window, would decide on noise.
 * A real error is far outside: one nice step is 25% of a share, a group
 * that competed as its threads instead of as one entity is off by 100%.
 *
 * A set that cannot get min_cpus CPUs in enough windows before the
 * deadline (a loaded machine) is not judged: the test says so (a skip,
 * which fails in strict mode) rather than passing or failing on noise; it
 * keeps measuring until the deadline first.
 */
#ifndef RGROUP_TEST_JUDGE_H
#define RGROUP_TEST_JUDGE_H

#define RGT_JUDGE_WINDOWS 5
#define RGT_JUDGE_WINDOW_S 1.0
#define RGT_JUDGE_POINTS 0.02
#define RGT_JUDGE_REL 0.05
#define RGT_JUDGE_DEADLINE_S 60.0
#define RGT_JUDGE_MAX 16

struct rgt_judge {
	const char *what;              /* printed before the table */
	int n;                         /* entities judged */
	const char *label[RGT_JUDGE_MAX];
	/*
	 * Read the counters: cpu[i], the CPU seconds entity i has used so far;
	 * *base, the CPU seconds of the set whose shares are judged (shares
	 * are fractions of it), or, with `rate`, ignored. 0, or -1 when they
	 * cannot be read (the window is dropped).
	 */
	int (*read)(void *ctx, double *cpu, double *base);
	/* Expected values for a window in which the set got `cpus` CPUs: the
	 * reference model given what the set really got. NULL: fixed[] */
	void (*expect)(void *ctx, double cpus, double *want);
	double fixed[RGT_JUDGE_MAX];
	void *ctx;
	double window_s;               /* 0: RGT_JUDGE_WINDOW_S */
	double min_cpus;               /* a window counts from this many CPUs */
	double deadline_s;             /* 0: RGT_JUDGE_DEADLINE_S */
	int rate;                      /* judge CPUs used (cpu / wall), not shares */
};

/*
 * Measure and judge by the rule above; print every entity's windows,
 * median, expected value, error and tolerance. Returns the number of
 * entities off (each one a failed CHECK), or -1 when the set could not be
 * judged (reported as a skip of the case). *cpus_out (may be NULL) gets
 * the median CPUs the set got per window.
 */
int rgt_judge(const struct rgt_judge *j, double *cpus_out);

/* Within the rule's tolerance? */
int rgt_judge_within(double got, double want);

/*
 * Judge the running scenario (src/scenario/scenario.h) by the rule above:
 * each compared entity's share of the CPU time the scenario's entities
 * got, window by window, against the model given the CPUs they got (at most `cpus`).
 * Windows in which they got less than min_cpus CPUs are not kept. Returns
 * rgt_judge()'s result; *got_cpus (may be NULL) the median CPUs got.
 */
int rgt_scn_judge(const char *what, double cpus, double min_cpus, double window_s,
		  double *got_cpus);

#endif /* RGROUP_TEST_JUDGE_H */
