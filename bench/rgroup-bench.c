/* SPDX-License-Identifier: MIT */
/*
 * rgroup-bench - the benchmark suite: creation cost, weight-change cost,
 * CPU-distribution accuracy against the reference model, the library's
 * own CPU, PRIO_RGRP latency, idle groups' CPU, and scale.
 *
 * usage: rgroup-bench [--only create,prio,accuracy,overhead,latency,many,idle,alone,scale]
 *                     [--blocks N] [--measure SECS] [--scale-threads N]
 *                     [--scale-groups G] [--scale-depth D]
 *
 * Runs on the backend RGROUP_BACKEND names (cgroup1 or governor here,
 * cgroup2 in the VM); on a kernel backend inside a system group of its own
 * (test/lib/sgroup.h), which it removes at exit. scripts/bench.sh runs it
 * once per backend and sets the figures side by side. Prints a table and
 * "RGBENCH {json}" lines (bench.h); scripts/bench.sh turns those into
 * bench-results.json. Exit 0, or 77 when the backend cannot run here (with
 * the reason). Never asserts on time.
 */
#include <dlfcn.h>
#include <linux/futex.h>
#include <malloc.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <dirent.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"
#include "model.h"
#include "scenario.h"
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

/* The baseline is libc's pthread_create(): the program's own resolves to
 * librgroup's, which inside an rgroup is rgroup_thread_create(0). */
typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static create_fn *libc_pthread_create(void)
{
	static create_fn *fn;

	if (!fn) {
#ifndef BENCH_STATIC_LINK
		void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
		fn = h ? (create_fn *)dlsym(h, "pthread_create") : NULL;
#endif
		if (!fn)
			fn = pthread_create;   /* a static link's is libc's */
	}
	return fn;
}

/* Per-op seconds of `ops` create+join of kind k from the calling thread. */
static double create_block(int k, int ops, int *err)
{
	pthread_t t;
	double t0 = bench_now();
	for (int i = 0; i < ops; i++) {
		int r = k == K_PTHREAD ? libc_pthread_create()(&t, NULL, nothing, NULL)
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
		scn_sleep(0.002);
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
	w->tid = scn_gettid();
	__atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
	while (!idle_stop)
		scn_sleep(0.005);
	return NULL;
}

/* One call of a weight change, j its index: values 1 and 2 alternate. */
typedef int (*prio_op)(pid_t tid, int j);

static int op_rgrp(pid_t tid, int j)
{
	return rgroup_setpriority(PRIO_RGRP, (id_t)tid, 1 + (j & 1));
}

static int op_process(pid_t tid, int j)
{
	return setpriority(PRIO_PROCESS, (id_t)tid, 1 + (j & 1));
}

/* The kernel's own PRIO_RGRP on the native backend: the system call
 * without the library (the floor there). */
static int op_kernel_rgrp(pid_t tid, int j)
{
	return setpriority(PRIO_RGRP, (id_t)tid, 1 + (j & 1));
}

/* The kernel's floor under PRIO_RGRP on a cgroup backend: the same two
 * values written straight to the group's weight file, as the library
 * writes them (one pwrite system call on a descriptor kept open). */
static int floor_fd = -1;
static char floor_val[2][16];

static int op_floor(pid_t tid, int j)
{
	const char *v = floor_val[(j & 1) ^ 1];
	return syscall(SYS_pwrite64, floor_fd, v, strlen(v), 0) < 0 ? -1 : 0;
}

/* A against B (b_name: setpriority, or the kernel's own weight write),
 * `ops` calls per block in ABBA order, as one figure; NAN-free unless a
 * call failed (then it says so). */
static void prio_pair_vs(const char *name, prio_op a, pid_t ta, prio_op b, pid_t tb,
			 const char *b_name, double target)
{
	static double ratio[64], a_us[64], b_us[64];
	const int ops = 1000;
	int nb = blocks > 64 ? 64 : blocks, err = 0;
	char extra[256];

	for (int i = 0; i < nb && !err; i++) {
		double ta_s = 0, tb_s = 0, t0;
		for (int half = 0; half < 2; half++) {
			int do_a = (i % 2 == 0) == (half == 0); /* ABBA */
			t0 = bench_now();
			for (int j = 0; j < ops; j++) {
				int r = do_a ? a(ta, j) : b(tb, j);
				if (r < 0)
					err = errno;
			}
			if (do_a)
				ta_s = (bench_now() - t0) / ops;
			else
				tb_s = (bench_now() - t0) / ops;
		}
		a_us[i] = ta_s * 1e6;
		b_us[i] = tb_s * 1e6;
		ratio[i] = ta_s / tb_s;
	}
	if (err) {
		printf("%-44s FAILED: %s\n", name, strerror(err));
		return;
	}
	struct bench_stats as = bench_stats(a_us, nb), bs = bench_stats(b_us, nb);
	snprintf(extra, sizeof(extra), "\"a_us_median\":%.3f,\"b_us_median\":%.3f,\"blocks\":%d,\"ops_per_block\":%d",
		 as.median, bs.median, nb, ops);
	bench_emit("weight", name, "ratio", bench_stats(ratio, nb), target > 0 ? "le" : "", target, extra);
	printf("%-44s %10.4g us vs %s %.4g us (medians)\n", "", as.median, b_name, bs.median);
}

static void prio_pair(const char *name, prio_op a, pid_t ta, pid_t tb, double target)
{
	prio_pair_vs(name, a, ta, op_process, tb, "setpriority", target);
}

/* Open the weight file of thread tid's group, with the two values the
 * library writes for nice 1 and 2; -1 on the governor (no file). */
static int floor_open(pid_t tid)
{
	char cg[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 32];
	int v2 = !strcmp(bench_backend, "cgroup2");

	if (strcmp(bench_backend, "cgroup1") && !v2)
		return -1;
	if (scn_thread_cgroup(tid, cg, sizeof(cg)) < 0)
		return -1;
	scn_cg_dir(cg, dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s/%s", dir, v2 ? "cpu.weight.nice" : "cpu.shares");
	for (int k = 0; k < 2; k++)
		if (v2)
			snprintf(floor_val[k], sizeof(floor_val[k]), "%d", 1 + k);
		else
			snprintf(floor_val[k], sizeof(floor_val[k]), "%u", rgroup_nice_to_weight(1 + k));
	return open(file, O_WRONLY | O_CLOEXEC);
}

/* Rgroups kept alive for the scale figure: one sleeping thread each. */
static int prio_hold;

static void *prio_holder(void *p)
{
	while (!__atomic_load_n(&prio_hold, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &prio_hold, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

static void bench_prio(void)
{
	enum { MORE = 999 };
	static pthread_t more[MORE];
	struct idle in = { 0 }, out = { 0 };
	pthread_t tin, tout;
	pthread_attr_t attr;
	int nmore = 0;

	bench_header("weight change: per-call time ratio to setpriority(PRIO_PROCESS, tid)");
	idle_stop = 0;
	if (rgroup_thread_create(&tin, NULL, RGROUP_NEW, idle_main, &in) ||
	    pthread_create(&tout, NULL, idle_main, &out)) {
		printf("cannot start the threads\n");
		return;
	}
	while (!in.ready || !out.ready)
		scn_sleep(0.001);
	/* A manager thread (in no rgroup) re-weights a worker's top-level
	 * group: the common case. One rgroup alive. */
	prio_pair("PRIO_RGRP / setpriority(PRIO_PROCESS)", op_rgrp, in.tid, out.tid, 1.5);
	floor_fd = floor_open(in.tid);
	if (floor_fd >= 0) {
		/* Not a target: what the kernel's own write costs, which no
		 * cgroup backend can go below. */
		prio_pair("cgroupfs weight write / setpriority", op_floor, in.tid, out.tid, 0);
		/* The library against that floor, side by side: its cost above
		 * the kernel's own write. */
		prio_pair_vs("PRIO_RGRP / cgroupfs weight write", op_rgrp, in.tid, op_floor, in.tid,
			     "the weight write", 1.25);
		close(floor_fd);
		floor_fd = -1;
	}
	if (!strcmp(bench_backend, "native"))
		prio_pair("kernel PRIO_RGRP (no library) / setpriority", op_kernel_rgrp, in.tid, out.tid, 0);
	/* The same with 1,000 rgroups alive: the lookup must not walk them. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	prio_hold = 0;
	while (nmore < MORE && rgroup_thread_create(&more[nmore], &attr, RGROUP_NEW, prio_holder, NULL) == 0)
		nmore++;
	pthread_attr_destroy(&attr);
	if (nmore == MORE)
		prio_pair("PRIO_RGRP / setpriority, 1000 rgroups alive", op_rgrp, in.tid, out.tid, 1.5);
	else
		printf("%-44s FAILED: made only %d of %d rgroups\n", "PRIO_RGRP, 1000 rgroups alive", nmore + 1, MORE + 1);
	__atomic_store_n(&prio_hold, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &prio_hold, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	for (int i = 0; i < nmore; i++)
		pthread_join(more[i], NULL);
	idle_stop = 1;
	pthread_join(tin, NULL);
	pthread_join(tout, NULL);
	settle();
}

/* ---- Accuracy ----------------------------------------------------------- */

/*
 * Scenarios are tables run by test/lib/scenario.h, the engine the system
 * test test-gov-share.c asserts with. The in-process ones (flat-1:2:4,
 * nested-3-deep, nested-tree, vs-plain-threads) divide the process's own
 * threads: they also give the "in-process worst" figure, with the
 * governor's accuracy target.
 */
#define ACC_MAX 8

/* Returns the worst relative error, and the mean in *mean; NAN when the
 * scenario could not be set up. */
static double run_scenario(const struct scn_table *sc, double cpus, const char *mode,
			   double *mean)
{
	struct scn_share sh[SCN_MAX];
	double got, worst = 0, sum = 0;
	int err, n = scn_run(sc, 0.5, measure_s, cpus, sh, &got, &err);

	if (n < 0) {
		printf("  %s: cannot set up: %s\n", sc->name, strerror(err));
		return *mean = NAN;
	}
	printf("  %-22s %-8s", sc->name, mode);
	for (int i = 0; i < n; i++) {
		printf(" %s %.3f/%.3f", sh[i].label, sh[i].got, sh[i].want);
		if (sh[i].err > worst)
			worst = sh[i].err;
		sum += sh[i].err;
	}
	printf("  (measured/ideal; got %.2f of %.0f CPUs)\n", got, cpus);
	*mean = n ? sum / n : NAN;
	return n ? worst : NAN;
}

/* Is this scenario one of the process's own threads only? */
static int in_process(const struct scn_table *sc)
{
	return strcmp(sc->name, "article-split") && strcmp(sc->name, "under-committed") &&
	       strcmp(sc->name, "over-committed");
}

/* Scenarios; b is the number of busy threads per group that makes the
 * scenario over-committed on the CPUs available (each group has at least
 * as many busy threads as CPUs, so its demand never caps its share). */
static int make_scenarios(struct scn_table *out, int ncpu, int pinned)
{
	int k = 0, b = pinned ? 1 : ncpu;
	struct scn_table *s;

	scn_flat124(&out[k++], b);

	/* Nesting three deep in a chain: A(0) > AB(nice 3) > ABC(0), each
	 * level busy, against a flat top-level B. */
	s = &out[k++];
	*s = (struct scn_table){ .name = "nested-3-deep" };
	{
		int a = scn_add(s, 0, 'G', 0, 1, "A");
		int ab = scn_add(s, a, 'G', 3, 1, "AB");
		scn_busy_group(s, ab, 0, b, "ABC");
		scn_busy_group(s, 0, 0, b, "B");
	}

	scn_nested_tree(&out[k++], b);

	/* The article's split: two single-threaded processes and one rgroup
	 * of four busy threads in one system group. Rule 4 across processes:
	 * the kernel's alone, a governor cannot make it. */
	if (strcmp(bench_backend, "governor")) {
		s = &out[k++];
		*s = (struct scn_table){ .name = "article-split" };
		scn_add(s, 0, 'P', 0, 1, "proc1");
		scn_add(s, 0, 'P', 0, 1, "proc2");
		scn_busy_group(s, 0, 0, 4, "rg4");
	}

	scn_vs_plain(&out[k++]);

	/* Under-committed: the demands sum to 3/4 of the CPUs; everyone gets
	 * what it asks for, whatever its weight. */
	s = &out[k++];
	*s = (struct scn_table){ .name = "under-committed" };
	if (pinned) {
		scn_add(s, 0, 'G', 10, 0.40, "rgA(n10)");
		scn_add(s, 0, 'G', 0, 0.35, "rgB");
	} else {
		scn_add(s, 0, 'G', 10, 1, "rgA(n10)");
		int g = scn_add(s, 0, 'G', 0, 0.25, "rgB");
		for (int t = 2; t < ncpu; t++)
			scn_add(s, g, 'T', 0, 1, "");
	}

	/* Over-committed: many more busy threads than CPUs. */
	s = &out[k++];
	*s = (struct scn_table){ .name = "over-committed" };
	scn_busy_group(s, 0, 0, 8 * b, "n0x8");
	scn_busy_group(s, 0, 2, 8 * b, "n2x8");
	scn_busy_group(s, 0, 4, 8 * b, "n4x8");
	for (int t = 0; t < 4; t++)
		scn_add(s, 0, 'T', 0, 1, "plain");
	return k;
}

static void bench_accuracy(void)
{
	static struct scn_table sc[ACC_MAX];
	cpu_set_t all;
	int ncpu;

	if (sched_getaffinity(0, sizeof(all), &all) < 0)
		return;
	ncpu = CPU_COUNT(&all);
	printf("\n== accuracy: share of the CPU time the scenario got, measured vs the model "
	       "(%.1f s per run) [backend %s] ==\n", measure_s, bench_backend);
	if (!strcmp(bench_backend, "governor"))
		printf("  (article-split left out: rule 4 across processes needs the kernel)\n");
	for (int pinned = 0; pinned < 2; pinned++) {
		char mode[32], name[96];
		double worst_all = 0, worst_in = 0, sum_mean = 0, w[ACC_MAX], mn[ACC_MAX];
		int n = make_scenarios(sc, ncpu, pinned), ok = 0;

		snprintf(mode, sizeof(mode), pinned ? "pinned-1cpu" : "all-%dcpu", ncpu);
		if (pinned && scn_pin_one_cpu(NULL) < 0) {
			printf("cannot pin to one CPU: %s\n", strerror(errno));
			return;
		}
		for (int i = 0; i < n; i++) {
			w[i] = run_scenario(&sc[i], pinned ? 1 : ncpu, mode, &mn[i]);
			if (isnan(w[i]))
				continue;
			ok++;
			if (w[i] > worst_all)
				worst_all = w[i];
			if (in_process(&sc[i]) && w[i] > worst_in)
				worst_in = w[i];
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
		/* The governor's accuracy figure: the process's own threads only. */
		snprintf(name, sizeof(name), "in-process %s worst", mode);
		bench_emit1("accuracy", name, "%", 100 * worst_in, "le", 10,
			    "\"scenarios\":\"flat-1:2:4, nested-3-deep, nested-tree, vs-plain-threads\"");
	}
	sched_setaffinity(0, sizeof(all), &all);
}

/* ---- Overhead, PRIO_RGRP latency, idle groups --------------------------- */

/*
 * The governor's figures, measured the same way on every
 * backend so that they stand side by side: what the library's own threads
 * cost, how soon a weight change shows in the split, and whether a group
 * that falls idle leaves its CPU to the others.
 */

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * The library's threads in this process, into out[] (at most max): the
 * governor, by its name "rgroup-governor" (*named = 1); when no thread has
 * that name (a governor that does not name itself yet, or a kernel
 * backend), every thread that is not one of ours[] (sorted): the governor
 * and the library's keeper (*named = 0).
 */
static int library_threads(const pid_t *ours, int nours, pid_t *out, int max, int *named)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0, nn = 0;
	pid_t self = getpid();

	*named = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char file[64], comm[32];
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || tid == self)
			continue;
		snprintf(file, sizeof(file), "/proc/self/task/%d/comm", (int)tid);
		if (rgt_read(file, comm, sizeof(comm)) < 0)
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		if (!strcmp(comm, "rgroup-governor")) {
			if (!*named)
				n = 0; /* a named governor: only it counts */
			*named = 1;
			out[n++] = tid;
			nn++;
		} else if (!*named && !bsearch(&tid, ours, nours, sizeof(*ours), cmp_pid)) {
			out[n++] = tid;
		}
	}
	closedir(d);
	return *named ? nn : n;
}

/* Busy threads of the overhead figure: all created asleep (on a futex,
 * so that creating a thousand is not slowed by a thousand spinning), then
 * woken together. A leader is made with RGROUP_NEW and makes its group's
 * other nine. */
struct ov_thread {
	pthread_t thread;
	pid_t tid;
	int err;
};

static int ov_go, ov_stop; /* futex word; flag */

static void *ov_member(void *p)
{
	struct ov_thread *w = p;
	__atomic_store_n(&w->tid, scn_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ov_go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &ov_go, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	while (!__atomic_load_n(&ov_stop, __ATOMIC_RELAXED))
		for (volatile int i = 0; i < 100000; i++)
			;
	return NULL;
}

static void *ov_leader(void *p)
{
	struct ov_thread *w = p;
	for (int k = 1; k < 10; k++)
		if ((w[k].err = rgroup_thread_create(&w[k].thread, NULL, 0, ov_member, &w[k])))
			w->err = w[k].err;
	return ov_member(w);
}

/* A reading of the library's threads and of the process. */
struct ov_reading {
	double lib_cpu;      /* s, the library's threads */
	double lib_wait;     /* s they waited for a CPU ... */
	double lib_runs;     /* ... over this many runs */
	double proc_cpu;     /* s, the whole process */
	double at;           /* when */
};

/* Read it all within 1 ms if a few tries allow (with a thousand busy
 * threads this thread runs rarely: a preemption amid the reading would
 * put it far from its time stamp). */
static void ov_read(const pid_t *lib, int nlib, struct ov_reading *r)
{
	for (int tries = 0; tries < 10; tries++) {
		struct timespec ts;
		struct scn_schedstat st;
		double a = bench_now();

		memset(r, 0, sizeof(*r));
		for (int i = 0; i < nlib; i++) {
			r->lib_cpu += scn_thread_cpu(lib[i]);
			if (scn_schedstat(lib[i], &st) == 0) {
				r->lib_wait += st.wait;
				r->lib_runs += st.runs;
			}
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		r->proc_cpu = ts.tv_sec + ts.tv_nsec / 1e9;
		r->at = bench_now();
		if (r->at - a < 0.001)
			break;
	}
}

/* Library CPU with n busy threads in n/10 rgroups of 10, as % of one CPU. */
static void overhead_run(int n, double target)
{
	struct ov_thread *w = calloc(n, sizeof(*w));
	pid_t *ours = calloc(n + 1, sizeof(*ours)), lib[64];
	struct ov_reading r0, r1;
	int ng = n / 10, started = 0, named = 0, nlib, no = 0, err = 0;
	char name[96], extra[256];

	ov_go = ov_stop = 0;
	for (int g = 0; g < ng && w && ours; g++) {
		if ((err = rgroup_thread_create(&w[g * 10].thread, NULL, RGROUP_NEW, ov_leader, &w[g * 10])))
			break;
		started++;
	}
	/* Every thread has started (and every creation is done) once every
	 * tid is there. */
	for (int i = 0; i < started * 10 && !err; i++) {
		while (!__atomic_load_n(&w[i].tid, __ATOMIC_ACQUIRE) && !w[i - i % 10].err)
			scn_sleep(0.001);
		err = w[i - i % 10].err;
	}
	__atomic_store_n(&ov_go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ov_go, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	if (err || started < ng) {
		printf("%-44s FAILED: %d of %d rgroups: %s\n", "library CPU", started, ng, strerror(err));
		goto out;
	}
	ours[no++] = scn_gettid();
	for (int i = 0; i < n; i++)
		ours[no++] = w[i].tid;
	qsort(ours, no, sizeof(*ours), cmp_pid);
	scn_sleep(1.0);
	nlib = library_threads(ours, no, lib, 64, &named);
	ov_read(lib, nlib, &r0);
	scn_sleep(measure_s);
	ov_read(lib, nlib, &r1);
	double dt = r1.at - r0.at, runs = r1.lib_runs - r0.lib_runs;
	/* The library's threads compete with the busy ones for the CPUs:
	 * their mean wait from wake-up to running says whether the figure
	 * is what the library wanted or what the kernel let it have. */
	double delay = runs > 0 ? (r1.lib_wait - r0.lib_wait) / runs : 0;
	snprintf(name, sizeof(name), "library CPU, %d busy threads (%% of 1 CPU)", n);
	snprintf(extra, sizeof(extra), "\"threads_measured\":\"%s\",\"library_threads\":%d,"
		 "\"process_cpus\":%.3f,\"library_mean_wait_ms\":%.3f,\"rgroups\":%d",
		 named ? "rgroup-governor" : "unnamed: every thread not the benchmark's", nlib,
		 (r1.proc_cpu - r0.proc_cpu) / dt, 1e3 * delay, ng);
	bench_emit1("overhead", name, "%", 100 * (r1.lib_cpu - r0.lib_cpu) / dt, "le", target, extra);
	printf("%-44s %d library thread(s) (%s), %.2f ms mean wait for a CPU; the process got"
	       " %.2f CPUs\n", "", nlib, named ? "rgroup-governor" : "unnamed: all not the benchmark's",
	       1e3 * delay, (r1.proc_cpu - r0.proc_cpu) / dt);
out:
	__atomic_store_n(&ov_stop, 1, __ATOMIC_RELAXED);
	for (int g = 0; g < started; g++) {
		/* The leader first: once it is gone, each of its creations has
		 * either a thread or an error. */
		pthread_join(w[g * 10].thread, NULL);
		for (int k = 1; k < 10; k++)
			if (!w[g * 10 + k].err)
				pthread_join(w[g * 10 + k].thread, NULL);
	}
	free(w);
	free(ours);
	scn_wait_no_groups(10.0);
}

static void bench_overhead(void)
{
	bench_header("overhead: CPU of the library's own threads over wall time, all CPUs");
	overhead_run(100, 1);
	overhead_run(1000, 3);
}

#define LAT_WINDOW 0.020   /* s: the share is judged in windows this long */
#define LAT_SAMPLE 0.002   /* s between readings */
#define LAT_WATCH  0.600   /* s watched after each change */
#define LAT_MAXS   1024

/* B's share of the CPU time A and B got in a window is within 10%. */
static int lat_ok(double da, double db, double want)
{
	return da + db > 0 && fabs(db / (da + db) - want) <= 0.10 * want;
}

/*
 * PRIO_RGRP latency, pinned to one CPU (two groups of one busy thread
 * each, so the split is the scheduler's or the governor's alone): group B
 * goes from nice 0 to 6 and back (ideal share 0.5 and 0.21). Latency: from
 * the call to the start of the first 20 ms window in which B's share of
 * the two groups' CPU time is within 10% of the new ideal. Also how many
 * of the 20 ms windows 0.3-0.6 s after the change are within 10%: how
 * noisy a window that short is at steady state.
 */
static void bench_latency(void)
{
	static struct scn_table s;
	static double ts[LAT_MAXS], ca[LAT_MAXS], cb[LAT_MAXS];
	double lat[32], steady[32], v[SCN_MAX];
	const int changes = 12;
	cpu_set_t all;
	char extra[256];
	int a, b, err, n = 0;

	s = (struct scn_table){ .name = "prio-latency" };
	a = scn_busy_group(&s, 0, 0, 1, "A");
	b = scn_busy_group(&s, 0, 0, 1, "B");
	bench_header("PRIO_RGRP latency, pinned to one CPU: until B's share in 20 ms windows is within 10%");
	if (scn_pin_one_cpu(&all) < 0) {
		printf("cannot pin to one CPU: %s\n", strerror(errno));
		return;
	}
	if ((err = scn_start(&s))) {
		printf("cannot set up: %s\n", strerror(err));
		sched_setaffinity(0, sizeof(all), &all);
		return;
	}
	scn_sleep(0.5);
	for (int k = 0; k < changes; k++) {
		struct model m;
		int mi[SCN_MAX], ns = 0, in = 0, wins = 0;

		scn_sleep(0.3);
		s.n[b].nice = k % 2 ? 0 : 6;
		scn_model(&m, mi);
		model_run(&m, 1);
		double want = model_fraction(&m, mi[b]);
		double t0 = bench_now();
		if (rgroup_setpriority(PRIO_RGRP, scn_cur.n[b].tid, s.n[b].nice) < 0) {
			printf("PRIO_RGRP failed: %s\n", strerror(errno));
			break;
		}
		do {
			scn_read(v);
			ts[ns] = bench_now() - t0;
			ca[ns] = scn_subtree(v, a);
			cb[ns] = scn_subtree(v, b);
			scn_sleep(LAT_SAMPLE);
		} while (ts[ns++] < LAT_WATCH && ns < LAT_MAXS);
		/* The first window (sliding, one reading at a time) within 10%;
		 * then the non-overlapping windows of the second half. */
		lat[n] = LAT_WATCH; /* never within: the whole watch */
		for (int j = 0, e = 0; j < ns; j++) {
			while (e < ns && ts[e] - ts[j] < LAT_WINDOW)
				e++;
			if (e < ns && lat_ok(ca[e] - ca[j], cb[e] - cb[j], want)) {
				lat[n] = ts[j];
				break;
			}
		}
		for (int j = 0, e = 0; j < ns; j = e) {
			while (e < ns && ts[e] - ts[j] < LAT_WINDOW)
				e++;
			if (e == ns)
				break;
			if (ts[j] >= LAT_WATCH / 2) {
				wins++;
				in += lat_ok(ca[e] - ca[j], cb[e] - cb[j], want);
			}
		}
		steady[n] = wins ? 100.0 * in / wins : NAN;
		n++;
	}
	scn_stop();
	sched_setaffinity(0, sizeof(all), &all);
	scn_wait_no_groups(5.0);
	if (!n)
		return;
	struct bench_stats st = bench_stats(steady, n);
	snprintf(extra, sizeof(extra), "\"changes\":%d,\"window_ms\":%.0f,\"watch_ms\":%.0f,"
		 "\"steady_windows_within_pct_median\":%.1f",
		 n, 1e3 * LAT_WINDOW, 1e3 * LAT_WATCH, st.median);
	for (int i = 0; i < n; i++)
		lat[i] *= 1e3;
	struct bench_stats ls = bench_stats(lat, n);
	bench_emit("latency", "PRIO_RGRP change takes effect (ms)", "ms", ls, "le", 100, extra);
	snprintf(extra, sizeof(extra), "\"changes\":%d", n);
	bench_emit1("latency", "PRIO_RGRP change takes effect, max (ms)", "ms", ls.max, "le", 100, extra);
	printf("%-44s %.0f%% of the 20 ms windows at steady state within 10%% (median)\n", "", st.median);
}

/*
 * PRIO_RGRP latency among 1,000 busy threads, all CPUs: a top-level group
 * T (its leader asleep) holds 100 nested groups of 10 busy threads each
 * (nested, so that any nice value needs no privilege: rule 6); group B,
 * one of them, goes from nice 19 to -20 and back: 0.015% and 46.7% of T's
 * CPU by the model. The benchmark reads B's threads' CPU clocks every 2 ms
 * for 0.4 s after each change; the latency is the start of the first 20 ms
 * window in which B's CPU rate is past the midpoint of the two ideals (of
 * the CPU the process got over those 0.4 s), 400 ms if none is. The
 * readings come from a thread that competes with the thousand for a CPU
 * like any other: a late reading makes a latency longer, never shorter.
 */
#define MANY_GROUPS 100
#define MANY_PER    10

struct many {
	struct ov_thread w[MANY_GROUPS * MANY_PER];
	pthread_t tleader;
	int started, err;
};

static void *many_leader(void *p)
{
	struct many *m = p;
	for (int g = 0; g < MANY_GROUPS; g++) {
		struct ov_thread *w = &m->w[g * MANY_PER];
		if ((m->err = rgroup_thread_create(&w->thread, NULL, RGROUP_NEW, ov_leader, w)))
			break;
		m->started++;
	}
	__atomic_store_n(&m->w[0].err, m->w[0].err, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ov_stop, __ATOMIC_ACQUIRE))
		scn_sleep(0.01);
	for (int g = 0; g < m->started; g++) {
		pthread_join(m->w[g * MANY_PER].thread, NULL);
		for (int k = 1; k < MANY_PER; k++)
			if (!m->w[g * MANY_PER + k].err)
				pthread_join(m->w[g * MANY_PER + k].thread, NULL);
	}
	return NULL;
}

static double many_b(const struct many *m)
{
	double c = 0;
	for (int k = 0; k < MANY_PER; k++)
		c += scn_thread_cpu(m->w[k].tid);
	return c;
}

/* B's ideal part of T's CPU at nice `nice`, the other 99 at nice 0. */
static double model_pair_fraction(int nice)
{
	struct model md;
	model_init(&md);
	int root = model_add(&md, -1, 1024, 0);
	int b = model_add(&md, root, rgroup_nice_to_weight(nice), 0);
	model_add(&md, b, 1024, 1);
	for (int g = 1; g < MANY_GROUPS; g++)
		model_add(&md, model_add(&md, root, 1024, 0), 1024, 1);
	model_run(&md, 1);
	return model_fraction(&md, b);
}

static void bench_latency_many(void)
{
	static struct many m;
	static double ts[LAT_MAXS], cb[LAT_MAXS];
	double lat[16];
	const int changes = 8;
	int n = 0, ready = 0;
	char extra[256];

	bench_header("PRIO_RGRP latency among 1,000 busy threads, all CPUs (100 nested groups of 10)");
	memset(&m, 0, sizeof(m));
	ov_go = ov_stop = 0;
	if (rgroup_thread_create(&m.tleader, NULL, RGROUP_NEW, many_leader, &m)) {
		printf("cannot start\n");
		return;
	}
	/* Every thread has started once every tid is there. */
	for (double t0 = bench_now(); bench_now() - t0 < 60 && !ready;) {
		ready = __atomic_load_n(&m.started, __ATOMIC_ACQUIRE) == MANY_GROUPS;
		for (int i = 0; ready && i < MANY_GROUPS * MANY_PER; i++)
			ready = __atomic_load_n(&m.w[i].tid, __ATOMIC_ACQUIRE) != 0;
		if (m.err)
			break;
		scn_sleep(0.01);
	}
	__atomic_store_n(&ov_go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ov_go, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	if (!ready) {
		printf("%-44s FAILED: %d of %d groups: %s\n", "latency among 1000", m.started,
		       MANY_GROUPS, strerror(m.err));
		goto out;
	}
	if (rgroup_setpriority(PRIO_RGRP, m.w[0].tid, 19) < 0) {
		printf("PRIO_RGRP failed: %s\n", strerror(errno));
		goto out;
	}
	scn_sleep(1.0);
	double f_hi = model_pair_fraction(-20), f_lo = model_pair_fraction(19);
	for (int k = 0; k < changes; k++) {
		int up = k % 2 == 0, ns = 0;
		struct timespec p0, p1;
		double t0 = bench_now();
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p0);
		if (rgroup_setpriority(PRIO_RGRP, m.w[0].tid, up ? -20 : 19) < 0) {
			printf("PRIO_RGRP failed: %s\n", strerror(errno));
			break;
		}
		do {
			cb[ns] = many_b(&m);
			ts[ns] = bench_now() - t0;
			scn_sleep(LAT_SAMPLE);
		} while (ts[ns++] < 0.4 && ns < LAT_MAXS);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
		double proc = (p1.tv_sec - p0.tv_sec + (p1.tv_nsec - p0.tv_nsec) / 1e9) / ts[ns - 1];
		double mid = (f_hi + f_lo) / 2 * proc;
		lat[n] = 400; /* never past the midpoint: the whole watch */
		for (int j = 0, e = 0; j < ns; j++) {
			while (e < ns && ts[e] - ts[j] < LAT_WINDOW)
				e++;
			if (e == ns)
				break;
			double rate = (cb[e] - cb[j]) / (ts[e] - ts[j]);
			if (up ? rate >= mid : rate <= mid) {
				lat[n] = 1e3 * ts[j];
				break;
			}
		}
		int h = 0;
		while (h < ns - 1 && ts[h] < 0.2)
			h++;
		printf("  change %d: nice %+d, takes effect after %.1f ms (B %.3f CPUs over the last 0.2 s,"
		       " ideal %.3f of the %.2f the process got; %d readings)\n", k, up ? -20 : 19, lat[n],
		       ts[ns - 1] > ts[h] ? (cb[ns - 1] - cb[h]) / (ts[ns - 1] - ts[h]) : 0,
		       (up ? f_hi : f_lo) * proc, proc, ns);
		n++;
		scn_sleep(0.2);
	}
	/* By direction: a group that never rose is "lowered" at once. */
	for (int up = 1; up >= 0 && n; up--) {
		double d[8];
		int nd = 0;
		for (int k = 0; k < n; k++)
			if ((k % 2 == 0) == up)
				d[nd++] = lat[k];
		struct bench_stats ls = bench_stats(d, nd);
		char name[96];
		snprintf(extra, sizeof(extra), "\"changes\":%d,\"threads\":%d,\"window_ms\":%.0f",
			 nd, MANY_GROUPS * MANY_PER, 1e3 * LAT_WINDOW);
		snprintf(name, sizeof(name), "PRIO_RGRP among 1000 busy, %s (ms)", up ? "19 to -20" : "-20 to 19");
		bench_emit("latency", name, "ms", ls, "le", 20, extra);
	}
out:
	__atomic_store_n(&ov_stop, 1, __ATOMIC_RELEASE);
	pthread_join(m.tleader, NULL);
	scn_wait_no_groups(10.0);
}

/*
 * An idle group's CPU, all CPUs: groups X and Y at nice 0, as many busy
 * threads each as CPUs; X falls asleep and wakes up in turns (8 pairs of
 * phases, 0.3 s to settle and `measure_s`/2 measured each). Figure: the
 * part of the CPU X had that Y takes when X sleeps, as scenario.h's
 * scn_idle() measures it (from the time Y's busy threads were paused,
 * which other load on the machine does not move); median over the pairs.
 */
static void bench_idle(void)
{
	static struct scn_table s;
	struct scn_idle_result r;
	double taken[SCN_IDLE_MAX];
	cpu_set_t all;
	char extra[320];
	int x, y, err, ncpu;

	if (sched_getaffinity(0, sizeof(all), &all) < 0)
		return;
	ncpu = CPU_COUNT(&all);
	s = (struct scn_table){ .name = "idle-group" };
	x = scn_busy_group(&s, 0, 0, ncpu, "X");
	y = scn_busy_group(&s, 0, 0, ncpu, "Y");
	bench_header("idle group, all CPUs: part of the idle group's CPU the busy one takes (%)");
	if ((err = scn_start(&s))) {
		printf("cannot set up: %s\n", strerror(err));
		return;
	}
	scn_sleep(0.5);
	scn_idle(x, y, 8, 0.3, measure_s / 2, 0, 0, &r);
	scn_stop();
	scn_wait_no_groups(5.0);
	for (int i = 0; i < r.n; i++)
		taken[i] = 100 * r.taken[i];
	struct bench_stats fr = bench_stats(r.freed, r.n), wh = bench_stats(r.withheld, r.n);
	struct bench_stats cb = bench_stats(r.cpus_both, r.n), ci = bench_stats(r.cpus_idle, r.n);
	snprintf(extra, sizeof(extra), "\"pairs\":%d,\"threads_per_group\":%d,"
		 "\"freed_cpus_median\":%.3f,\"withheld_cpus_median\":%.4f,"
		 "\"cpus_both_busy_median\":%.3f,\"cpus_one_idle_median\":%.3f",
		 r.n, ncpu, fr.median, wh.median, cb.median, ci.median);
	bench_emit("idle", "idle group's CPU taken by the busy one (%)", "%",
		   bench_stats(taken, r.n), "ge", 95, extra);
	printf("%-44s X had %.2f CPUs, Y lost %.3f to pauses; the groups got %.2f CPUs "
	       "both busy, %.2f with X idle (medians)\n", "", fr.median, wh.median, cb.median, ci.median);
}

/*
 * Work conservation when a share can only be met alone, all CPUs (2 here):
 * group A with one busy thread, group B with two, both at nice 0. The
 * model gives each 1 CPU: A's only when its thread has a CPU to itself,
 * which the kernel's placement of three equal threads on two CPUs does
 * not give it. A governor that holds B back until A has had its CPU
 * leaves a CPU idle meanwhile. Figure: of the CPU time B's threads could
 * have used (what they ran, plus the time they were paused, each at the
 * rate it got while not paused: scenario.h's withheld time), the part
 * they ran; 4 windows of measure_s/2. The split A/B against the model is
 * printed beside it: giving the idle CPU away costs A part of its share.
 */
static void bench_alone(void)
{
	static struct scn_table s;
	struct scn_schedstat s0[SCN_MAX], s1[SCN_MAX];
	double v0[SCN_MAX], v1[SCN_MAX], used[8], ga[8], gb[8];
	cpu_set_t all;
	char extra[256];
	int a, b, err, n = 0;

	if (sched_getaffinity(0, sizeof(all), &all) < 0 || CPU_COUNT(&all) < 2)
		return;
	s = (struct scn_table){ .name = "only-alone" };
	a = scn_busy_group(&s, 0, 0, 1, "A");
	b = scn_busy_group(&s, 0, 0, 2, "B");
	bench_header("only alone, all CPUs: A (1 busy thread) and B (2), nice 0: the CPU B could use that it used (%)");
	if ((err = scn_start(&s))) {
		printf("cannot set up: %s\n", strerror(err));
		return;
	}
	scn_sleep(1.0);
	for (int w = 0; w < 4; w++) {
		double run = 0, withheld = 0;
		for (int j = 1; j < s.count; j++)
			scn_schedstat(scn_cur.n[j].tid, &s0[j]);
		scn_read(v0);
		double t0 = scn_now();
		scn_sleep(measure_s / 2);
		for (int j = 1; j < s.count; j++)
			scn_schedstat(scn_cur.n[j].tid, &s1[j]);
		scn_read(v1);
		double dt = scn_now() - t0;
		for (int j = 1; j < s.count; j++) {
			if (!scn_below(j, b))
				continue;
			double r = s1[j].run - s0[j].run, wt = s1[j].wait - s0[j].wait;
			double blocked = (s1[j].at - s0[j].at) - r - wt;
			run += r;
			if (blocked > 0)
				withheld += blocked * (r + wt > 0 ? r / (r + wt) : 1);
		}
		used[n] = run + withheld > 0 ? 100 * run / (run + withheld) : NAN;
		ga[n] = (scn_subtree(v1, a) - scn_subtree(v0, a)) / dt;
		gb[n] = (scn_subtree(v1, b) - scn_subtree(v0, b)) / dt;
		n++;
	}
	scn_stop();
	scn_wait_no_groups(5.0);
	struct bench_stats sa = bench_stats(ga, n), sb = bench_stats(gb, n);
	snprintf(extra, sizeof(extra), "\"windows\":%d,\"a_cpus_median\":%.3f,\"b_cpus_median\":%.3f",
		 n, sa.median, sb.median);
	bench_emit("idle", "only alone: CPU B could use that it used (%)", "%", bench_stats(used, n),
		   "ge", 95, extra);
	printf("%-44s A %.2f, B %.2f CPUs (medians; the model: 1 and 1 of 2 CPUs)\n", "",
	       sa.median, sb.median);
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
	int left = scn_wait_no_groups(120.0);
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

/* In the order they run; --only picks some by name. */
static const struct {
	const char *name;
	void (*run)(void);
} sections[] = {
	{ "create", bench_create },     { "prio", bench_prio },
	{ "accuracy", bench_accuracy }, { "overhead", bench_overhead },
	{ "latency", bench_latency },   { "many", bench_latency_many },
	{ "idle", bench_idle },         { "alone", bench_alone },
	{ "scale", bench_scale },
};

int main(int argc, char **argv)
{
	const char *only = "create,prio,accuracy,overhead,latency,many,idle,alone,scale";

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
			fprintf(stderr, "usage: %s [--only create,prio,accuracy,overhead,latency,many,idle,alone,scale] [--blocks N] "
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
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (strstr(only, sections[i].name))
			sections[i].run();
	return 0;
}
