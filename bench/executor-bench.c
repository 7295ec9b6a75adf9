/* SPDX-License-Identifier: MIT */
/*
 * executor-bench - what the executor (rgroup_exec_*) costs,
 * side by side in one run with a plain thread pool of the same size
 * written the obvious way: a mutex, a condition variable signalled at every
 * submission, a linked list of malloc'd tasks.
 *
 * usage: executor-bench [--blocks N] [--workers N] [--items N] [--samples N]
 *
 *   throughput   one thread submits --items items as fast as it can, then
 *                waits for all of them; items/s, for empty items and for
 *                items of about 2 us of CPU. Target: the executor within
 *                1.2x of the plain pool (ratio >= 0.833).
 *   latency      submit-to-start time of single items (the item reads the
 *                clock the submitter stamped): "sparse", one item every
 *                100 us on average (the workers sleep in between: the wake
 *                path), and "bursts" of 16 items every 2 ms (queueing too).
 *                p50 and p99 per block. Target: p99 no worse (ratio <= 1).
 *
 * Blocks of the two pools alternate in ABBA order and each figure is the
 * median of the per-block ratios (bench.h), so that the noise of this
 * shared machine falls on both. Both pools have --workers threads (default:
 * the CPUs), and the plain pool's threads live in one rgroup of their own,
 * as the executor's group's workers do: on a kernel backend an rgroup
 * weighs like one thread (rule 4), which changes how the CPU is shared
 * with the submitting thread, and the comparison is of the mechanism, not
 * of that. Runs on the backend RGROUP_BACKEND names, on a kernel backend in
 * a system group of its own (test/lib/sgroup.h). Prints a table and
 * "RGBENCH {json}" lines; never asserts on time. Exit 0, or 77 when the
 * backend cannot run here.
 */
#include <sched.h>

#include "bench.h"
#include "sgroup.h"

static int blocks = 15, nworkers, nitems = 50000, nsamples = 2000;
static unsigned long iters_2us;
static char sg[PATH_MAX];

/* ---- The plain pool --------------------------------------------------- */

struct ptask {
	void (*fn)(void *);
	void *arg;
	struct ptask *next;
};

static struct {
	pthread_mutex_t m;
	pthread_cond_t cv, idle;
	struct ptask *head, *tail;
	long pending;
	int stop, n, started;
	pthread_t th[256];
} pp = { .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
	 .idle = PTHREAD_COND_INITIALIZER };

static void *pp_worker(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&pp.m);
	for (;;) {
		while (!pp.head && !pp.stop)
			pthread_cond_wait(&pp.cv, &pp.m);
		if (!pp.head)
			break;
		struct ptask *t = pp.head;
		pp.head = t->next;
		if (!pp.head)
			pp.tail = NULL;
		pthread_mutex_unlock(&pp.m);
		t->fn(t->arg);
		free(t);
		pthread_mutex_lock(&pp.m);
		if (--pp.pending == 0)
			pthread_cond_broadcast(&pp.idle);
	}
	pthread_mutex_unlock(&pp.m);
	return NULL;
}

static int pp_submit(void (*fn)(void *), void *arg)
{
	struct ptask *t = malloc(sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->fn = fn;
	t->arg = arg;
	t->next = NULL;
	pthread_mutex_lock(&pp.m);
	if (pp.tail)
		pp.tail->next = t;
	else
		pp.head = t;
	pp.tail = t;
	pp.pending++;
	pthread_cond_signal(&pp.cv);
	pthread_mutex_unlock(&pp.m);
	return 0;
}

static void pp_wait(void)
{
	pthread_mutex_lock(&pp.m);
	while (pp.pending)
		pthread_cond_wait(&pp.idle, &pp.m);
	pthread_mutex_unlock(&pp.m);
}

/* The plain pool's first thread is born in a new rgroup and starts the
 * others there (flags 0), then serves like them. */
static void *pp_leader(void *unused)
{
	for (int i = 1; i < pp.n; i++)
		if (rgroup_thread_create(&pp.th[i], NULL, 0, pp_worker, NULL) == 0)
			__atomic_add_fetch(&pp.started, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&pp.started, 1, __ATOMIC_RELEASE);
	return pp_worker(unused);
}

static int pp_start(int n)
{
	int r;

	pp.n = n;
	r = rgroup_thread_create(&pp.th[0], NULL, RGROUP_NEW, pp_leader, NULL);
	while (!r && __atomic_load_n(&pp.started, __ATOMIC_ACQUIRE) < n)
		scn_sleep(0.001);
	return r;
}

static void pp_stop(void)
{
	pthread_mutex_lock(&pp.m);
	pp.stop = 1;
	pthread_cond_broadcast(&pp.cv);
	pthread_mutex_unlock(&pp.m);
	for (int i = pp.n - 1; i >= 0; i--)
		pthread_join(pp.th[i], NULL);
}

/* ---- The executor ----------------------------------------------------- */

static rgroup_exec_t xp;
static rgroup_exec_group_t xg;

static int x_submit(void (*fn)(void *), void *arg)
{
	return rgroup_exec_submit(xg, fn, arg);
}

static void x_wait(void)
{
	rgroup_exec_wait(xp, xg, -1);
}

struct impl {
	const char *name;
	int (*submit)(void (*)(void *), void *);
	void (*wait)(void);
};

static const struct impl impls[2] = {
	{ "executor", x_submit, x_wait },
	{ "pthread pool", pp_submit, pp_wait },
};

/* ---- Items ------------------------------------------------------------ */

static void empty_item(void *arg)
{
	(void)arg;
}

static void spin_item(void *arg)
{
	for (volatile unsigned long i = 0; i < (unsigned long)arg; i++)
		;
}

struct stamp {
	double submit, start;
};

static void stamp_item(void *arg)
{
	struct stamp *s = arg;

	s->start = bench_now();
}

/* ---- Figures ---------------------------------------------------------- */

/* Items per second of one block. */
static double throughput_block(const struct impl *im, void (*fn)(void *), void *arg)
{
	double t0 = bench_now();

	for (int i = 0; i < nitems; i++)
		if (im->submit(fn, arg) < 0) {
			fprintf(stderr, "%s: submit failed\n", im->name);
			exit(1);
		}
	im->wait();
	return nitems / (bench_now() - t0);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sleep until the CLOCK_MONOTONIC time t (s). */
static void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* One latency block: p50 and p99 of submit-to-start, in us. burst 1:
 * single items every `gap` s on average (uniform 0.2..1.8 gap); else
 * bursts of `burst` items every `gap` s. */
static void latency_block(const struct impl *im, int burst, double gap, struct stamp *st,
			  unsigned *seed, double *p50, double *p99)
{
	static double lat[100000];
	double next = bench_now() + gap;

	for (int i = 0; i < nsamples;) {
		sleep_until(next);
		for (int k = 0; k < burst && i < nsamples; k++, i++) {
			st[i].start = 0;
			st[i].submit = bench_now();
			im->submit(stamp_item, &st[i]);
		}
		next += burst == 1 ? gap * (0.2 + 1.6 * (rand_r(seed) % 1000) / 1000.0) : gap;
	}
	im->wait();
	for (int i = 0; i < nsamples; i++)
		lat[i] = (st[i].start - st[i].submit) * 1e6;
	qsort(lat, nsamples, sizeof(lat[0]), cmp_d);
	*p50 = lat[nsamples / 2];
	*p99 = lat[(int)(nsamples * 0.99)];
}

static void emit_ratio(const char *name, double *ratio, int n, const char *cmp, double target,
		       const char *extra)
{
	bench_emit("executor", name, "ratio", bench_stats(ratio, n), cmp, target, extra);
}

static void throughput(const char *what, void (*fn)(void *), void *arg)
{
	double r[64], v[2][64];
	char name[96], extra[256];

	for (int b = 0; b < blocks; b++) {
		int first = (b % 4 == 0 || b % 4 == 3) ? 0 : 1;
		for (int k = 0; k < 2; k++) {
			int i = k ? !first : first;
			v[i][b] = throughput_block(&impls[i], fn, arg);
		}
		r[b] = v[0][b] / v[1][b];
	}
	struct bench_stats sx = bench_stats(v[0], blocks), sp = bench_stats(v[1], blocks);
	snprintf(name, sizeof(name), "throughput %s: executor / pthread pool", what);
	snprintf(extra, sizeof(extra), "\"executor_items_per_s\":%.0f,\"pthread_items_per_s\":%.0f,"
		 "\"workers\":%d,\"items\":%d", sx.median, sp.median, nworkers, nitems);
	emit_ratio(name, r, blocks, "ge", 1 / 1.2, extra);
	printf("    items/s (median of %d blocks of %d): executor %.0f, pthread pool %.0f\n",
	       blocks, nitems, sx.median, sp.median);
}

static void latency(const char *what, int burst, double gap)
{
	static struct stamp st[100000];
	double r50[64], r99[64], v50[2][64], v99[2][64];
	char name[96], extra[320];
	unsigned seed = 1;

	for (int b = 0; b < blocks; b++) {
		int first = (b % 4 == 0 || b % 4 == 3) ? 0 : 1;
		for (int k = 0; k < 2; k++) {
			int i = k ? !first : first;
			latency_block(&impls[i], burst, gap, st, &seed, &v50[i][b], &v99[i][b]);
		}
		r50[b] = v50[0][b] / v50[1][b];
		r99[b] = v99[0][b] / v99[1][b];
	}
	struct bench_stats x50 = bench_stats(v50[0], blocks), p50 = bench_stats(v50[1], blocks);
	struct bench_stats x99 = bench_stats(v99[0], blocks), p99 = bench_stats(v99[1], blocks);
	snprintf(extra, sizeof(extra), "\"executor_p50_us\":%.2f,\"pthread_p50_us\":%.2f,"
		 "\"executor_p99_us\":%.2f,\"pthread_p99_us\":%.2f,\"samples\":%d",
		 x50.median, p50.median, x99.median, p99.median, nsamples);
	snprintf(name, sizeof(name), "latency %s p50: executor / pthread pool", what);
	emit_ratio(name, r50, blocks, "", 0, extra);
	snprintf(name, sizeof(name), "latency %s p99: executor / pthread pool", what);
	emit_ratio(name, r99, blocks, "le", 1.0, extra);
	printf("    us (median of %d blocks of %d items): p50 executor %.1f, pthread pool %.1f;"
	       " p99 executor %.1f, pthread pool %.1f\n", blocks, nsamples, x50.median,
	       p50.median, x99.median, p99.median);
}

static unsigned long calibrate_2us(void)
{
	double best = 1e9;
	const unsigned long n = 1000000;

	for (int i = 0; i < 5; i++) {
		double c0 = scn_thread_cpu(scn_gettid());
		spin_item((void *)n);
		double c = scn_thread_cpu(scn_gettid()) - c0;
		if (c > 0 && c < best)
			best = c;
	}
	return (unsigned long)(n * 2e-6 / best);
}

int main(int argc, char **argv)
{
	struct rgroup_exec_opts o = { .sz = sizeof(o) };
	struct rgroup_exec_group_opts go = { .sz = sizeof(go) };
	cpu_set_t cpus;
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
			blocks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
			nworkers = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--items") && i + 1 < argc)
			nitems = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			nsamples = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--blocks N] [--workers N] [--items N] [--samples N]\n",
				argv[0]);
			return 2;
		}
	}
	if (blocks < 1 || blocks > 64)
		blocks = 15;
	if (nsamples < 100 || nsamples > 100000)
		nsamples = 2000;
	if (nworkers <= 0)
		nworkers = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 2;
	if (nworkers > 256)
		nworkers = 256;
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	bench_backend = rgroup_backend();
	(void)bench_mode;
	iters_2us = calibrate_2us();
	printf("executor-bench: backend %s, %ld CPUs, %d workers per pool, %d blocks\n",
	       bench_backend, sysconf(_SC_NPROCESSORS_ONLN), nworkers, blocks);

	o.max_workers = (unsigned)nworkers;
	if ((r = rgroup_exec_create(&xp, &o)) < 0 || (r = rgroup_exec_group_create(xp, "bench", &go, &xg)) < 0) {
		fprintf(stderr, "executor: %s\n", strerror(-r));
		return 1;
	}
	if ((r = pp_start(nworkers)) != 0) {
		fprintf(stderr, "pthread pool: %s\n", strerror(r));
		return 1;
	}
	/* Warm-up: both pools' threads up, the executor's queue grown. */
	for (int i = 0; i < 2; i++)
		throughput_block(&impls[i], empty_item, NULL);

	bench_header("executor against a plain pthread pool (mutex + condvar)");
	throughput("empty items", empty_item, NULL);
	throughput("2 us items", spin_item, (void *)iters_2us);
	latency("sparse (1 item / 100 us)", 1, 100e-6);
	latency("bursts (16 items / 2 ms)", 16, 2e-3);

	pp_stop();
	rgroup_exec_destroy(xp, 0);
	return 0;
}
