/* SPDX-License-Identifier: MIT */
/* scenario.c - the scenario engine: tables, threads, readings, the model.
 * See scenario.h. */
#include <sys/prctl.h>
#include <sys/resource.h>

#include "scenario.h"
#include "judge.h"

struct rgt_scn_state rgt_scn;
static pthread_mutex_t what_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- Building the table ------------------------------------------------ */

int rgt_scn_add(struct rgt_scenario *s, int parent, char kind, int nice,
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

int rgt_scn_busy_group(struct rgt_scenario *s, int parent, int nice, int b,
		       const char *label)
{
	int g = rgt_scn_add(s, parent, 'G', nice, 1, label);

	for (int t = 1; t < b; t++)
		rgt_scn_add(s, g, 'T', 0, 1, "");
	return g;
}

/* Nice 6, 3, 0 are 272 : 526 : 1024 in the kernel's table (1 : 1.93 :
 * 3.76); the ideal comes from that table through the model, not from
 * 1:2:4. */
void rgt_scn_flat124(struct rgt_scenario *s, int b)
{
	*s = (struct rgt_scenario){ .name = "flat-1:2:4" };
	rgt_scn_busy_group(s, 0, 6, b, "w1");
	rgt_scn_busy_group(s, 0, 3, b, "w2");
	rgt_scn_busy_group(s, 0, 0, b, "w4");
}

void rgt_scn_nested_tree(struct rgt_scenario *s, int b)
{
	int a, a1;

	*s = (struct rgt_scenario){ .name = "nested-tree" };
	a = rgt_scn_add(s, 0, 'G', 0, 0, "A");
	a1 = rgt_scn_add(s, a, 'G', 2, 0, "A1(n2)");
	rgt_scn_busy_group(s, a1, 0, b, "A1a");
	rgt_scn_busy_group(s, a1, 4, b, "A1b(n4)");
	rgt_scn_busy_group(s, a, 5, b, "A2(n5)");
	rgt_scn_busy_group(s, 0, 3, b, "B(n3)");
}

void rgt_scn_vs_plain(struct rgt_scenario *s)
{
	*s = (struct rgt_scenario){ .name = "vs-plain-threads" };
	rgt_scn_add(s, 0, 'T', 0, 1, "plain1");
	rgt_scn_add(s, 0, 'T', 0, 1, "plain2");
	rgt_scn_busy_group(s, 0, 0, 4, "rgA");
	rgt_scn_busy_group(s, 0, 5, 2, "rgB(n5)");
}

void rgt_scn_article(struct rgt_scenario *s, char kind, int base)
{
	int procs = kind == 'P';

	*s = (struct rgt_scenario){ .name = "article-split" };
	rgt_scn_add(s, 0, kind, 0, 1, procs ? "process 1" : "thread 1");
	rgt_scn_add(s, 0, kind, 0, 1, procs ? "process 2" : "thread 2");
	rgt_scn_busy_group(s, 0, base, 4, "rgroup R");
}

void rgt_scn_nested_weights(struct rgt_scenario *s, int base)
{
	int a;

	*s = (struct rgt_scenario){ .name = "nested-weights" };
	a = rgt_scn_add(s, 0, 'G', base, 0, "rgroup A");
	rgt_scn_busy_group(s, a, 0, 2, "rgroup A1");
	rgt_scn_busy_group(s, a, 5, 2, "rgroup A2");
	rgt_scn_busy_group(s, 0, base + 3 > 19 ? 19 : base + 3, 2, "rgroup B");
}

/* ---- Running it ---------------------------------------------------------- */

/* Keep the first failure's description. */
static int failed(int err, const char *call, const struct rgt_snode *s)
{
	pthread_mutex_lock(&what_lock);
	if (!rgt_scn.what[0])
		snprintf(rgt_scn.what, sizeof(rgt_scn.what), "%s for %s", call,
			 s->label && *s->label ? s->label : "a thread");
	pthread_mutex_unlock(&what_lock);
	return err;
}

pid_t rgt_spinner(void)
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

/* Tell node r's thread that its demand, or rgt_scn.stop, has changed. */
static void changed(struct rgt_scn_node *r)
{
	__atomic_add_fetch(&r->changed, 1, __ATOMIC_RELEASE);
	rgt_word_wake(&r->changed);
}

/* Busy, asleep, or busy `demand` of each 10 ms (in CPU time, so that it
 * means the same when other load slows the spin down); the demand is read
 * on every round, so that it can change. Asleep is asleep until the demand
 * changes, not a poll: the model counts an idle thread as using no CPU,
 * and a poll's CPU, small on a fast machine, is a share of its own on a
 * slow one (a debug kernel under emulation), taken from the busy threads
 * whose split is measured. */
static void work(struct rgt_scn_node *r)
{
	const double period = 0.010;

	while (!rgt_scn.stop) {
		/* Read before the demand and stop: a change made after this
		 * reading bumps it, and the wait below returns at once. */
		int seen = __atomic_load_n(&r->changed, __ATOMIC_ACQUIRE);
		double d = r->demand;

		if (d >= 1) {
			for (volatile int i = 0; i < 100000; i++)
				;
		} else if (d <= 0) {
			if (!rgt_scn.stop)
				rgt_word_wait(&r->changed, seen, 0);
		} else {
			double c0 = rgt_thread_cpu(r->tid);

			while (rgt_thread_cpu(r->tid) - c0 < d * period)
				;
			rgt_sleep((1 - d) * period);
		}
	}
}

static void *node_thread(void *p);

/* Start the children of node g (0: the system group) from the calling
 * thread, which is g's leader, one after the other, each ready before the
 * next. 0 or an error number. */
static int start_children(int g)
{
	for (int i = 1; i < rgt_scn.sc->count; i++) {
		struct rgt_scn_node *r = &rgt_scn.n[i];
		int e;

		if (r->s->parent != g)
			continue;
		if (r->s->kind == 'P') {
			if ((r->pid = rgt_spinner()) < 0)
				return failed(errno, "fork", r->s);
			continue;
		}
		int plain = r->s->kind == 'T' && (g == 0 || rgt_scn.sc->plain_create);

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
			rgt_sleep(0.001);
		if (r->err)
			return r->err;
	}
	return 0;
}

/* A group's leader sets the group's nice value from the inside (PRIO_RGRP,
 * who = 0), reads it back and starts the group's members and subgroups. */
static void *node_thread(void *p)
{
	struct rgt_scn_node *r = p;

	r->tid = rgt_gettid();
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

void rgt_scn_stop(void)
{
	rgt_scn.stop = 1;
	for (int i = 1; i < rgt_scn.sc->count; i++)
		changed(&rgt_scn.n[i]);
	for (int i = rgt_scn.sc->count - 1; i >= 1; i--) {
		struct rgt_scn_node *r = &rgt_scn.n[i];

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

int rgt_scn_start(const struct rgt_scenario *sc)
{
	int err;

	memset(&rgt_scn, 0, sizeof(rgt_scn));
	rgt_scn.sc = sc;
	rgt_scn.base_nice = getpriority(PRIO_PROCESS, 0);
	for (int i = 1; i < sc->count; i++) {
		rgt_scn.n[i].s = &sc->n[i];
		rgt_scn.n[i].idx = i;
		rgt_scn.n[i].demand = sc->n[i].demand;
		rgt_scn.n[i].nice = sc->n[i].kind == 'G' ? sc->n[i].nice : rgt_scn.base_nice;
	}
	err = start_children(0);
	if (err)
		rgt_scn_stop();
	return err;
}

void rgt_scn_read(double *v)
{
	for (int i = 1; i < rgt_scn.sc->count; i++) {
		struct rgt_scn_node *r = &rgt_scn.n[i];

		v[i] = r->s->kind == 'P' ? rgt_proc_cpu(r->pid) : rgt_thread_cpu(r->tid);
	}
}

double rgt_scn_subtree(const double *v, int i)
{
	double s = v[i];

	for (int j = i + 1; j < rgt_scn.sc->count; j++)
		if (rgt_scn.sc->n[j].parent == i)
			s += rgt_scn_subtree(v, j);
	return s;
}

void rgt_scn_set_demand(int i, double d)
{
	rgt_scn.n[i].demand = d;
	changed(&rgt_scn.n[i]);
	for (int j = i + 1; j < rgt_scn.sc->count; j++) {
		if (rgt_scn.sc->n[j].parent == i && rgt_scn.sc->n[j].kind == 'T') {
			rgt_scn.n[j].demand = d;
			changed(&rgt_scn.n[j]);
		}
	}
}

void rgt_scn_model(struct model *m, int *mi)
{
	const struct rgt_scenario *sc = rgt_scn.sc;
	double thread = rgroup_nice_to_weight(rgt_scn.base_nice);

	model_init(m);
	mi[0] = model_add(m, -1, 1024, 0);
	for (int i = 1; i < sc->count; i++) {
		const struct rgt_snode *s = &sc->n[i];
		double d = rgt_scn.n[i].demand;

		if (s->kind == 'G') {
			mi[i] = model_add(m, mi[s->parent], rgroup_nice_to_weight(s->nice), 0);
			if (d > 0) /* the leader, a member of its own group */
				model_add(m, mi[i], thread, d);
		} else {
			mi[i] = model_add(m, mi[s->parent], thread, d);
		}
	}
}

int rgt_scn_compare(const double *v0, const double *v1, double seconds,
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
		struct rgt_share *o;

		if (s->kind != 'G' && s->parent != 0)
			continue;
		o = &out[n++];
		o->label = s->label;
		o->node = i;
		o->got = (rgt_scn_subtree(v1, i) - rgt_scn_subtree(v0, i)) / total;
		o->want = model_fraction(&m, mi[i]);
		o->err = o->want > 0 ? fabs(o->got - o->want) / o->want : fabs(o->got);
	}
	return n;
}

/* The compared entities of the running scenario: groups and top-level nodes */
struct scn_judge {
	int node[RGT_JUDGE_MAX];
	double cpus;
};

static int scn_judge_read(void *ctx, double *cpu, double *base)
{
	const struct rgt_scenario *sc = rgt_scn.sc;
	struct scn_judge *jc = ctx;
	double v[RGT_SCN_MAX];

	rgt_scn_read(v);
	*base = 0;
	for (int i = 1; i < sc->count; i++)
		if (sc->n[i].parent == 0)
			*base += rgt_scn_subtree(v, i);
	for (int k = 0; k < RGT_JUDGE_MAX && jc->node[k]; k++)
		cpu[k] = rgt_scn_subtree(v, jc->node[k]);
	return 0;
}

static void scn_judge_expect(void *ctx, double cpus, double *want)
{
	struct scn_judge *jc = ctx;
	struct model m;
	int mi[RGT_SCN_MAX];

	rgt_scn_model(&m, mi);
	model_run(&m, cpus < jc->cpus ? cpus : jc->cpus);
	for (int k = 0; k < RGT_JUDGE_MAX && jc->node[k]; k++)
		want[k] = model_fraction(&m, mi[jc->node[k]]);
}

int rgt_scn_judge(const char *what, double cpus, double min_cpus, double window_s,
		  double *got_cpus)
{
	const struct rgt_scenario *sc = rgt_scn.sc;
	struct scn_judge jc = { .cpus = cpus };
	struct rgt_judge j = {
		.what = what, .read = scn_judge_read, .expect = scn_judge_expect, .ctx = &jc,
		.min_cpus = min_cpus, .window_s = window_s,
	};

	for (int i = 1; i < sc->count && j.n < RGT_JUDGE_MAX; i++) {
		if (sc->n[i].kind != 'G' && sc->n[i].parent != 0)
			continue;
		jc.node[j.n] = i;
		j.label[j.n++] = sc->n[i].label;
	}
	return rgt_judge(&j, got_cpus);
}

int rgt_scn_measure(const struct rgt_window *w, double *d, double *span,
		    int *kept, int *windows)
{
	const struct rgt_scenario *sc = rgt_scn.sc;
	double v0[RGT_SCN_MAX], v1[RGT_SCN_MAX], end = rgt_now() + w->deadline, cpu = 0;
	int nk = 0, nw = 0;

	memset(d, 0, sizeof(double) * (size_t)sc->count);
	*span = 0;
	rgt_scn_read(v0);
	for (double t0 = rgt_now(), t1; *span < w->seconds || cpu < w->min_cpu_s; t0 = t1) {
		double got = 0;

		if (rgt_now() >= end)
			break;
		rgt_sleep(w->window);
		rgt_scn_read(v1);
		t1 = rgt_now();
		nw++;
		for (int i = 1; i < sc->count; i++)
			if (sc->n[i].parent == 0)
				got += rgt_scn_subtree(v1, i) - rgt_scn_subtree(v0, i);
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

int rgt_scn_run(const struct rgt_scenario *sc, double warmup, double measure,
		double cpus, struct rgt_share *out, double *got_cpus, int *err)
{
	const struct rgt_window w = { .window = measure, .seconds = measure, .deadline = measure };
	double zero[RGT_SCN_MAX] = { 0 }, d[RGT_SCN_MAX], span;
	int n;

	if ((*err = rgt_scn_start(sc)))
		return -1;
	rgt_sleep(warmup);
	rgt_scn_measure(&w, d, &span, NULL, NULL);
	rgt_scn_stop();
	n = rgt_scn_compare(zero, d, span, cpus, out, got_cpus);
	rgt_wait_no_groups(5.0);
	return n;
}

/* ---- The kernel's view of a thread, and an idle group ------------------ */

/* Retried until the reading took less than 1 ms, so that a preemption of
 * the reader does not shift it from its time stamp. */
int rgt_schedstat(pid_t tid, struct rgt_schedstat *st)
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

int rgt_scn_below(int j, int i)
{
	while (j > 0 && j != i)
		j = rgt_scn.sc->n[j].parent;
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
void rgt_scn_idle(int x, int y, int pairs, double settle, double measure,
		  struct rgt_idle *out)
{
	const struct rgt_scenario *sc = rgt_scn.sc;
	double v0[RGT_SCN_MAX], v1[RGT_SCN_MAX];
	struct rgt_schedstat s0[RGT_SCN_MAX], s1[RGT_SCN_MAX];

	memset(out, 0, sizeof(*out));
	for (int p = 0; p < pairs && p < RGT_IDLE_MAX; p++) {
		for (int h = 0; h < 2; h++) {
			int idle = (p % 2 == 0) == (h == 1);
			double t0, dt, cx, cy;

			rgt_scn_set_demand(x, idle ? 0 : 1);
			rgt_sleep(settle);
			for (int j = 1; j < sc->count; j++)
				rgt_schedstat(rgt_scn.n[j].tid, &s0[j]);
			rgt_scn_read(v0);
			t0 = rgt_now();
			rgt_sleep(measure);
			for (int j = 1; j < sc->count; j++)
				rgt_schedstat(rgt_scn.n[j].tid, &s1[j]);
			rgt_scn_read(v1);
			dt = rgt_now() - t0;
			cx = (rgt_scn_subtree(v1, x) - rgt_scn_subtree(v0, x)) / dt;
			cy = (rgt_scn_subtree(v1, y) - rgt_scn_subtree(v0, y)) / dt;
			if (!idle) {
				out->freed[p] = cx;
				out->cpus_both[p] = cx + cy;
				continue;
			}
			out->cpus_idle[p] = cx + cy;
			out->lost[p] = cy;      /* the rate y got; made a ratio below */
			for (int j = 1; j < sc->count; j++) {
				double run, wait, span, blocked;

				if (!rgt_scn_below(j, y) || sc->n[j].kind == 'P')
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
		out->taken[p] = out->freed[p] > 0 ? 1 - out->withheld[p] / out->freed[p] : NAN;
		out->lost[p] = out->lost[p] + out->withheld[p] > 0 ?
			out->withheld[p] / (out->lost[p] + out->withheld[p]) : NAN;
		out->n = p + 1;
	}
	rgt_scn_set_demand(x, 1);
}
