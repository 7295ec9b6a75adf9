/* SPDX-License-Identifier: MIT */
/*
 * test-safety.c - resource groups are safe to give every unprivileged
 * process: what they cost is charged and bounded, allocation failures
 * leave nothing behind, rgroup calls do not stall other processes' forks,
 * exec and exit race cleanly with them, and autogroup sessions stay fair.
 *
 * Leaks are judged by the number of task_group objects (one per rgroup),
 * read after the cache is shrunk (which also empties KASAN's quarantine)
 * and polled while RCU frees the last ones; run-native.sh boots with
 * slab_nomerge, so the cache is the scheduler's alone.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "native.h"
#include "judge.h"

/* --- helpers ---------------------------------------------------------------- */

static int sysctl_get(const char *name)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	if (nt_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

static int sysctl_set(const char *name, int v)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	snprintf(buf, sizeof(buf), "%d", v);
	return nt_write_file(path, buf);
}

/* Wait until the task_group count is back at `base` (RCU frees the last
 * ones two grace periods after their rgroup goes); the last count. */
/* The number of task groups once those of earlier work are freed (RCU):
 * the baseline a case's own groups must go back to. */
static long task_groups_settled(void)
{
	long n = nt_task_groups(), m;

	for (int i = 0; i < 40; i++) {
		nt_sleep(0.25);
		m = nt_task_groups();
		if (m == n)
			break;
		n = m;
	}
	return n;
}

/* Back to at most base (earlier work may free more meanwhile) */
static long task_groups_back(long base)
{
	long n = nt_task_groups();

	for (int i = 0; i < 100 && n > base; i++) {
		nt_sleep(0.1);
		n = nt_task_groups();
	}
	return n;
}

static int debugfs(void)
{
	mkdir("/sys/kernel/debug", 0755);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return access("/sys/kernel/debug/failslab", F_OK) == 0 ? 0 : -1;
}

/* A raw thread that waits for *flag in a new rgroup (or not): tid or -errno */
static int waiter(struct nt_raw *t, volatile int *flag, int new_group)
{
	return nt_raw_start(t, new_group ? CLONE_NEWRGRP : 0, nt_rt_wait, (void *)flag);
}

/* --- the count limit ---------------------------------------------------------- */

#define LIMIT 8

static int enter_new_job(void *arg)
{
	(void)arg;
	return nt_enter(0, PR_RGROUP_ENTER_NEW) ? errno : 0;
}

static int count_limit_child(void *arg)
{
	static struct nt_raw t[LIMIT + 2];
	static volatile int stop;
	struct nt_agent plain;
	int made = 0, e;
	(void)arg;
	rgt_failures = 0;

	for (int i = 0; i < LIMIT; i++)
		made += waiter(&t[i], &stop, 1) > 0;
	CHECK(made == LIMIT, "%d rgroups within the limit: made %d", LIMIT, made);
	e = waiter(&t[LIMIT], &stop, 1);
	CHECK(e == -EAGAIN, "clone3(CLONE_NEWRGRP) beyond the limit: %s, want EAGAIN",
	      strerror(-e));
	e = waiter(&t[LIMIT], &stop, 0);
	CHECK(e > 0, "a plain thread still starts: %s", e < 0 ? strerror(-e) : "ok");
	CHECK(nt_agent_start(&plain, 0) == 0, "a plain agent");
	CHECK(nt_rg_id(t[0].tid) > 0, "the first thread is in an rgroup");
	/* PR_RGROUP_ENTER with a new rgroup counts too */
	int r = nt_agent_run(&plain, enter_new_job, NULL);
	CHECK(r == EAGAIN, "PR_RGROUP_ENTER_NEW beyond the limit: %s, want EAGAIN", strerror(r));
	/* one goes: one can be made again */
	nt_wake(&stop);
	for (int i = 0; i < LIMIT + 1; i++)
		if (t[i].tid > 0)
			nt_raw_join(&t[i]);
	stop = 0;
	for (int i = 0; i < 200 && (e = waiter(&t[0], &stop, 1)) == -EAGAIN; i++)
		nt_sleep(0.02); /* the last references go through RCU */
	CHECK(e > 0, "after the threads ended, an rgroup again: %s", e < 0 ? strerror(-e) : "ok");
	nt_wake(&stop);
	if (e > 0)
		nt_raw_join(&t[0]);
	nt_agent_stop(&plain);
	return rgt_failures ? 1 : 0;
}

static void count_limit(void)
{
	int old = sysctl_get("sched_rgroup_max");
	long base = task_groups_settled();

	CHECK(old > 0, "kernel.sched_rgroup_max exists: %d", old);
	if (old <= 0)
		return;
	fprintf(stderr, "  kernel.sched_rgroup_max is %d; set to %d\n", old, LIMIT);
	CHECK(sysctl_set("sched_rgroup_max", LIMIT) == 0, "set the limit");
	nt_in_child("the per-process limit", count_limit_child, NULL);
	CHECK(sysctl_set("sched_rgroup_max", old) == 0, "restore the limit");
	long n = task_groups_back(base);
	CHECK(n <= base, "task groups back to the baseline: %ld -> %ld", base, n);
}

/* --- memory cgroup charging ---------------------------------------------------- */

#define MEM_THREADS 300
#define MEM_MARGIN (512 * 1024)

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go, done, ok, enomem, other, other_err;
} mem;

static void *mem_member(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mem.lock);
	while (!mem.go)
		pthread_cond_wait(&mem.cond, &mem.lock);
	pthread_mutex_unlock(&mem.lock);

	int r = nt_enter(0, PR_RGROUP_ENTER_NEW);
	int err = errno;

	pthread_mutex_lock(&mem.lock);
	if (r == 0)
		mem.ok++;
	else if (err == ENOMEM)
		mem.enomem++;
	else
		mem.other++, mem.other_err = err;
	mem.done++;
	pthread_cond_broadcast(&mem.cond);
	while (mem.go != 2)
		pthread_cond_wait(&mem.cond, &mem.lock);
	pthread_mutex_unlock(&mem.lock);
	return NULL;
}

static long cg_long(const char *cg, const char *file, const char *key)
{
	char path[300], buf[4096];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (nt_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!key)
		return atol(buf);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		size_t k = strlen(key);
		if (!strncmp(l, key, k) && l[k] == ' ')
			return atol(l + k + 1);
	}
	return -1;
}

/*
 * The child (in the memory cgroup) and the parent (outside it) take turns
 * through two pipes: every read of a cgroup file allocates a buffer, which
 * must not be charged to a cgroup at its limit.
 */
struct memcg_run {
	const char *cg;
	int to_parent[2], to_child[2];
};

static void turn_wait(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(4);
}

static void turn_give(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(4);
}

static int memcg_child(void *arg)
{
	struct memcg_run *run = arg;
	static pthread_t th[MEM_THREADS];
	pthread_attr_t attr;
	int started = 0;

	if (nt_cg_move(run->cg, getpid()))
		return 2;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < MEM_THREADS; i++)
		started += pthread_create(&th[i], &attr, mem_member, NULL) == 0;
	if (started != MEM_THREADS)
		return 3;
	turn_give(run->to_parent[1]);   /* the parent sets memory.max */
	turn_wait(run->to_child[0]);

	pthread_mutex_lock(&mem.lock);
	mem.go = 1;
	pthread_cond_broadcast(&mem.cond);
	while (mem.done < started)
		pthread_cond_wait(&mem.cond, &mem.lock);
	pthread_mutex_unlock(&mem.lock);
	/* the results, then wait while the parent reads the cgroup */
	int res[3] = { mem.ok, mem.enomem, mem.other ? mem.other_err : 0 };
	if (write(run->to_parent[1], res, sizeof(res)) != sizeof(res))
		return 4;
	turn_wait(run->to_child[0]);

	pthread_mutex_lock(&mem.lock);
	mem.go = 2;
	pthread_cond_broadcast(&mem.cond);
	pthread_mutex_unlock(&mem.lock);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static void memcg_limit(void)
{
	struct memcg_run run;
	char cg[256], path[300], buf[32];
	int res[3];

	if (nt_write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory") ||
	    nt_write_file(NT_SG "/cgroup.subtree_control", "+memory")) {
		rgt_skip_case("cannot enable the memory controller (CONFIG_MEMCG)");
		return;
	}
	CHECK(nt_cg_make("rgmem", cg, sizeof(cg)) == 0, "a memory cgroup");
	long base_tg = task_groups_settled();
	run.cg = cg;
	CHECK(pipe(run.to_parent) == 0 && pipe(run.to_child) == 0, "pipes");
	pid_t watcher = nt_spinner(); /* another process, outside: must survive */
	pid_t child = nt_fork(memcg_child, &run);

	/* Now only the rgroups' own allocations can reach the limit */
	turn_wait(run.to_parent[0]);
	long base = cg_long(cg, "memory.current", NULL);
	snprintf(buf, sizeof(buf), "%ld", base + MEM_MARGIN);
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	CHECK(nt_write_file(path, buf) == 0, "memory.max = current + %d KiB", MEM_MARGIN / 1024);
	turn_give(run.to_child[1]);

	CHECK(read(run.to_parent[0], res, sizeof(res)) == sizeof(res), "the child's results");
	long used = cg_long(cg, "memory.current", NULL);
	long ooms = cg_long(cg, "memory.events", "oom_kill");
	nt_write_file(path, "max");
	turn_give(run.to_child[1]);
	int rc = nt_wait(child);

	fprintf(stderr, "  %d threads entered a new rgroup, %d got ENOMEM, another error: %s\n",
		res[0], res[1], res[2] ? strerror(res[2]) : "none");
	fprintf(stderr, "  memory.current %ld -> %ld: %.1f KiB per rgroup (limit margin %d KiB)\n",
		base, used, res[0] ? (double)(used - base) / res[0] / 1024 : 0.0,
		MEM_MARGIN / 1024);
	CHECK(rc == 0, "the process making rgroups ran to its end (exit %d)", rc);
	CHECK(res[0] > 0, "some rgroups fit under the limit");
	CHECK(res[1] > 0, "the rgroups beyond memory.max were refused (ENOMEM)");
	CHECK(res[2] == 0, "no other error");
	CHECK(used - base > res[0] * 1024L, "each rgroup is charged to the cgroup (%ld bytes for %d)",
	      used - base, res[0]);
	CHECK(ooms == 0, "no OOM kill in the cgroup: %ld", ooms);
	CHECK(kill(watcher, 0) == 0, "the process outside the cgroup is alive");
	nt_kill(watcher);
	long n = task_groups_back(base_tg);
	CHECK(n <= base_tg, "task groups back to the baseline: %ld -> %ld", base_tg, n);
	fprintf(stderr, "  the cgroup's memory.current after the process: %ld\n",
		cg_long(cg, "memory.current", NULL));
	for (int i = 0; i < 2; i++) {
		close(run.to_parent[i]);
		close(run.to_child[i]);
	}
}

/* --- fork latency while rgroups are made and reweighted ------------------------- */

#define HAMMERS 8
#define FORKS 300
#define ROUNDS 3

static volatile int hammer_stop;

static void *prio_hammer(void *arg)
{
	long i = (long)arg;

	while (!hammer_stop)
		syscall(SYS_setpriority, PRIO_RGRP, 0, (int)(i++ % 20));
	return NULL;
}

static void *noop(void *arg)
{
	return arg;
}

static void *new_hammer(void *arg)
{
	pthread_t t;
	(void)arg;
	while (!hammer_stop)
		if (!nt_pthread(&t, 1, noop, NULL))
			pthread_join(t, NULL);
	return NULL;
}

static int hammer_process(void *arg)
{
	pthread_t t[HAMMERS + 2];
	(void)arg;
	for (int i = 0; i < HAMMERS; i++)
		nt_pthread(&t[i], 1, prio_hammer, (void *)(long)i);
	for (int i = HAMMERS; i < HAMMERS + 2; i++)
		nt_pthread(&t[i], 1, new_hammer, NULL);
	pause(); /* killed by the test */
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int exit_now(void *arg)
{
	(void)arg;
	return 0;
}

/* fork+exit+wait latencies of a real-time process, sorted, in ms */
static int forker_child(void *arg)
{
	double *lat = arg;
	struct sched_param sp = { .sched_priority = 10 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		return 2;
	for (int i = 0; i < FORKS / ROUNDS; i++) {
		double t0 = nt_now();
		pid_t p = nt_fork(exit_now, NULL);
		nt_wait(p);
		lat[i] = (nt_now() - t0) * 1e3;
		nt_sleep(0.002);
	}
	return 0;
}

/* One round of FORKS / ROUNDS forks into lat[] (ms) */
static void fork_round(double *lat)
{
	double *l = mmap(NULL, FORKS * sizeof(double), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t f = nt_fork(forker_child, l);
	int rc = nt_wait(f);

	CHECK(rc == 0, "the forker ran (%d)", rc);
	memcpy(lat, l, sizeof(double) * FORKS / ROUNDS);
	munmap(l, FORKS * sizeof(double));
}

static void report(const char *what, double *lat, int n, double *p50)
{
	qsort(lat, (size_t)n, sizeof(lat[0]), cmp_double);
	*p50 = lat[n / 2];
	fprintf(stderr, "  %-40s fork+exit+wait p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", what,
		lat[n / 2], lat[n * 99 / 100], lat[n - 1]);
}

static volatile int migrating;

static void *migrator(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	char a[256], b[256];
	int n = 0;

	nt_cg_make("lat-a", a, sizeof(a));
	nt_cg_make("lat-b", b, sizeof(b));
	while (migrating) {
		nt_cg_move(n++ & 1 ? b : a, pid);
		nt_sleep(0.01);
	}
	nt_cg_move(NT_SG "/self", pid);
	return NULL;
}

/*
 * The same forks with and without the load, in alternating rounds, so
 * that the emulator's host, busy or not, weighs on both alike; the
 * medians are compared (the tails are the host's more than the guest's).
 */
static void fork_latency(void)
{
	static double quiet[FORKS], loaded[FORKS];
	double q50, l50;
	pthread_t mig;

	for (int r = 0; r < ROUNDS; r++) {
		fork_round(quiet + r * (FORKS / ROUNDS));
		pid_t h = nt_fork(hammer_process, NULL);
		nt_sleep(0.3);
		migrating = 1;
		pthread_create(&mig, NULL, migrator, &h);
		fork_round(loaded + r * (FORKS / ROUNDS));
		migrating = 0;
		pthread_join(mig, NULL);
		nt_kill(h);
	}
	report("quiet", quiet, FORKS, &q50);
	report("PRIO_RGRP, CLONE_NEWRGRP and migrations", loaded, FORKS, &l50);
	/*
	 * The forker is real-time, so it never waits for a CPU behind the
	 * hammering threads: what grows is lock waits and the kernel's own
	 * work (freeing task groups, RCU), and a migration holding the
	 * threadgroup lock for writing while it makes the moving tree's new
	 * groups (its cost grows with the rgroups that move). PRIO_RGRP and
	 * clone hold no lock that fork takes while they visit every CPU; if
	 * they did, forks would wait behind all of them and the median would
	 * grow many times over, not double.
	 */
	CHECK(l50 <= 4 * q50 + 10.0, "median %.2f ms within 4x the quiet median %.2f ms + 10 ms",
	      l50, q50);
}

/* --- allocation failures (failslab) --------------------------------------------- */

/*
 * failslab with its filters: only slab allocations made below the kernel's
 * rgroup code (require-start/end: the span of its functions in
 * /proc/kallsyms), from the caches rgroups use (not kmemleak's), by the
 * thread that makes the call (make-it-fail), so the test's own file reads
 * and writes and other tasks never count.
 */
static int fs_set(const char *attr, const char *v)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/debug/failslab/%s", attr);
	return nt_write_file(path, v);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? -1 : x > y;
}

/* The start of the first function in sorted text[n] after a */
static unsigned long long next_function(const unsigned long long *text, size_t n,
					unsigned long long a)
{
	for (size_t i = 0; i < n; i++)
		if (text[i] > a)
			return text[i];
	return 0;
}

/*
 * require-start/end [lo, hi): from the first function of the rgroup code
 * to the end of its last one (the next function's start), in the kernel's
 * text. reject-start/end: the slab allocator's own vector of per-object
 * data (alloc_slab_obj_exts(), memcg accounting), which it allocates on
 * the side of an object when a slab has none and goes on without: a
 * failure there leaves the object uncharged, the call succeeds, and the
 * same slab meets it again at the same position on every try. Not ours.
 */
static int fs_range(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	static unsigned long long text[1 << 17];
	unsigned long long lo = ~0ULL, last = 0, hi, a, etext = 0, exts = 0, exts_end;
	char type, name[256], v[32];
	size_t n = 0;

	if (!f)
		return -1;
	while (fscanf(f, "%llx %c %255s%*[^\n]", &a, &type, name) == 3) {
		if (!strcmp(name, "_etext"))
			etext = a;
		if (type != 't' && type != 'T')
			continue;
		if (n < sizeof(text) / sizeof(text[0]))
			text[n++] = a;
		if (!strcmp(name, "alloc_slab_obj_exts"))
			exts = a;
		if (!a || (strncmp(name, "rgroup_", 7) && strncmp(name, "sched_rgroup_", 13)))
			continue;
		lo = a < lo ? a : lo;
		if (a > last && (!etext || a < etext))   /* not the __init ones */
			last = a;
	}
	fclose(f);
	qsort(text, n, sizeof(text[0]), cmp_ull);
	hi = next_function(text, n, last);
	if (!last || !hi)
		return -1;
	snprintf(v, sizeof(v), "%llu", lo);
	fs_set("require-start", v);
	snprintf(v, sizeof(v), "%llu", hi);
	fs_set("require-end", v);
	fprintf(stderr, "  failslab only below the rgroup code, %#llx..%#llx\n", lo, hi);
	exts_end = exts ? next_function(text, n, exts) : 0;
	if (exts_end) {
		snprintf(v, sizeof(v), "%llu", exts);
		fs_set("reject-start", v);
		snprintf(v, sizeof(v), "%llu", exts_end);
		fs_set("reject-end", v);
		fprintf(stderr, "  and not below alloc_slab_obj_exts, %#llx..%#llx\n", exts, exts_end);
	}
	return 0;
}

/* Mark the task group cache and the kmalloc caches for failslab */
static void fs_caches(const char *on)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[300];

	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, "task_group") && strncmp(e->d_name, "kmalloc-", 8))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/failslab", e->d_name);
		nt_write_file(path, on);
	}
	if (d)
		closedir(d);
}

/*
 * /proc/thread-self/fail-nth fails the calling thread's N-th allocation
 * that passes failslab's filters (the caches marked below, a stack through
 * the rgroup code) and reads 0 once it has: exact per thread, whatever
 * other threads allocate meanwhile. The thread that makes the call arms
 * it; the normal, counting path of failslab stays off (probability 0).
 */
static int fs_nth;		/* the allocation the next call fails */
static int fs_injected;		/* the last call's failure was injected */

static void fs_arm_me(void)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", fs_nth);
	nt_write_file("/proc/thread-self/fail-nth", v);
}

static void fs_disarm_me(void)
{
	char buf[32] = "";

	nt_read_file("/proc/thread-self/fail-nth", buf, sizeof(buf));
	fs_injected = atoi(buf) == 0;
	nt_write_file("/proc/thread-self/fail-nth", "0");
}

static int op_clone(void *arg)
{
	static struct nt_raw t;
	volatile int *stop = arg;

	fs_arm_me();
	int r = nt_raw_start(&t, CLONE_NEWRGRP, nt_rt_wait, (void *)stop);
	fs_disarm_me();
	if (r > 0) {
		nt_wake(stop);
		nt_raw_join(&t);
		*stop = 0;
		return 0;
	}
	return -r;
}

static void *idle(void *arg)
{
	(void)arg;
	return NULL;
}

static int op_pthread(void *arg)
{
	pthread_t t;
	(void)arg;
	fs_arm_me();
	int r = nt_pthread(&t, 1, idle, NULL);
	fs_disarm_me();
	if (!r)
		pthread_join(t, NULL);
	nt_set_next_new(0);
	return r;
}

/* enter is once per thread: each attempt in a fresh thread */
struct enter_arg {
	pid_t under;
	int ret;
};

static void *enter_thread(void *p)
{
	struct enter_arg *a = p;

	fs_arm_me();
	a->ret = nt_enter(a->under, PR_RGROUP_ENTER_NEW) ? errno : 0;
	fs_disarm_me();
	return NULL;
}

static int op_enter(void *arg)
{
	struct enter_arg a = { .under = *(pid_t *)arg };
	pthread_t t;

	pthread_create(&t, NULL, enter_thread, &a);
	pthread_join(t, NULL);
	return a.ret;
}

/*
 * A failure a call did not see: an allocation that only sometimes happens
 * below it (a debug facility's own, a cache's refill) and that goes on
 * without it. The same position is tried again, up to UNSEEN_TRIES times
 * in all: an optional allocation comes and goes with what else the
 * machine does, and one of the tries meets the call's own. Unseen every
 * time, the call ignores a failed allocation of its own: a bug.
 */
#define UNSEEN_TRIES 5

/* Fail each allocation of op in turn; every failure must be clean. */
static void inject_each(const char *what, int (*op)(void *), void *arg, int want_err)
{
	int k, failures = 0, bad = 0, again = 0;

	for (k = 1; k < 200; k++) {
		fs_nth = k;
		int r = op(arg);
		if (!fs_injected) {
			CHECK(r == 0, "%s: works without an injected failure: %s", what, strerror(r));
			break;
		}
		if (r == 0 && ++again < UNSEEN_TRIES) {
			fprintf(stderr, "  %s: allocation %d failed unseen; trying it again\n", what, k);
			k--;
			continue;
		}
		again = 0;
		failures++;
		if (r != want_err && r != ENOMEM)
			bad++, fprintf(stderr, "  %s: allocation %d failed: %s\n", what, k,
				       r ? strerror(r) : "the call succeeded every time");
	}
	fprintf(stderr, "  %s: each of its %d rgroup allocations failed in turn\n", what, failures);
	CHECK(failures > 0 && k < 200, "%s: its allocations were failed, then it worked", what);
	CHECK(!bad, "%s: %d failures gave an unexpected result", what, bad);
}

static int rg_members_child(void *arg)
{
	struct nt_agent a, b;
	(void)arg;
	if (nt_agent_start(&a, 1) || nt_agent_start_in(&a, &b, 1))
		return 1;
	pause();
	return 0;
}

/* The rgroup lines of every thread of pid: "id depth nice attached;..." */
static void rg_signature(pid_t pid, char *out, size_t len)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/rgroups", (int)pid);
	nt_read_file(path, out, len);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		struct nt_rg rg;
		if (e->d_name[0] == '.' || nt_rg_read(pid, atoi(e->d_name), &rg))
			continue;
		size_t l = strlen(out);
		snprintf(out + l, len - l, "|%" PRIu64 ":%u:%d:%d", rg.id, rg.depth, rg.nice,
			 rg.attached);
	}
	closedir(d);
}

static void inject_migration(void)
{
	char a[256], b[256], before[1024], after[1024], path[300], v[16];
	int failures = 0, bad = 0, k, again = 0;

	nt_cg_make("fs-a", a, sizeof(a));
	nt_cg_make("fs-b", b, sizeof(b));
	long base = task_groups_settled();
	pid_t pid = nt_fork(rg_members_child, NULL);
	nt_sleep(0.3);
	CHECK(nt_cg_move(a, pid) == 0, "to fs-a");
	rg_signature(pid, before, sizeof(before));
	snprintf(path, sizeof(path), "%s/cgroup.procs", b);
	snprintf(v, sizeof(v), "%d", (int)pid);
	for (k = 1; k < 200; k++) {
		fs_nth = k;
		fs_arm_me();
		int r = nt_write_file(path, v);
		fs_disarm_me();
		if (!fs_injected) {
			CHECK(r == 0, "the migration works without an injected failure: %s",
			      strerror(-r));
			break;
		}
		if (r == 0) {
			/* Moved as without a failure: back, and that is the
			 * tree the next failure must leave as it is. */
			nt_cg_move(a, pid);
			rg_signature(pid, before, sizeof(before));
			if (++again < UNSEEN_TRIES) {
				fprintf(stderr, "  migration: allocation %d failed unseen; trying it again\n", k);
				k--;
				continue;
			}
			again = 0;
			failures++;
			bad++;
			fprintf(stderr, "  migration: allocation %d failed: the move succeeded every time\n", k);
			continue;
		}
		again = 0;
		failures++;
		if (r != -ENOMEM) {
			bad++;
			fprintf(stderr, "  migration: allocation %d failed: %s\n", k, strerror(-r));
		}
		rg_signature(pid, after, sizeof(after));
		if (strcmp(before, after)) {
			bad++;
			fprintf(stderr, "  migration: after allocation %d failed the rgroups differ:\n"
				"    before %s\n    after  %s\n", k, before, after);
		}
	}
	fprintf(stderr, "  migration: each of its %d rgroup allocations failed in turn\n", failures);
	CHECK(failures > 0 && k < 200, "migration: its allocations were failed, then it worked");
	CHECK(!bad, "migration: %d failures left the tree changed or gave another error", bad);
	nt_kill(pid);
	long n = task_groups_back(base);
	CHECK(n <= base, "migration: task groups back to the baseline: %ld -> %ld", base, n);
}

static void failslab_in_this_process(void)
{
	volatile int stop = 0;
	struct nt_agent top;
	pid_t none = 0;
	long base;

	if (debugfs() || access("/sys/kernel/debug/failslab/require-start", W_OK)) {
		rgt_skip_case("no failslab with a stack filter "
			      "(CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_STACKTRACE_FILTER)");
		return;
	}
	fs_set("probability", "0");
	fs_set("ignore-gfp-wait", "N");
	/* fail-nth counts page allocations too: KASAN's stack depot makes
	 * some below any call, and goes on without them; none is ours */
	char min_order[32] = "";
	nt_read_file("/sys/kernel/debug/fail_page_alloc/min-order", min_order, sizeof(min_order));
	nt_write_file("/sys/kernel/debug/fail_page_alloc/min-order", "100");
	fs_set("verbose", "0");
	fs_set("space", "0");
	CHECK(fs_range() == 0, "the rgroup code in /proc/kallsyms");
	/* Only the caches rgroups allocate from, not kmemleak's or KASAN's */
	fs_set("cache-filter", "Y");
	fs_caches("1");

	base = task_groups_settled();
	inject_each("clone3(CLONE_NEWRGRP)", op_clone, (void *)&stop, EAGAIN);
	inject_each("pthread_create after PR_RGROUP_SET_NEXT_NEW", op_pthread, NULL, EAGAIN);
	inject_each("PR_RGROUP_ENTER_NEW, top-level", op_enter, &none, ENOMEM);
	CHECK(nt_agent_start(&top, 1) == 0, "an rgroup to nest under");
	inject_each("PR_RGROUP_ENTER_NEW, nested", op_enter, &top.tid, ENOMEM);
	nt_agent_stop(&top);
	long n = task_groups_back(base);
	CHECK(n <= base, "task groups back to the baseline: %ld -> %ld", base, n);
	inject_migration();
	fs_set("require-start", "0");
	fs_set("require-end", "0");
	fs_set("reject-start", "0");
	fs_set("reject-end", "0");
	fs_caches("0");
	fs_set("cache-filter", "N");
	if (*min_order)
		nt_write_file("/sys/kernel/debug/fail_page_alloc/min-order", min_order);
}

/*
 * In a process of its own: the positions of the allocations counted below
 * a call must not depend on what earlier cases left in this one (rgroups,
 * its cgroup, its autogroup).
 */
static int failslab_child(void *arg)
{
	(void)arg;
	failslab_in_this_process();
	return rgt_failures ? 1 : 0;
}

static void failslab(void)
{
	pid_t pid = nt_fork(failslab_child, NULL);

	CHECK(nt_wait(pid) == 0, "the failslab cases, in a process of their own");
}

/* --- exec and exit race with rgroup calls ------------------------------------ */

static void *churn(void *arg)
{
	pthread_t t;
	(void)arg;
	for (;;) /* until the exec ends it */
		if (!nt_pthread(&t, 1, noop, NULL))
			pthread_join(t, NULL);
	return NULL;
}

static char self_exe[4096];

/* exec'd: the new program must be in no rgroup and see none */
static int exec_probe(void)
{
	char buf[256];
	struct nt_rg rg;
	int n = nt_read_file("/proc/self/rgroups", buf, sizeof(buf));
	if (n != 0 || nt_rg_read(0, nt_gettid(), &rg) || rg.id)
		return 3;
	return 0;
}

static int exec_race_child(void *arg)
{
	pthread_t t[4];
	long delay_us = (long)arg;
	for (int i = 0; i < 4; i++)
		nt_pthread(&t[i], 1, churn, NULL);
	usleep((useconds_t)delay_us);
	execl(self_exe, self_exe, "--exec-probe", (char *)NULL);
	return 2;
}

static void exec_races(void)
{
	long base = task_groups_settled();
	int bad = 0;

	for (int i = 0; i < 20; i++) {
		int rc = nt_wait(nt_fork(exec_race_child, (void *)(long)(i * 2000)));
		if (rc)
			bad++, fprintf(stderr, "  exec %d: the new program exited %d\n", i, rc);
	}
	CHECK(!bad, "20 execs racing with CLONE_NEWRGRP: each new program starts in no rgroup");
	long n = task_groups_back(base);
	CHECK(n <= base, "exec frees the rgroups: task groups %ld -> %ld", base, n);
}

static int target(void *arg)
{
	(void)arg;
	return 0;
}

static volatile pid_t prio_target;
static volatile int prio_stop;
static volatile long prio_bad, prio_calls;

static void *prio_racer(void *arg)
{
	(void)arg;
	while (!prio_stop) {
		pid_t t = prio_target;
		if (!t)
			continue;
		long r = syscall(SYS_setpriority, PRIO_RGRP, t, 3);
		if (r && errno != ESRCH && errno != EINVAL)
			__atomic_add_fetch(&prio_bad, 1, __ATOMIC_RELAXED);
		syscall(SYS_getpriority, PRIO_RGRP, t);
		__atomic_add_fetch(&prio_calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int prio_exec_child(void *arg)
{
	pthread_t r[2];
	struct nt_agent a;
	(void)arg;
	nt_agent_start(&a, 1);
	prio_target = a.tid;
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, prio_racer, NULL);
	nt_sleep(0.05);
	execl(self_exe, self_exe, "--exec-probe", (char *)NULL);
	return 2;
}

static void prio_races(void)
{
	pthread_t r[2];
	struct nt_raw t = { 0 };
	long base = task_groups_settled();

	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, prio_racer, NULL);
	for (int i = 0; i < 2000; i++) {
		if (nt_raw_start(&t, CLONE_NEWRGRP, target, NULL) > 0) {
			prio_target = t.tid;
			nt_raw_join(&t);
		}
	}
	prio_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	fprintf(stderr, "  %ld PRIO_RGRP calls on threads that were exiting\n", prio_calls);
	CHECK(prio_bad == 0, "PRIO_RGRP racing with exit: only ESRCH or EINVAL (%ld other)",
	      prio_bad);
	prio_stop = 0;
	for (int i = 0; i < 10; i++)
		CHECK(nt_wait(nt_fork(prio_exec_child, NULL)) == 0,
		      "PRIO_RGRP racing with exec: the new program runs in no rgroup");
	long n = task_groups_back(base);
	CHECK(n <= base, "task groups back to the baseline: %ld -> %ld", base, n);
}

/* --- autogroup ------------------------------------------------------------- */

/* A session of its own in the root cgroup, pinned to CPU 0, with `groups`
 * top-level rgroups of one busy thread each (0: one plain busy thread). */
static int session_child(void *arg)
{
	static struct nt_raw t[4];
	static volatile int stop;
	int groups = (int)(long)arg;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (nt_cg_move("/sys/fs/cgroup", getpid()) || setsid() < 0 ||
	    sched_setaffinity(0, sizeof(one), &one))
		return 2;
	if (!groups) {
		nt_rt_spin((void *)&stop);
		return 0;
	}
	for (int i = 0; i < groups; i++)
		if (nt_raw_start(&t[i], CLONE_NEWRGRP, nt_rt_spin, (void *)&stop) <= 0)
			return 3;
	pause();
	return 0;
}

static int session_read(void *ctx, double *cpu, double *base)
{
	pid_t *pq = ctx;

	cpu[0] = nt_proc_cpu(pq[0]);
	*base = cpu[0] + nt_proc_cpu(pq[1]);
	return 0;
}

static void autogroup(void)
{
	if (sysctl_get("sched_autogroup_enabled") != 1) {
		rgt_skip_case("autogroup is off (CONFIG_SCHED_AUTOGROUP, noautogroup)");
		return;
	}
	pid_t p = nt_fork(session_child, (void *)3L);
	pid_t q = nt_fork(session_child, (void *)0L);
	pid_t pq[2] = { p, q };
	/* Two sessions of equal weight: one half each. Without the nesting
	 * the three rgroups would hang below the root and get three quarters. */
	struct rgt_judge j = {
		.what = "two sessions on CPU 0", .n = 1,
		.label = { "the session with 3 rgroups" }, .fixed = { 0.5 },
		.read = session_read, .ctx = pq, .min_cpus = 0.2,
	};

	nt_sleep(1.0);
	rgt_judge(&j, NULL);
	nt_kill(p);
	nt_kill(q);
}

static const struct rgt_case cases[] = {
	{ "count_limit", count_limit },
	{ "memcg_limit", memcg_limit },
	{ "fork_latency", fork_latency },
	{ "failslab", failslab },
	{ "exec_races", exec_races },
	{ "prio_races", prio_races },
	{ "autogroup", autogroup },
};

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--exec-probe"))
		return exec_probe();
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
		return 1;
	return nt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv, 1);
}
