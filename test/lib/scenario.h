/* SPDX-License-Identifier: MIT */
/*
 * scenario.h - CPU-distribution scenarios: a small tree of rgroups, threads
 * and processes below the system group, started for real, measured with
 * CPU clocks and compared with the reference model (src/model.h).
 *
 * One engine for the system test that asserts the split (test-gov-share.c)
 * and the benchmark suite that prints it (bench/rgroup-bench.c), so that a
 * test case and a benchmark figure of the same name are the same scenario,
 * on every backend.
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
 * group (the competitors). The demands can change while a scenario runs
 * (rgt_scn_set_demand), so that a group can fall idle and wake up.
 */
#ifndef RGROUP_TEST_SCENARIO_H
#define RGROUP_TEST_SCENARIO_H

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "model.h"
#include "sgroup.h"

#define RGT_SCN_MAX 64

struct rgt_snode {
	int parent;      /* index in the scenario, 0 = the system group */
	char kind;       /* 'G', 'T', 'P' */
	int nice;
	double demand;
	const char *label;
};

struct rgt_scenario {
	const char *name;
	struct rgt_snode n[RGT_SCN_MAX]; /* n[0] unused (the system group) */
	int count;
};

/* One compared entity's share of the CPU time the scenario got. */
struct rgt_share {
	const char *label;
	int node;
	double got, want, err; /* err: |got - want| / want */
};

/* The running scenario (one at a time). */
struct rgt_scn_node {
	const struct rgt_snode *s;
	int idx;
	pthread_t thread;
	pid_t tid, pid;
	volatile int ready;
	volatile double demand;
	int err;
};

static struct {
	const struct rgt_scenario *sc;
	struct rgt_scn_node n[RGT_SCN_MAX];
	volatile int stop;
} rgt_scn;

/* Append a node; returns its index. A table too small is a bug of the
 * program that builds it (the scenarios scale with the CPU count). */
static inline int rgt_scn_add(struct rgt_scenario *s, int parent, char kind, int nice,
			      double demand, const char *label)
{
	if (s->count == 0)
		s->count = 1;
	if (s->count == RGT_SCN_MAX) {
		fprintf(stderr, "scenario %s: more than %d nodes\n", s->name, RGT_SCN_MAX - 1);
		exit(1);
	}
	s->n[s->count] = (struct rgt_snode){ parent, kind, nice, demand, label };
	return s->count++;
}

/* An rgroup whose leader and b-1 more threads are busy. */
static inline int rgt_scn_busy_group(struct rgt_scenario *s, int parent, int nice, int b,
				     const char *label)
{
	int g = rgt_scn_add(s, parent, 'G', nice, 1, label);
	for (int t = 1; t < b; t++)
		rgt_scn_add(s, g, 'T', 0, 1, "");
	return g;
}

/* Weights 1:2:4 as near as nice values give them: nice 6, 3, 0 are
 * 272 : 526 : 1024 in the kernel's table (1 : 1.93 : 3.76); the ideal
 * comes from that table through the model, not from 1:2:4. */
static inline void rgt_scn_flat124(struct rgt_scenario *s, int b)
{
	*s = (struct rgt_scenario){ .name = "flat-1:2:4" };
	rgt_scn_busy_group(s, 0, 6, b, "w1");
	rgt_scn_busy_group(s, 0, 3, b, "w2");
	rgt_scn_busy_group(s, 0, 0, b, "w4");
}

/* Three levels of rgroups with siblings at each, a different nice value
 * on every group: A{A1{A1a, A1b}, A2} against a top-level B. The inner
 * groups' leaders sleep; the others have b busy threads. */
static inline void rgt_scn_nested_tree(struct rgt_scenario *s, int b)
{
	*s = (struct rgt_scenario){ .name = "nested-tree" };
	int a = rgt_scn_add(s, 0, 'G', 0, 0, "A");
	int a1 = rgt_scn_add(s, a, 'G', 2, 0, "A1(n2)");
	rgt_scn_busy_group(s, a1, 0, b, "A1a");
	rgt_scn_busy_group(s, a1, 4, b, "A1b(n4)");
	rgt_scn_busy_group(s, a, 5, b, "A2(n5)");
	rgt_scn_busy_group(s, 0, 3, b, "B(n3)");
}

/* rgroups competing with plain threads of the process: two plain busy
 * threads, rgroup rgA of four busy threads (rule 4: it weighs like one of
 * them), rgroup rgB at nice 5 with two. */
static inline void rgt_scn_vs_plain(struct rgt_scenario *s)
{
	*s = (struct rgt_scenario){ .name = "vs-plain-threads" };
	rgt_scn_add(s, 0, 'T', 0, 1, "plain1");
	rgt_scn_add(s, 0, 'T', 0, 1, "plain2");
	rgt_scn_busy_group(s, 0, 0, 4, "rgA");
	rgt_scn_busy_group(s, 0, 5, 2, "rgB(n5)");
}

/* Pin the calling thread, and so every thread and child it makes from now
 * on, to the first CPU it may use; the mask it had goes to saved (may be
 * NULL). 0 or -1 and errno. */
static inline int rgt_pin_one_cpu(cpu_set_t *saved)
{
	cpu_set_t all, one;
	if (sched_getaffinity(0, sizeof(all), &all) < 0)
		return -1;
	if (saved)
		*saved = all;
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	return sched_setaffinity(0, sizeof(one), &one);
}

/* CPU seconds a process has used. */
static inline double rgt_proc_cpu(pid_t pid)
{
	clockid_t cid;
	struct timespec ts;
	if (clock_getcpuclockid(pid, &cid) != 0 || clock_gettime(cid, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline pid_t rgt_spinner(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (volatile unsigned long i = 0;; i++)
			;
	}
	return pid;
}

/* Busy, asleep, or busy `demand` of each 10 ms (in CPU time, so that it
 * means the same when other load slows the spin down); the demand is read
 * on every round, so that it can change. */
static inline void rgt_scn_work(struct rgt_scn_node *r)
{
	const double period = 0.010;
	while (!rgt_scn.stop) {
		double d = r->demand;
		if (d >= 1) {
			for (volatile int i = 0; i < 100000; i++)
				;
		} else if (d <= 0) {
			rgt_sleep(0.005);
		} else {
			double c0 = rgt_thread_cpu(r->tid);
			while (rgt_thread_cpu(r->tid) - c0 < d * period)
				;
			rgt_sleep((1 - d) * period);
		}
	}
}

static void *rgt_scn_thread(void *p);

/* Start the children of node g (0: the system group) from the calling
 * thread, which is g's leader. 0 or an error number. */
static inline int rgt_scn_start_children(int g)
{
	for (int i = 1; i < rgt_scn.sc->count; i++) {
		struct rgt_scn_node *r = &rgt_scn.n[i];
		if (r->s->parent != g)
			continue;
		if (r->s->kind == 'P') {
			if ((r->pid = rgt_spinner()) < 0)
				return errno;
			continue;
		}
		int e = g == 0 && r->s->kind == 'T'
			? pthread_create(&r->thread, NULL, rgt_scn_thread, r)
			: rgroup_thread_create(&r->thread, NULL, r->s->kind == 'G' ? RGROUP_NEW : 0,
					       rgt_scn_thread, r);
		if (e)
			return e;
		while (!__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE))
			rgt_sleep(0.001);
		if (r->err)
			return r->err;
	}
	return 0;
}

static void *rgt_scn_thread(void *p)
{
	struct rgt_scn_node *r = p;
	r->tid = rgt_gettid();
	if (r->s->kind == 'G') {
		if (rgroup_setpriority(PRIO_RGRP, 0, r->s->nice) < 0)
			r->err = errno;
		else
			r->err = rgt_scn_start_children(r->idx);
	}
	__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
	rgt_scn_work(r);
	return NULL;
}

/* Stop every thread and process of the running scenario. */
static inline void rgt_scn_stop(void)
{
	rgt_scn.stop = 1;
	for (int i = rgt_scn.sc->count - 1; i >= 1; i--) {
		struct rgt_scn_node *r = &rgt_scn.n[i];
		if (r->s->kind == 'P' && r->pid > 0) {
			kill(r->pid, SIGKILL);
			waitpid(r->pid, NULL, 0);
		} else if (r->tid) {
			pthread_join(r->thread, NULL);
		}
	}
}

/* Start a scenario; 0, or an error number with nothing left running. */
static inline int rgt_scn_start(const struct rgt_scenario *sc)
{
	memset(&rgt_scn, 0, sizeof(rgt_scn));
	rgt_scn.sc = sc;
	for (int i = 1; i < sc->count; i++) {
		rgt_scn.n[i].s = &sc->n[i];
		rgt_scn.n[i].idx = i;
		rgt_scn.n[i].demand = sc->n[i].demand;
	}
	int err = rgt_scn_start_children(0);
	if (err)
		rgt_scn_stop();
	return err;
}

/* The CPU seconds of every node itself (not its subtree) into v[]. */
static inline void rgt_scn_read(double *v)
{
	for (int i = 1; i < rgt_scn.sc->count; i++) {
		struct rgt_scn_node *r = &rgt_scn.n[i];
		v[i] = r->s->kind == 'P' ? rgt_proc_cpu(r->pid) : rgt_thread_cpu(r->tid);
	}
}

/* Node i and everything below it, from a reading. */
static inline double rgt_scn_subtree(const double *v, int i)
{
	double s = v[i];
	for (int j = i + 1; j < rgt_scn.sc->count; j++)
		if (rgt_scn.sc->n[j].parent == i)
			s += rgt_scn_subtree(v, j);
	return s;
}

/* Set the demand of node i's own thread, and of the threads (not the
 * subgroups) of group i. */
static inline void rgt_scn_set_demand(int i, double d)
{
	rgt_scn.n[i].demand = d;
	for (int j = i + 1; j < rgt_scn.sc->count; j++)
		if (rgt_scn.sc->n[j].parent == i && rgt_scn.sc->n[j].kind == 'T')
			rgt_scn.n[j].demand = d;
}

/* The model of the running scenario with its current demands; mi[i] is
 * node i's index in it. */
static inline void rgt_scn_model(struct model *m, int *mi)
{
	const struct rgt_scenario *sc = rgt_scn.sc;
	model_init(m);
	mi[0] = model_add(m, -1, 1024, 0);
	for (int i = 1; i < sc->count; i++) {
		const struct rgt_snode *s = &sc->n[i];
		double d = rgt_scn.n[i].demand;
		if (s->kind == 'G') {
			mi[i] = model_add(m, mi[s->parent], rgroup_nice_to_weight(s->nice), 0);
			if (d > 0) /* the leader, a member of its own group */
				model_add(m, mi[i], 1024, d);
		} else {
			mi[i] = model_add(m, mi[s->parent], 1024, d);
		}
	}
}

/*
 * Compare the CPU time between readings v0 and v1 (`seconds` apart) with
 * the model: each compared entity's share of the CPU time the scenario's
 * entities got. The machine is shared: the scenario competes with other
 * load, so the model is given the CPUs it actually got (at most `cpus`),
 * else an under-committed scenario on paper is an over-committed one in
 * fact; that figure goes to *got_cpus. Returns the number of entities
 * written to out[], or 0 if the scenario got no CPU time.
 */
static inline int rgt_scn_compare(const double *v0, const double *v1, double seconds,
				  double cpus, struct rgt_share *out, double *got_cpus)
{
	const struct rgt_scenario *sc = rgt_scn.sc;
	struct model m;
	int mi[RGT_SCN_MAX], n = 0;
	double total = 0;

	for (int i = 1; i < sc->count; i++)
		if (sc->n[i].parent == 0)
			total += rgt_scn_subtree(v1, i) - rgt_scn_subtree(v0, i);
	*got_cpus = total / seconds;
	if (total <= 0)
		return 0;
	rgt_scn_model(&m, mi);
	model_run(&m, *got_cpus < cpus ? *got_cpus : cpus);
	for (int i = 1; i < sc->count; i++) {
		const struct rgt_snode *s = &sc->n[i];
		if (s->kind != 'G' && s->parent != 0)
			continue;
		struct rgt_share *o = &out[n++];
		o->label = s->label;
		o->node = i;
		o->got = (rgt_scn_subtree(v1, i) - rgt_scn_subtree(v0, i)) / total;
		o->want = model_fraction(&m, mi[i]);
		o->err = o->want > 0 ? fabs(o->got - o->want) / o->want : fabs(o->got);
	}
	return n;
}

/* What the kernel's schedstat says of a thread, and when it was read. */
struct rgt_schedstat {
	double run;           /* s on a CPU */
	double wait;          /* s runnable, waiting on a run queue */
	double runs;          /* times it was run */
	double at;            /* rgt_now() of the reading */
};

/* Read /proc/self/task/TID/schedstat; retried until the reading took
 * less than 1 ms, so that a preemption of the reader does not shift it
 * from its time stamp. 0, or -1 if unreadable. */
static inline int rgt_schedstat(pid_t tid, struct rgt_schedstat *st)
{
	char file[64], buf[128];
	unsigned long long r = 0, w = 0, n = 0;
	int ok = 0;

	snprintf(file, sizeof(file), "/proc/self/task/%d/schedstat", (int)tid);
	for (int tries = 0; tries < 10; tries++) {
		double t0 = rgt_now();
		ok = rgt_read(file, buf, sizeof(buf)) >= 0 &&
		     sscanf(buf, "%llu %llu %llu", &r, &w, &n) == 3;
		st->at = rgt_now();
		if (!ok || st->at - t0 < 0.001)
			break;
	}
	st->run = r / 1e9;
	st->wait = w / 1e9;
	st->runs = (double)n;
	return ok ? 0 : -1;
}

/* Is node j node i or below it? */
static inline int rgt_scn_below(int j, int i)
{
	while (j > 0 && j != i)
		j = rgt_scn.sc->n[j].parent;
	return j == i;
}

#define RGT_IDLE_MAX 16

struct rgt_idle {
	int n;                          /* pairs measured */
	double taken[RGT_IDLE_MAX];     /* per pair: 1 - withheld / freed */
	double freed[RGT_IDLE_MAX];     /* x's CPUs, both busy */
	double withheld[RGT_IDLE_MAX];  /* y's CPUs lost to pauses, x idle */
	double cpus_both[RGT_IDLE_MAX]; /* the two groups' CPUs, both busy */
	double cpus_idle[RGT_IDLE_MAX]; /* ... x idle */
};

/*
 * An idle group's CPU (work conservation), on busy groups x and y of the
 * running scenario (flat groups: x's own threads fall asleep). Phases
 * alternate in ABBA order, both busy and x asleep, `settle` seconds to
 * settle and `measure` measured each. Per pair of phases:
 *   freed     x's CPU rate with both busy: what it leaves when it sleeps;
 *   withheld  with x asleep, the time y's busy threads were blocked
 *             (neither running nor waiting for a CPU: a spinning thread
 *             blocks only when the library pauses it), each at the CPU
 *             rate that thread got while not blocked;
 *   taken     1 - withheld / freed: the part of the freed CPU y used.
 * Why not (y alone - y with x) / x from the CPU clocks: on a shared
 * machine what the process can get changes from phase to phase by more
 * than the figure (65-250% in one run here on the kernel backend, whose
 * groups never pause); the blocked time is the library's own doing,
 * whatever the other load does. The clocks' CPUs are kept beside it.
 */
static inline void rgt_scn_idle(int x, int y, int pairs, double settle, double measure,
				struct rgt_idle *out)
{
	const struct rgt_scenario *sc = rgt_scn.sc;
	double v0[RGT_SCN_MAX], v1[RGT_SCN_MAX];
	struct rgt_schedstat s0[RGT_SCN_MAX], s1[RGT_SCN_MAX];

	memset(out, 0, sizeof(*out));
	for (int p = 0; p < pairs && p < RGT_IDLE_MAX; p++) {
		for (int h = 0; h < 2; h++) {
			int idle = (p % 2 == 0) == (h == 1);
			rgt_scn_set_demand(x, idle ? 0 : 1);
			rgt_sleep(settle);
			for (int j = 1; j < sc->count; j++)
				rgt_schedstat(rgt_scn.n[j].tid, &s0[j]);
			rgt_scn_read(v0);
			double t0 = rgt_now();
			rgt_sleep(measure);
			for (int j = 1; j < sc->count; j++)
				rgt_schedstat(rgt_scn.n[j].tid, &s1[j]);
			rgt_scn_read(v1);
			double dt = rgt_now() - t0, cx, cy;
			cx = (rgt_scn_subtree(v1, x) - rgt_scn_subtree(v0, x)) / dt;
			cy = (rgt_scn_subtree(v1, y) - rgt_scn_subtree(v0, y)) / dt;
			if (!idle) {
				out->freed[p] = cx;
				out->cpus_both[p] = cx + cy;
				continue;
			}
			out->cpus_idle[p] = cx + cy;
			for (int j = 1; j < sc->count; j++) {
				if (!rgt_scn_below(j, y) || sc->n[j].kind == 'P')
					continue;
				double run = s1[j].run - s0[j].run, wait = s1[j].wait - s0[j].wait;
				double span = s1[j].at - s0[j].at, blocked = span - run - wait;
				if (blocked > 0)
					out->withheld[p] += blocked / span *
						(run + wait > 0 ? run / (run + wait) : 1);
			}
		}
		out->taken[p] = out->freed[p] > 0 ? 1 - out->withheld[p] / out->freed[p] : NAN;
		out->n = p + 1;
	}
	rgt_scn_set_demand(x, 1);
}

/*
 * Run a scenario: start it, let it settle for `warmup` seconds, measure
 * over `measure` seconds, stop it and wait until the library has removed
 * its groups. Returns the number of compared entities in out[] (as
 * rgt_scn_compare), or -1 with *err set when it could not be set up.
 */
static inline int rgt_scn_run(const struct rgt_scenario *sc, double warmup, double measure,
			      double cpus, struct rgt_share *out, double *got_cpus, int *err)
{
	double v0[RGT_SCN_MAX], v1[RGT_SCN_MAX];

	if ((*err = rgt_scn_start(sc)))
		return -1;
	rgt_sleep(warmup);
	rgt_scn_read(v0);
	double t0 = rgt_now();
	rgt_sleep(measure);
	rgt_scn_read(v1);
	double t1 = rgt_now();
	rgt_scn_stop();
	int n = rgt_scn_compare(v0, v1, t1 - t0, cpus, out, got_cpus);
	rgt_wait_no_groups(5.0);
	return n;
}

#endif /* RGROUP_TEST_SCENARIO_H */
