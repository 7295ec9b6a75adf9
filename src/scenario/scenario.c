/* SPDX-License-Identifier: MIT */
/* scenario.c - the scenario engine: tables, threads, readings, the model.
 * See scenario.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rgroup.h"
#include "locate.h"

#include "scenario.h"

struct scn_state scn_cur;
static pthread_mutex_t what_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- Building the table ------------------------------------------------ */

int scn_add(struct scn_table *s, int parent, char kind, int nice,
		double demand, const char *label)
{
	if (s->count == 0)
		s->count = 1;
	if (s->count == SCN_MAX) {
		fprintf(stderr, "scenario %s: more than %d nodes\n", s->name, SCN_MAX - 1);
		exit(1);
	}
	s->n[s->count] = (struct scn_spec){ parent, kind, nice, demand, label };
	return s->count++;
}

int scn_busy_group(struct scn_table *s, int parent, int nice, int b,
		       const char *label)
{
	int g = scn_add(s, parent, 'G', nice, 1, label);

	for (int t = 1; t < b; t++)
		scn_add(s, g, 'T', 0, 1, "");
	return g;
}

/* Nice 6, 3, 0 are 272 : 526 : 1024 in the kernel's table (1 : 1.93 :
 * 3.76); the ideal comes from that table through the model, not from
 * 1:2:4. */
void scn_flat124(struct scn_table *s, int b)
{
	*s = (struct scn_table){ .name = "flat-1:2:4" };
	scn_busy_group(s, 0, 6, b, "w1");
	scn_busy_group(s, 0, 3, b, "w2");
	scn_busy_group(s, 0, 0, b, "w4");
}

void scn_nested_tree(struct scn_table *s, int b)
{
	int a, a1;

	*s = (struct scn_table){ .name = "nested-tree" };
	a = scn_add(s, 0, 'G', 0, 0, "A");
	a1 = scn_add(s, a, 'G', 2, 0, "A1(n2)");
	scn_busy_group(s, a1, 0, b, "A1a");
	scn_busy_group(s, a1, 4, b, "A1b(n4)");
	scn_busy_group(s, a, 5, b, "A2(n5)");
	scn_busy_group(s, 0, 3, b, "B(n3)");
}

void scn_vs_plain(struct scn_table *s)
{
	*s = (struct scn_table){ .name = "vs-plain-threads" };
	scn_add(s, 0, 'T', 0, 1, "plain1");
	scn_add(s, 0, 'T', 0, 1, "plain2");
	scn_busy_group(s, 0, 0, 4, "rgA");
	scn_busy_group(s, 0, 5, 2, "rgB(n5)");
}

void scn_article(struct scn_table *s, char kind, int base)
{
	int procs = kind == 'P';

	*s = (struct scn_table){ .name = "article-split" };
	scn_add(s, 0, kind, 0, 1, procs ? "process 1" : "thread 1");
	scn_add(s, 0, kind, 0, 1, procs ? "process 2" : "thread 2");
	scn_busy_group(s, 0, base, 4, "rgroup R");
}

void scn_nested_weights(struct scn_table *s, int base)
{
	int a;

	*s = (struct scn_table){ .name = "nested-weights" };
	a = scn_add(s, 0, 'G', base, 0, "rgroup A");
	scn_busy_group(s, a, 0, 2, "rgroup A1");
	scn_busy_group(s, a, 5, 2, "rgroup A2");
	scn_busy_group(s, 0, base + 3 > 19 ? 19 : base + 3, 2, "rgroup B");
}

/* ---- Running it ---------------------------------------------------------- */

/* Keep the first failure's description. */
static int failed(int err, const char *call, const struct scn_spec *s)
{
	pthread_mutex_lock(&what_lock);
	if (!scn_cur.what[0])
		snprintf(scn_cur.what, sizeof(scn_cur.what), "%s for %s", call,
			 s->label && *s->label ? s->label : "a thread");
	pthread_mutex_unlock(&what_lock);
	return err;
}

pid_t scn_spinner(void)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* Die with the program, whatever ends it; not with a
		 * handler of the program's own that is meant for it. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		for (volatile unsigned long i = 0;; i++)
			;
	}
	return pid;
}

/* Tell node r's thread that its demand, or scn_cur.stop, has changed. */
static void changed(struct scn_node *r)
{
	__atomic_add_fetch(&r->changed, 1, __ATOMIC_RELEASE);
	scn_word_wake(&r->changed);
}

/* Busy, asleep, or busy `demand` of each 10 ms (in CPU time, so that it
 * means the same when other load slows the spin down); the demand is read
 * on every round, so that it can change. Asleep is asleep until the demand
 * changes, not a poll: the model counts an idle thread as using no CPU,
 * and a poll's CPU, small on a fast machine, is a share of its own on a
 * slow one (a debug kernel under emulation), taken from the busy threads
 * whose split is measured. */
static void work(struct scn_node *r)
{
	const double period = 0.010;

	while (!scn_cur.stop) {
		/* Read before the demand and stop: a change made after this
		 * reading bumps it, and the wait below returns at once. */
		int seen = __atomic_load_n(&r->changed, __ATOMIC_ACQUIRE);
		double d = r->demand;

		if (d >= 1) {
			for (volatile int i = 0; i < 100000; i++)
				;
		} else if (d <= 0) {
			if (!scn_cur.stop)
				scn_word_wait(&r->changed, seen, 0);
		} else {
			double c0 = scn_thread_cpu(r->tid);

			while (scn_thread_cpu(r->tid) - c0 < d * period)
				;
			scn_sleep((1 - d) * period);
		}
	}
}

static void *node_thread(void *p);

/* Start the children of node g (0: the system group) from the calling
 * thread, which is g's leader, one after the other, each ready before the
 * next. 0 or an error number. */
static int start_children(int g)
{
	for (int i = 1; i < scn_cur.sc->count; i++) {
		struct scn_node *r = &scn_cur.n[i];
		int e;

		if (r->s->parent != g)
			continue;
		if (r->s->kind == 'P') {
			if ((r->pid = scn_spinner()) < 0)
				return failed(errno, "fork", r->s);
			continue;
		}
		int plain = r->s->kind == 'T' && (g == 0 || scn_cur.sc->plain_create);

		if (plain)
			e = pthread_create(&r->thread, NULL, node_thread, r);
		else
			e = rgroup_thread_create(&r->thread, NULL, r->s->kind == 'G' ? RGROUP_NEW : 0,
						 node_thread, r);
		if (e)
			return failed(e, plain ? "pthread_create" :
				      r->s->kind == 'G' ? "rgroup_thread_create(RGROUP_NEW)" :
				      "rgroup_thread_create", r->s);
		while (!__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE))
			scn_sleep(0.001);
		if (r->err)
			return r->err;
	}
	return 0;
}

/* A group's leader sets the group's nice value from the inside (PRIO_RGRP,
 * who = 0), reads it back and starts the group's members and subgroups. */
static void *node_thread(void *p)
{
	struct scn_node *r = p;

	r->tid = scn_gettid();
	if (r->s->kind == 'G') {
		if (rgroup_setpriority(PRIO_RGRP, 0, r->s->nice) < 0) {
			r->err = failed(errno, "rgroup_setpriority(PRIO_RGRP)", r->s);
		} else {
			errno = 0;
			r->nice = rgroup_getpriority(PRIO_RGRP, 0);
			if (r->nice == -1 && errno)
				r->err = failed(errno, "rgroup_getpriority(PRIO_RGRP)", r->s);
			else
				r->err = start_children(r->idx);
		}
	}
	__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
	work(r);
	return NULL;
}

void scn_stop(void)
{
	scn_cur.stop = 1;
	for (int i = 1; i < scn_cur.sc->count; i++)
		changed(&scn_cur.n[i]);
	for (int i = scn_cur.sc->count - 1; i >= 1; i--) {
		struct scn_node *r = &scn_cur.n[i];

		if (r->s->kind == 'P' && r->pid > 0) {
			kill(r->pid, SIGKILL);
			while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
				;
			r->pid = 0;
		} else if (r->tid) {
			pthread_join(r->thread, NULL);
			r->tid = 0;
		}
	}
}

int scn_start(const struct scn_table *sc)
{
	int err;

	memset(&scn_cur, 0, sizeof(scn_cur));
	scn_cur.sc = sc;
	scn_cur.base_nice = getpriority(PRIO_PROCESS, 0);
	for (int i = 1; i < sc->count; i++) {
		scn_cur.n[i].s = &sc->n[i];
		scn_cur.n[i].idx = i;
		scn_cur.n[i].demand = sc->n[i].demand;
		scn_cur.n[i].nice = sc->n[i].kind == 'G' ? sc->n[i].nice : scn_cur.base_nice;
	}
	err = start_children(0);
	if (err)
		scn_stop();
	return err;
}

void scn_read(double *v)
{
	for (int i = 1; i < scn_cur.sc->count; i++) {
		struct scn_node *r = &scn_cur.n[i];

		v[i] = r->s->kind == 'P' ? scn_proc_cpu(r->pid) : scn_thread_cpu(r->tid);
	}
}

double scn_subtree(const double *v, int i)
{
	double s = v[i];

	for (int j = i + 1; j < scn_cur.sc->count; j++)
		if (scn_cur.sc->n[j].parent == i)
			s += scn_subtree(v, j);
	return s;
}

void scn_set_demand(int i, double d)
{
	scn_cur.n[i].demand = d;
	changed(&scn_cur.n[i]);
	for (int j = i + 1; j < scn_cur.sc->count; j++) {
		if (scn_cur.sc->n[j].parent == i && scn_cur.sc->n[j].kind == 'T') {
			scn_cur.n[j].demand = d;
			changed(&scn_cur.n[j]);
		}
	}
}

void scn_model(struct model *m, int *mi)
{
	const struct scn_table *sc = scn_cur.sc;
	double thread = rgroup_nice_to_weight(scn_cur.base_nice);

	model_init(m);
	mi[0] = model_add(m, -1, 1024, 0);
	for (int i = 1; i < sc->count; i++) {
		const struct scn_spec *s = &sc->n[i];
		double d = scn_cur.n[i].demand;

		if (s->kind == 'G') {
			mi[i] = model_add(m, mi[s->parent], rgroup_nice_to_weight(s->nice), 0);
			if (d > 0) /* the leader, a member of its own group */
				model_add(m, mi[i], thread, d);
		} else {
			mi[i] = model_add(m, mi[s->parent], thread, d);
		}
	}
}

int scn_compare(const double *v0, const double *v1, double seconds,
		    double cpus, struct scn_share *out, double *got_cpus)
{
	const struct scn_table *sc = scn_cur.sc;
	struct model m;
	int mi[SCN_MAX], n = 0;
	double total = 0;

	for (int i = 1; i < sc->count; i++)
		if (sc->n[i].parent == 0)
			total += scn_subtree(v1, i) - scn_subtree(v0, i);
	*got_cpus = total / seconds;
	if (total <= 0)
		return 0;
	scn_model(&m, mi);
	model_run(&m, *got_cpus < cpus ? *got_cpus : cpus);
	for (int i = 1; i < sc->count; i++) {
		const struct scn_spec *s = &sc->n[i];
		struct scn_share *o;

		if (s->kind != 'G' && s->parent != 0)
			continue;
		o = &out[n++];
		o->label = s->label;
		o->node = i;
		o->got = (scn_subtree(v1, i) - scn_subtree(v0, i)) / total;
		o->want = model_fraction(&m, mi[i]);
		o->err = o->want > 0 ? fabs(o->got - o->want) / o->want : fabs(o->got);
	}
	return n;
}

/* The compared entities of the running scenario: groups and top-level nodes */
int scn_measure(const struct scn_window *w, double *d, double *span,
		    int *kept, int *windows)
{
	const struct scn_table *sc = scn_cur.sc;
	double v0[SCN_MAX], v1[SCN_MAX], end = scn_now() + w->deadline, cpu = 0;
	int nk = 0, nw = 0;

	memset(d, 0, sizeof(double) * (size_t)sc->count);
	*span = 0;
	scn_read(v0);
	for (double t0 = scn_now(), t1; *span < w->seconds || cpu < w->min_cpu_s; t0 = t1) {
		double got = 0;

		if (scn_now() >= end)
			break;
		scn_sleep(w->window);
		scn_read(v1);
		t1 = scn_now();
		nw++;
		for (int i = 1; i < sc->count; i++)
			if (sc->n[i].parent == 0)
				got += scn_subtree(v1, i) - scn_subtree(v0, i);
		if (got >= w->min_cpus * (t1 - t0)) {
			for (int i = 1; i < sc->count; i++)
				d[i] += v1[i] - v0[i];
			*span += t1 - t0;
			cpu += got;
			nk++;
		}
		memcpy(v0, v1, sizeof(v0));
	}
	if (kept)
		*kept = nk;
	if (windows)
		*windows = nw;
	return *span >= w->seconds && cpu >= w->min_cpu_s ? 0 : -1;
}

int scn_run(const struct scn_table *sc, double warmup, double measure,
		double cpus, struct scn_share *out, double *got_cpus, int *err)
{
	const struct scn_window w = { .window = measure, .seconds = measure, .deadline = measure };
	double zero[SCN_MAX] = { 0 }, d[SCN_MAX], span;
	int n;

	if ((*err = scn_start(sc)))
		return -1;
	scn_sleep(warmup);
	scn_measure(&w, d, &span, NULL, NULL);
	scn_stop();
	n = scn_compare(zero, d, span, cpus, out, got_cpus);
	scn_wait_no_groups(5.0);
	return n;
}

/* ---- The kernel's view of a thread, and an idle group ------------------ */

/* Retried until the reading took less than 1 ms, so that a preemption of
 * the reader does not shift it from its time stamp. */
int scn_schedstat(pid_t tid, struct scn_schedstat *st)
{
	char file[64], buf[128];
	unsigned long long r = 0, w = 0, n = 0;
	int ok = 0;

	snprintf(file, sizeof(file), "/proc/self/task/%d/schedstat", (int)tid);
	for (int tries = 0; tries < 10; tries++) {
		double t0 = scn_now();

		ok = rgroup__read_path(file, buf, sizeof(buf)) >= 0 &&
		     sscanf(buf, "%llu %llu %llu", &r, &w, &n) == 3;
		st->at = scn_now();
		if (!ok || st->at - t0 < 0.001)
			break;
	}
	st->run = r / 1e9;
	st->wait = w / 1e9;
	st->runs = (double)n;
	return ok ? 0 : -1;
}

int scn_below(int j, int i)
{
	while (j > 0 && j != i)
		j = scn_cur.sc->n[j].parent;
	return j == i;
}

/*
 * Phases alternate in ABBA order, both busy and x asleep (flat groups:
 * x's own threads fall asleep), `settle` seconds to settle and `measure`
 * measured each. Per pair of phases:
 *   freed     x's CPU rate with both busy: what it leaves when it sleeps;
 *   withheld  with x asleep, the time y's busy threads were blocked
 *             (neither running nor waiting for a CPU: a spinning thread
 *             blocks only when the library pauses it), each at the CPU
 *             rate that thread got while not blocked;
 *   taken     1 - withheld / freed: the part of the freed CPU y used;
 *   lost      withheld / (y's CPU rate + withheld), x asleep: the part of
 *             the CPU y could have used that pauses took. Both terms come
 *             from the same phase, so it does not move with the outside
 *             load from phase to phase as freed does: 0 for a governor
 *             that gives y the idle x's share, 0.5 for one that keeps it
 *             for x (two equal groups).
 * Why not (y alone - y with x) / x from the CPU clocks: on a shared
 * machine what the process can get changes from phase to phase by more
 * than the figure itself (docs/BENCHMARKS.md, "Under load"),
 * also on the kernel backend, whose groups never pause; the blocked time
 * is the library's own doing, whatever the other load does. The clocks'
 * CPUs are kept beside it.
 */
void scn_idle(int x, int y, int pairs, double settle, double measure, double min_cpus,
	      double deadline, struct scn_idle_result *out)
{
	const struct scn_table *sc = scn_cur.sc;
	double v0[SCN_MAX], v1[SCN_MAX], end = scn_now() + deadline;
	struct scn_schedstat s0[SCN_MAX], s1[SCN_MAX];
	int p = 0;

	memset(out, 0, sizeof(*out));
	if (pairs > SCN_IDLE_MAX)
		pairs = SCN_IDLE_MAX;
	/* Pair p is measured into slot p and kept by moving on to p + 1. */
	while (p < pairs && (out->tried < pairs || scn_now() < end)) {
		int keep = 1;

		out->tried++;
		out->withheld[p] = 0;
		for (int h = 0; h < 2; h++) {
			int idle = (out->tried % 2 == 1) == (h == 1);
			double t0, dt, cx, cy;

			scn_set_demand(x, idle ? 0 : 1);
			scn_sleep(settle);
			for (int j = 1; j < sc->count; j++)
				scn_schedstat(scn_cur.n[j].tid, &s0[j]);
			scn_read(v0);
			t0 = scn_now();
			scn_sleep(measure);
			for (int j = 1; j < sc->count; j++)
				scn_schedstat(scn_cur.n[j].tid, &s1[j]);
			scn_read(v1);
			dt = scn_now() - t0;
			cx = (scn_subtree(v1, x) - scn_subtree(v0, x)) / dt;
			cy = (scn_subtree(v1, y) - scn_subtree(v0, y)) / dt;
			if (cx + cy < min_cpus)
				keep = 0;
			if (!idle) {
				out->freed[p] = cx;
				out->cpus_both[p] = cx + cy;
				continue;
			}
			out->cpus_idle[p] = cx + cy;
			out->lost[p] = cy;      /* the rate y got; made a ratio below */
			for (int j = 1; j < sc->count; j++) {
				double run, wait, span, blocked;

				if (!scn_below(j, y) || sc->n[j].kind == 'P')
					continue;
				run = s1[j].run - s0[j].run;
				wait = s1[j].wait - s0[j].wait;
				span = s1[j].at - s0[j].at;
				blocked = span - run - wait;
				if (blocked > 0)
					out->withheld[p] += blocked / span *
						(run + wait > 0 ? run / (run + wait) : 1);
			}
		}
		if (!keep)
			continue;
		out->taken[p] = out->freed[p] > 0 ? 1 - out->withheld[p] / out->freed[p] : NAN;
		out->lost[p] = out->lost[p] + out->withheld[p] > 0 ?
			out->withheld[p] / (out->lost[p] + out->withheld[p]) : NAN;
		out->n = ++p;
	}
	scn_set_demand(x, 1);
}
