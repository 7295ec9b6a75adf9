/* SPDX-License-Identifier: MIT */
/*
 * test-rules.c - rules 1-3, 5-7 and 9 of DESIGN.md §2, and bad input, on
 * the backend RGROUP_BACKEND names, against the real kernel. Run by the
 * system suite (cgroup1 here) and inside the VM (cgroup2).
 */
#include <linux/capability.h>
#include <linux/futex.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>

#include "sgroup.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define RGT_TSAN 1
#else
#define RGT_TSAN 0
#endif

static char sg[PATH_MAX];   /* the test's system group (cgroup path) */

static void info_of(rgroup_id_t id, struct rgroup_info *in)
{
	memset(in, 0, sizeof(*in));
	in->sz = sizeof(*in);
	CHECK(rgroup_info(id, in) == 0, "rgroup_info(%llu)", (unsigned long long)id);
}

static rgroup_id_t group_of(pid_t tid)
{
	rgroup_id_t id = ~0ull;
	int r = rgroup_of(tid, &id);
	CHECK(r == 0, "rgroup_of(%d) = %d", (int)tid, r);
	return id;
}

static void check_kernel_place(pid_t tid, rgroup_id_t id)
{
	char why[2 * PATH_MAX + 128];

	CHECK(rgt_kernel_agrees(sg, tid, id, why, sizeof(why)), "%s", why);
}

static void *plain_main(void *p)
{
	*(pid_t *)p = scn_gettid();
	scn_sleep(0.3);
	return NULL;
}

/* Rule 1: a new rgroup only at thread birth, nested under the creator's
 * group; without the flag the thread joins its creator's group. */
static void rule1_creation(void)
{
	struct rgt_worker kids[3] = { { .new_group = 1 }, { .new_group = 0 }, { .new_group = 1 } };
	struct rgt_worker t1 = { .nkids = 3, .kids = kids };
	struct rgroup_info a, b, c;

	CHECK(group_of(0) == 0, "the main thread is in no rgroup");
	CHECK(rgt_worker_start(&t1, RGROUP_NEW) == 0, "create t1");
	CHECK(t1.err == 0, "t1 saw error %d", t1.err);
	rgroup_id_t g1 = group_of(t1.tid), g2 = group_of(kids[0].tid);
	rgroup_id_t g3 = group_of(kids[1].tid), g4 = group_of(kids[2].tid);
	CHECK(g1 != 0, "t1 is in an rgroup");
	info_of(g1, &a);
	CHECK(a.parent == 0 && a.depth == 1, "t1's rgroup is top-level (parent %llu depth %u)",
	      (unsigned long long)a.parent, a.depth);
	info_of(g2, &b);
	CHECK(b.parent == g1 && b.depth == 2, "nested rgroup under t1's (parent %llu)",
	      (unsigned long long)b.parent);
	CHECK(g3 == g1, "a thread created without the flag joins its creator's group");
	info_of(g4, &c);
	CHECK(g4 != g2 && c.parent == g1, "each RGROUP_NEW makes its own rgroup");
	CHECK(a.nchildren == 2, "t1's rgroup has 2 children, not %u", a.nchildren);
	check_kernel_place(t1.tid, g1);
	check_kernel_place(kids[0].tid, g2);
	check_kernel_place(kids[1].tid, g1);
	check_kernel_place(kids[2].tid, g4);
	char sgpath[PATH_MAX];
	CHECK(!rgt_kernel() || (scn_thread_cgroup(0, sgpath, sizeof(sgpath)) == 0 && strcmp(sgpath, sg) == 0),
	      "the main thread stays in the sgroup (%s)", sgpath);
	struct rgroup__kgroup mk = { .id = 1 };
	CHECK(!scn_sg.native || (rgt_kgroup(0, &mk) == 0 && mk.id == 0),
	      "the main thread is in no kernel rgroup (%llu)", (unsigned long long)mk.id);
	rgt_worker_stop(&t1);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed after the threads exit");
}

/* A thread made with plain pthread_create(): where it finds itself. */
struct plain_kid { pid_t tid; int r; rgroup_id_t self; };

static void *plain_kid_main(void *p)
{
	struct plain_kid *k = p;

	k->r = rgroup_of(0, &k->self);
	__atomic_store_n(&k->tid, scn_gettid(), __ATOMIC_RELEASE);
	scn_sleep(0.3);
	return NULL;
}

static void *plain_creator(void *p)
{
	struct plain_kid *k = p;
	pthread_t t;
	int err;

	k[0].tid = scn_gettid();
	k[0].r = rgroup_of(0, &k[0].self);
	/* k[1] is the new thread's to write, once it runs. */
	err = pthread_create(&t, NULL, plain_kid_main, &k[1]);
	if (err) {
		k[1].r = err;
		__atomic_store_n(&k[1].tid, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	pthread_join(t, NULL);
	return NULL;
}

/* Rule 1 with plain pthread_create inside an rgroup: the new thread is
 * born in its creator's group, on every backend (the shared library's
 * pthread_create); the library knows it from birth, the thread itself
 * (rgroup_of(0)) as well as the others. */
static void rule1_plain_thread_joins(void)
{
	struct plain_kid k[2] = { { 0 }, { 0 } };
	pthread_t t;

	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, plain_creator, k) == 0, "create");
	while (!__atomic_load_n(&k[1].tid, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	CHECK(k[1].tid > 0, "pthread_create inside the rgroup: %d", k[1].r);
	if (k[1].tid > 0) {
		rgroup_id_t a = group_of(k[0].tid), b = group_of(k[1].tid);
		CHECK(a != 0 && a == b, "plain thread in its creator's rgroup (%llu vs %llu)",
		      (unsigned long long)b, (unsigned long long)a);
		CHECK(k[1].r == 0 && k[1].self == a, "rgroup_of(0) in the plain thread: %d, %llu (want %llu)",
		      k[1].r, (unsigned long long)k[1].self, (unsigned long long)a);
		struct rgroup_info in;
		info_of(a, &in);
		CHECK(in.nthreads == 2, "the group counts both threads as members (%u)", in.nthreads);
		check_kernel_place(k[1].tid, a);
	}
	pthread_join(t, NULL);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

/* pthread_create()'s contract, inside an rgroup and out: attr honoured,
 * detached threads, pthread_exit and cancellation, errors. */
enum { CK_RETURN, CK_EXIT, CK_CANCEL };
struct ck {
	int mode, r, detached, done;
	size_t stack;
	rgroup_id_t self;
};

static void *ck_main(void *p)
{
	struct ck *c = p;
	int mode = c->mode;   /* *c is not the thread's once it says done */
	pthread_attr_t a;

	c->r = rgroup_of(0, &c->self);
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		pthread_attr_getdetachstate(&a, &c->detached);
		pthread_attr_getstacksize(&a, &c->stack);
		pthread_attr_destroy(&a);
	}
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	if (mode == CK_EXIT)
		pthread_exit((void *)42);
	if (mode == CK_CANCEL)
		for (;;) {
#if RGT_TSAN
			/* ThreadSanitizer (clang 14) reports a thread cancelled in
			 * pause() as racing with the lock its cleanup takes, also
			 * in a program of one mutex: a false positive. A deferred
			 * cancellation at pthread_testcancel() is the same to
			 * the library. */
			pthread_testcancel();
			sched_yield();
#else
			pause();
#endif
		}
	return (void *)7;
}

struct ck_result {
	rgroup_id_t creator;
	struct ck det, ex, can;
	int rc[4], det_ok;
	void *ret_ex, *ret_can;
};

static void ck_run(struct ck_result *res)
{
	pthread_attr_t big, det;
	pthread_t t;

	rgroup_of(0, &res->creator);
	/* Detached, with a stack of its own size. */
	pthread_attr_init(&det);
	pthread_attr_setdetachstate(&det, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&det, 1 << 20);
	res->rc[0] = pthread_create(&t, &det, ck_main, &res->det);
	pthread_attr_destroy(&det);
	while (res->rc[0] == 0 && !__atomic_load_n(&res->det.done, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	/* pthread_exit() */
	res->ex.mode = CK_EXIT;
	res->rc[1] = pthread_create(&t, NULL, ck_main, &res->ex);
	if (res->rc[1] == 0)
		pthread_join(t, &res->ret_ex);
	/* Cancelled while it waits. */
	res->can.mode = CK_CANCEL;
	res->rc[2] = pthread_create(&t, NULL, ck_main, &res->can);
	if (res->rc[2] == 0) {
		while (!__atomic_load_n(&res->can.done, __ATOMIC_ACQUIRE))
			scn_sleep(0.001);
		pthread_cancel(t);
		pthread_join(t, &res->ret_can);
	}
	/* A stack no machine can map: the C library's error. */
	pthread_attr_init(&big);
	pthread_attr_setstacksize(&big, (size_t)1 << 46);
	res->rc[3] = pthread_create(&t, &big, ck_main, &(struct ck){ 0 });
	pthread_attr_destroy(&big);
}

static void *ck_creator(void *p)
{
	ck_run(p);
	return NULL;
}

static void ck_check(const char *where, const struct ck_result *res, int plain_err)
{
	CHECK(res->rc[0] == 0 && res->rc[1] == 0 && res->rc[2] == 0, "%s: created: %d %d %d", where,
	      res->rc[0], res->rc[1], res->rc[2]);
	CHECK(res->det.r == 0 && res->det.self == res->creator, "%s: the detached thread is in its creator's group (%llu, %llu)",
	      where, (unsigned long long)res->det.self, (unsigned long long)res->creator);
	CHECK(res->det.detached == PTHREAD_CREATE_DETACHED && res->det.stack >= (1u << 20) &&
	      res->det.stack < (4u << 20), "%s: attr honoured (detached %d, stack %zu)", where,
	      res->det.detached, res->det.stack);
	CHECK(res->ex.self == res->creator && res->ret_ex == (void *)42,
	      "%s: pthread_exit: group %llu, value %p", where, (unsigned long long)res->ex.self, res->ret_ex);
	CHECK(res->can.self == res->creator && res->ret_can == PTHREAD_CANCELED,
	      "%s: cancelled: group %llu, value %p", where, (unsigned long long)res->can.self, res->ret_can);
	CHECK(res->rc[3] == plain_err, "%s: an unmappable stack: %d, as libc's from a plain thread (%d)",
	      where, res->rc[3], plain_err);
}

static void rule1_plain_thread_contract(void)
{
	struct ck_result out = { 0 }, in = { 0 };
	pthread_t t;

	/* From the main thread, in no rgroup (while the process has none,
	 * and then while it has one). */
	ck_run(&out);
	CHECK(out.creator == 0, "the main thread is in no rgroup");
	ck_check("in no rgroup", &out, out.rc[3]);
	CHECK(out.rc[3] != 0, "an unmappable stack fails (%d)", out.rc[3]);
	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, ck_creator, &in) == 0, "create");
	pthread_join(t, NULL);
	CHECK(in.creator != 0, "the creator is in an rgroup");
	ck_check("inside an rgroup", &in, out.rc[3]);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed after the threads ended");
}

/* Rule 2: membership is forever — creating children and changing
 * priorities never moves a thread. */
static void rule2_membership_forever(void)
{
	struct rgt_worker kid = { .new_group = 1 };
	struct rgt_worker t = { .nkids = 1, .kids = &kid, .set_nice = 1, .nice = 7 };

	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0, "create");
	rgroup_id_t g = group_of(t.tid);
	CHECK(rgroup_setpriority(PRIO_RGRP, kid.tid, 3) == 0, "set nested nice");
	scn_sleep(0.3); /* several keeper ticks */
	CHECK(group_of(t.tid) == g, "t stays in its rgroup");
	check_kernel_place(t.tid, g);
	rgt_worker_stop(&t);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

static int dir_of(rgroup_id_t id, char *out, size_t len)
{
	char path[PATH_MAX];
	rgt_group_path(sg, id, path, sizeof(path));
	scn_cg_dir(path, out, len);
	return 0;
}

/* Seconds until dir is gone, or -1 after timeout. */
static double time_until_gone(const char *dir, double timeout)
{
	double t0 = scn_now();
	while (rgt_exists(dir)) {
		if (scn_now() - t0 > timeout)
			return -1;
		scn_sleep(0.002);
	}
	return scn_now() - t0;
}

/* Rule 3: an rgroup disappears when its last thread exits and it has no
 * child rgroups: within 0.5 s, nothing left behind. */
static void rule3_auto_destroy(void)
{
	struct rgt_worker kid = { .new_group = 1 };
	struct rgt_worker t = { .nkids = 1, .kids = &kid };
	char pdir[PATH_MAX], cdir[PATH_MAX];

	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0, "create");
	if (!rgt_dirs()) {
		/* The governor and the native kernel: no directory to watch, the
		 * groups are gone from the list. */
		__atomic_store_n(&t.stop, 1, __ATOMIC_RELAXED);
		pthread_join(t.thread, NULL);
		scn_sleep(0.3);
		CHECK(rgroup_list(NULL, 0) == 2, "a group with a child stays (%d)", rgroup_list(NULL, 0));
		__atomic_store_n(&kid.stop, 1, __ATOMIC_RELAXED);
		pthread_join(kid.thread, NULL);
		CHECK(scn_wait_no_groups(0.5) == 0, "both gone within 0.5 s");
		return;
	}
	dir_of(group_of(t.tid), pdir, sizeof(pdir));
	dir_of(group_of(kid.tid), cdir, sizeof(cdir));
	CHECK(rgt_exists(pdir) && rgt_exists(cdir), "both directories exist");
	/* The parent's own thread leaves first: it has a child, so it stays. */
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t.thread, NULL);
	scn_sleep(0.6);
	CHECK(rgt_exists(pdir), "a group with a child rgroup stays after its last thread");
	CHECK(rgroup_list(NULL, 0) == 2, "two groups still listed (%d)", rgroup_list(NULL, 0));
	__atomic_store_n(&kid.stop, 1, __ATOMIC_RELAXED);
	pthread_join(kid.thread, NULL);
	double tc = time_until_gone(cdir, 2.0), tp = time_until_gone(pdir, 2.0);
	fprintf(stderr, "  removed after %.3f s (child) / %.3f s (parent)\n", tc, tp);
	CHECK(tc >= 0 && tc <= 0.5, "child directory gone within 0.5 s (%.3f)", tc);
	CHECK(tp >= 0 && tp <= 0.5, "parent directory gone within 0.5 s (%.3f)", tp);
	CHECK(rgroup_list(NULL, 0) == 0, "no group listed");
}

/* Directories of process pid's groups in the test's system group. */
static int dirs_of_pid(pid_t pid)
{
	char dir[PATH_MAX];

	if (!rgt_dirs())
		return 0;
	scn_cg_dir(sg, dir, sizeof(dir));
	return scn_count_groups(dir, pid);
}

static void exit_in_handler(int sig)
{
	(void)sig;
	_exit(0);
}

/* A child process that makes rgroups with running threads, then ends:
 * how: 0 exit(), 1 SIGKILL, 2 _exit(), 3 _exit() in a signal handler. */
static pid_t child_with_groups(int how, int *ready_fd)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		static struct rgt_worker kid = { .new_group = 1, .spin = 0 };
		static struct rgt_worker t = { .nkids = 1, .kids = &kid };
		close(p[0]);
		if (rgt_worker_start(&t, RGROUP_NEW) != 0)
			_exit(3);
		(void)!write(p[1], "x", 1);
		if (how == 0) {
			scn_sleep(0.05);
			exit(0); /* threads still running: the library must clean */
		}
		if (how == 2) {
			scn_sleep(0.05);
			_exit(0); /* no destructor runs */
		}
		if (how == 3) {
			signal(SIGUSR1, exit_in_handler);
			scn_sleep(0.05);
			raise(SIGUSR1);
		}
		pause();
		_exit(0);
	}
	close(p[1]);
	*ready_fd = p[0];
	return pid;
}

/* Rule 3 at process end: exit(), _exit() and _exit() in a signal
 * handler leave nothing; after SIGKILL the next rgroup process in the same
 * sgroup removes what was left. */
static void rule3_process_end(void)
{
	static const char *const how[] = { "exit()", NULL, "_exit()", "_exit() in a signal handler" };
	int fd, status;
	char c;

	for (int h = 0; h < 4; h++) {
		if (!how[h])
			continue;
		pid_t a = child_with_groups(h, &fd);
		CHECK(read(fd, &c, 1) == 1, "child made its groups");
		close(fd);
		waitpid(a, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exited normally (%#x)", status);
		CHECK(dirs_of_pid(a) == 0, "%s left %d directories", how[h], dirs_of_pid(a));
	}

	pid_t k = child_with_groups(1, &fd);
	CHECK(read(fd, &c, 1) == 1, "child made its groups");
	close(fd);
	CHECK(!rgt_dirs() || dirs_of_pid(k) == 2, "the child's two groups exist (%d)", dirs_of_pid(k));
	kill(k, SIGKILL);
	waitpid(k, &status, 0);
	CHECK(!rgt_dirs() || dirs_of_pid(k) == 2, "SIGKILL leaves the directories (nobody ran)");
	/* The next rgroup process here cleans up at its first group. */
	pid_t n = child_with_groups(0, &fd);
	CHECK(read(fd, &c, 1) == 1, "next child made its groups");
	close(fd);
	waitpid(n, &status, 0);
	CHECK(dirs_of_pid(k) == 0, "the next rgroup process removed the dead one's groups (%d left)",
	      dirs_of_pid(k));
	CHECK(dirs_of_pid(n) == 0, "and left none of its own");
}

/* The main thread of a child exits first (pthread_exit): it stays a zombie,
 * exiting, until the process ends, and tgkill() still finds it, as it finds
 * a joined thread late in its exit. Its worker asks PRIO_RGRP of it; the
 * child exits with the errno it got (0: the call succeeded). */
static void *ask_exited_leader(void *p)
{
	pid_t leader = getpid();
	char path[64], buf[512], *paren;
	(void)p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)leader);
	for (int i = 0; i < 2000; i++) {
		paren = rgt_read(path, buf, sizeof(buf)) > 0 ? strrchr(buf, ')') : NULL;
		if (paren && paren[1] == ' ' && paren[2] == 'Z')
			break;
		usleep(1000);
	}
	errno = 0;
	if (rgroup_setpriority(PRIO_RGRP, leader, 1) == 0)
		_exit(0);
	_exit(errno);
}

/* A thread of ours that is exiting is gone: ESRCH, not EINVAL. */
static int exited_leader_errno(void)
{
	int status = 0;
	pid_t child = fork();

	if (child == 0) {
		pthread_t th;

		if (pthread_create(&th, NULL, ask_exited_leader, NULL) != 0)
			_exit(255);
		pthread_exit(NULL);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Rule 5: PRIO_RGRP reads and sets the nice-value weight of the rgroup
 * of thread tid; clamped; EINVAL outside rgroups; ESRCH for foreign tids. */
static void rule5_prio_rgrp(void)
{
	struct rgt_worker kid = { .new_group = 1 };
	struct rgt_worker t = { .nkids = 1, .kids = &kid, .set_nice = 1, .nice = 5 };

	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0, "create");
	CHECK(t.err == 0, "PRIO_RGRP from inside: %s", strerror(t.err));
	errno = 0;
	CHECK(rgroup_getpriority(PRIO_RGRP, t.tid) == 5 && errno == 0, "get = 5");
	long long w = rgt_kernel_weight(sg, t.tid, group_of(t.tid));
	CHECK(w == -1 || w == 335, "kernel weight %lld, expected 335 (nice 5)", w);

	static const struct { int set, want; long long weight; } table[] = {
		{ 0, 0, 1024 }, { -20, -20, 88761 }, { 19, 19, 15 },
		{ 100, 19, 15 }, { -100, -20, 88761 }, { 7, 7, 215 },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		CHECK(rgroup_setpriority(PRIO_RGRP, kid.tid, table[i].set) == 0,
		      "nested set %d: %s", table[i].set, strerror(errno));
		CHECK(rgroup_getpriority(PRIO_RGRP, kid.tid) == table[i].want,
		      "nested set %d reads %d", table[i].set, rgroup_getpriority(PRIO_RGRP, kid.tid));
		w = rgt_kernel_weight(sg, kid.tid, group_of(kid.tid));
		CHECK(w == -1 || w == table[i].weight, "set %d: kernel weight %lld, expected %lld",
		      table[i].set, w, table[i].weight);
	}

	errno = 0;
	CHECK(rgroup_setpriority(PRIO_RGRP, 0, 1) == -1 && errno == EINVAL,
	      "main thread in no rgroup: EINVAL (%s)", strerror(errno));
	errno = 0;
	CHECK(rgroup_getpriority(PRIO_RGRP, 0) == -1 && errno == EINVAL, "get: EINVAL");
	pid_t other = fork();
	if (other == 0) {
		pause();
		_exit(0);
	}
	errno = 0;
	CHECK(rgroup_setpriority(PRIO_RGRP, other, 1) == -1 && errno == ESRCH,
	      "another process's thread: ESRCH (%s)", strerror(errno));
	errno = 0;
	CHECK(rgroup_getpriority(PRIO_RGRP, 1) == -1 && errno == ESRCH, "pid 1: ESRCH");
	errno = 0;
	CHECK(rgroup_setpriority(PRIO_RGRP, 0x7ffffff0, 1) == -1 && errno == ESRCH, "no such tid: ESRCH");
	int e = exited_leader_errno();
	CHECK(e == ESRCH, "an exiting thread of the process: ESRCH, got %d (%s)", e,
	      e > 0 ? strerror(e) : "the call succeeded or the child failed");
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	/* Other `which` values are the libc calls. */
	CHECK(rgroup_setpriority(PRIO_PROCESS, kid.tid, 2) == 0 &&
	      getpriority(PRIO_PROCESS, kid.tid) == 2, "PRIO_PROCESS passes through");
	CHECK(rgroup_getpriority(PRIO_PROCESS, kid.tid) == 2, "getpriority passes through");
	rgt_worker_stop(&t);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

/* The lowest nice RLIMIT_NICE allows in the rule 6 child (its caller's
 * nice is 4); shared with the child through the mapping. */
struct perm {
	int floor;      /* 20 - RLIMIT_NICE */
	int res[10];
};

static void *perm_thread(void *p)
{
	struct perm *pm = p;
	int *res = pm->res;
	/* Rule 6: at or above the caller's nice (here 4): always. */
	res[0] = rgroup_setpriority(PRIO_RGRP, 0, 6) == 0;
	res[1] = rgroup_setpriority(PRIO_RGRP, 0, 4) == 0;
	/* Below it: exactly as far as RLIMIT_NICE allows (a floor above 4
	 * allows nothing below the caller's own nice). */
	int lowest = pm->floor < 4 ? pm->floor : 4;
	res[2] = rgroup_setpriority(PRIO_RGRP, 0, lowest) == 0;
	errno = 0;
	res[3] = rgroup_setpriority(PRIO_RGRP, 0, lowest - 1) == -1 && errno == EACCES;
	res[4] = rgroup_getpriority(PRIO_RGRP, 0) == lowest;
	/* Raising is always allowed, also below the caller's own nice (as
	 * PRIO_PROCESS allows it for a task; a floor at 4 leaves no room). */
	res[9] = rgroup_setpriority(PRIO_RGRP, 0, lowest + 1) == 0 &&
		 rgroup_getpriority(PRIO_RGRP, 0) == lowest + 1;
	return NULL;
}

static void *nested_perm_thread(void *p)
{
	int *res = p;
	res[0] = rgroup_getpriority(PRIO_RGRP, 0) == 0;   /* nested start at 0 */
	res[1] = rgroup_setpriority(PRIO_RGRP, 0, -20) == 0; /* any value */
	return NULL;
}

static void *top_perm_thread(void *p)
{
	struct perm *pm = p;
	pthread_t t;
	pm->res[5] = rgroup_getpriority(PRIO_RGRP, 0) == 4;    /* starts at creator's nice */
	pm->res[6] = rgroup_thread_create(&t, NULL, RGROUP_NEW, nested_perm_thread, pm->res + 7) == 0;
	if (pm->res[6])
		pthread_join(t, NULL);
	perm_thread(p);
	return NULL;
}

/* Rule 6, in a child without CAP_SYS_NICE. RLIMIT_NICE 30 (floor -10)
 * where the hard limit allows it (the VM); else the hard limit as it is
 * (a sandbox without CAP_SYS_RESOURCE cannot raise it). */
static void rule6_permission(void)
{
	struct perm *pm = mmap(NULL, sizeof(*pm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(pm != MAP_FAILED, "mmap");
	memset(pm, 0, sizeof(*pm));
	struct rlimit rl;
	getrlimit(RLIMIT_NICE, &rl);
	rlim_t want = 30;
	if (setrlimit(RLIMIT_NICE, &(struct rlimit){ want, want }) < 0)
		want = rl.rlim_max == RLIM_INFINITY ? 30 : rl.rlim_max;
	else
		setrlimit(RLIMIT_NICE, &rl);
	pm->floor = 20 - (int)(want > 40 ? 40 : want);
	fprintf(stderr, "  RLIMIT_NICE %d in the child: nice floor %d, caller at nice 4\n", (int)want, pm->floor);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t t;
		if (setrlimit(RLIMIT_NICE, &(struct rlimit){ want, want }) < 0)
			_exit(10);
		/* Nice 4 while it may still lower it: the test may run at a
		 * higher nice (nice -n 10) than RLIMIT_NICE lets it lower. */
		if (setpriority(PRIO_PROCESS, scn_gettid(), 4) < 0)
			_exit(12);
		if (rgt_drop_cap_sys_nice() < 0)
			_exit(11);
		if (rgroup_thread_create(&t, NULL, RGROUP_NEW, top_perm_thread, pm) != 0)
			_exit(3);
		pthread_join(t, NULL);
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	static const char *what[] = {
		"set above own nice", "set to own nice", "set to the RLIMIT_NICE floor",
		"below the floor: EACCES", "reads the floor", "top-level starts at creator's nice 4",
		"nested create", "nested starts at 0", "nested -20 without privilege",
		"raised by one from the floor",
	};
	for (int i = 0; i < 10; i++)
		CHECK(pm->res[i] == 1, "%s", what[i]);
	munmap(pm, sizeof(*pm));

	/* With CAP_SYS_NICE (root) a top-level group may go to -20. */
	if (geteuid() != 0) {
		fprintf(stderr, "  not root: the CAP_SYS_NICE case is covered by the root runs\n");
		return;
	}
	struct rgt_worker t = { .set_nice = 1, .nice = -20 };
	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0 && t.err == 0, "CAP_SYS_NICE: -20 (%s)", strerror(t.err));
	rgt_worker_stop(&t);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

struct fork_res { char cg[PATH_MAX]; int ok_none, ok_new; uint64_t kid; };

static void *forker(void *p)
{
	struct fork_res *res = p;
	pid_t pid = fork();
	if (pid == 0) {
		/* In the child: the sgroup, no rgroup, and a tree of its own. */
		struct fork_res *r = mmap(NULL, 0, 0, 0, -1, 0); (void)r;
		rgroup_id_t id = 1;
		pthread_t t;
		int fd = open("/proc/thread-self/cgroup", O_RDONLY);
		(void)fd;
		scn_thread_cgroup(0, res->cg, sizeof(res->cg));
		struct rgroup__kgroup kg = { 0 };
		res->kid = scn_sg.native && rgt_kgroup(0, &kg) < 0 ? ~0ull : kg.id;
		res->ok_none = rgroup_of(0, &id) == 0 && id == 0;
		res->ok_new = rgroup_thread_create(&t, NULL, RGROUP_NEW, plain_main, &(pid_t){0}) == 0;
		if (res->ok_new)
			pthread_join(t, NULL);
		exit(0); /* exit(), not _exit(): the library's clean-up runs */
	}
	int status;
	waitpid(pid, &status, 0);
	return (void *)(intptr_t)(pid > 0 && WIFEXITED(status) ? pid : 0);
}

/* Rule 7 (fork): a child process begins in the sgroup, never in an
 * rgroup of the parent, and the parent's tree is untouched. */
static void rule7_fork(void)
{
	struct fork_res *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_t t;
	void *child;

	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, forker, res) == 0, "create");
	pthread_join(t, &child);
	CHECK(child != NULL, "the child ran");
	CHECK(!rgt_kernel() || strcmp(res->cg, sg) == 0, "child began in %s, expected the sgroup %s", res->cg, sg);
	CHECK(res->ok_none, "the child is in no rgroup");
	CHECK(res->kid == 0, "the child is in no kernel rgroup (%llu)", (unsigned long long)res->kid);
	CHECK(res->ok_new, "the child can make rgroups of its own");
	CHECK(dirs_of_pid((pid_t)(intptr_t)child) == 0, "the child's groups are gone");
	munmap(res, sizeof(*res));
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

/* The process's threads now, -1 if they cannot be read. */
static int threads_now(void)
{
	return rgt_dir_entries("/proc/self/task");
}

/* In the child: make a group and let the library's helper threads end,
 * twice, then fork; each step bounded. Exit status: the step that failed. */
static int helpers_child(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_set_robust_list, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	/* A sanitizer's runtime may have a thread of its own */
	int alone = threads_now();

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 10;
	for (int round = 0; round < 2; round++) {
		struct rgt_worker w = { .spin = 0 };
		if (rgt_worker_start(&w, RGROUP_NEW) != 0)
			return 11 + round;
		rgt_worker_stop(&w);
		/* The keeper (and the governor) end once the groups are gone */
		double until = scn_now() + 20;
		while (threads_now() != alone && scn_now() < until)
			scn_sleep(0.01);
		if (threads_now() != alone)
			return 13 + round;
	}
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	int st;
	return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 15;
}

/* Where the kernel keeps no robust list for new threads (a seccomp filter
 * refuses set_robust_list), the library's helpers still start, end and
 * let a fork through: none waits for a lock that nobody will let go of. */
static void helpers_without_robust_futexes(void)
{
	pid_t pid;
	int st = 0;

	if (!strcmp(rgroup_backend(), "native")) {
		/* (Its debug kernel has no seccomp filters either.) */
		fprintf(stderr, "  native: the kernel keeps the groups, the library starts no helper\n");
		return;
	}
	pid = fork();
	if (pid == 0)
		_exit(helpers_child());
	CHECK(pid > 0, "fork");
	int w = rgt_wait_child(pid, 60, &st);
	CHECK(w != -ETIMEDOUT, "the child ended within 60 s (it hung)");
	CHECK(w < 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 0),
	      "child status %#x (10 seccomp, 11/12 a group, 13/14 helpers did not end, 15 fork)", st);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

static const char *self_exe;

static void *execer(void *p)
{
	int fd = *(int *)p;
	char arg[16];
	snprintf(arg, sizeof(arg), "%d", fd);
	/* A failed exec first: the thread stays where it was. */
	rgroup_id_t before = 0, after = 0;
	rgroup_of(0, &before);
	errno = 0;
	int r = execl("/nonexistent/program", "x", (char *)NULL);
	int e = errno;
	rgroup_of(0, &after);
	dprintf(fd, "failed-exec %d %d %d\n", r == -1 && e == ENOENT, before != 0, before == after);
	execl(self_exe, self_exe, "--print-cgroup", arg, (char *)NULL);
	dprintf(fd, "exec failed: %s\n", strerror(errno));
	return NULL;
}

/* Rule 7 (exec): a thread inside an rgroup calls exec directly; the new
 * program starts in the sgroup and the old tree's directories are gone. */
static void rule7_exec(void)
{
	int p[2];
	char out[PATH_MAX + 128] = "";
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t t, t2;
		close(p[0]);
		/* A second rgroup with a busy thread: exec must clear it too. */
		struct rgt_worker w = { .spin = 0 };
		if (rgt_worker_start(&w, RGROUP_NEW) != 0)
			_exit(3);
		(void)t2;
		if (rgroup_thread_create(&t, NULL, RGROUP_NEW, execer, &p[1]) != 0)
			_exit(4);
		pthread_join(t, NULL);
		_exit(5);
	}
	close(p[1]);
	size_t off = 0;
	ssize_t n;
	while ((n = read(p[0], out + off, sizeof(out) - 1 - off)) > 0)
		off += n;
	out[off] = '\0';
	close(p[0]);
	int status;
	waitpid(pid, &status, 0);
	CHECK(strstr(out, "failed-exec 1 1 1") != NULL, "a failed exec returns ENOENT and keeps the thread in its rgroup: %s", out);
	char want[PATH_MAX + 16];
	snprintf(want, sizeof(want), "cgroup %s\n", sg);
	CHECK(!rgt_kernel() || strstr(out, want) != NULL, "the new program starts in the sgroup: got '%s', want '%s'", out, want);
	CHECK(strstr(out, "rgroup 0\n") != NULL, "the new program is in no kernel rgroup: '%s'", out);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exec'd program status %#x", status);
	CHECK(dirs_of_pid(pid) == 0, "no directory of the exec'd process is left (%d)", dirs_of_pid(pid));
}

/* What a spawned child reports (--print-cgroup), read from a pipe. */
static void read_all(int fd, char *out, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len - 1 && (n = read(fd, out + off, len - 1 - off)) > 0)
		off += (size_t)n;
	out[off] = '\0';
}

struct spawn_res {
	char out[3][PATH_MAX + 128];   /* posix_spawn, system, popen */
	int rc[3];
};

/* In a new rgroup, with SIGUSR1 blocked and nice 3 (both inherited by a
 * child, and so by the helper that spawns it), start the three kinds. */
static void *spawner(void *p)
{
	struct spawn_res *res = p;
	char self[PATH_MAX], cmd[PATH_MAX + 64];
	sigset_t usr1;
	int pfd[2];

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	setpriority(PRIO_PROCESS, (id_t)scn_gettid(), 3);
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	if (pipe(pfd) == 0) {
		char fdarg[16];
		pid_t pid;

		snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
		char *argv[] = { self, (char *)"--print-cgroup", fdarg, NULL };
		res->rc[0] = posix_spawn(&pid, self, NULL, NULL, argv, environ);
		close(pfd[1]);
		read_all(pfd[0], res->out[0], sizeof(res->out[0]));
		close(pfd[0]);
		if (res->rc[0] == 0)
			waitpid(pid, NULL, 0);
	}
	if (pipe(pfd) == 0) {
		snprintf(cmd, sizeof(cmd), "%s --print-cgroup %d", self, pfd[1]);
		res->rc[1] = system(cmd);
		close(pfd[1]);
		read_all(pfd[0], res->out[1], sizeof(res->out[1]));
		close(pfd[0]);
	}
	snprintf(cmd, sizeof(cmd), "%s --print-cgroup 1", self);
	FILE *f = popen(cmd, "r");
	if (f) {
		read_all(fileno(f), res->out[2], sizeof(res->out[2]));
		res->rc[2] = pclose(f);
	} else {
		res->rc[2] = -1;
	}
	return res;
}

/* Rule 7 (posix_spawn, system, popen): a child started by a thread inside
 * an rgroup begins in the sgroup, with the spawning thread's signal mask
 * and nice value (POSIX: the calling thread's). */
static void rule7_spawn(void)
{
	static const char *const what[3] = { "posix_spawn", "system", "popen" };
	struct spawn_res *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char want[PATH_MAX + 16];
	pthread_t t;
	void *ran = NULL;

	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, spawner, res) == 0, "create");
	pthread_join(t, &ran);
	CHECK(ran != NULL, "the spawning thread ran");
	snprintf(want, sizeof(want), "cgroup %s\n", sg);
	for (int i = 0; i < 3; i++) {
		CHECK(res->rc[i] == 0, "%s returned %#x", what[i], res->rc[i]);
		CHECK(!rgt_kernel() || strstr(res->out[i], want) != NULL,
		      "%s: the child starts in the sgroup: got '%s', want '%s'", what[i], res->out[i], want);
		CHECK(strstr(res->out[i], "rgroup 0\n") != NULL, "%s: the child is in no kernel rgroup: '%s'",
		      what[i], res->out[i]);
		CHECK(strstr(res->out[i], "nice 3\n") != NULL, "%s: the child has the spawner's nice: '%s'",
		      what[i], res->out[i]);
		/* (sh clears its signal mask, so only posix_spawn's own child
		 * shows the mask it was given.) */
		CHECK(i != 0 || strstr(res->out[i], "usr1-blocked 1\n") != NULL,
		      "%s: the child has the spawner's signal mask: '%s'", what[i], res->out[i]);
	}
	munmap(res, sizeof(*res));
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

static int count_dirs(void)
{
	char dir[PATH_MAX];
	int n = 0;

	if (!rgt_kernel())
		return 0;
	scn_cg_dir(sg, dir, sizeof(dir));
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_type == DT_DIR && e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Rule 9: the sgroup is as the administrator left it. */
static void rule9_sgroup_untouched(void)
{
	if (!rgt_kernel()) {
		fprintf(stderr, "  governor: touches no cgroup at all\n");
		return;
	}
	char dir[PATH_MAX + 32], before[256] = "", after[256] = "";
	const char *file = scn_sg.v2 ? "cgroup.subtree_control" : "cpu.shares";
	scn_cg_dir(sg, dir, sizeof(dir));
	strcat(dir, "/");
	strcat(dir, file);
	rgt_read(dir, before, sizeof(before));
	int dirs_before = count_dirs();
	struct rgt_worker t = { .set_nice = 1, .nice = 3 };
	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0, "create");
	struct rgroup_info in;
	info_of(group_of(t.tid), &in);
	pid_t p;
	uint64_t s, id;
	CHECK(!rgt_dirs() || (rgroup__parse_dirname(in.name, &p, &s, &id) == 0 && p == getpid()),
	      "the directory is recognisably ours: %s", in.name);
	CHECK(rgt_dirs() || count_dirs() == dirs_before,
	      "the native kernel's rgroup is not in cgroupfs (%d directories, %d before)",
	      count_dirs(), dirs_before);
	rgt_worker_stop(&t);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
	rgt_read(dir, after, sizeof(after));
	CHECK(strcmp(before, after) == 0, "%s before '%s' after '%s'", file, before, after);
	if (scn_sg.v2) {
		char type[64] = "";
		scn_cg_dir(sg, dir, sizeof(dir));
		strcat(dir, "/cgroup.type");
		rgt_read(dir, type, sizeof(type));
		CHECK(strcmp(type, "domain\n") == 0, "the sgroup is a plain domain again: %s", type);
	}
}

/* Bad input: a clear error, nothing created, and the next call works. */
static void bad_input(void)
{
	pthread_t t;
	pthread_attr_t attr;

	/* Spares of earlier cases expire first: count from a clean state. */
	CHECK(scn_wait_no_groups(2.0) == 0, "clean start");
	int before = count_dirs();

	CHECK(rgroup_thread_create(&t, NULL, 0x2, plain_main, &(pid_t){0}) == EINVAL, "unknown flag: EINVAL");
	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW | 0x80000000u, plain_main, &(pid_t){0}) == EINVAL, "unknown high flag: EINVAL");
	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, NULL, NULL) == EINVAL, "NULL start: EINVAL");
	CHECK(rgroup_thread_create(NULL, NULL, RGROUP_NEW, plain_main, NULL) == EINVAL, "NULL thread: EINVAL");
	CHECK(count_dirs() == before && rgroup_list(NULL, 0) == 0, "nothing created");

	/* pthread_create itself fails (stack too large to map): the group made
	 * for the thread is removed at once. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, (size_t)1 << 46);
	int r = rgroup_thread_create(&t, &attr, RGROUP_NEW, plain_main, &(pid_t){0});
	pthread_attr_destroy(&attr);
	CHECK(r == EAGAIN || r == ENOMEM || r == EINVAL, "huge stack: error %d (%s)", r, strerror(r));
	CHECK(count_dirs() == before && rgroup_list(NULL, 0) == 0, "no group left (%d dirs, %d listed)",
	      count_dirs() - before, rgroup_list(NULL, 0));

	if (scn_sg.v2 && !scn_sg.native && !scn_sg.delegated) {
		/* cgroup.max.descendants: the kernel refuses the directory (a
		 * delegated user cannot write it: the root runs cover this). */
		char file[PATH_MAX + 32];
		scn_cg_dir(sg, file, sizeof(file));
		strcat(file, "/cgroup.max.descendants");
		CHECK(scn_write(file, "0") == 0, "limit descendants");
		r = rgroup_thread_create(&t, NULL, RGROUP_NEW, plain_main, &(pid_t){0});
		CHECK(r == EAGAIN || r == ENOSPC, "max.descendants: error %d (%s)", r, strerror(r));
		CHECK(count_dirs() == before && rgroup_list(NULL, 0) == 0, "nothing left");
		scn_write(file, "max");
	}
	struct { pid_t tid; } dummy;
	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, plain_main, &dummy.tid) == 0, "the next call works");
	pthread_join(t, NULL);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
	rgroup_id_t id;
	CHECK(rgroup_of(-1, &id) == -EINVAL, "rgroup_of(-1): -EINVAL");
	CHECK(rgroup_info(12345678, &(struct rgroup_info){ .sz = sizeof(struct rgroup_info) }) == -ENOENT,
	      "rgroup_info(unknown): -ENOENT");
	CHECK(rgroup_info(1, NULL) == -EINVAL, "rgroup_info(NULL): -EINVAL");
}

/* rgroup_probe(3)'s errors, each with its reason: an unknown name, and
 * the governor's two (a signal offset out of range, a signal the program
 * handles itself). Creates nothing and leaves the environment and the
 * signal's disposition as they were. */
static void on_probe_signal(int sig)
{
	(void)sig;
}

static void probe_errors(void)
{
	char why[512], *saved = getenv("RGROUP_GOVERNOR_SIGNAL");
	struct sigaction sa = { .sa_handler = on_probe_signal }, old;
	int r, before = count_dirs();

	saved = saved ? strdup(saved) : NULL;
	r = rgroup_probe("no-such-backend", why, sizeof(why));
	CHECK(r == -ENOENT && strstr(why, "known:"), "unknown name: %d (%s), '%s'", r, strerror(-r), why);
	CHECK(rgroup_probe("no-such-backend", NULL, 0) == -ENOENT, "unknown name, no why: -ENOENT");

	setenv("RGROUP_GOVERNOR_SIGNAL", "99", 1);
	r = rgroup_probe("governor", why, sizeof(why));
	CHECK(r == -EINVAL && strstr(why, "RGROUP_GOVERNOR_SIGNAL"), "signal offset 99: %d (%s), '%s'",
	      r, strerror(-r), why);

	/* An offset the governor does not use by default, handled here. */
	setenv("RGROUP_GOVERNOR_SIGNAL", "3", 1);
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGRTMIN + 3, &sa, &old) == 0, "install a handler");
	r = rgroup_probe("governor", why, sizeof(why));
	CHECK(r == -EBUSY && strstr(why, "SIGRTMIN+3"), "a handled signal: %d (%s), '%s'", r,
	      strerror(-r), why);
	sigaction(SIGRTMIN + 3, &old, NULL);
	r = rgroup_probe("governor", why, sizeof(why));
	CHECK(r == 0, "the same offset, unhandled again: %d (%s)", r, why);

	if (saved)
		setenv("RGROUP_GOVERNOR_SIGNAL", saved, 1);
	else
		unsetenv("RGROUP_GOVERNOR_SIGNAL");
	free(saved);
	CHECK(count_dirs() == before, "nothing created");
}

/* A chain of threads, each in a new rgroup nested under its creator's, as
 * deep as it goes: the library's depth limit (32) gives ENOSPC. */
struct chain {
	int depth;
	int err;        /* what the creation one level down returned */
	int *deepest;
	int *last_err;
};

static void *chain_main(void *p)
{
	struct chain *c = p, next = { c->depth + 1, 0, c->deepest, c->last_err };
	pthread_t t;

	*c->deepest = c->depth;
	if (c->depth >= 40)
		return NULL; /* the test's own bound */
	c->err = rgroup_thread_create(&t, NULL, RGROUP_NEW, chain_main, &next);
	if (c->err == 0)
		pthread_join(t, NULL);
	else
		*c->last_err = c->err;
	return NULL;
}

static void depth_limit(void)
{
	int deepest = 0, last_err = 0;
	struct chain c = { 1, 0, &deepest, &last_err };
	pthread_t t;

	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, chain_main, &c) == 0, "create");
	pthread_join(t, NULL);
	fprintf(stderr, "  deepest rgroup %d, then: %s\n", deepest, strerror(last_err));
	CHECK(deepest == 32 && last_err == ENOSPC, "depth %d then error %d, expected 32 then ENOSPC",
	      deepest, last_err);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
}

/*
 * The kernel is the truth where it has PRIO_RGRP: a raw setpriority()
 * system call, which any code in the process may make, is what
 * rgroup_getpriority() and rgroup_info() then say, and a later
 * rgroup_setpriority() back to the old value is not skipped as "no
 * change". Elsewhere the raw call fails (EINVAL: no such `which`) and
 * changes nothing.
 */
static void *raw_prio_thread(void *p)
{
	int *res = p;
	id_t me = (id_t)scn_gettid();

	errno = 0;
	res[0] = setpriority(3 /* PRIO_RGRP */, me, 7);
	res[1] = errno;
	res[2] = rgroup_getpriority(PRIO_RGRP, me);
	struct rgroup_info ri = { .sz = sizeof(ri) };
	rgroup_id_t id = 0;
	res[3] = rgroup_of(0, &id) == 0 && rgroup_info(id, &ri) == 0 ? ri.nice : -100;
	res[4] = rgroup_setpriority(PRIO_RGRP, me, 2);
	errno = 0;
	res[5] = getpriority(3 /* PRIO_RGRP */, me);
	res[6] = errno;
	return NULL;
}

static void kernel_is_truth(void)
{
	int res[7] = { 0 };
	pthread_t t;
	int native = !strcmp(rgroup_backend(), "native");
	/* A top-level group starts at its creator's nice (rule 6), which is
	 * not 0 when the test runs under nice(1). */
	errno = 0;
	int base = getpriority(PRIO_PROCESS, 0);
	CHECK(errno == 0, "getpriority: %s", strerror(errno));

	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, raw_prio_thread, res) == 0, "create");
	pthread_join(t, NULL);
	if (native) {
		CHECK(res[0] == 0, "raw setpriority(PRIO_RGRP, 7): %s", strerror(res[1]));
		CHECK(res[2] == 7 && res[3] == 7, "the library reads the kernel's 7: getpriority %d, "
		      "rgroup_info %d", res[2], res[3]);
		CHECK(res[4] == 0 && res[5] == 2, "rgroup_setpriority(2) reaches the kernel: %d, kernel %d",
		      res[4], res[5]);
	} else {
		CHECK(res[0] == -1 && res[1] == EINVAL, "no PRIO_RGRP in this kernel: %d, %s", res[0],
		      strerror(res[1]));
		CHECK(res[2] == base && res[3] == base, "nothing changed, still the creator's nice %d: %d, %d",
		      base, res[2], res[3]);
		CHECK(res[4] == 0, "rgroup_setpriority works: %d", res[4]);
	}
}

/*
 * A group kept alive by a member the library did not make: a thread made
 * by a raw clone(CLONE_THREAD) inside the group, which the library cannot
 * see born. When the library's own thread ends, the group lives on in
 * the kernel; on native the library keeps it known from the kernel's
 * list (rgroup_list, rgroup_info, PRIO_RGRP through the raw member) until
 * the kernel lets it go, and /proc/PID/rgroups says the same. (The
 * cgroup backends find such threads with the keeper's census, which
 * test-migrate tests; the governor has no kernel group to keep.)
 */
struct raw_member {
	volatile int go;       /* the raw thread exits when set */
	volatile int ctid;     /* cleared by the kernel when it has */
	pid_t tid;
	char *stack;
};

static int raw_member_main(void *p)
{
	struct raw_member *m = p;

	/* No libc here: the thread shares its creator's TLS. */
	while (!__atomic_load_n(&m->go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &m->go, FUTEX_WAIT, 0, NULL, NULL, 0);
	syscall(SYS_exit, 0);
	return 0;
}

static void *raw_member_maker(void *p)
{
	struct raw_member *m = p;
	size_t size = 256 * 1024;

	m->stack = malloc(size);
	m->ctid = 1;
	if (!m->stack || clone(raw_member_main, m->stack + size,
			       CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
			       CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
			       m, &m->tid, NULL, &m->ctid) < 0)
		m->tid = -1;
	return NULL;
}

static int listed_in_kernel(uint64_t kid, struct rgroup__kgroup *g)
{
	static char text[1 << 16];

	return rgt_read("/proc/self/rgroups", text, sizeof(text)) >= 0 &&
	       rgroup__find_kgroup_list(text, kid, g) == 0;
}

static int in_list(rgroup_id_t id)
{
	rgroup_id_t ids[64];
	int n = rgroup_list(ids, 64);

	for (int i = 0; i < n && i < 64; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

static void kernel_holds_group(void)
{
	struct raw_member m = { 0 };
	struct rgroup_info in = { .sz = sizeof(in) };
	struct rgroup__kgroup g = { 0 };
	rgroup_id_t id = 0;
	pthread_t t;

	if (strcmp(rgroup_backend(), "native") != 0) {
		fprintf(stderr, "  note: a case of the native backend (the cgroup backends' census "
			"of such threads is test-migrate's)\n");
		return;
	}
	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, raw_member_maker, &m) == 0, "create");
	pthread_join(t, NULL);
	CHECK(m.tid > 0, "a raw clone member in the group (%d)", (int)m.tid);
	if (m.tid <= 0)
		return;
	CHECK(rgroup_of(m.tid, &id) == 0 && id, "rgroup_of finds the raw member's group after its "
	      "creator ended (%llu)", (unsigned long long)id);
	CHECK(in_list(id), "rgroup_list still lists it");
	/* The joined creator leaves the kernel's group a moment after the
	 * join returns. */
	for (double end = scn_now() + 2; rgroup_info(id, &in) == 0 && in.nthreads != 1 && scn_now() < end;)
		scn_sleep(0.005);
	CHECK(rgroup_info(id, &in) == 0 && in.nthreads == 1, "rgroup_info: one thread, the kernel's "
	      "count (%u)", in.nthreads);
	CHECK(rgroup_setpriority(PRIO_RGRP, m.tid, 4) == 0 && rgroup_getpriority(PRIO_RGRP, m.tid) == 4,
	      "PRIO_RGRP through the raw member: %s", strerror(errno));
	uint64_t kid = 0;
	struct rgroup__kgroup own;
	if (rgt_kgroup(m.tid, &own) == 0)
		kid = own.id;
	CHECK(kid && listed_in_kernel(kid, &g) && g.nice == 4 && g.threads == 1,
	      "/proc/self/rgroups agrees: nice %d, %llu thread(s)", g.nice,
	      (unsigned long long)g.threads);
	/* The raw member ends: the kernel lets the group go, and the library
	 * forgets it. */
	__atomic_store_n(&m.go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &m.go, FUTEX_WAKE, 1, NULL, NULL, 0);
	for (double end = scn_now() + 5; __atomic_load_n(&m.ctid, __ATOMIC_ACQUIRE) && scn_now() < end;)
		scn_sleep(0.001);
	for (double end = scn_now() + 2; listed_in_kernel(kid, &g) && scn_now() < end;)
		scn_sleep(0.01);
	CHECK(!listed_in_kernel(kid, &g), "the kernel let the group go");
	CHECK(!in_list(id) && rgroup_info(id, &in) == -ENOENT,
	      "and the library forgot it: rgroup_list, rgroup_info ENOENT");
	free(m.stack);
}

static const struct rgt_case cases[] = {
	{ "rule1_creation", rule1_creation },
	{ "rule1_plain_thread_joins", rule1_plain_thread_joins },
	{ "rule1_plain_thread_contract", rule1_plain_thread_contract },
	{ "rule2_membership_forever", rule2_membership_forever },
	{ "rule3_auto_destroy", rule3_auto_destroy },
	{ "rule3_process_end", rule3_process_end },
	{ "rule5_prio_rgrp", rule5_prio_rgrp },
	{ "rule6_permission", rule6_permission },
	{ "kernel_is_truth", kernel_is_truth },
	{ "kernel_holds_group", kernel_holds_group },
	{ "rule7_fork", rule7_fork },
	{ "rule7_exec", rule7_exec },
	{ "helpers_without_robust_futexes", helpers_without_robust_futexes },
	{ "rule7_spawn", rule7_spawn },
	{ "rule9_sgroup_untouched", rule9_sgroup_untouched },
	{ "bad_input", bad_input },
	{ "probe_errors", probe_errors },
	{ "depth_limit", depth_limit },
};

int main(int argc, char **argv)
{
	/* The program exec'd by rule7_exec reports where it started. */
	if (argc == 3 && strcmp(argv[1], "--print-cgroup") == 0) {
		char path[PATH_MAX] = "?", text[8192];
		int fd = atoi(argv[2]);
		if (rgt_read("/proc/self/cgroup", text, sizeof(text)) >= 0) {
			const char *be = getenv("RGROUP_BACKEND");
			int v2 = be && (!strcmp(be, "cgroup2") || !strcmp(be, "native"));
			rgroup__parse_proc_cgroup(text, v2 ? NULL : "cpu", path, sizeof(path));
		}
		sigset_t cur;
		pthread_sigmask(SIG_SETMASK, NULL, &cur);
		struct rgroup__kgroup kg = { 0 };
		rgt_kgroup(0, &kg);   /* no such file but on the native kernel: 0 */
		dprintf(fd, "cgroup %s\nnice %d\nusr1-blocked %d\nrgroup %llu\n", path,
			getpriority(PRIO_PROCESS, 0), sigismember(&cur, SIGUSR1),
			(unsigned long long)kg.id);
		return 0;
	}
	self_exe = "/proc/self/exe";
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
