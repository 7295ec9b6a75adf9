/* SPDX-License-Identifier: MIT */
/*
 * rgroup-bench - the benchmark suite: creation cost, weight-change cost,
 * CPU-distribution accuracy against the reference model, and scale.
 *
 * usage: rgroup-bench [--only create,prio,accuracy,scale] [--blocks N]
 *                     [--measure SECS] [--scale-threads N] [--scale-groups G]
 *                     [--scale-depth D]
 *
 * Runs on the backend RGROUP_BACKEND names (cgroup1 here, cgroup2 in the
 * VM) inside a system group of its own (test/lib/sgroup.h), which it
 * removes at exit. Prints a table and "RGBENCH {json}" lines (bench.h);
 * scripts/bench.sh turns those into bench-results.json. Exit 0, or 77 when
 * the backend cannot run here (with the reason). Never asserts on time.
 */
#include <linux/futex.h>
#include <malloc.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <dirent.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "bench.h"
#include "model.h"
#include "sgroup.h"

static int blocks = 15;
static double measure_s = 2.0;
static int scale_threads = 10000, scale_groups = 1000, scale_depth = 16;
static char sg[PATH_MAX];

/* ---- Creation ---------------------------------------------------------- */

static void *nothing(void *arg)
{
	return arg;
}

enum { K_PTHREAD, K_NEW, K_SAME };

/* Per-op seconds of `ops` create+join of kind k from the calling thread. */
static double create_block(int k, int ops, int *err)
{
	pthread_t t;
	double t0 = bench_now();
	for (int i = 0; i < ops; i++) {
		int r = k == K_PTHREAD ? pthread_create(&t, NULL, nothing, NULL)
			: rgroup_thread_create(&t, NULL, k == K_NEW ? RGROUP_NEW : 0, nothing, NULL);
		if (r) {
			*err = r;
			return NAN;
		}
		pthread_join(t, NULL);
	}
	return (bench_now() - t0) / ops;
}

/* Destruction is deferred to the library's keeper thread: wait (untimed)
 * until it has removed the groups of the last block, so that its rmdir()s
 * do not land in the next block. Returns the seconds it took. */
static int settle_base; /* groups that stay: the caller's own */

static double settle(void)
{
	double t0 = bench_now();
	while (rgroup_list(NULL, 0) > settle_base && bench_now() - t0 < 10.0)
		rgt_sleep(0.002);
	return bench_now() - t0;
}

struct pair_result {
	double ratio[64], a_us[64], b_us[64], settle_ms[64];
	int n, err;
};

/* Interleaved A/B blocks (ABBA order), A = kind a, B = pthread_create. */
static void pair_run(int a, int ops, struct pair_result *pr)
{
	int nb = blocks > 64 ? 64 : blocks;
	memset(pr, 0, sizeof(*pr));
	create_block(a, 10, &pr->err); /* warm-up */
	create_block(K_PTHREAD, 10, &pr->err);
	settle();
	for (int i = 0; i < nb && !pr->err; i++) {
		double ta, tb, st = 0;
		if (i % 2 == 0) {
			ta = create_block(a, ops, &pr->err);
			st = settle();
			tb = create_block(K_PTHREAD, ops, &pr->err);
		} else {
			tb = create_block(K_PTHREAD, ops, &pr->err);
			ta = create_block(a, ops, &pr->err);
			st = settle();
		}
		pr->a_us[i] = ta * 1e6;
		pr->b_us[i] = tb * 1e6;
		pr->settle_ms[i] = st * 1e3 / ops * 1e3; /* us per group */
		pr->ratio[i] = ta / tb;
		pr->n = i + 1;
	}
}

static void emit_pair(const char *name, struct pair_result *pr, double target, int ops)
{
	char extra[512];
	if (pr->err) {
		printf("%-44s FAILED: %s\n", name, strerror(pr->err));
		printf("RGBENCH {\"backend\":\"%s\",\"section\":\"creation\",\"name\":\"%s\",\"error\":\"%s\"}\n",
		       bench_backend, name, strerror(pr->err));
		return;
	}
	struct bench_stats a = bench_stats(pr->a_us, pr->n), b = bench_stats(pr->b_us, pr->n);
	snprintf(extra, sizeof(extra),
		 "\"a_us_median\":%.3f,\"b_us_median\":%.3f,\"blocks\":%d,\"ops_per_block\":%d",
		 a.median, b.median, pr->n, ops);
	bench_emit("creation", name, "ratio", bench_stats(pr->ratio, pr->n), "le", target, extra);
	printf("%-44s %10.4g us vs pthread_create+join %.4g us (medians)\n", "", a.median, b.median);
}

struct inside_arg {
	int ops;
	struct pair_result pr;
};

static void *same_group_inside(void *p)
{
	struct inside_arg *ia = p;
	settle_base = 1;
	pair_run(K_SAME, ia->ops, &ia->pr);
	return NULL;
}

static void bench_create(void)
{
	static struct pair_result pr;
	static struct inside_arg ia;
	const int ops = 100;
	pthread_t t;

	bench_header("creation: create + join, per-op time ratio to pthread_create + join");
	pair_run(K_NEW, ops, &pr);
	emit_pair("RGROUP_NEW / pthread_create", &pr, 1.5, ops);
	pair_run(K_SAME, ops, &pr);
	emit_pair("same group, caller in sgroup / pthread", &pr, 1.05, ops);
	/* The same from a thread inside an rgroup: the library must track the
	 * new thread there (rule 1), which is the case that costs something. */
	ia.ops = ops;
	if (rgroup_thread_create(&t, NULL, RGROUP_NEW, same_group_inside, &ia) == 0) {
		pthread_join(t, NULL);
		emit_pair("same group, caller in rgroup / pthread", &ia.pr, 1.05, ops);
	}
	settle_base = 0;
	settle();
}

/* ---- Weight change ------------------------------------------------------ */

static volatile int idle_stop;
struct idle {
	pid_t tid;
	volatile int ready;
};

static void *idle_main(void *p)
{
	struct idle *w = p;
	w->tid = rgt_gettid();
	__atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
	while (!idle_stop)
		rgt_sleep(0.005);
	return NULL;
}

static void bench_prio(void)
{
	static double ratio[64], a_us[64], b_us[64];
	struct idle in = { 0 }, out = { 0 };
	pthread_t tin, tout;
	const int ops = 1000;
	int nb = blocks > 64 ? 64 : blocks, err = 0;
	char extra[256];

	bench_header("weight change: per-call time ratio to setpriority(PRIO_PROCESS, tid)");
	idle_stop = 0;
	if (rgroup_thread_create(&tin, NULL, RGROUP_NEW, idle_main, &in) ||
	    pthread_create(&tout, NULL, idle_main, &out)) {
		printf("cannot start the threads\n");
		return;
	}
	while (!in.ready || !out.ready)
		rgt_sleep(0.001);
	for (int i = 0; i < nb && !err; i++) {
		double ta = 0, tb = 0, t0;
		for (int half = 0; half < 2; half++) {
			int do_a = (i % 2 == 0) == (half == 0); /* ABBA */
			t0 = bench_now();
			for (int j = 0; j < ops; j++) {
				int r = do_a ? rgroup_setpriority(PRIO_RGRP, in.tid, 1 + (j & 1))
					: setpriority(PRIO_PROCESS, out.tid, 1 + (j & 1));
				if (r < 0)
					err = errno;
			}
			if (do_a)
				ta = (bench_now() - t0) / ops;
			else
				tb = (bench_now() - t0) / ops;
		}
		a_us[i] = ta * 1e6;
		b_us[i] = tb * 1e6;
		ratio[i] = ta / tb;
	}
	idle_stop = 1;
	pthread_join(tin, NULL);
	pthread_join(tout, NULL);
	if (err) {
		printf("PRIO_RGRP failed: %s\n", strerror(err));
		return;
	}
	struct bench_stats a = bench_stats(a_us, nb), b = bench_stats(b_us, nb);
	snprintf(extra, sizeof(extra), "\"a_us_median\":%.3f,\"b_us_median\":%.3f,\"blocks\":%d,\"ops_per_block\":%d",
		 a.median, b.median, nb, ops);
	bench_emit("weight", "PRIO_RGRP / setpriority(PRIO_PROCESS)", "ratio",
		   bench_stats(ratio, nb), "le", 1.5, extra);
	printf("%-44s %10.4g us vs setpriority %.4g us (medians)\n", "", a.median, b.median);
	settle();
}

/* ---- Accuracy ----------------------------------------------------------- */

/*
 * A scenario is a small tree below the system group (node 0, implicit):
 *   G  an rgroup at nice `nice`; its leader thread (created with
 *      RGROUP_NEW by the parent group's leader) has demand `demand`
 *      (0: sleeps) and creates the group's other members and subgroups;
 *   T  a thread in its parent group (plain thread when the parent is the
 *      system group), demand 1 = busy, 0 < d < 1 = busy d of each 10 ms;
 *   P  a single-threaded busy process in the system group (fork).
 * Compared with the model: every G, and every T or P directly in the
 * system group (the competitors).
 */
struct snode {
	int parent;      /* index in the scenario, 0 = the system group */
	char kind;       /* 'G', 'T', 'P' */
	int nice;
	double demand;
	const char *label;
};

#define MAXN 64

struct scenario {
	const char *name;
	struct snode n[MAXN]; /* n[0] unused (the system group) */
	int count;
};

struct run_node {
	const struct snode *s;
	int idx;
	pthread_t thread;
	pid_t tid, pid;
	volatile int ready;
	int err;
	double cpu0, cpu1;
};

static struct run_node rn[MAXN];
static int rn_count;
static volatile int acc_stop;

static void work(double demand)
{
	const double period = 0.010;
	while (!acc_stop) {
		if (demand >= 1) {
			for (volatile int i = 0; i < 100000; i++)
				;
		} else if (demand <= 0) {
			rgt_sleep(0.005);
		} else {
			/* demand of each period in CPU time, so that it means
			 * the same when other load slows the spin down */
			double c0 = rgt_thread_cpu(rgt_gettid());
			while (rgt_thread_cpu(rgt_gettid()) - c0 < demand * period)
				;
			rgt_sleep((1 - demand) * period);
		}
	}
}

static void *acc_thread(void *p);

/* Start the children of group index g (0: the system group) from the
 * calling thread, which is that group's leader. */
static int start_children(int g)
{
	for (int i = 1; i < rn_count; i++) {
		struct run_node *r = &rn[i];
		if (r->s->parent != g)
			continue;
		if (r->s->kind == 'P') {
			pid_t pid = fork();
			if (pid == 0) {
				for (volatile unsigned long x = 0;; x++)
					;
			}
			if (pid < 0)
				return errno;
			r->pid = pid;
			continue;
		}
		int e = g == 0 && r->s->kind == 'T'
			? pthread_create(&r->thread, NULL, acc_thread, r)
			: rgroup_thread_create(&r->thread, NULL, r->s->kind == 'G' ? RGROUP_NEW : 0,
					       acc_thread, r);
		if (e)
			return e;
		while (!__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE))
			rgt_sleep(0.001);
		if (r->err)
			return r->err;
	}
	return 0;
}

static void *acc_thread(void *p)
{
	struct run_node *r = p;
	r->tid = rgt_gettid();
	if (r->s->kind == 'G') {
		if (rgroup_setpriority(PRIO_RGRP, 0, r->s->nice) < 0)
			r->err = errno;
		else
			r->err = start_children(r->idx);
	}
	__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
	work(r->s->demand);
	return NULL;
}

static double node_cpu(struct run_node *r)
{
	if (r->s->kind == 'P') {
		clockid_t cid;
		struct timespec ts;
		if (clock_getcpuclockid(r->pid, &cid) || clock_gettime(cid, &ts))
			return 0;
		return ts.tv_sec + ts.tv_nsec / 1e9;
	}
	return rgt_thread_cpu(r->tid);
}

/* CPU seconds of node i and everything below it. */
static double subtree(int i, int second)
{
	double s = second ? rn[i].cpu1 : rn[i].cpu0;
	for (int j = i + 1; j < rn_count; j++)
		if (rn[j].s->parent == i)
			s += subtree(j, second);
	return s;
}

static void stop_all(void)
{
	acc_stop = 1;
	for (int i = rn_count - 1; i >= 1; i--) {
		if (rn[i].s->kind == 'P' && rn[i].pid > 0) {
			kill(rn[i].pid, SIGKILL);
			waitpid(rn[i].pid, NULL, 0);
		} else if (rn[i].tid) {
			pthread_join(rn[i].thread, NULL);
		}
	}
}

static int pin_one(cpu_set_t *all)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, all)) {
			CPU_SET(c, &one);
			break;
		}
	return sched_setaffinity(0, sizeof(one), &one);
}

/* Run one scenario; writes its worst and mean relative error. */
static int run_scenario(const struct scenario *sc, double cpus, const char *mode,
			double *worst, double *mean)
{
	struct model m;
	int mi[MAXN];
	int err;

	memset(rn, 0, sizeof(rn));
	rn_count = sc->count;
	acc_stop = 0;
	for (int i = 1; i < rn_count; i++) {
		rn[i].s = &sc->n[i];
		rn[i].idx = i;
	}
	err = start_children(0);
	if (err) {
		stop_all();
		printf("  %s: cannot set up: %s\n", sc->name, strerror(err));
		return -1;
	}
	rgt_sleep(0.5);
	for (int i = 1; i < rn_count; i++)
		rn[i].cpu0 = node_cpu(&rn[i]);
	rgt_sleep(measure_s);
	for (int i = 1; i < rn_count; i++)
		rn[i].cpu1 = node_cpu(&rn[i]);
	stop_all();

	model_init(&m);
	mi[0] = model_add(&m, -1, 1024, 0);
	for (int i = 1; i < rn_count; i++) {
		const struct snode *s = &sc->n[i];
		if (s->kind == 'G') {
			mi[i] = model_add(&m, mi[s->parent], rgroup_nice_to_weight(s->nice), 0);
			if (s->demand > 0) /* the leader, a member of its own group */
				model_add(&m, mi[i], 1024, s->demand);
		} else {
			mi[i] = model_add(&m, mi[s->parent], 1024, s->demand);
		}
	}
	double total = 0, sum = 0;
	int ncmp = 0;
	for (int i = 1; i < rn_count; i++)
		if (sc->n[i].parent == 0)
			total += subtree(i, 1) - subtree(i, 0);
	/* The machine is shared: the system group competes with other load
	 * for the CPUs, so the model gets the CPUs the group actually got
	 * (at most the nominal count), else an under-committed scenario on
	 * paper is an over-committed one in fact. */
	double eff = total / measure_s;
	model_run(&m, eff < cpus ? eff : cpus);
	*worst = 0;
	printf("  %-22s %-8s", sc->name, mode);
	for (int i = 1; i < rn_count; i++) {
		const struct snode *s = &sc->n[i];
		if (s->kind != 'G' && s->parent != 0)
			continue;
		double got = (subtree(i, 1) - subtree(i, 0)) / total;
		double want = model_fraction(&m, mi[i]);
		double e = want > 0 ? fabs(got - want) / want : fabs(got);
		printf(" %s %.3f/%.3f", s->label, got, want);
		if (e > *worst)
			*worst = e;
		sum += e;
		ncmp++;
	}
	*mean = sum / ncmp;
	printf("  (measured/ideal; sgroup got %.2f of %.0f CPUs)\n", eff, cpus);
	rgt_wait_no_groups(5.0);
	return 0;
}

/* Scenarios; `busy` is the number of busy threads per group that makes the
 * scenario over-committed on the CPUs available (each group has at least
 * as many busy threads as CPUs, so its demand never caps its share). */
static int make_scenarios(struct scenario *out, int ncpu, int pinned)
{
	int k = 0, b = pinned ? 1 : ncpu;
	struct scenario *s;
#define ADD(p, kd, ni, d, l) (s->n[s->count] = (struct snode){ p, kd, ni, d, l }, s->count++)

	/* Flat weights 1:2:4 (nice 6, 3, 0: weights 272, 526, 1024). */
	s = &out[k++];
	*s = (struct scenario){ .name = "flat-1:2:4", .count = 1 };
	{
		static const int nices[3] = { 6, 3, 0 };
		static const char *lab[3] = { "w1", "w2", "w4" };
		for (int g = 0; g < 3; g++) {
			int gi = s->count;
			ADD(0, 'G', nices[g], 1, lab[g]);
			for (int t = 1; t < b; t++)
				ADD(gi, 'T', 0, 1, "");
		}
	}

	/* Nesting three deep: A(0) > AB(nice 3) > ABC(0), each level busy,
	 * against a flat top-level B. */
	s = &out[k++];
	*s = (struct scenario){ .name = "nested-3-deep", .count = 1 };
	{
		int a = s->count;
		ADD(0, 'G', 0, 1, "A");
		int ab = s->count;
		ADD(a, 'G', 3, 1, "AB");
		int abc = s->count;
		ADD(ab, 'G', 0, 1, "ABC");
		for (int t = 1; t < b; t++)
			ADD(abc, 'T', 0, 1, "");
		int bb = s->count;
		ADD(0, 'G', 0, 1, "B");
		for (int t = 1; t < b; t++)
			ADD(bb, 'T', 0, 1, "");
	}

	/* The article's split: two single-threaded processes and one rgroup
	 * of four busy threads in one system group. */
	s = &out[k++];
	*s = (struct scenario){ .name = "article-split", .count = 1 };
	{
		ADD(0, 'P', 0, 1, "proc1");
		ADD(0, 'P', 0, 1, "proc2");
		int g = s->count;
		ADD(0, 'G', 0, 1, "rg4");
		for (int t = 1; t < 4; t++)
			ADD(g, 'T', 0, 1, "");
	}

	/* rgroups competing with plain threads of the sgroup. */
	s = &out[k++];
	*s = (struct scenario){ .name = "vs-plain-threads", .count = 1 };
	{
		ADD(0, 'T', 0, 1, "plain1");
		ADD(0, 'T', 0, 1, "plain2");
		int g = s->count;
		ADD(0, 'G', 0, 1, "rgA");
		for (int t = 1; t < 4; t++)
			ADD(g, 'T', 0, 1, "");
		g = s->count;
		ADD(0, 'G', 5, 1, "rgB(n5)");
		ADD(g, 'T', 0, 1, "");
	}

	/* Under-committed: the demands sum to 3/4 of the CPUs; everyone gets
	 * what it asks for, whatever its weight. */
	s = &out[k++];
	*s = (struct scenario){ .name = "under-committed", .count = 1 };
	if (pinned) {
		ADD(0, 'G', 10, 0.40, "rgA(n10)");
		ADD(0, 'G', 0, 0.35, "rgB");
	} else {
		ADD(0, 'G', 10, 1, "rgA(n10)");
		int g = s->count;
		ADD(0, 'G', 0, 0.25, "rgB");
		for (int t = 2; t < ncpu; t++)
			ADD(g, 'T', 0, 1, "");
	}

	/* Over-committed: many more busy threads than CPUs. */
	s = &out[k++];
	*s = (struct scenario){ .name = "over-committed", .count = 1 };
	{
		static const int nices[3] = { 0, 2, 4 };
		static const char *lab[3] = { "n0x8", "n2x8", "n4x8" };
		for (int g = 0; g < 3; g++) {
			int gi = s->count;
			ADD(0, 'G', nices[g], 1, lab[g]);
			for (int t = 1; t < 8 * b; t++)
				ADD(gi, 'T', 0, 1, "");
		}
		for (int t = 0; t < 4; t++)
			ADD(0, 'T', 0, 1, "plain");
	}
#undef ADD
	return k;
}

static void bench_accuracy(void)
{
	static struct scenario sc[8];
	cpu_set_t all;
	int ncpu;

	if (sched_getaffinity(0, sizeof(all), &all) < 0)
		return;
	ncpu = CPU_COUNT(&all);
	printf("\n== accuracy: share of the system group's CPU time, measured vs the model "
	       "(%.1f s per run) [backend %s] ==\n", measure_s, bench_backend);
	for (int pinned = 0; pinned < 2; pinned++) {
		char mode[32], name[96];
		double worst_all = 0, sum_mean = 0, w[8], mn[8];
		int n = make_scenarios(sc, ncpu, pinned), ok = 0;

		snprintf(mode, sizeof(mode), pinned ? "pinned-1cpu" : "all-%dcpu", ncpu);
		if (pinned && pin_one(&all) < 0) {
			printf("cannot pin to one CPU: %s\n", strerror(errno));
			return;
		}
		for (int i = 0; i < n; i++) {
			if (run_scenario(&sc[i], pinned ? 1 : ncpu, mode, &w[i], &mn[i]) < 0) {
				w[i] = mn[i] = NAN;
				continue;
			}
			ok++;
			if (w[i] > worst_all)
				worst_all = w[i];
			sum_mean += mn[i];
		}
		bench_header(pinned ? "accuracy, pinned to one CPU: relative error vs model (%)"
				    : "accuracy, all CPUs: relative error vs model (%)");
		bench_mode = mode;
		for (int i = 0; i < n; i++) {
			char extra[128];
			snprintf(extra, sizeof(extra), "\"mode\":\"%s\",\"mean_error_pct\":%.3f", mode, 100 * mn[i]);
			snprintf(name, sizeof(name), "%s %s worst (mean %.1f%%)", sc[i].name, mode, 100 * mn[i]);
			bench_emit1("accuracy", name, "%", 100 * w[i], "le", 5, extra);
		}
		snprintf(name, sizeof(name), "SUITE %s worst", mode);
		bench_emit1("accuracy", name, "%", 100 * worst_all, "le", 5, NULL);
		snprintf(name, sizeof(name), "SUITE %s mean", mode);
		bench_emit1("accuracy", name, "%", ok ? 100 * sum_mean / ok : NAN, "", 0, NULL);
	}
	sched_setaffinity(0, sizeof(all), &all);
}

/* ---- Scale -------------------------------------------------------------- */

static int sc_stop;          /* futex word: 1 = everybody exits */
static pthread_t *sc_threads;
static double *sc_stamp;
static char *sc_ok;          /* creation idx succeeded: join it */
static int sc_next, sc_groups_made, sc_err, sc_maxdepth;
static pthread_attr_t sc_attr;
static double sc_t0;

static void sc_wait_stop(void)
{
	while (!__atomic_load_n(&sc_stop, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &sc_stop, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static void *sc_member(void *p)
{
	sc_wait_stop();
	return NULL;
}

struct sc_leader {
	int depth;
	sem_t done;
};

static int sc_create(int flags, void *(*fn)(void *), void *arg)
{
	int idx = __atomic_fetch_add(&sc_next, 1, __ATOMIC_RELAXED);
	int r = rgroup_thread_create(&sc_threads[idx], &sc_attr, flags, fn, arg);
	sc_stamp[idx] = bench_now();
	sc_ok[idx] = r == 0;
	if (r && !sc_err)
		sc_err = r;
	return r;
}

static void *sc_leader_main(void *p)
{
	struct sc_leader *me = p;
	int per = scale_threads / scale_groups;

	if (me->depth > sc_maxdepth)
		sc_maxdepth = me->depth;
	for (int i = 1; i < per && !sc_err; i++)
		sc_create(0, sc_member, NULL);
	if (me->depth < scale_depth && sc_groups_made < scale_groups && !sc_err) {
		struct sc_leader kid = { .depth = me->depth + 1 };
		sem_init(&kid.done, 0, 0);
		sc_groups_made++;
		if (sc_create(RGROUP_NEW, sc_leader_main, &kid) == 0)
			while (sem_wait(&kid.done) < 0)
				;
	}
	sem_post(&me->done);
	sc_wait_stop();
	return NULL;
}

static double meminfo(const char *key)
{
	char buf[8192], *p;
	if (rgt_read("/proc/meminfo", buf, sizeof(buf)) < 0 || !(p = strstr(buf, key)))
		return NAN;
	return strtod(p + strlen(key) + 1, NULL) * 1024;
}

/* Creation rate around the k-th creation: over the `win` creations ending
 * there, cut in chunks of `chunk` (one rgroup's worth); the median chunk
 * and the spread, as creations per second. The first creation (the
 * library's first-use set-up) is left out. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static struct bench_stats rate_at(int k, int win, int chunk)
{
	double v[1024];
	int n = 0;
	if (k > sc_next)
		k = sc_next;
	for (int end = k - 1; end - chunk >= 0 && end > k - 1 - win && n < 1024; end -= chunk)
		v[n++] = chunk / (sc_stamp[end] - sc_stamp[end - chunk]);
	struct bench_stats s = bench_stats(v, n);
	/* The figure is the window's own rate (slow RGROUP_NEW creations
	 * included); the chunks give the spread. */
	if (k - 1 - win >= 0)
		s.median = win / (sc_stamp[k - 1] - sc_stamp[k - 1 - win]);
	return s;
}

static void bench_scale(void)
{
	char extra[256], name[96];
	const int win = 100;
	int n = scale_threads;

	printf("\n== scale: %d threads in %d rgroups, depth up to %d [backend %s] ==\n",
	       scale_threads, scale_groups, scale_depth, bench_backend);
	sc_threads = calloc(n + 16, sizeof(*sc_threads));
	sc_stamp = calloc(n + 16, sizeof(*sc_stamp));
	sc_ok = calloc(n + 16, 1);
	pthread_attr_init(&sc_attr);
	pthread_attr_setstacksize(&sc_attr, 64 * 1024);
	sc_stop = 0;
	sc_next = sc_groups_made = sc_err = sc_maxdepth = 0;

	struct rlimit nofile;
	getrlimit(RLIMIT_NOFILE, &nofile);
	printf("RLIMIT_NOFILE soft %llu hard %llu\n", (unsigned long long)nofile.rlim_cur,
	       (unsigned long long)nofile.rlim_max);
	int fds0 = count_fds();
	struct mallinfo2 mi0 = mallinfo2();
	double slab0 = meminfo("Slab:") + meminfo("Percpu:");
	sc_t0 = bench_now();
	while (sc_groups_made < scale_groups && !sc_err) {
		struct sc_leader top = { .depth = 1 };
		sem_init(&top.done, 0, 0);
		sc_groups_made++;
		if (sc_create(RGROUP_NEW, sc_leader_main, &top) == 0)
			while (sem_wait(&top.done) < 0)
				;
	}
	double t_created = bench_now();
	/* Order the stamps in time: a new leader starts creating before its
	 * creator has stamped its own creation. */
	qsort(sc_stamp, sc_next, sizeof(*sc_stamp), bench_cmp);
	struct mallinfo2 mi1 = mallinfo2();
	double slab1 = meminfo("Slab:") + meminfo("Percpu:");
	int groups = rgroup_list(NULL, 0);
	int fds1 = count_fds();

	printf("created %d threads in %d rgroups (library reports %d), max depth %d, %.2f s%s%s\n",
	       sc_next - (sc_err ? 1 : 0), sc_groups_made, groups, sc_maxdepth, t_created - sc_t0,
	       sc_err ? ", FAILED: " : "", sc_err ? strerror(sc_err) : "");

	/* Teardown: wake everybody, join, until the library has removed every
	 * group (its keeper rmdir()s them). */
	double td0 = bench_now();
	__atomic_store_n(&sc_stop, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &sc_stop, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	int made = sc_next;
	for (int i = 0; i < made; i++)
		if (sc_ok[i])
			pthread_join(sc_threads[i], NULL);
	double td_joined = bench_now();
	int left = rgt_wait_no_groups(120.0);
	double td1 = bench_now();

	bench_header("scale");
	snprintf(extra, sizeof(extra), "\"threads\":%d,\"rgroups\":%d,\"max_depth\":%d,\"error\":\"%s\"",
		 sc_next, sc_groups_made, sc_maxdepth, sc_err ? strerror(sc_err) : "");
	snprintf(name, sizeof(name), "failures creating %d threads/%d rgroups", scale_threads, scale_groups);
	bench_emit1("scale", name, "count", sc_err ? 1 : 0, "le", 0, extra);
	int chunk = scale_threads / scale_groups;
	struct bench_stats r100 = rate_at(win + 1, win, chunk), rmid = rate_at(n / 10, win, chunk),
		rend = rate_at(n, win, chunk);
	snprintf(name, sizeof(name), "creations/s at %d", win);
	bench_emit("scale", name, "threads/s", r100, "", 0, NULL);
	if (n / 10 > win) {
		snprintf(name, sizeof(name), "creations/s at %d", n / 10);
		bench_emit("scale", name, "threads/s", rmid, "", 0, NULL);
	}
	snprintf(name, sizeof(name), "creations/s at %d", n);
	bench_emit("scale", name, "threads/s", rend, "", 0, NULL);
	snprintf(name, sizeof(name), "throughput ratio at %d / at %d", n, win);
	bench_emit1("scale", name, "ratio", rend.median / r100.median, "ge", 0.5, NULL);
	snprintf(name, sizeof(name), "overall creations/s (%d)", sc_next);
	bench_emit1("scale", name, "threads/s", sc_next / (t_created - sc_t0), "", 0, NULL);
	bench_emit1("scale", "library heap per rgroup (B, incl. 10 thr)", "bytes",
		    ((double)mi1.uordblks - (double)mi0.uordblks) / sc_groups_made, "", 0,
		    "\"note\":\"mallinfo2 uordblks delta with M_ARENA_MAX=1, divided by rgroups; includes the library's per-thread records\"");
	bench_emit1("scale", "kernel slab+percpu per rgroup (B, approx)", "bytes",
		    (slab1 - slab0) / sc_groups_made, "", 0,
		    "\"note\":\"/proc/meminfo Slab+Percpu delta over creation divided by rgroups; machine-wide, so noisy; includes threads' task structs\"");
	snprintf(extra, sizeof(extra), "\"rlimit_nofile_soft\":%llu", (unsigned long long)nofile.rlim_cur);
	bench_emit1("scale", "descriptors per rgroup", "fds", groups > 0 ? (double)(fds1 - fds0) / groups : NAN,
		    "", 0, extra);
	bench_emit1("scale", "teardown: wake+join all threads (s)", "s", td_joined - td0, "", 0, NULL);
	bench_emit1("scale", "teardown: until every rgroup removed (s)", "s", td1 - td0, "", 0,
		    left ? "\"error\":\"groups left after 120 s\"" : NULL);
	free(sc_threads);
	free(sc_stamp);
	free(sc_ok);
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const char *only = "create,prio,accuracy,scale";

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* One malloc arena, so that mallinfo2() sees the library's memory
	 * whichever thread allocates it. */
	mallopt(M_ARENA_MAX, 1);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--only") && v)
			only = v, i++;
		else if (!strcmp(a, "--blocks") && v)
			blocks = atoi(v), i++;
		else if (!strcmp(a, "--measure") && v)
			measure_s = atof(v), i++;
		else if (!strcmp(a, "--scale-threads") && v)
			scale_threads = atoi(v), i++;
		else if (!strcmp(a, "--scale-groups") && v)
			scale_groups = atoi(v), i++;
		else if (!strcmp(a, "--scale-depth") && v)
			scale_depth = atoi(v), i++;
		else {
			fprintf(stderr, "usage: %s [--only create,prio,accuracy,scale] [--blocks N] "
				"[--measure SECS] [--scale-threads N] [--scale-groups G] [--scale-depth D]\n",
				argv[0]);
			return 2;
		}
	}
	if (blocks < 1 || scale_groups < 1 || scale_threads < scale_groups || scale_depth < 1) {
		fprintf(stderr, "bad sizes\n");
		return 2;
	}
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	bench_backend = rgroup_backend();
	struct utsname u;
	uname(&u);
	printf("rgroup-bench: backend %s, kernel %s, %ld CPUs online, system group %s\n",
	       bench_backend, u.release, sysconf(_SC_NPROCESSORS_ONLN), sg);
	if (strstr(only, "create"))
		bench_create();
	if (strstr(only, "prio"))
		bench_prio();
	if (strstr(only, "accuracy"))
		bench_accuracy();
	if (strstr(only, "scale"))
		bench_scale();
	return 0;
}
