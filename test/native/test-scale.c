/* SPDX-License-Identifier: MIT */
/*
 * test-scale.c - rules 2 and 3 at scale on the native kernel: 10,000
 * threads in 1,000 rgroups, then as many thread lifetimes as the time
 * allows (new rgroups, nested ones, joiners); kernel memory must come back
 * to where it started and the kernel log must stay clean.
 *
 * Memory criterion: every slab cache's object count (exact: the VM boots
 * with slub_debug=F) at most SLAB_SLACK objects above the baseline taken
 * after a warm-up round of the same work, the task_group cache exactly at
 * it, and MemAvailable at most MEM_SLACK_KB lower. A leak of one object per
 * N lifetimes shows once the run has more than SLAB_SLACK * N lifetimes
 * (the count is printed; RGROUP_NATIVE_SECONDS finds rarer leaks in a
 * longer run; the task_group cache catches a single leaked group). Every
 * cache is shrunk before it is counted, which also empties KASAN's
 * quarantine of freed objects on the debug kernel. Three caches are left
 * out: vmap_area, the vmalloc areas of freed kernel stacks (VMAP_STACK),
 * which the kernel purges lazily in large batches (it grows by thousands
 * the same way in a run without rgroups, RGROUP_NATIVE_CONTROL=1, and
 * rgroups allocate no vmalloc memory); kmemleak_scan_area, which on a
 * kernel with kmemleak holds one object per vmap_area slab object (the
 * area's tree node, registered for scanning when the area is made) and
 * so follows vmap_area's count exactly; and kmemleak_object, kmemleak's
 * record of every live object, which it trims lazily (kmemleak's own scan
 * at the end of the program, native.c, reports what nothing references).
 *
 * Environment (forwarded into the VM by run-native.sh):
 *   RGROUP_NATIVE_LIFETIMES  stop after this many lifetimes (1000000)
 *   RGROUP_NATIVE_SECONDS    or after this many seconds (60)
 *   RGROUP_NATIVE_CONTROL    1: the same work without rgroups (a control)
 *   RGROUP_NATIVE_TRACE      a cache whose allocation sites to print at the
 *                            end (boot with slub_debug=U,CACHE)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <dirent.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define GROUPS 1000
#define PER_GROUP 10
#define SLAB_SLACK 64
#define MEM_SLACK_KB 8192
#define CREATORS 4

/* --- kernel memory ---------------------------------------------------------- */

#define MAX_CACHES 256

struct slabs {
	int n;
	char name[MAX_CACHES][64];
	long active[MAX_CACHES];
	long size[MAX_CACHES];
};

static void shrink_all(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", e->d_name);
		nt_write_file(path, "1");
	}
	if (d)
		closedir(d);
}

/*
 * Per-cache object counts, read by a short-lived child process: the
 * reading itself (a sysfs open per cache to flush it) leaves kernfs objects
 * behind in the reading process for a while, which would show as growth.
 */
static void read_slabs(struct slabs *s)
{
	static char buf[1 << 17];
	int fds[2];
	size_t len = 0;
	ssize_t n;

	s->n = 0;
	if (pipe(fds))
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		shrink_all();   /* per-CPU slabs, and KASAN's quarantine */
		int r = nt_read_file("/proc/slabinfo", buf, sizeof(buf));
		_exit(r > 0 && write(fds[1], buf, (size_t)r) == r ? 0 : 1);
	}
	close(fds[1]);
	while (len + 1 < sizeof(buf) && (n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
	close(fds[0]);
	nt_wait(pid);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		long active, total, size;
		char name[64];
		if (l[0] == '#' || !strncmp(l, "slabinfo", 8))
			continue;
		if (sscanf(l, "%63s %ld %ld %ld", name, &active, &total, &size) != 4 ||
		    s->n == MAX_CACHES)
			continue;
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name);
		s->active[s->n] = active;
		s->size[s->n++] = size;
	}
}

static long mem_available_kb(void)
{
	char buf[4096];
	if (nt_read_file("/proc/meminfo", buf, sizeof(buf)) < 0)
		return -1;
	char *p = strstr(buf, "MemAvailable:");
	return p ? strtol(p + 13, NULL, 10) : -1;
}

static long find(const struct slabs *s, const char *name);

/* task_group objects when the program started (after settling) */
static long initial_task_groups = -1;

/* A baseline: once the task groups of earlier work are freed (RCU). */
static void baseline(struct slabs *s, long *mem)
{
	for (int i = 0; i < 40; i++) {
		read_slabs(s);
		if (initial_task_groups < 0 || find(s, "task_group") <= initial_task_groups)
			break;
		nt_sleep(0.5);
	}
	if (initial_task_groups < 0)
		initial_task_groups = find(s, "task_group");
	*mem = mem_available_kb();
}

static long find(const struct slabs *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->active[i];
	return -1;
}

/* Compare with the baseline, waiting (RCU) up to 20 s for frees to land. */
static void check_memory(const struct slabs *base, long mem0, const char *when)
{
	struct slabs now;
	int worst = -1;
	long worst_d = 0, total_d = 0, mem1 = -1;

	for (int tries = 0; tries < 40; tries++) {
		read_slabs(&now);
		mem1 = mem_available_kb();
		worst = -1;
		worst_d = 0;
		total_d = 0;
		for (int i = 0; i < now.n; i++) {
			long b = find(base, now.name[i]);
			long d = now.active[i] - (b < 0 ? 0 : b);
			total_d += d * now.size[i];
			if (!strcmp(now.name[i], "vmap_area") ||
			    !strcmp(now.name[i], "kmemleak_scan_area") ||
			    !strcmp(now.name[i], "kmemleak_object"))
				continue; /* see the top of the file */
			if (d > worst_d) {
				worst_d = d;
				worst = i;
			}
		}
		if (worst_d <= SLAB_SLACK && find(&now, "task_group") <= find(base, "task_group") &&
		    mem0 - mem1 <= MEM_SLACK_KB)
			break;
		nt_sleep(0.5);
	}
	fprintf(stderr, "  %s: task_group %ld -> %ld; largest growth %s %+ld objects; "
		"slab bytes %+ld; MemAvailable %ld -> %ld kB\n", when,
		find(base, "task_group"), find(&now, "task_group"),
		worst >= 0 ? now.name[worst] : "none", worst_d, total_d, mem0, mem1);
	CHECK(find(&now, "task_group") == find(base, "task_group"), "task groups back to the baseline");
	CHECK(worst_d <= SLAB_SLACK, "no slab cache grew by more than %d objects (%s: %+ld)",
	      SLAB_SLACK, worst >= 0 ? now.name[worst] : "", worst_d);
	CHECK(mem0 - mem1 <= MEM_SLACK_KB, "MemAvailable back within %d kB (%+ld kB)", MEM_SLACK_KB,
	      mem1 - mem0);
	/* RGROUP_NATIVE_TRACE=CACHE (boot with slub_debug=U,CACHE): where the
	 * objects of that cache still allocated come from */
	const char *tc = getenv("RGROUP_NATIVE_TRACE");
	if (tc) {
		char path[200];
		static char tr[1 << 16];
		mkdir("/sys/kernel/debug", 0755);
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
		snprintf(path, sizeof(path), "/sys/kernel/debug/slab/%s/alloc_traces", tc);
		if (nt_read_file(path, tr, sizeof(tr)) > 0)
			fprintf(stderr, "  %s allocations:\n%.4000s\n", tc, tr);
	}
	/* print every cache that grew, for the record */
	for (int i = 0; i < now.n; i++) {
		long b = find(base, now.name[i]);
		if (now.active[i] - b > SLAB_SLACK / 2)
			fprintf(stderr, "    %s %ld -> %ld\n", now.name[i], b, now.active[i]);
	}
}

/* --- 10,000 threads in 1,000 rgroups ------------------------------------------ */

static pthread_attr_t small;
static int release;

static void *member(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &release, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

static int started;

/* A group's first thread: makes the other nine (they join its rgroup). */
static void *leader(void *arg)
{
	pthread_t t[PER_GROUP - 1];
	int made = 0;
	(void)arg;
	for (int i = 0; i < PER_GROUP - 1; i++)
		made += pthread_create(&t[i], &small, member, NULL) == 0;
	__atomic_add_fetch(&started, made + 1, __ATOMIC_RELEASE);
	member(NULL);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	return NULL;
}

struct census {
	int threads, members, groups, bad;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void census(struct census *c)
{
	static uint64_t ids[GROUPS * PER_GROUP + 64];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	memset(c, 0, sizeof(*c));
	while (d && (e = readdir(d))) {
		struct nt_rg rg;
		if (e->d_name[0] == '.')
			continue;
		c->threads++;
		if (nt_rg_read(0, atoi(e->d_name), &rg)) {
			c->bad++;
			continue;
		}
		if (!rg.id)
			continue;
		if (rg.depth != 1 || !rg.attached)
			c->bad++;
		if (c->members < (int)(sizeof(ids) / sizeof(ids[0])))
			ids[c->members++] = rg.id;
	}
	if (d)
		closedir(d);
	qsort(ids, (size_t)c->members, sizeof(ids[0]), cmp_u64);
	for (int i = 0, run = 0; i < c->members; i++) {
		run++;
		if (i + 1 == c->members || ids[i + 1] != ids[i]) {
			c->groups++;
			if (run != PER_GROUP)
				c->bad++;
			run = 0;
		}
	}
}

static int ten_thousand_child(void *arg)
{
	pthread_t *t = calloc(GROUPS, sizeof(*t));
	int made = 0;
	struct census c;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	double t0 = nt_now();
	for (int i = 0; i < GROUPS; i++) {
		if (nt_set_next_new(1) || pthread_create(&t[i], &small, leader, NULL)) {
			fprintf(stderr, "  group %d: %s\n", i, strerror(errno));
			break;
		}
		made++;
	}
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < made * PER_GROUP && nt_now() - t0 < 300)
		nt_sleep(0.05);
	double t1 = nt_now();
	census(&c);
	double t2 = nt_now();
	fprintf(stderr, "  %d threads in %d rgroups: made in %.1f s, /proc census in %.1f s; "
		"%d members, %d inconsistent\n", c.threads, c.groups, t1 - t0, t2 - t1, c.members, c.bad);
	CHECK(made == GROUPS, "1,000 rgroups made");
	CHECK(c.members == GROUPS * PER_GROUP && c.groups == GROUPS && c.bad == 0,
	      "10,000 members, 1,000 rgroups of 10, all attached");

	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &release, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr, "  all joined in %.1f s\n", nt_now() - t2);
	return rgt_failures ? 1 : 0;
}

/* --- lifetimes -------------------------------------------------------------------- */

static long limit_lifetimes;
static int control; /* RGROUP_NATIVE_CONTROL=1: the same without rgroups */
static double limit_seconds;
static long lifetimes, new_rgroups;
static int stop_churn;

static void *nothing(void *arg)
{
	(void)arg;
	return NULL;
}

/*
 * One creator: in an rgroup of its own (nested under the process's first
 * creator's for odd ones), it makes threads in rounds of four: a new rgroup
 * with clone3, a joiner with clone3, a new rgroup with the one-shot
 * pthread_create, and a joiner with pthread_create.
 */
static void *creator(void *arg)
{
	static char stacks[CREATORS][2][64 * 1024] __attribute__((aligned(16)));
	static int next;
	int me = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % CREATORS;
	long n = 0;
	cpu_set_t set;
	(void)arg;

	/* Creators and their threads stay on one CPU each, two per CPU: no
	 * cross-CPU wakeup per lifetime (under TCG that waits for the host to
	 * run a halted vCPU), both CPUs busy, frees and RCU on both. */
	CPU_ZERO(&set);
	CPU_SET(me % 2, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!__atomic_load_n(&stop_churn, __ATOMIC_RELAXED)) {
		struct nt_raw r1 = { .stack = stacks[me][0], .stack_size = sizeof(stacks[0][0]) };
		struct nt_raw r2 = { .stack = stacks[me][1], .stack_size = sizeof(stacks[0][0]) };
		pthread_t p1, p2;
		static volatile int go = 1;
		if (nt_raw_start(&r1, control ? 0 : CLONE_NEWRGRP, nt_rt_wait, (void *)&go) > 0)
			n++, __atomic_add_fetch(&new_rgroups, !control, __ATOMIC_RELAXED);
		if (nt_raw_start(&r2, 0, nt_rt_wait, (void *)&go) > 0)
			n++;
		if (!nt_pthread(&p1, !control, nothing, NULL))
			n++, pthread_join(p1, NULL), __atomic_add_fetch(&new_rgroups, !control, __ATOMIC_RELAXED);
		if (!nt_pthread(&p2, 0, nothing, NULL))
			n++, pthread_join(p2, NULL);
		nt_raw_join(&r1);
		nt_raw_join(&r2);
		long total = __atomic_add_fetch(&lifetimes, 4, __ATOMIC_RELAXED);
		if (total >= limit_lifetimes)
			__atomic_store_n(&stop_churn, 1, __ATOMIC_RELAXED);
	}
	return (void *)n;
}

struct creator_arg {
	pthread_t thread;
	int err;
};

/* Run in an agent: a creator thread that joins the agent's rgroup. */
static int start_creator_job(void *p)
{
	struct creator_arg *c = p;
	c->err = pthread_create(&c->thread, NULL, creator, NULL);
	return 0;
}

static int lifetimes_child(void *arg)
{
	double seconds = *(double *)arg;
	struct nt_agent top[2], nested[2];
	struct creator_arg c[CREATORS];
	rgt_failures = 0; /* this child's own count */

	/* creators 0 and 2 in two top-level rgroups, 1 and 3 nested in them */
	for (int i = 0; i < 2; i++) {
		CHECK(nt_agent_start(&top[i], !control) == 0, "top-level rgroup");
		CHECK(nt_agent_start_in(&top[i], &nested[i], 1) == 0, "nested rgroup");
	}
	double t0 = nt_now();
	for (int i = 0; i < CREATORS; i++) {
		nt_agent_run(i & 1 ? &nested[i / 2] : &top[i / 2], start_creator_job, &c[i]);
		CHECK(c[i].err == 0, "creator %d", i);
	}
	while (!__atomic_load_n(&stop_churn, __ATOMIC_RELAXED) && nt_now() - t0 < seconds)
		nt_sleep(0.1);
	__atomic_store_n(&stop_churn, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < CREATORS; i++)
		if (!c[i].err)
			pthread_join(c[i].thread, NULL);
	double t1 = nt_now();
	fprintf(stderr, "  %ld thread lifetimes in %.1f s (%.0f/s), %ld of them in a new rgroup "
		"(clone3 and PR_RGROUP_SET_NEXT_NEW, nested in the creator's), the rest joining\n",
		lifetimes, t1 - t0, lifetimes / (t1 - t0), new_rgroups);
	CHECK(lifetimes > 0, "threads were made");
	for (int i = 0; i < 2; i++) {
		nt_agent_stop(&nested[i]);
		nt_agent_stop(&top[i]);
	}
	return rgt_failures ? 1 : 0;
}

static void lifetimes_case(void)
{
	struct slabs base;
	double warm = 2.0;
	long mem0;

	/* a short round first: lazily made kernel structures are made then */
	long saved = limit_lifetimes;
	limit_lifetimes = 1000;
	nt_in_child("warm-up", lifetimes_child, &warm);
	limit_lifetimes = saved;
	baseline(&base, &mem0);
	fprintf(stderr, "  until %ld lifetimes or %.0f s\n", limit_lifetimes, limit_seconds);
	nt_in_child("lifetimes", lifetimes_child, &limit_seconds);
	check_memory(&base, mem0, "after the lifetimes");
}

static void scale_ten_thousand(void)
{
	struct slabs base;
	long mem0;

	baseline(&base, &mem0);
	nt_in_child("10,000 threads", ten_thousand_child, NULL);
	check_memory(&base, mem0, "after 10,000 threads");
}

static const struct rgt_case cases[] = {
	{ "scale_ten_thousand", scale_ten_thousand },
	{ "lifetimes", lifetimes_case },
};

int main(int argc, char **argv)
{
	const char *s;
	nt_require_rgroups();
	limit_lifetimes = (s = getenv("RGROUP_NATIVE_LIFETIMES")) ? atol(s) : 1000000;
	limit_seconds = (s = getenv("RGROUP_NATIVE_SECONDS")) ? atof(s) : 60;
	control = (s = getenv("RGROUP_NATIVE_CONTROL")) && *s == '1';
	nt_write_file("/proc/sys/kernel/threads-max", "100000");
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 64 * 1024);
	/* the task groups there are before any work of ours */
	struct slabs first;
	long mem;
	baseline(&first, &mem);
	return nt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv, 0);
}
