/* SPDX-License-Identifier: MIT */
/*
 * scenario.h - CPU-distribution scenarios (scenario.c): a small tree of
 * rgroups, threads and processes below the system group (sysgroup.h),
 * started for real, measured with CPU clocks and compared with the
 * reference model (src/model/model.h).
 *
 * One engine for `rgroup demo`, the tests that assert a split
 * (test-share.c, test-gov-share.c, judged by test/lib's rule) and the
 * benchmark suite that prints it (bench/rgroup-bench.c), so that a demo
 * scenario, a test case and a benchmark figure of the same name are the
 * same scenario, on every backend. Product code: the rgroup command links
 * it; it calls the library but does not link it (each program links the
 * library it is about).
 *
 * A scenario is a table; node 0 is the system group (implicit), and a node
 * comes after its parent:
 *   G  an rgroup at nice `nice`; its leader thread (created with RGROUP_NEW
 *      by the parent group's leader) has demand `demand` (0: it sleeps) and
 *      creates the group's other members and subgroups;
 *   T  a thread in its parent group (in the system group: a plain thread of
 *      the process, made with pthread_create); demand 1 = busy, 0 = asleep,
 *      0 < d < 1 = busy d of each 10 ms of CPU time;
 *   P  a single-threaded busy process in the system group (fork).
 * Compared with the model: every G, and every T or P directly in the system
 * group (the competitors). Threads and processes weigh as the process's
 * own nice value. The demands can change while a scenario runs
 * (scn_set_demand), so that a group can fall idle and wake up.
 */
#ifndef RGROUP_SCENARIO_H
#define RGROUP_SCENARIO_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "model.h"
#include "sysgroup.h"
#include "sysutil.h"

#define SCN_MAX 64

struct scn_spec {
	int parent;      /* index in the scenario, 0 = the system group */
	char kind;       /* 'G', 'T', 'P' */
	int nice;
	double demand;
	const char *label;
};

struct scn_table {
	const char *name;
	struct scn_spec n[SCN_MAX]; /* n[0] unused (the system group) */
	int count;
	/* A T inside a group is made by the group's leader with plain
	 * pthread_create(), not rgroup_thread_create() (rule 1 either way). */
	int plain_create;
};

/* One compared entity's share of the CPU time the scenario got. */
struct scn_share {
	const char *label;
	int node;
	double got, want, err; /* err: |got - want| / want */
};

/* The running scenario (one at a time). */
struct scn_node {
	const struct scn_spec *s;
	int idx;
	pthread_t thread;
	pid_t tid, pid;
	volatile int ready;
	volatile double demand;
	int changed;     /* atomic: bumped (and woken) when demand or stop changes */
	int nice;        /* G: PRIO_RGRP as read back after setting it */
	int err;
};

extern struct scn_state {
	const struct scn_table *sc;
	struct scn_node n[SCN_MAX];
	volatile int stop;
	int base_nice;          /* the process's nice: its threads' weight */
	char what[160];         /* the first failure: which call, for which node */
} scn_cur;

/* ---- Building the table ------------------------------------------------ */

/* Append a node; returns its index. A table too small is a bug of the
 * program that builds it (the scenarios scale with the CPU count): exit. */
int scn_add(struct scn_table *s, int parent, char kind, int nice,
		double demand, const char *label);
/* An rgroup whose leader and b-1 more threads are busy. */
int scn_busy_group(struct scn_table *s, int parent, int nice, int b,
		       const char *label);

/* Weights 1:2:4 as near as nice values give them: nice 6, 3, 0, b busy
 * threads each. */
void scn_flat124(struct scn_table *s, int b);
/* A{A1{A1a, A1b}, A2} against a top-level B, a different nice value on
 * every group; the inner leaders sleep, the others have b busy threads. */
void scn_nested_tree(struct scn_table *s, int b);
/* Two plain busy threads, rgroup rgA of four busy threads (rule 4: it
 * weighs like one of them), rgroup rgB at nice 5 with two. */
void scn_vs_plain(struct scn_table *s);
/* The article's split (rule 4): two single-threaded busy processes
 * (kind 'P'; 'T': two plain busy threads, for the governor, which divides
 * only the process's own time) and one rgroup of four busy threads at
 * nice `base`. Thirds. */
void scn_article(struct scn_table *s, char kind, int base);
/* Nested PRIO_RGRP weights (rule 5): top-level A at nice `base` whose
 * leader sleeps, holding A1 (nice 0) and A2 (nice 5) of two busy threads
 * each, against top-level B at base + 3 with two. */
void scn_nested_weights(struct scn_table *s, int base);

/* ---- Running it ---------------------------------------------------------- */

/* Start a scenario; 0, or an error number with nothing left running and
 * scn_cur.what saying which call failed. */
int scn_start(const struct scn_table *sc);
/* Stop every thread and process of the running scenario. */
void scn_stop(void);
/* The CPU seconds of every node itself (not its subtree) into v[]. */
void scn_read(double *v);
/* Is node j of the running scenario node i or below it? */
int scn_below(int j, int i);
/* Node i and everything below it, from a reading. */
double scn_subtree(const double *v, int i);
/* Set the demand of node i's own thread, and of the threads (not the
 * subgroups) of group i. */
void scn_set_demand(int i, double d);
/* The model of the running scenario with its current demands; mi[i] is
 * node i's index in it. */
void scn_model(struct model *m, int *mi);

/*
 * Compare the CPU time between readings v0 and v1 (`seconds` apart) with
 * the model: each compared entity's share of the CPU time the scenario's
 * entities got. The machine is shared: the scenario competes with other
 * load, so the model is given the CPUs it actually got (at most `cpus`),
 * else an under-committed scenario on paper is an over-committed one in
 * fact; that figure goes to *got_cpus. Returns the number of entities
 * written to out[], or 0 if the scenario got no CPU time.
 */
int scn_compare(const double *v0, const double *v1, double seconds,
		    double cpus, struct scn_share *out, double *got_cpus);

/* How scn_measure() measures. */
struct scn_window {
	double window;          /* seconds per window */
	double seconds;         /* at least this many seconds of kept windows */
	double min_cpus;        /* keep a window only if the scenario got this many CPUs */
	double min_cpu_s;       /* ... and until they hold this much CPU time */
	double deadline;        /* give up after this many seconds */
};

/*
 * Measure the running scenario window by window: keep the windows in
 * which its entities got at least w->min_cpus CPUs, until the kept ones
 * span w->seconds and hold w->min_cpu_s CPU seconds. d[] gets each node's
 * CPU seconds in the kept windows (a reading from 0, for
 * scn_compare(zeros, d, ...)), *span the seconds they span, *kept and
 * *windows (may be NULL) how many were kept of how many. 0, or -1 when
 * w->deadline came first (d and *span hold what was kept).
 */
int scn_measure(const struct scn_window *w, double *d, double *span,
		    int *kept, int *windows);

/*
 * Run a scenario: start it, let it settle for `warmup` seconds, measure
 * over `measure` seconds, stop it and wait until the library has removed
 * its groups. Returns the number of compared entities in out[] (as
 * scn_compare), or -1 with *err set when it could not be set up.
 */
int scn_run(const struct scn_table *sc, double warmup, double measure,
		double cpus, struct scn_share *out, double *got_cpus, int *err);

/* A single-threaded busy process, killed with the thread that forked it
 * (PR_SET_PDEATHSIG); -1 and errno if fork failed. */
pid_t scn_spinner(void);

/* ---- The kernel's view of a thread, and an idle group ------------------ */

/* What the kernel's schedstat says of a thread, and when it was read. */
struct scn_schedstat {
	double run;           /* s on a CPU */
	double wait;          /* s runnable, waiting on a run queue */
	double runs;          /* times it was run */
	double at;            /* scn_now() of the reading */
};

/* Read /proc/self/task/TID/schedstat; 0, or -1 if unreadable. */
int scn_schedstat(pid_t tid, struct scn_schedstat *st);

#define SCN_IDLE_MAX 16

struct scn_idle_result {
	int n;                          /* pairs kept */
	int tried;                      /* pairs measured */
	double taken[SCN_IDLE_MAX];     /* per pair: 1 - withheld / freed */
	double lost[SCN_IDLE_MAX];      /* per pair: withheld / (y's CPUs + withheld),
	                                 * x idle: the part of what y could use that
	                                 * pauses took */
	double freed[SCN_IDLE_MAX];     /* x's CPUs, both busy */
	double withheld[SCN_IDLE_MAX];  /* y's CPUs lost to pauses, x idle */
	double cpus_both[SCN_IDLE_MAX]; /* the two groups' CPUs, both busy */
	double cpus_idle[SCN_IDLE_MAX]; /* ... x idle */
};

/*
 * An idle group's CPU (work conservation) on busy groups x and y of the
 * running scenario: pairs of phases (both busy, x asleep) of `settle` +
 * `measure` seconds each, until `pairs` pairs are kept (at most
 * SCN_IDLE_MAX) or, once that many were measured, `deadline` seconds have
 * passed. A pair is kept when the two groups got at least min_cpus CPUs
 * in both phases: with less, the kernel's wait figures (schedstat counts
 * a wait when it ends, so a thread still waiting at the reading looks
 * blocked) are as large as what is measured. out->n: the pairs kept.
 */
void scn_idle(int x, int y, int pairs, double settle, double measure, double min_cpus,
	      double deadline, struct scn_idle_result *out);

#endif /* RGROUP_SCENARIO_H */
