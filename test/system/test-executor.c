/* SPDX-License-Identifier: MIT */
/*
 * test-executor.c - the executor: work items run in their work
 * group's rgroup, and the kernel (or the governor) divides the CPU between
 * work groups by their nice values however many items each submits.
 *
 *   bad_input           every documented error, and nothing half-made
 *   placement           rules 1, 2, 5, 6: items run in their group's rgroup,
 *                       nested like the work groups, at the group's nice;
 *                       a pool made inside an rgroup nests under it
 *   rule6_permission    a top-level work group below the caller's nice
 *                       needs privilege; nested ones do not
 *   small_address_space many groups under a tight RLIMIT_AS: the anchors'
 *                       stacks are the library's, not pthread's default
 *   idle_and_back       rule 3: an idle group's rgroup disappears, and work
 *                       brings a new one back at the same nice
 *   cancel_and_destroy  what happens to pending and running items
 *   fair_10x            equal nice, one group submits 10x the items: 50/50
 *   nice_split          nice 0 against 5: the model's split
 *   nested_split        nested work groups against a top-level one
 *   work_conservation   when one group runs dry, the other takes its CPU
 *   churn               pools and groups made and destroyed under load:
 *                       descriptors, memory, rgroups, directories back
 *
 * How the CPU splits are measured, and why the tolerance holds on a loaded
 * 2-CPU machine. The split cases pin the test (and so every thread the
 * pool makes: threads inherit the mask) to one CPU, as test-share.c does:
 * on one CPU the kernel's hierarchical fair share is exact up to its time
 * slices, while on two the load balancer and the per-CPU split of a group's
 * weight add noise that says nothing about the executor. Both groups keep
 * a backlog far longer than the window (checked: both still have queued
 * items at its end), items are equal spins of about 0.5 ms, and each
 * group's CPU time is the CPU clocks of its own threads (rgroup_exec_group
 * _info's cpu_ns), not wall time: other load on the machine slows both
 * groups alike and drops out of the share. 0.5 s warm-up (the governor
 * adapts over a few of its periods), then the one rule of
 * test/lib/judge.h: the median of five 1 s windows, within 2 points plus
 * 5% of the model's share, on every backend. On the governor a window
 * counts only if the process got CPU worth dividing (see split_case()).
 */
#include <malloc.h>
#include <sys/mman.h>
#include <linux/capability.h>

#include "scenario.h"
#include "sgroup.h"
#include "judge.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer) || \
    defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
/* The sanitizers keep freed memory and their own shadow, and intercept
 * malloc (mallinfo2() says nothing): memory says nothing there. */
#define MEM_CHECK (!SANITIZED)
/* Nor is a worker's wait for work only the executor's there: the
 * runtime's interceptors and locks run in it too (work_conservation). */
#define OWN_WAIT_CHECK (!SANITIZED)

#define WARMUP_S   0.5
/* Items per group for a split, of 0.5 ms of CPU each: 30 s of work, so
 * that a group at three quarters of the pinned CPU still has items queued
 * when the judge, on a loaded machine, measures for 40 s (a window
 * without enough CPU is measured again). What is left is canceled. */
#define SPLIT_ITEMS 60000

static char sg[PATH_MAX];
static cpu_set_t all_cpus;
static unsigned long iters_per_ms;

/* ---- Items ------------------------------------------------------------ */

static void spin(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i++)
		;
}

/* Loop iterations per ms of this thread's CPU time (the best of five). */
static void calibrate(void)
{
	double best = 1e9;
	const unsigned long n = 2000000;

	for (int i = 0; i < 5; i++) {
		double c0 = scn_thread_cpu(scn_gettid());
		spin(n);
		double c = scn_thread_cpu(scn_gettid()) - c0;
		if (c > 0 && c < best)
			best = c;
	}
	iters_per_ms = (unsigned long)(n / (best * 1000));
	fprintf(stderr, "  calibration: %lu iterations per ms of CPU\n", iters_per_ms);
}

struct counter {
	long ran;                 /* atomic */
	long canceled;            /* atomic: the canceled callback */
	unsigned long iters;
};

static void count_item(void *arg)
{
	struct counter *c = arg;

	spin(c->iters);
	__atomic_add_fetch(&c->ran, 1, __ATOMIC_RELAXED);
}

static void on_canceled(void (*fn)(void *), void *arg)
{
	if (fn == count_item)
		__atomic_add_fetch(&((struct counter *)arg)->canceled, 1, __ATOMIC_RELAXED);
}

/* What an item sees of where it runs, read while it runs: the pool ends
 * an idle group's rgroups soon after its last item, so the test cannot
 * look at them after rgroup_exec_wait(). */
struct probe {
	pid_t tid;
	rgroup_id_t rg, parent;
	int nice, depth, ok;
	int pnice, pdepth, pok;	/* the parent rgroup's */
	int listed;		/* rgroups of the process */
	int seen;		/* atomic: set once the above are read */
	double sleep_s;
};

static void probe_item(void *arg)
{
	struct probe *p = arg;
	struct rgroup_info info = { .sz = sizeof(info) };

	p->tid = scn_gettid();
	if (rgroup_of(0, &p->rg) == 0 && p->rg && rgroup_info(p->rg, &info) == 0) {
		p->parent = info.parent;
		p->depth = (int)info.depth;
		errno = 0;
		p->nice = rgroup_getpriority(PRIO_RGRP, 0);
		p->ok = errno == 0;
	}
	if (p->parent) {
		struct rgroup_info pi = { .sz = sizeof(pi) };

		if (rgroup_info(p->parent, &pi) == 0) {
			p->pnice = pi.nice;
			p->pdepth = (int)pi.depth;
			p->pok = 1;
		}
	}
	p->listed = rgroup_list(NULL, 0);
	__atomic_store_n(&p->seen, 1, __ATOMIC_RELEASE);
	if (p->sleep_s > 0)
		scn_sleep(p->sleep_s);
}

/* An item that holds its worker until released. */
struct gate {
	int started, release, finished; /* atomic */
};

static void gate_item(void *arg)
{
	struct gate *g = arg;

	__atomic_store_n(&g->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&g->release, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	__atomic_store_n(&g->finished, 1, __ATOMIC_RELEASE);
}

static int wait_flag(int *flag, double timeout)
{
	double end = scn_now() + timeout;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		if (scn_now() > end)
			return -1;
		else
			scn_sleep(0.001);
	return 0;
}

static struct rgroup_exec_group_info ginfo(rgroup_exec_group_t g)
{
	struct rgroup_exec_group_info i = { .sz = sizeof(i) };

	if (rgroup_exec_group_info(g, &i) < 0)
		memset(&i, 0, sizeof(i));
	return i;
}

static rgroup_exec_t make_pool(unsigned max_workers, unsigned idle_ms)
{
	struct rgroup_exec_opts o = { .sz = sizeof(o), .max_workers = max_workers,
				      .idle_ms = idle_ms, .canceled = on_canceled };
	rgroup_exec_t p = 0;
	int r = rgroup_exec_create(&p, &o);

	CHECK(r == 0, "rgroup_exec_create: %s", strerror(-r));
	return r == 0 ? p : 0;
}

static rgroup_exec_group_t make_group(rgroup_exec_t pool, const char *name,
				      rgroup_exec_group_t parent, int nice, unsigned max)
{
	struct rgroup_exec_group_opts o = { .sz = sizeof(o), .parent = parent, .nice = nice,
					    .max_workers = max };
	rgroup_exec_group_t g = 0;
	int r = rgroup_exec_group_create(pool, name, &o, &g);

	CHECK(r == 0, "group %s: %s", name, strerror(-r));
	return g;
}

/* ---- Bad input -------------------------------------------------------- */

struct inside {
	rgroup_exec_t pool;
	rgroup_exec_group_t group;
	int wait_r, destroy_r, gdestroy_r, waitall_r;
};

static void inside_item(void *arg)
{
	struct inside *in = arg;

	in->wait_r = rgroup_exec_wait(in->pool, in->group, 100);
	in->waitall_r = rgroup_exec_wait(in->pool, 0, 100);
	in->destroy_r = rgroup_exec_destroy(in->pool, 0);
	in->gdestroy_r = rgroup_exec_group_destroy(in->group, 0);
}

static void bad_input(void)
{
	struct {
		struct rgroup_exec_opts o;
		char tail[16];
	} big = { .o = { .sz = sizeof(big) } };
	struct rgroup_exec_opts o = { .sz = sizeof(o) };
	struct rgroup_exec_group_opts go = { .sz = sizeof(go) };
	struct rgroup_exec_group_info info = { .sz = sizeof(info) };
	struct counter c = { 0 };
	struct gate gate = { 0 };
	rgroup_exec_t p = 0, p2 = 0;
	rgroup_exec_group_t a = 0, b = 0, n = 0, x = 0;
	int fd0 = rgt_fd_steady(); /* after warm_up(): the library attached */
	char longname[RGROUP_EXEC_NAME_MAX + 1];

	/* Options. */
	CHECK(rgroup_exec_create(NULL, NULL) == -EINVAL, "NULL pool");
	o.sz = 4;
	CHECK(rgroup_exec_create(&p, &o) == -EINVAL && p == 0, "sz too small");
	o.sz = sizeof(o);
	o.max_workers = 100000;
	CHECK(rgroup_exec_create(&p, &o) == -EINVAL, "max_workers 100000");
	o.max_workers = 0;
	o.stack_size = 1;
	CHECK(rgroup_exec_create(&p, &o) == -EINVAL, "stack_size 1");
	big.tail[3] = 1;
	CHECK(rgroup_exec_create(&p, &big.o) == -EINVAL, "unknown non-zero option");
	big.tail[3] = 0;
	CHECK(rgroup_exec_create(&p, &big.o) == 0 && p, "a newer caller's larger opts, zero tail");
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");
	CHECK(rgroup_exec_create(&p2, NULL) == 0, "NULL opts");
	p = make_pool(2, 200);

	/* Groups. */
	CHECK(rgroup_exec_group_create(0, "a", NULL, &a) == -ENOENT, "pool 0");
	CHECK(rgroup_exec_group_create(p + (1ull << 32), "a", NULL, &a) == -ENOENT, "stale pool handle");
	CHECK(rgroup_exec_group_create(12345, "a", NULL, &a) == -ENOENT, "never a pool");
	CHECK(rgroup_exec_group_create(p, "a", NULL, NULL) == -EINVAL, "NULL group");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK(rgroup_exec_group_create(p, longname, NULL, &a) == -ENAMETOOLONG, "name too long");
	go.sz = 1;
	CHECK(rgroup_exec_group_create(p, "a", &go, &a) == -EINVAL, "group opts sz 1");
	go.sz = sizeof(go);
	go.max_workers = 5000;
	CHECK(rgroup_exec_group_create(p, "a", &go, &a) == -EINVAL, "group max_workers 5000");
	go.max_workers = 0;
	go.parent = 77;
	CHECK(rgroup_exec_group_create(p, "a", &go, &a) == -ENOENT, "unknown parent");
	go.parent = 0;
	CHECK(rgroup_exec_group_create(p, "a", &go, &a) == 0, "group a");
	CHECK(rgroup_exec_group_create(p, "b", NULL, &b) == 0, "group b");
	go.parent = a;
	CHECK(rgroup_exec_group_create(p2, "x", &go, &x) == -EINVAL, "parent of another pool");
	CHECK(rgroup_exec_group_create(p, "n", &go, &n) == 0, "nested n");

	/* Submission. */
	c.iters = 1;
	CHECK(rgroup_exec_submit(0, count_item, &c) == -ENOENT, "group 0");
	CHECK(rgroup_exec_submit((a & ~0xffffffull) | 60000, count_item, &c) == -ENOENT, "never a group");
	CHECK(rgroup_exec_submit(p, count_item, &c) == -ENOENT, "a pool handle as a group");
	CHECK(rgroup_exec_submit(a, NULL, &c) == -EINVAL, "fn NULL");
	CHECK(rgroup_exec_submit(n, count_item, &c) == 0, "submit");
	CHECK(rgroup_exec_wait(p, n, 5000) == 0 && c.ran == 1, "ran (%ld)", c.ran);
	CHECK(rgroup_exec_wait(p2, n, 100) == -ENOENT, "wait: group of another pool");
	CHECK(rgroup_exec_cancel(p2, n) == -ENOENT, "cancel: group of another pool");
	info.sz = 8;
	CHECK(rgroup_exec_group_info(a, &info) == -EINVAL, "info sz 8");
	info.sz = sizeof(info);
	CHECK(rgroup_exec_group_info(a, NULL) == -EINVAL, "info NULL");
	CHECK(rgroup_exec_group_info(n, &info) == 0 && info.parent == a && info.pool == p &&
	      !strcmp(info.name, "n") && info.submitted == 1 && info.completed == 1, "info of n");

	/* A wait that times out. */
	CHECK(rgroup_exec_submit(b, gate_item, &gate) == 0, "gate");
	CHECK(wait_flag(&gate.started, 5) == 0, "gate started");
	CHECK(rgroup_exec_wait(p, b, 20) == -ETIMEDOUT, "wait 20 ms on a held item");
	CHECK(rgroup_exec_wait(p, 0, 0) == -ETIMEDOUT, "wait 0 ms, every group");
	__atomic_store_n(&gate.release, 1, __ATOMIC_RELEASE);
	CHECK(rgroup_exec_wait(p, 0, 5000) == 0, "wait every group");

	/* From inside an item: what would wait for itself. */
	struct inside in = { .pool = p, .group = b };
	CHECK(rgroup_exec_submit(b, inside_item, &in) == 0 && rgroup_exec_wait(p, b, 5000) == 0,
	      "inside item");
	CHECK(in.wait_r == -EDEADLK, "wait on its own group: %d", in.wait_r);
	CHECK(in.waitall_r == -EDEADLK, "wait on its own pool: %d", in.waitall_r);
	CHECK(in.destroy_r == -EDEADLK, "destroy its own pool: %d", in.destroy_r);
	CHECK(in.gdestroy_r == -EDEADLK, "destroy its own group: %d", in.gdestroy_r);

	/* Destroyed groups. */
	CHECK(rgroup_exec_group_destroy(a, 0) == -EBUSY, "group with a subgroup: EBUSY");
	CHECK(rgroup_exec_group_destroy(n, 2) == -EINVAL, "bad flags");
	CHECK(rgroup_exec_group_destroy(n, 0) == 0, "destroy n");
	CHECK(rgroup_exec_submit(n, count_item, &c) == -ENOENT, "submit to a destroyed group");
	CHECK(rgroup_exec_group_info(n, &info) == -ENOENT, "info of a destroyed group");
	CHECK(rgroup_exec_group_setnice(n, 3) == -ENOENT, "setnice of a destroyed group");
	CHECK(rgroup_exec_wait(p, n, 0) == -ENOENT, "wait on a destroyed group");
	CHECK(rgroup_exec_group_destroy(n, 0) == -ENOENT, "destroy twice");
	CHECK(rgroup_exec_group_destroy(a, 0) == 0, "now a can go");
	go.parent = a;
	CHECK(rgroup_exec_group_create(p, "x", &go, &x) == -ENOENT, "destroyed parent");

	/* Shutdown. */
	CHECK(rgroup_exec_shutdown(p) == 0, "shutdown");
	CHECK(rgroup_exec_submit(b, count_item, &c) == -ESHUTDOWN, "submit after shutdown");
	CHECK(rgroup_exec_group_create(p, "y", NULL, &x) == -ESHUTDOWN, "group after shutdown");
	CHECK(rgroup_exec_group_info(b, &info) == 0, "info after shutdown");

	/* Destroyed pools. */
	CHECK(rgroup_exec_destroy(p, 4) == -EINVAL, "destroy: bad flags");
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");
	CHECK(rgroup_exec_destroy(p, 0) == -ENOENT, "destroy twice");
	CHECK(rgroup_exec_submit(b, count_item, &c) == -ENOENT, "submit to a destroyed pool's group");
	CHECK(rgroup_exec_group_create(p, "z", NULL, &x) == -ENOENT, "group in a destroyed pool");
	CHECK(rgroup_exec_shutdown(p) == -ENOENT, "shutdown a destroyed pool");
	CHECK(rgroup_exec_wait(p, 0, 0) == -ENOENT, "wait on a destroyed pool");
	CHECK(rgroup_exec_cancel(p, 0) == -ENOENT, "cancel on a destroyed pool");
	CHECK(rgroup_exec_destroy(p2, 0) == 0, "destroy p2");

	CHECK(scn_wait_no_groups(3.0) == 0, "no rgroup left (%d)", rgroup_list(NULL, 0));
	int fd1 = rgt_fd_steady();
	CHECK(fd1 == fd0, "descriptors: %d before, %d after", fd0, fd1);
}

/* ---- Where items run -------------------------------------------------- */

#define NPROBE 24

/* Submit NPROBE probes to g (sleeping `s` each) and wait; 0 if all ran in
 * one rgroup (written to *rg), with the number of distinct threads. */
static int probe_group(rgroup_exec_t pool, rgroup_exec_group_t g, double s,
		       struct probe *pr, rgroup_id_t *rg, int *threads)
{
	int bad = 0;

	memset(pr, 0, NPROBE * sizeof(*pr));
	for (int i = 0; i < NPROBE; i++) {
		pr[i].sleep_s = s;
		if (rgroup_exec_submit(g, probe_item, &pr[i]) < 0)
			bad++;
	}
	if (rgroup_exec_wait(pool, g, 10000) < 0)
		bad++;
	*rg = pr[0].rg;
	*threads = 0;
	for (int i = 0; i < NPROBE; i++) {
		int seen = 0;
		if (!pr[i].ok || pr[i].rg != *rg)
			bad++;
		for (int j = 0; j < i; j++)
			seen |= pr[j].tid == pr[i].tid;
		*threads += !seen;
	}
	return bad ? -1 : 0;
}

struct nested_pool {
	int ok;
	rgroup_id_t self, group_rg, group_parent;
};

static void *pool_from_rgroup(void *arg)
{
	struct nested_pool *np = arg;
	rgroup_exec_t p = 0;
	rgroup_exec_group_t g = 0;
	struct probe pr = { 0 };

	rgroup_of(0, &np->self);
	if (rgroup_exec_create(&p, NULL) == 0 &&
	    rgroup_exec_group_create(p, "inner", NULL, &g) == 0 &&
	    rgroup_exec_submit(g, probe_item, &pr) == 0 &&
	    rgroup_exec_wait(p, g, 10000) == 0) {
		np->group_rg = pr.rg;
		np->group_parent = pr.parent;
		np->ok = pr.ok;
	}
	if (p)
		rgroup_exec_destroy(p, 0);
	return NULL;
}

static void placement(void)
{
	static struct probe pa[NPROBE], pn[NPROBE], pb[NPROBE];
	rgroup_exec_t p = make_pool(3, 2000);
	rgroup_id_t ra, rn, rb, self = 1;
	int ta, tn, tb;

	rgroup_exec_group_t a = make_group(p, "A", 0, 3, 0);
	rgroup_exec_group_t n = make_group(p, "A.n", a, -5, 0);
	rgroup_exec_group_t b = make_group(p, "B", 0, 0, 1);

	CHECK(probe_group(p, a, 0.005, pa, &ra, &ta) == 0, "A: every item in one rgroup");
	CHECK(probe_group(p, n, 0.005, pn, &rn, &tn) == 0, "A.n: every item in one rgroup");
	CHECK(probe_group(p, b, 0.005, pb, &rb, &tb) == 0, "B: every item in one rgroup");
	fprintf(stderr, "  A: rgroup %llu, %d threads; A.n: rgroup %llu (parent %llu), %d threads;"
		" B: rgroup %llu, %d thread\n", (unsigned long long)ra, ta, (unsigned long long)rn,
		(unsigned long long)pn[0].parent, tn, (unsigned long long)rb, tb);
	CHECK(ra && rn && rb && ra != rn && ra != rb && rn != rb, "three distinct rgroups");
	CHECK(pa[0].parent == 0 && pa[0].depth == 1, "A is a top-level rgroup (parent %llu)",
	      (unsigned long long)pa[0].parent);
	CHECK(pn[0].parent == ra && pn[0].depth == 2, "A.n nests under A's rgroup");
	CHECK(pb[0].parent == 0, "B is a top-level rgroup");
	CHECK(pa[0].nice == 3 && pn[0].nice == -5 && pb[0].nice == 0,
	      "nice values applied: %d, %d, %d", pa[0].nice, pn[0].nice, pb[0].nice);
	/* Workers on demand, never more than the maximum. */
	CHECK(ta >= 2 && ta <= 3, "A grew to 2..3 workers: %d", ta);
	CHECK(tb == 1, "B (max 1) used one worker: %d", tb);
	struct rgroup_exec_group_info ia = ginfo(a);
	CHECK(ia.rgroup == ra && ia.rgroups == 1 && ia.workers <= 3 && ia.nice == 3,
	      "info: rgroup %llu, %llu rgroups, %u workers", (unsigned long long)ia.rgroup,
	      (unsigned long long)ia.rgroups, ia.workers);
	/* The caller is where it was: no thread moved. */
	CHECK(rgroup_of(0, &self) == 0 && self == 0, "the submitter stays in the sgroup");

	/* A new nice reaches the live rgroup... */
	CHECK(rgroup_exec_group_setnice(a, 7) == 0, "setnice A 7");
	CHECK(probe_group(p, a, 0, pa, &ra, &ta) == 0 && pa[0].nice == 7, "A now at nice %d",
	      pa[0].nice);
	CHECK(rgroup_exec_group_setnice(n, 40) == 0 && ginfo(n).nice == 19, "clamped to 19");
	CHECK(probe_group(p, n, 0, pn, &rn, &tn) == 0 && pn[0].nice == 19, "A.n at nice %d",
	      pn[0].nice);
	if (rgt_kernel()) {
		struct rgroup_info ri = { .sz = sizeof(ri) };
		CHECK(rgroup_info(ra, &ri) == 0 && ri.nice == 7 && ri.weight == rgroup_nice_to_weight(7),
		      "the library's view of A: nice %d weight %u", ri.nice, ri.weight);
	}
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone (%d left)", rgroup_list(NULL, 0));

	/* A pool made inside an rgroup: its groups nest under it. */
	struct nested_pool np = { 0 };
	pthread_t t;
	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, pool_from_rgroup, &np) == 0, "thread");
	pthread_join(t, NULL);
	CHECK(np.ok && np.self && np.group_rg && np.group_parent == np.self,
	      "inner pool's group %llu nests under the creator's rgroup %llu (parent %llu)",
	      (unsigned long long)np.group_rg, (unsigned long long)np.self,
	      (unsigned long long)np.group_parent);
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone (%d left)", rgroup_list(NULL, 0));
}

/* ---- Rule 6 ----------------------------------------------------------- */

/* In a child without CAP_SYS_NICE, RLIMIT_NICE 0, at nice 4: results in
 * a shared page. */
static void rule6_permission(void)
{
	int *res = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static const char *what[] = {
		"create top-level at nice 2: EACCES", "create top-level at nice 6",
		"default nice is the caller's 4", "setnice 3 (no rgroup yet): EACCES",
		"setnice 5 (no rgroup yet)", "item sees nice 5", "setnice 1 (live rgroup): EACCES",
		"nested group at -20", "nested item sees -20", "nested setnice -15 (live)",
	};
	int status;

	CHECK(res != MAP_FAILED, "mmap");
	memset(res, 0, 4096);
	pid_t pid = fork();
	if (pid == 0) {
		rgroup_exec_t p;
		rgroup_exec_group_t a, d, n;
		struct probe pr = { 0 };
		struct rgroup_exec_group_opts o = { .sz = sizeof(o) };

		if (setrlimit(RLIMIT_NICE, &(struct rlimit){ 0, 0 }) < 0 || rgt_drop_cap_sys_nice() < 0 ||
		    setpriority(PRIO_PROCESS, scn_gettid(), 4) < 0 || rgroup_exec_create(&p, NULL) < 0)
			_exit(3);
		o.nice = 2;
		res[0] = rgroup_exec_group_create(p, "a", &o, &a) == -EACCES;
		o.nice = 6;
		res[1] = rgroup_exec_group_create(p, "a", &o, &a) == 0;
		res[2] = rgroup_exec_group_create(p, "d", NULL, &d) == 0 && ginfo(d).nice == 4;
		res[3] = rgroup_exec_group_setnice(a, 3) == -EACCES;
		res[4] = rgroup_exec_group_setnice(a, 5) == 0;
		pr.sleep_s = 0.3; /* keeps the rgroup alive for the next call */
		res[5] = rgroup_exec_submit(a, probe_item, &pr) == 0 && wait_flag(&pr.seen, 10) == 0;
		res[6] = rgroup_exec_group_setnice(a, 1) == -EACCES;
		res[5] = res[5] && rgroup_exec_wait(p, a, 5000) == 0 && pr.nice == 5;
		o.parent = a;
		o.nice = -20;
		res[7] = rgroup_exec_group_create(p, "n", &o, &n) == 0;
		memset(&pr, 0, sizeof(pr));
		pr.sleep_s = 0.3;
		res[8] = rgroup_exec_submit(n, probe_item, &pr) == 0 && wait_flag(&pr.seen, 10) == 0;
		res[9] = rgroup_exec_group_setnice(n, -15) == 0;
		res[8] = res[8] && rgroup_exec_wait(p, n, 5000) == 0 && pr.nice == -20;
		rgroup_exec_destroy(p, 0);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++)
		CHECK(res[i] == 1, "%s", what[i]);
	munmap(res, 4096);
}

/* ---- Under RLIMIT_AS ---------------------------------------------------- */

/* The process's address space now, in bytes (0 if unknown). */
static unsigned long vm_size(void)
{
	char buf[4096], *p;

	if (rgt_read("/proc/self/status", buf, sizeof(buf)) < 0 || !(p = strstr(buf, "VmSize:")))
		return 0;
	return strtoul(p + 7, NULL, 10) * 1024;
}

enum { AS_GROUPS = 16 };
static int as_running;   /* atomic: items running at once */

/* Waits until every group's item runs at the same time (at most 10 s). */
static void together_item(void *arg)
{
	double end = scn_now() + 10;

	__atomic_add_fetch(&as_running, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&as_running, __ATOMIC_RELAXED) < AS_GROUPS && scn_now() < end)
		scn_sleep(0.002);
	if (__atomic_load_n(&as_running, __ATOMIC_RELAXED) >= AS_GROUPS)
		__atomic_add_fetch((int *)arg, 1, __ATOMIC_RELAXED);
}

/*
 * In a child whose address space has room for 16 workers on pthread's
 * default stack and 32 MiB more, 16 groups run one item each at the same
 * time. The anchors, one per group, run only the library's code: on the
 * default stack too they would not fit, and some items would never start.
 */
static void small_address_space(void)
{
	int *met = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct rlimit stack;
	int status;

	if (!MEM_CHECK) {
		fprintf(stderr, "  not under a sanitizer: its shadow memory needs the address space\n");
		return;
	}
	CHECK(met != MAP_FAILED && getrlimit(RLIMIT_STACK, &stack) == 0, "mmap, getrlimit");
	if (stack.rlim_cur == RLIM_INFINITY)
		stack.rlim_cur = 8ul << 20;   /* what pthread then takes */
	*met = 0;
	pid_t pid = fork();
	if (pid == 0) {
		rgroup_exec_group_t g[AS_GROUPS];
		rgroup_exec_t p;
		unsigned long vm;

		mallopt(M_ARENA_MAX, 1);   /* no 64 MiB arena per thread */
		vm = vm_size() + AS_GROUPS * stack.rlim_cur + (32ul << 20);
		if (vm == AS_GROUPS * stack.rlim_cur + (32ul << 20) ||
		    setrlimit(RLIMIT_AS, &(struct rlimit){ vm, vm }) < 0)
			_exit(3);
		if (rgroup_exec_create(&p, &(struct rgroup_exec_opts){ .sz = sizeof(struct rgroup_exec_opts),
								      .max_workers = 1 }) < 0)
			_exit(4);
		for (int i = 0; i < AS_GROUPS; i++) {
			char name[16];

			snprintf(name, sizeof(name), "g%d", i);
			if (rgroup_exec_group_create(p, name, NULL, &g[i]) < 0 ||
			    rgroup_exec_submit(g[i], together_item, met) < 0)
				_exit(5);
		}
		int r = rgroup_exec_wait(p, 0, 30000);
		rgroup_exec_destroy(p, 0);
		_exit(r == 0 ? 0 : 6);
	}
	CHECK(pid > 0, "fork");
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	CHECK(*met == AS_GROUPS, "%d of %d items ran at the same time as all the others",
	      *met, AS_GROUPS);
	munmap(met, 4096);
}

/* ---- Rule 3: idle groups end, and come back --------------------------- */

static int wait_until_gone(rgroup_exec_group_t g, double timeout)
{
	double end = scn_now() + timeout;

	while (ginfo(g).rgroup || ginfo(g).workers)
		if (scn_now() > end)
			return -1;
		else
			scn_sleep(0.005);
	return 0;
}

static void idle_and_back(void)
{
	rgroup_exec_t p = make_pool(2, 100);
	rgroup_exec_group_t P = make_group(p, "P", 0, 2, 0);
	rgroup_exec_group_t C = make_group(p, "P.C", P, 4, 0);
	struct probe pr = { 0 }, pr2 = { 0 };
	int base = rgroup_list(NULL, 0);

	CHECK(base == 0, "no rgroup before (%d)", base);
	CHECK(ginfo(P).rgroup == 0 && ginfo(C).rgroup == 0, "no rgroup before any work");
	CHECK(rgroup_exec_submit(C, probe_item, &pr) == 0 && rgroup_exec_wait(p, C, 5000) == 0,
	      "work in C");
	CHECK(pr.ok && pr.nice == 4 && pr.depth == 2, "C's item at nice %d, depth %d", pr.nice, pr.depth);
	CHECK(pr.pok && pr.pnice == 2, "P's rgroup made for C, nice %d", pr.pnice);
	CHECK(pr.listed == 2, "two rgroups while busy (%d)", pr.listed);

	/* 100 ms idle: C's worker ends, then C's and P's anchors. */
	double t0 = scn_now();
	CHECK(wait_until_gone(C, 3) == 0 && wait_until_gone(P, 3) == 0, "C and P have no threads");
	CHECK(scn_wait_no_groups(3.0) == 0, "the rgroups are gone (%d listed, %d directories)",
	      rgroup_list(NULL, 0), scn_own_dirs());
	fprintf(stderr, "  gone %.2f s after the last item (idle_ms 100; directories may stay"
		" up to 0.5 s as the library's spares)\n", scn_now() - t0);

	t0 = scn_now();
	int r = rgroup_exec_submit(C, probe_item, &pr2);
	int w = r ? r : rgroup_exec_wait(p, C, 10000);
	struct rgroup_exec_group_info ic = ginfo(C), ip = ginfo(P);
	CHECK(r == 0 && w == 0, "work in C again: submit %d, wait %d after %.2f s; C: error %d, queued %u,"
	      " %u workers, rgroup %llu; P: error %d, rgroup %llu", r, w, scn_now() - t0, ic.error,
	      ic.queued, ic.workers, (unsigned long long)ic.rgroup, ip.error, (unsigned long long)ip.rgroup);
	fprintf(stderr, "  back %.3f s after the submission\n", scn_now() - t0);
	CHECK(pr2.ok && pr2.rg && pr2.rg != pr.rg && pr2.parent != pr.parent,
	      "new rgroups: C %llu -> %llu, P %llu -> %llu", (unsigned long long)pr.rg,
	      (unsigned long long)pr2.rg, (unsigned long long)pr.parent, (unsigned long long)pr2.parent);
	CHECK(pr2.nice == 4, "C again at nice %d", pr2.nice);
	CHECK(pr2.pok && pr2.pnice == 2 && pr2.pdepth == 1, "P again at nice %d, depth %d", pr2.pnice,
	      pr2.pdepth);
	CHECK(ginfo(C).rgroups == 2 && ginfo(P).rgroups == 2, "each had two rgroups (%llu, %llu)",
	      (unsigned long long)ginfo(C).rgroups, (unsigned long long)ginfo(P).rgroups);
	/* Still right after a change of nice while it had none. */
	CHECK(wait_until_gone(P, 3) == 0, "gone again");
	CHECK(rgroup_exec_group_setnice(C, 6) == 0 && rgroup_exec_group_setnice(P, 1) == 0, "setnice");
	memset(&pr2, 0, sizeof(pr2));
	CHECK(rgroup_exec_submit(C, probe_item, &pr2) == 0 && rgroup_exec_wait(p, C, 5000) == 0,
	      "work in C a third time");
	CHECK(pr2.nice == 6 && pr2.pok && pr2.pnice == 1, "the new values: C %d, P %d", pr2.nice,
	      pr2.pnice);
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");
}

/* ---- Items that end their worker ------------------------------------- */

static int ended_exit, ended_cancel, ended_plain;

static void exit_item(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&ended_exit, 1, __ATOMIC_RELAXED);
	pthread_exit(NULL);
}

static void cancel_item(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&ended_cancel, 1, __ATOMIC_RELAXED);
	pthread_cancel(pthread_self());
	pthread_testcancel();
	__atomic_add_fetch(&ended_cancel, 1000, __ATOMIC_RELAXED);   /* never */
}

static void plain_item(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&ended_plain, 1, __ATOMIC_RELAXED);
}

/* An item that calls pthread_exit() or is cancelled ends its worker, not
 * the group: the item counts as done, the rest run, wait and destroy
 * return, nothing is left behind. */
static void item_ends_worker(void)
{
	rgroup_exec_t p = make_pool(2, 100);
	rgroup_exec_group_t G = make_group(p, "G", 0, 3, 0);

	for (int i = 0; i < 3; i++)
		CHECK(rgroup_exec_submit(G, exit_item, NULL) == 0 &&
		      rgroup_exec_submit(G, cancel_item, NULL) == 0 &&
		      rgroup_exec_submit(G, plain_item, NULL) == 0, "submit");
	for (int i = 0; i < 7; i++)
		CHECK(rgroup_exec_submit(G, plain_item, NULL) == 0, "submit");
	int w = rgroup_exec_wait(p, G, 10000);
	struct rgroup_exec_group_info gi = ginfo(G);
	CHECK(w == 0, "wait returns: %d (queued %u, running %u, workers %u)", w, gi.queued,
	      gi.running, gi.workers);
	CHECK(ended_exit == 3 && ended_cancel == 3 && ended_plain == 10,
	      "every item ran once: %d pthread_exit, %d cancelled, %d plain", ended_exit,
	      ended_cancel, ended_plain);
	CHECK(gi.running == 0 && gi.queued == 0, "nothing running or queued (%u, %u)", gi.running,
	      gi.queued);
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy returns");
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");
}

/* ---- Pending and running work ----------------------------------------- */

struct destroyer {
	rgroup_exec_t pool;
	rgroup_exec_group_t group;
	unsigned flags;
	int r, done;
};

static void *destroy_thread(void *arg)
{
	struct destroyer *d = arg;

	d->r = d->group ? rgroup_exec_group_destroy(d->group, d->flags)
			: rgroup_exec_destroy(d->pool, d->flags);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void cancel_and_destroy(void)
{
	struct counter c = { .iters = 1 }, c2 = { .iters = 1 };
	struct gate g1 = { 0 }, g2 = { 0 }, g3 = { 0 };
	rgroup_exec_t p = make_pool(1, 1000);
	rgroup_exec_group_t a = make_group(p, "a", 0, 0, 0);
	rgroup_exec_group_t b = make_group(p, "b", 0, 0, 0);
	rgroup_exec_group_t bn = make_group(p, "b.n", b, 0, 0);
	struct destroyer d = { 0 };
	pthread_t t;

	/* cancel: pending items go (each reported to the callback once),
	 * the running one goes on. */
	CHECK(rgroup_exec_submit(a, gate_item, &g1) == 0 && wait_flag(&g1.started, 5) == 0, "held");
	for (int i = 0; i < 10; i++)
		rgroup_exec_submit(a, count_item, &c);
	CHECK(rgroup_exec_cancel(p, a) == 10, "cancel returns 10");
	CHECK(c.canceled == 10 && c.ran == 0, "callback 10 times (%ld), none ran (%ld)", c.canceled, c.ran);
	CHECK(!g1.finished && ginfo(a).running == 1, "the running item goes on");
	for (int i = 0; i < 5; i++)
		rgroup_exec_submit(a, count_item, &c);
	__atomic_store_n(&g1.release, 1, __ATOMIC_RELEASE);
	CHECK(rgroup_exec_wait(p, a, 5000) == 0 && c.ran == 5, "later items run (%ld)", c.ran);
	struct rgroup_exec_group_info ia = ginfo(a);
	CHECK(ia.submitted == 16 && ia.completed == 6 && ia.canceled == 10, "counts %llu/%llu/%llu",
	      (unsigned long long)ia.submitted, (unsigned long long)ia.completed,
	      (unsigned long long)ia.canceled);

	/* cancel of every group, nested included. */
	c = (struct counter){ .iters = 1 };
	CHECK(rgroup_exec_submit(a, gate_item, &g2) == 0 && wait_flag(&g2.started, 5) == 0, "held");
	CHECK(rgroup_exec_submit(bn, gate_item, &g3) == 0 && wait_flag(&g3.started, 5) == 0, "held");
	for (int i = 0; i < 4; i++) {
		rgroup_exec_submit(a, count_item, &c);
		rgroup_exec_submit(bn, count_item, &c);
	}
	CHECK(rgroup_exec_cancel(p, 0) == 8 && c.canceled == 8, "cancel all: 8 (%ld)", c.canceled);
	__atomic_store_n(&g2.release, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g3.release, 1, __ATOMIC_RELEASE);
	CHECK(rgroup_exec_wait(p, 0, 5000) == 0, "wait all");

	/* Group destroy: waits for the running item, cancels the rest. */
	g1 = (struct gate){ 0 };
	c = (struct counter){ .iters = 1 };
	CHECK(rgroup_exec_submit(bn, gate_item, &g1) == 0 && wait_flag(&g1.started, 5) == 0, "held");
	for (int i = 0; i < 5; i++)
		rgroup_exec_submit(bn, count_item, &c);
	d = (struct destroyer){ .group = bn };
	pthread_create(&t, NULL, destroy_thread, &d);
	/* Under way once it has canceled the pending items: it refuses new
	 * ones before that. */
	for (double end = scn_now() + 10;
	     __atomic_load_n(&c.canceled, __ATOMIC_RELAXED) < 5 && scn_now() < end;)
		scn_sleep(0.001);
	CHECK(!d.done, "destroy waits for the running item");
	CHECK(rgroup_exec_submit(bn, count_item, &c) == -ENOENT, "no submissions while it goes");
	__atomic_store_n(&g1.release, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK(d.r == 5 && g1.finished && c.ran == 0 && c.canceled == 5,
	      "destroy returned %d after the item finished; ran %ld, canceled %ld", d.r, c.ran, c.canceled);

	/* Group destroy with RGROUP_EXEC_DRAIN: everything runs. */
	bn = make_group(p, "b.n2", b, 0, 0);
	c = (struct counter){ .iters = 100 };
	for (int i = 0; i < 50; i++)
		rgroup_exec_submit(bn, count_item, &c);
	CHECK(rgroup_exec_group_destroy(bn, RGROUP_EXEC_DRAIN) == 0 && c.ran == 50 && c.canceled == 0,
	      "drained: ran %ld, canceled %ld", c.ran, c.canceled);

	/* Shutdown: what was submitted still runs. */
	c = (struct counter){ .iters = 100 };
	for (int i = 0; i < 20; i++)
		rgroup_exec_submit(a, count_item, &c);
	CHECK(rgroup_exec_shutdown(p) == 0 && rgroup_exec_wait(p, 0, 5000) == 0 && c.ran == 20,
	      "after shutdown the queue drains (%ld)", c.ran);
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");

	/* Pool destroy: running items finish, pending ones are canceled... */
	p = make_pool(1, 1000);
	a = make_group(p, "a", 0, 0, 0);
	b = make_group(p, "b", 0, 0, 0);
	bn = make_group(p, "b.n", b, 0, 0);
	g1 = (struct gate){ 0 };
	g2 = (struct gate){ 0 };
	c = (struct counter){ .iters = 1 };
	CHECK(rgroup_exec_submit(a, gate_item, &g1) == 0 && rgroup_exec_submit(bn, gate_item, &g2) == 0 &&
	      wait_flag(&g1.started, 5) == 0 && wait_flag(&g2.started, 5) == 0, "held");
	for (int i = 0; i < 3; i++) {
		rgroup_exec_submit(a, count_item, &c);
		rgroup_exec_submit(b, count_item, &c);
		rgroup_exec_submit(bn, count_item, &c);
	}
	d = (struct destroyer){ .pool = p };
	pthread_create(&t, NULL, destroy_thread, &d);
	scn_sleep(0.1);
	CHECK(!d.done, "pool destroy waits for running items");
	__atomic_store_n(&g1.release, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g2.release, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	/* b's 3 may have run before the destroy began (b was free). */
	CHECK(d.r + c.ran == 9 && d.r == c.canceled && d.r >= 6 && g1.finished && g2.finished,
	      "pool destroy: %d canceled (callback %ld), %ld ran", d.r, c.canceled, c.ran);
	/* ... or, with RGROUP_EXEC_DRAIN, run. */
	p = make_pool(1, 1000);
	a = make_group(p, "a", 0, 0, 0);
	b = make_group(p, "b", 0, 0, 0);
	bn = make_group(p, "b.n", b, 0, 0);
	c = (struct counter){ .iters = 1000 };
	for (int i = 0; i < 30; i++) {
		rgroup_exec_submit(a, count_item, &c);
		rgroup_exec_submit(bn, count_item, &c);
	}
	CHECK(rgroup_exec_destroy(p, RGROUP_EXEC_DRAIN) == 0 && c.ran == 60 && c.canceled == 0,
	      "pool destroy, drain: ran %ld", c.ran);

	/* A group destroyed while its rgroup and its parent's are still on
	 * their way: nothing waits for them, and no rgroup is left. */
	p = make_pool(1, 50);
	for (int i = 0; i < 20; i++) {
		rgroup_exec_group_t P = make_group(p, "P", 0, 0, 0);
		rgroup_exec_group_t C = make_group(p, "P.C", P, 0, 0);
		c2 = (struct counter){ .iters = 1 };
		rgroup_exec_submit(C, count_item, &c2);
		double t0 = scn_now();
		int r = rgroup_exec_group_destroy(C, i % 2 ? RGROUP_EXEC_DRAIN : 0);
		CHECK(r >= 0 && r + c2.ran == 1 && c2.canceled == r, "destroy on the way: %d, ran %ld", r, c2.ran);
		CHECK(scn_now() - t0 < 0.5, "destroy on the way took %.3f s", scn_now() - t0);
		CHECK(rgroup_exec_group_destroy(P, 0) == 0, "then its parent");
	}
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");
}

/* ---- CPU splits ------------------------------------------------------- */

/* Submit `per_round[i]` items to group i, round after round, until group
 * i has `total[i]` (interleaved, as a server's request loop would). */
static void backlog(rgroup_exec_group_t *g, struct counter *c, const int *per_round,
		    const long *total, int n)
{
	long done[8] = { 0 };
	int more = 1;

	while (more) {
		more = 0;
		for (int i = 0; i < n; i++)
			for (int k = 0; k < per_round[i] && done[i] < total[i]; k++, done[i]++) {
				int r = rgroup_exec_submit(g[i], count_item, &c[i]);
				if (r < 0) {
					CHECK(r == 0, "submit: %s", strerror(-r));
					return;
				}
				more |= done[i] + 1 < total[i];
			}
	}
}

/*
 * The split is judged by the one rule (test/lib/judge.h), from the groups'
 * own clocks (rgroup_exec_group_info's cpu_ns). A window counts only when
 * the groups got CPU worth dividing: the governor divides only the CPU
 * time the process gets, and when other load leaves the pinned test less
 * than 40% of its CPU its quotas stop binding and the kernel's per-thread
 * split shows through, which says nothing about the executor. A kernel
 * backend splits exactly even then; it needs 10%, only so that the shares
 * are not a handful of time slices.
 */
struct split_ctx {
	rgroup_exec_group_t *g;
	int n;
};

static int split_read(void *ctx, double *cpu, double *base)
{
	struct split_ctx *sc = ctx;

	*base = 0;
	for (int i = 0; i < sc->n; i++)
		*base += cpu[i] = ginfo(sc->g[i]).cpu_ns / 1e9;
	return 0;
}

static void split_case(const char *what, rgroup_exec_group_t *g, const char **label, int n,
		       const int *per_round, const long *total, struct model *m, const int *mi,
		       rgroup_exec_t p)
{
	struct counter c[8];
	struct split_ctx ctx = { g, n };
	struct rgt_judge j = {
		.what = what, .n = n, .read = split_read, .ctx = &ctx,
		.min_cpus = rgt_kernel() ? 0.10 : 0.40,
	};

	for (int i = 0; i < n; i++)
		c[i] = (struct counter){ .iters = iters_per_ms / 2 };
	backlog(g, c, per_round, total, n);
	model_run(m, 1);
	for (int i = 0; i < n; i++) {
		j.label[i] = label[i];
		j.fixed[i] = model_fraction(m, mi[i]);
	}
	scn_sleep(WARMUP_S);
	rgt_judge(&j, NULL);
	for (int i = 0; i < n; i++) {
		struct rgroup_exec_group_info in = ginfo(g[i]);
		CHECK(in.queued > 0, "%s still had queued items at the end of the windows", in.name);
	}
	int canceled = rgroup_exec_cancel(p, 0);
	CHECK(canceled > 0, "canceled the rest (%d)", canceled);
	CHECK(rgroup_exec_wait(p, 0, 10000) == 0, "wait");
	long ran = 0, canc = 0, want = 0;
	for (int i = 0; i < n; i++) {
		ran += c[i].ran;
		canc += c[i].canceled;
		want += total[i];
	}
	CHECK(ran + canc == want, "every item ran or was canceled (%ld + %ld of %ld)", ran, canc, want);
}

/* Two nice-0 groups; A submits ten items for each of B's and has four
 * workers to B's one: neither helps it, each group is one entity. */
static void fair_10x(void)
{
	rgroup_exec_t p = make_pool(1, 1000);
	rgroup_exec_group_t g[2] = { make_group(p, "A10x", 0, 0, 4), make_group(p, "B", 0, 0, 1) };
	const char *label[2] = { "A (10x items, 4 workers)", "B (1x items, 1 worker)" };
	const int per_round[2] = { 10, 1 };
	const long total[2] = { 10 * SPLIT_ITEMS, SPLIT_ITEMS };
	struct model m;
	int mi[2];

	model_init(&m);
	int root = model_add(&m, -1, 1024, 0);
	for (int i = 0; i < 2; i++) {
		mi[i] = model_add(&m, root, 1024, 0);
		model_add(&m, mi[i], 1024, 1);
	}
	split_case("equal nice, 10x the items", g, label, 2, per_round, total, &m, mi, p);
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");
}

static void nice_split(void)
{
	rgroup_exec_t p = make_pool(2, 1000);
	rgroup_exec_group_t g[2] = { make_group(p, "N0", 0, 0, 0), make_group(p, "N5", 0, 5, 0) };
	const char *label[2] = { "nice 0", "nice 5" };
	const int per_round[2] = { 1, 1 };
	const long total[2] = { SPLIT_ITEMS, SPLIT_ITEMS };
	struct model m;
	int mi[2];

	model_init(&m);
	int root = model_add(&m, -1, 1024, 0);
	for (int i = 0; i < 2; i++) {
		mi[i] = model_add(&m, root, rgroup_nice_to_weight(i ? 5 : 0), 0);
		model_add(&m, mi[i], 1024, 1);
	}
	split_case("nice 0 against nice 5", g, label, 2, per_round, total, &m, mi, p);
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");
}

/* P{C1 nice 0, C2 nice 5} against Q at nice 3; P itself has no items. */
static void nested_split(void)
{
	rgroup_exec_t p = make_pool(2, 1000);
	rgroup_exec_group_t P = make_group(p, "P", 0, 0, 0);
	rgroup_exec_group_t g[3] = { make_group(p, "P.C1", P, 0, 0), make_group(p, "P.C2", P, 5, 0),
				     make_group(p, "Q", 0, 3, 0) };
	const char *label[3] = { "P.C1 (nice 0 in P)", "P.C2 (nice 5 in P)", "Q (nice 3)" };
	const int per_round[3] = { 1, 1, 1 };
	const long total[3] = { SPLIT_ITEMS, SPLIT_ITEMS, SPLIT_ITEMS };
	struct model m;
	int mi[3];

	model_init(&m);
	int root = model_add(&m, -1, 1024, 0);
	int mp = model_add(&m, root, 1024, 0);
	mi[0] = model_add(&m, mp, 1024, 0);
	mi[1] = model_add(&m, mp, rgroup_nice_to_weight(5), 0);
	mi[2] = model_add(&m, root, rgroup_nice_to_weight(3), 0);
	for (int i = 0; i < 3; i++)
		model_add(&m, mi[i], 1024, 1);
	split_case("nested work groups", g, label, 3, per_round, total, &m, mi, p);
	CHECK(rgroup_exec_destroy(p, 0) == 0, "destroy");
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");
}

/* ---- Work conservation ------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The tids of this process's threads named `name` (the group's workers). */
static int threads_named(const char *name, pid_t *tids, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) && n < max) {
		char file[300], comm[64];
		if (e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "/proc/self/task/%s/comm", e->d_name);
		if (rgt_read(file, comm, sizeof(comm)) > 0) {
			comm[strcspn(comm, "\n")] = '\0';
			if (!strcmp(comm, name))
				tids[n++] = atoi(e->d_name);
		}
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * On all CPUs: groups X and Y, as many workers each as CPUs, both with a
 * deep backlog; X runs dry in turns (its queue canceled) and gets work
 * again, in ABBA order. Work conservation: Y must use >= 95% of the CPU X leaves.
 *
 * How it is measured (as test-gov-share.c's idle case, for the same
 * reason): on a shared machine the CPU the process can get changes from
 * phase to phase by more than the figure, so comparing Y's CPU rates
 * would measure the other load. What can keep Y from X's CPU is Y's
 * workers being blocked while Y has work — asleep on the queue or short
 * of workers (the executor), or paused (the governor) — so:
 *   freed     X's CPU rate with both busy: what X leaves when it runs dry;
 *   withheld  with X dry, the time Y's workers were blocked (neither on a
 *             CPU nor waiting for one, from schedstat), each at the CPU
 *             rate that worker got while runnable;
 *   paused    of that, the governor's pauses (rgroup_info's throttled_ns
 *             of Y's rgroup), at the same rate;
 *   taken     1 - withheld / freed; the executor's own part of the loss
 *             is (withheld - paused) / freed.
 * Asserted, on the median of six pairs (a pause still on at the end of a
 * window is blocked time but not yet in throttled_ns, so a single pair can
 * be off): the executor loses at most 5% on every backend (printed, not
 * asserted, when built with a sanitizer), and Y has a worker per CPU (else it could not use what X
 * leaves however runnable its workers are); the whole is >= 95% on a
 * kernel backend, which never pauses a thread. On the governor the whole
 * includes its pauses: here 3-8% of the freed CPU under load (the
 * benchmark's own idle figure for the governor, without any executor:
 * 91.5-97.1%, docs/BENCHMARKS.md), so the whole gets the bound of the
 * governor's own idle test (test-gov-share.c: 80%) and is printed. And as
 * in the split cases, the whole counts on the governor only for pairs in
 * which the groups got 40% of the CPUs with both busy (at a load average
 * of 430 from other jobs they got 27-42%, and the governor paused Y for
 * up to half of what X left): up to 12 pairs for 6 that count. The
 * executor's own part is what this test is about and holds however little
 * CPU the process gets (CI's loaded stage: 0.60-0.68 CPUs of 2, own
 * 0.979-1.000): it is asserted on the median of every pair, always. When
 * fewer than 4 pairs got 40%, the governor's whole is printed, not
 * asserted: under such load it measures the other jobs, and the
 * governor's pauses have their own test (test-gov-share.c, idle_group).
 */
static void work_conservation(void)
{
	int ncpu = CPU_COUNT(&all_cpus), want = 6, valid = 0, npairs = 0;
	double taken[12], own[12], own_all[12], settle = 0.3, span = 1.0;
	struct counter cx = { .iters = iters_per_ms / 2 }, cy = { .iters = iters_per_ms / 2 };

	CHECK(sched_setaffinity(0, sizeof(all_cpus), &all_cpus) == 0, "unpin: %s", strerror(errno));
	rgroup_exec_t p = make_pool(ncpu, 5000);
	rgroup_exec_group_t x = make_group(p, "X", 0, 0, 0), y = make_group(p, "Y", 0, 0, 0);
	long ny = 0;

	/* Y's backlog outlasts the case: 2 CPUs for 30 s at 0.5 ms. */
	for (; ny < 120000; ny++)
		rgroup_exec_submit(y, count_item, &cy);
	for (int pi = 0; pi < 12 && valid < want; pi++) {
		double freed = 0, withheld = 0, paused = 0, both_cpus = 0, idle_cpus = 0;
		unsigned y_workers = 0;

		for (int h = 0; h < 2; h++) {
			int dry = (pi % 2 == 0) == (h == 1);
			struct scn_schedstat s0[64], s1[64];
			struct rgroup_info ri = { .sz = sizeof(ri) };
			pid_t tids[64];
			int nt;

			if (dry) {
				rgroup_exec_cancel(p, x);
			} else {
				for (int k = 0; k < 20000; k++)
					rgroup_exec_submit(x, count_item, &cx);
			}
			scn_sleep(settle);
			nt = threads_named("Y", tids, 64);
			for (int j = 0; j < nt; j++)
				scn_schedstat(tids[j], &s0[j]);
			rgroup_id_t yrg = ginfo(y).rgroup;
			double th0 = rgroup_info(yrg, &ri) == 0 ? ri.throttled_ns / 1e9 : 0;
			double x0 = ginfo(x).cpu_ns / 1e9, y0 = ginfo(y).cpu_ns / 1e9, t0 = scn_now();
			scn_sleep(span);
			for (int j = 0; j < nt; j++)
				scn_schedstat(tids[j], &s1[j]);
			struct rgroup_exec_group_info ix = ginfo(x), iy = ginfo(y);
			double dt = scn_now() - t0;
			double rx = (ix.cpu_ns / 1e9 - x0) / dt, ry = (iy.cpu_ns / 1e9 - y0) / dt;
			if (!dry) {
				freed = rx;
				both_cpus = rx + ry;
				continue;
			}
			idle_cpus = rx + ry;
			y_workers = iy.workers;
			CHECK(iy.queued > 0, "Y still had work");
			double rate = 0, pz = 0;
			for (int j = 0; j < nt; j++) {
				double run = s1[j].run - s0[j].run, wait = s1[j].wait - s0[j].wait;
				double sp = s1[j].at - s0[j].at, blocked = sp - run - wait;
				double r = run + wait > 0 ? run / (run + wait) : 1;
				if (blocked > 0 && sp > 0)
					withheld += blocked / sp * r;
				rate += r / (nt ? nt : 1);
			}
			if (iy.rgroup == yrg && rgroup_info(yrg, &ri) == 0)
				pz = (ri.throttled_ns / 1e9 - th0) / dt;
			paused = pz * rate < withheld ? pz * rate : withheld;
		}
		int counts = rgt_kernel() || both_cpus >= 0.4 * ncpu;
		double t = freed > 0 ? 1 - withheld / freed : 0, o = freed > 0 ? 1 - (withheld - paused) / freed : 0;
		fprintf(stderr, "  pair %d: X had %.2f CPUs; X dry: Y's %u workers lost %.3f CPUs blocked,"
			" %.3f of it paused by the governor: taken %.3f, the executor's own %.3f;"
			" the groups got %.2f CPUs both busy, %.2f with X dry%s\n", pi, freed, y_workers,
			withheld, paused, t, o, both_cpus, idle_cpus,
			counts ? "" : " (not counted: under 40% of the CPUs)");
		CHECK(y_workers == (unsigned)ncpu, "Y has a worker per CPU (%u of %d)", y_workers, ncpu);
		own_all[npairs++] = o;
		if (counts) {
			taken[valid] = t;
			own[valid++] = o;
		}
	}
	/* Every pair, when too few got 40%: the executor's part holds anyway. */
	double *ow = valid < 4 ? own_all : own;
	int nown = valid < 4 ? npairs : valid;
	qsort(ow, nown, sizeof(ow[0]), cmp_double);
	double med_own = nown % 2 ? ow[nown / 2] : (ow[nown / 2 - 1] + ow[nown / 2]) / 2;
	if (valid < 4) {
		fprintf(stderr, "  only %d of %d pairs got 40%% of the CPUs: the governor's whole is not"
			" asserted under this load (its pauses: test-gov-share, idle_group)\n", valid, npairs);
	} else {
		qsort(taken, valid, sizeof(taken[0]), cmp_double);
		double med = valid % 2 ? taken[valid / 2] : (taken[valid / 2 - 1] + taken[valid / 2]) / 2;
		double bound = rgt_kernel() ? 0.95 : 0.80;
		fprintf(stderr, "  Y took of the CPU X left (median of %d pairs): %.3f (bound %.2f on %s)\n",
			valid, med, bound, rgroup_backend());
		CHECK(med >= bound, "work conservation: %.3f < %.2f", med, bound);
	}
	fprintf(stderr, "  without the governor's pauses (median of %d pairs): %.3f (bound 0.95)\n", nown, med_own);
	if (OWN_WAIT_CHECK)
		CHECK(med_own >= 0.95, "the executor kept Y's workers from %.3f of the freed CPU", 1 - med_own);
	else
		fprintf(stderr, "  not asserted: built with a sanitizer, whose runtime the workers"
			" wait in too (%.3f of the freed CPU)\n", 1 - med_own);
	CHECK(rgroup_exec_destroy(p, 0) > 0, "destroy cancels Y's backlog");
	CHECK(cy.ran + cy.canceled == ny, "Y: every item ran or was canceled");
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");
	CHECK(scn_pin_one_cpu(NULL) == 0, "pin again: %s", strerror(errno));
}

/* ---- Churn ------------------------------------------------------------ */

#define CHURNERS 4

static long churn_rounds = 150;
static long ch_submitted, ch_ran, ch_canceled_cb, ch_canceled_ret, ch_errors; /* atomic */

static void churn_item(void *arg)
{
	spin((unsigned long)arg);
	__atomic_add_fetch(&ch_ran, 1, __ATOMIC_RELAXED);
}

static void churn_canceled(void (*fn)(void *), void *arg)
{
	(void)arg;
	if (fn == churn_item)
		__atomic_add_fetch(&ch_canceled_cb, 1, __ATOMIC_RELAXED);
}

static void churn_err(const char *what, int r)
{
	if (__atomic_add_fetch(&ch_errors, 1, __ATOMIC_RELAXED) <= 5)
		fprintf(stderr, "  churn: %s: %s\n", what, strerror(-r));
}

/* One pool's life: groups top-level and nested, items submitted from two
 * threads, cancels, an idle gap that ends rgroups, a group destroyed, and
 * the pool destroyed with or without draining. */
struct churn_sub {
	rgroup_exec_group_t g[4];
	unsigned seed;
};

static void *churn_submitter(void *arg)
{
	struct churn_sub *s = arg;

	for (int i = 0; i < 60; i++) {
		int r = rgroup_exec_submit(s->g[rand_r(&s->seed) % 4], churn_item,
					   (void *)(iters_per_ms / 50 * (rand_r(&s->seed) % 3)));
		if (r == 0)
			__atomic_add_fetch(&ch_submitted, 1, __ATOMIC_RELAXED);
		else
			churn_err("submit", r);
	}
	return NULL;
}

static void churn_life(unsigned seed)
{
	struct rgroup_exec_opts o = { .sz = sizeof(o), .max_workers = 1 + seed % 3,
				      .idle_ms = 5 + seed % 20, .canceled = churn_canceled };
	struct rgroup_exec_group_opts go = { .sz = sizeof(go) };
	struct churn_sub sub[2];
	rgroup_exec_t p;
	rgroup_exec_group_t g[4];
	pthread_t t[2];
	int r;

	if ((r = rgroup_exec_create(&p, &o)) < 0) {
		churn_err("create", r);
		return;
	}
	go.nice = seed % 5;
	r = rgroup_exec_group_create(p, "c0", &go, &g[0]);
	r = r ? r : rgroup_exec_group_create(p, "c1", NULL, &g[1]);
	go.parent = g[0];
	go.nice = -3;
	r = r ? r : rgroup_exec_group_create(p, "c0.a", &go, &g[2]);
	go.parent = g[2];
	r = r ? r : rgroup_exec_group_create(p, "c0.a.b", &go, &g[3]);
	if (r < 0) {
		churn_err("group", r);
		rgroup_exec_destroy(p, 0);
		return;
	}
	for (int i = 0; i < 2; i++) {
		memcpy(sub[i].g, g, sizeof(g));
		sub[i].seed = seed * 2 + (unsigned)i;
		pthread_create(&t[i], NULL, churn_submitter, &sub[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	switch (seed % 4) {
	case 0:
		r = rgroup_exec_cancel(p, 0);
		break;
	case 1:
		/* Let the groups end, then wake them again. */
		r = rgroup_exec_wait(p, 0, 10000);
		scn_sleep((o.idle_ms + 10) / 1000.0);
		if (r == 0 && (r = rgroup_exec_submit(g[3], churn_item, (void *)1)) == 0)
			__atomic_add_fetch(&ch_submitted, 1, __ATOMIC_RELAXED);
		r = 0;
		break;
	case 2:
		r = rgroup_exec_group_destroy(g[3], seed % 8 < 4 ? RGROUP_EXEC_DRAIN : 0);
		break;
	default:
		r = rgroup_exec_wait(p, g[1], 10000);
	}
	if (r < 0)
		churn_err("cancel/wait/group destroy", r);
	else if (seed % 4 != 1 && seed % 4 != 3)
		__atomic_add_fetch(&ch_canceled_ret, r, __ATOMIC_RELAXED);
	r = rgroup_exec_destroy(p, seed % 3 == 0 ? RGROUP_EXEC_DRAIN : 0);
	if (r < 0)
		churn_err("destroy", r);
	else
		__atomic_add_fetch(&ch_canceled_ret, r, __ATOMIC_RELAXED);
}

static void *churner(void *arg)
{
	long me = (long)arg;

	for (long i = 0; i < churn_rounds; i++)
		churn_life((unsigned)(me * 1000 + i));
	return NULL;
}

static long rss_kb(void)
{
	char buf[256];
	long size, res;

	if (rgt_read("/proc/self/statm", buf, sizeof(buf)) < 0 || sscanf(buf, "%ld %ld", &size, &res) != 2)
		return -1;
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static void *load_thread(void *arg)
{
	while (!__atomic_load_n((int *)arg, __ATOMIC_RELAXED))
		spin(10000);
	return NULL;
}

static void churn(void)
{
	pthread_t ct[CHURNERS], lt[2];
	int stop = 0;

	CHECK(sched_setaffinity(0, sizeof(all_cpus), &all_cpus) == 0, "unpin: %s", strerror(errno));
	/* Warm-up: the library's and the executor's tables, thread stacks. */
	for (int i = 0; i < CHURNERS; i++)
		pthread_create(&ct[i], NULL, churner, (void *)(long)(100 + i));
	for (int i = 0; i < CHURNERS; i++)
		pthread_join(ct[i], NULL);
	CHECK(scn_wait_no_groups(3.0) == 0, "warm-up: every rgroup gone");
	int fd0 = rgt_fd_steady();
	size_t mem0 = mallinfo2().uordblks;
	long rss0 = rss_kb();
	ch_submitted = ch_ran = ch_canceled_cb = ch_canceled_ret = ch_errors = 0;

	/* Load: two busy threads beside the churn. */
	for (int i = 0; i < 2; i++)
		pthread_create(&lt[i], NULL, load_thread, &stop);
	double t0 = scn_now();
	for (int i = 0; i < CHURNERS; i++)
		pthread_create(&ct[i], NULL, churner, (void *)(long)i);
	for (int i = 0; i < CHURNERS; i++)
		pthread_join(ct[i], NULL);
	double t1 = scn_now();
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(lt[i], NULL);

	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone (%d listed, %d directories)",
	      rgroup_list(NULL, 0), scn_own_dirs());
	int fd1 = rgt_fd_steady();
	size_t mem1 = mallinfo2().uordblks;
	long rss1 = rss_kb();
	fprintf(stderr, "  %ld pools (4 groups each, 3 of them nested) from %d threads in %.1f s; "
		"%ld items submitted, %ld ran, %ld canceled (callback %ld)\n",
		churn_rounds * CHURNERS, CHURNERS, t1 - t0, ch_submitted, ch_ran, ch_canceled_ret,
		ch_canceled_cb);
	fprintf(stderr, "  fds %d -> %d; malloc'd bytes %zu -> %zu; RSS %ld -> %ld kB\n",
		fd0, fd1, mem0, mem1, rss0, rss1);
	CHECK(ch_errors == 0, "%ld calls failed", ch_errors);
	CHECK(ch_ran + ch_canceled_ret == ch_submitted, "ran + canceled = submitted");
	CHECK(ch_canceled_cb == ch_canceled_ret, "the callback saw every canceled item");
	CHECK(fd1 == fd0, "descriptors back: %d -> %d", fd0, fd1);
	/* The library keeps a little per thread it has seen (TLS, arenas):
	 * 64 kB of slack for a run of ~1,000 thread lives, none per item. */
	if (MEM_CHECK) {
		CHECK(mem1 <= mem0 + 65536, "heap in use back: %zu -> %zu bytes", mem0, mem1);
		CHECK(rss1 <= rss0 + 4096, "RSS back within 4 MB: %ld -> %ld kB", rss0, rss1);
	} else {
		fprintf(stderr, "  memory not checked: built with a sanitizer\n");
	}
	CHECK(scn_own_dirs() == 0, "no rgroup directory left");
	CHECK(scn_pin_one_cpu(NULL) == 0, "pin again: %s", strerror(errno));
}

/* The library opens the system group's files at its first rgroup and keeps
 * them: descriptors are counted from after that. */
static void warm_up(void)
{
	rgroup_exec_t p;
	rgroup_exec_group_t g;
	struct probe pr = { 0 };

	if (rgroup_exec_create(&p, NULL) < 0)
		rgt_skip_all("rgroup_exec_create: no backend here?");
	if (rgroup_exec_group_create(p, "warm", NULL, &g) == 0 && rgroup_exec_submit(g, probe_item, &pr) == 0)
		rgroup_exec_wait(p, g, 10000);
	rgroup_exec_destroy(p, 0);
	scn_wait_no_groups(3.0);
}

static const struct rgt_case cases[] = {
	{ "bad_input", bad_input },
	{ "placement", placement },
	{ "rule6_permission", rule6_permission },
	{ "small_address_space", small_address_space },
	{ "idle_and_back", idle_and_back },
	{ "item_ends_worker", item_ends_worker },
	{ "cancel_and_destroy", cancel_and_destroy },
	{ "fair_10x", fair_10x },
	{ "nice_split", nice_split },
	{ "nested_split", nested_split },
	{ "work_conservation", work_conservation },
	{ "churn", churn },
};

int main(int argc, char **argv)
{
	const char *env = getenv("RGROUP_EXEC_CHURN_ROUNDS"), *be = getenv("RGROUP_BACKEND");
	int niced = 0;

	if (env && *env)
		churn_rounds = atol(env);
	/*
	 * The governor divides only the CPU time its process gets (it makes
	 * no kernel group): with two busy processes and other jobs on this
	 * machine, the pinned test got 20-38% of its CPU, where the governor's
	 * own accuracy falls apart (measure()). So on the governor the test
	 * competes at nice -10 where it may: every thread, the library's
	 * included (this is before its first use), inherits it, so the split
	 * inside the process is the same, only outside load takes less. Not
	 * allowed: the window rule decides, as on any backend.
	 */
	if (be && !strcmp(be, "governor"))
		niced = setpriority(PRIO_PROCESS, 0, -10) == 0;
	rgt_sg_init();
	if (scn_pin_one_cpu(&all_cpus) < 0)
		rgt_skip_all("cannot pin to one CPU: %s", strerror(errno));
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s, pinned to one CPU (%d CPUs in all)%s\n",
		rgroup_backend(), sg, CPU_COUNT(&all_cpus), niced ? ", at nice -10" : "");
	calibrate();
	warm_up();
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
