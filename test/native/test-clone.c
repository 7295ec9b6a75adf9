/* SPDX-License-Identifier: MIT */
/*
 * test-clone.c - rule 1 on the native kernel: clone3(CLONE_NEWRGRP), the
 * per-thread one-shot PR_RGROUP_SET_NEXT_NEW that pthread_create() uses,
 * enter-once PR_RGROUP_ENTER (by the thread itself and by another thread
 * of its process, into an rgroup named by a member or by its id, or into
 * a chain of new ones), PR_RGROUP_BY_ID for the weight and the cap, and
 * their errors; what a new thread's /proc/PID/task/TID/rgroup line says.
 *
 * Cases that need a thread in no rgroup (every process's main thread is in
 * none) or that enter once run in a fork()ed child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define THREAD (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM)

static volatile int go;

/* A raw thread with `flags` that waits; its rgroup line in *rg. */
static int raw_line(uint64_t flags, struct nt_rg *rg)
{
	struct nt_raw t = { 0 };
	int tid;

	go = 0;
	tid = nt_raw_start(&t, flags, nt_rt_wait, (void *)&go);
	if (tid < 0)
		return tid;
	int err = nt_rg_read(0, tid, rg);
	nt_wake(&go);
	nt_raw_join(&t);
	return err;
}

/* --- clone3 ------------------------------------------------------------- */

static int new_top_level(void *arg)
{
	struct nt_rg rg, me;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(setpriority(PRIO_PROCESS, 0, 3) == 0, "nice 3: %s", strerror(errno));
	CHECK(nt_rg_read(0, nt_gettid(), &me) == 0 && me.id == 0 && me.depth == 0,
	      "the main thread is in no rgroup (id %" PRIu64 ")", me.id);
	CHECK(raw_line(CLONE_NEWRGRP, &rg) == 0, "clone3(CLONE_NEWRGRP)");
	fprintf(stderr, "  new thread: id %" PRIu64 " parent %" PRIu64 " depth %u nice %d attached %d\n",
		rg.id, rg.parent, rg.depth, rg.nice, rg.attached);
	CHECK(rg.id > 0, "a new rgroup has an id");
	CHECK(rg.parent == 0 && rg.depth == 1, "top-level: parent %" PRIu64 " depth %u",
	      rg.parent, rg.depth);
	CHECK(rg.nice == 3, "a new top-level rgroup has its creator's nice: %d", rg.nice);
	CHECK(rg.attached == 1, "scheduled in it");

	struct nt_rg rg2;
	CHECK(raw_line(CLONE_NEWRGRP, &rg2) == 0 && rg2.id != rg.id && rg2.id > 0,
	      "each CLONE_NEWRGRP makes another rgroup (%" PRIu64 ", %" PRIu64 ")", rg.id, rg2.id);
	CHECK(raw_line(0, &rg2) == 0 && rg2.id == 0,
	      "without the flag a thread of a creator in no rgroup is in none");
	return rgt_failures ? 1 : 0;
}

static void clone3_new_top_level(void)
{
	nt_in_child("top-level", new_top_level, NULL);
}

struct nest {
	uint64_t id;
	struct nt_rg child, joined;
	int err;
};

static int nest_job(void *p)
{
	struct nest *n = p;
	n->id = nt_rg_id(nt_gettid());
	n->err = raw_line(CLONE_NEWRGRP, &n->child);
	if (!n->err)
		n->err = raw_line(0, &n->joined);
	return 0;
}

static void clone3_nested_and_join(void)
{
	struct nt_agent a;
	struct nest n = { 0 };

	CHECK(nt_agent_start(&a, 1) == 0, "a thread in a new rgroup");
	nt_agent_run(&a, nest_job, &n);
	CHECK(n.err == 0, "clone3 from inside the rgroup: %s", strerror(-n.err));
	fprintf(stderr, "  creator's rgroup %" PRIu64 "; nested: id %" PRIu64 " parent %" PRIu64
		" depth %u nice %d; joined: %" PRIu64 "\n",
		n.id, n.child.id, n.child.parent, n.child.depth, n.child.nice, n.joined.id);
	CHECK(n.id > 0, "the agent is in an rgroup");
	CHECK(n.child.id > 0 && n.child.id != n.id, "CLONE_NEWRGRP: a new rgroup");
	CHECK(n.child.parent == n.id && n.child.depth == 2,
	      "nested under the creator's rgroup (parent %" PRIu64 ", depth %u)",
	      n.child.parent, n.child.depth);
	CHECK(n.child.nice == 0, "a nested rgroup starts at nice 0: %d", n.child.nice);
	CHECK(n.joined.id == n.id, "without the flag the thread joins its creator's rgroup");
	nt_agent_stop(&a);
}

static void clone3_errors(void)
{
	int fd = open(NT_SG, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int e;

	CHECK(fd >= 0, "open %s: %s", NT_SG, strerror(errno));
	e = nt_raw_try(THREAD | CLONE_NEWRGRP, -1);
	CHECK(e == 0, "the valid call works: %s", strerror(e));
	e = nt_raw_try(CLONE_NEWRGRP, -1);
	CHECK(e == EINVAL, "without CLONE_THREAD (a process): %s, want EINVAL", strerror(e));
	e = nt_raw_try(CLONE_VM | CLONE_NEWRGRP, -1);
	CHECK(e == EINVAL, "CLONE_VM without CLONE_THREAD: %s, want EINVAL", strerror(e));
	e = nt_raw_try(THREAD | CLONE_NEWRGRP | CLONE_INTO_CGROUP, fd);
	CHECK(e == EINVAL, "with CLONE_INTO_CGROUP: %s, want EINVAL", strerror(e));
	e = nt_raw_try(THREAD | (CLONE_NEWRGRP << 1), -1);
	CHECK(e == EINVAL, "the next bit is not a flag: %s, want EINVAL", strerror(e));
	close(fd);
}

/* The depth limit: 32 levels, ENOSPC beyond, for clone3 and for enter. */
struct chain {
	int level, max_ok, err_clone, err_enter;
};

static int chain_job(void *p);

static int chain_step(struct chain *c)
{
	struct nt_agent a;
	int err = nt_agent_start(&a, 1);
	if (err) {
		c->err_clone = err;
		return 0;
	}
	c->level++;
	nt_agent_run(&a, chain_job, c);
	nt_agent_stop(&a);
	return 0;
}

static int chain_job(void *p)
{
	struct chain *c = p;
	struct nt_rg rg;

	if (nt_rg_read(0, nt_gettid(), &rg) || rg.depth != (unsigned)c->level)
		return 0;
	c->max_ok = c->level;
	if (c->level < RGROUP_MAX_DEPTH)
		return chain_step(c);
	/* At the limit: a raw clone3 and an enter below us must fail. */
	c->err_clone = -raw_line(CLONE_NEWRGRP, &rg);
	return 0;
}

static int depth_child(void *arg)
{
	struct chain c = { 0 };
	(void)arg;
	rgt_failures = 0; /* this child's own count */
	chain_step(&c);
	fprintf(stderr, "  deepest rgroup made: depth %d; one more: %s\n", c.max_ok,
		strerror(c.err_clone));
	CHECK(c.max_ok == RGROUP_MAX_DEPTH, "32 levels of nesting work: %d", c.max_ok);
	CHECK(c.err_clone == ENOSPC, "the 33rd level fails with ENOSPC: %s", strerror(c.err_clone));
	return rgt_failures ? 1 : 0;
}

static void clone3_depth_limit(void)
{
	nt_in_child("depth limit", depth_child, NULL);
}

/* --- PR_RGROUP_SET_NEXT_NEW ------------------------------------------------ */

static void *idle_thread(void *arg)
{
	uint64_t *id = arg;
	*id = nt_rg_id(nt_gettid());
	return NULL;
}

static int get_next_new_job(void *arg)
{
	(void)arg;
	return nt_get_next_new();
}

static int one_shot_child(void *arg)
{
	rgt_failures = 0; /* this child's own count */
	pthread_t t;
	uint64_t id = 0, id2 = 0;
	(void)arg;

	CHECK(nt_get_next_new() == 0, "nothing pending at first");
	CHECK(nt_set_next_new(1) == 0 && nt_get_next_new() == 1, "set: pending");
	CHECK(nt_set_next_new(0) == 0 && nt_get_next_new() == 0, "clear: not pending");
	CHECK(nt_set_next_new(2) == -1 && errno == EINVAL, "arg3 2: EINVAL");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_NEXT_NEW, 1, 1, 0) == -1 && errno == EINVAL,
	      "arg4 set: EINVAL");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_NEXT_NEW, 0, 0, 1) == -1 && errno == EINVAL,
	      "arg5 set: EINVAL");
	CHECK(prctl(PR_RGROUP, 99, 0, 0, 0) == -1 && errno == EINVAL, "unknown op: EINVAL");

	/* pthread_create() after the prctl: a new rgroup, and consumed */
	CHECK(nt_set_next_new(1) == 0, "set");
	CHECK(pthread_create(&t, NULL, idle_thread, &id) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(nt_get_next_new() == 0, "consumed by pthread_create");
	CHECK(id > 0, "the pthread started in a new rgroup: %" PRIu64, id);
	CHECK(pthread_create(&t, NULL, idle_thread, &id2) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(id2 == 0, "the next pthread is in no rgroup again: %" PRIu64, id2);

	/* fork() is not a CLONE_THREAD clone: not consumed, not inherited */
	CHECK(nt_set_next_new(1) == 0, "set");
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0)
		_exit(nt_get_next_new() == 0 ? 0 : 1);
	CHECK(nt_wait(pid) == 0, "the fork child has nothing pending");
	CHECK(nt_get_next_new() == 1, "fork() does not consume it");

	/* a failing CLONE_THREAD clone consumes it too */
	int e = nt_raw_try(THREAD, -1);
	CHECK(e == 0 && nt_get_next_new() == 0, "a raw clone3 consumes it (%s)", strerror(e));
	CHECK(nt_set_next_new(1) == 0, "set");
	int fd = open(NT_SG, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e = nt_raw_try(THREAD | CLONE_INTO_CGROUP, fd);
	close(fd);
	CHECK(e == EINVAL, "with the request, CLONE_INTO_CGROUP is invalid: %s", strerror(e));
	CHECK(nt_get_next_new() == 0, "a failed CLONE_THREAD clone consumed it");

	/* per thread: another thread's request does not affect us */
	struct nt_agent a;
	CHECK(nt_agent_start(&a, 0) == 0, "agent");
	CHECK(nt_set_next_new(1) == 0, "set in the main thread");
	CHECK(nt_agent_run(&a, get_next_new_job, NULL) == 0,
	      "the other thread has nothing pending");
	nt_agent_stop(&a);
	CHECK(nt_get_next_new() == 1, "still pending in the main thread");
	nt_set_next_new(0);
	return rgt_failures ? 1 : 0;
}

static void one_shot_prctl(void)
{
	nt_in_child("one-shot", one_shot_child, NULL);
}

/* --- PR_RGROUP_ENTER -------------------------------------------------------- */

static int enter_top_child(void *arg)
{
	struct nt_rg rg;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(setpriority(PRIO_PROCESS, 0, 2) == 0, "nice 2");
	CHECK(nt_enter(0, 0) == -1 && errno == EINVAL, "tid 0 without NEW: EINVAL");
	CHECK(nt_enter(0, 2) == -1 && errno == EINVAL, "unknown flag: EINVAL");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_ENTER, 0, PR_RGROUP_ENTER_NEW, 1) == -1 && errno == ESRCH,
	      "arg5 a thread of another process: ESRCH");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_ENTER, 0, PR_RGROUP_ENTER_NEW, 1UL << 31) == -1 &&
	      errno == EINVAL, "arg5 beyond a pid: EINVAL");
	CHECK(nt_enter(0, PR_RGROUP_ENTER_NEW) == 0, "enter a new top-level rgroup: %s", strerror(errno));
	CHECK(nt_rg_read(0, nt_gettid(), &rg) == 0 && rg.id > 0 && rg.depth == 1 && rg.parent == 0,
	      "top-level rgroup entered");
	CHECK(rg.nice == 2, "with the caller's nice: %d", rg.nice);
	CHECK(nt_enter(0, PR_RGROUP_ENTER_NEW) == -1 && errno == EBUSY, "once only: EBUSY");
	CHECK(nt_enter(nt_gettid(), 0) == -1 && errno == EBUSY, "once only: EBUSY");

	/* membership is now as for any thread: new threads join it */
	struct nt_rg j;
	CHECK(raw_line(0, &j) == 0 && j.id == rg.id, "a new thread joins the entered rgroup");
	return rgt_failures ? 1 : 0;
}

static int enter_join_child(void *arg)
{
	struct nt_agent a, b;
	struct nt_rg rg;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(nt_agent_start(&a, 1) == 0 && nt_agent_start(&b, 0) == 0, "agents");
	uint64_t aid = nt_rg_id(a.tid);
	CHECK(aid > 0, "agent a in an rgroup");
	CHECK(nt_enter(b.tid, 0) == -1 && errno == EINVAL, "tid in no rgroup: EINVAL");
	CHECK(nt_enter(b.tid, PR_RGROUP_ENTER_NEW) == -1 && errno == EINVAL,
	      "tid in no rgroup, NEW: EINVAL");
	CHECK(nt_enter(getppid(), 0) == -1 && errno == ESRCH, "another process: ESRCH");
	CHECK(nt_enter(4194304, 0) == -1 && errno == ESRCH, "no such thread: ESRCH");
	CHECK(nt_enter(a.tid, 0) == 0, "join a's rgroup: %s", strerror(errno));
	CHECK(nt_rg_read(0, nt_gettid(), &rg) == 0 && rg.id == aid && rg.attached == 1,
	      "in a's rgroup (%" PRIu64 ", want %" PRIu64 ")", rg.id, aid);
	CHECK(nt_enter(a.tid, 0) == -1 && errno == EBUSY, "once only: EBUSY");
	nt_agent_stop(&a);
	nt_agent_stop(&b);
	return rgt_failures ? 1 : 0;
}

static int enter_nested_child(void *arg)
{
	struct nt_agent a;
	struct nt_rg rg;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(nt_agent_start(&a, 1) == 0, "agent");
	uint64_t aid = nt_rg_id(a.tid);
	CHECK(nt_setprio(a.tid, 4) == 0, "a's rgroup at nice 4");
	CHECK(nt_enter(a.tid, PR_RGROUP_ENTER_NEW) == 0, "enter a new rgroup under a's: %s",
	      strerror(errno));
	CHECK(nt_rg_read(0, nt_gettid(), &rg) == 0 && rg.id > 0 && rg.id != aid &&
	      rg.parent == aid && rg.depth == 2,
	      "nested: id %" PRIu64 " parent %" PRIu64 " depth %u", rg.id, rg.parent, rg.depth);
	CHECK(rg.nice == 0, "a nested rgroup starts at nice 0: %d", rg.nice);
	nt_agent_stop(&a);
	return rgt_failures ? 1 : 0;
}

static void enter_once(void)
{
	nt_in_child("enter top-level", enter_top_child, NULL);
	nt_in_child("enter and join", enter_join_child, NULL);
	nt_in_child("enter nested", enter_nested_child, NULL);
}

/* --- Another thread enters, by id, in a chain ------------------------------- */

static long enter_as(unsigned long op_flags, unsigned long ref, unsigned long flags, pid_t who)
{
	return prctl(PR_RGROUP, PR_RGROUP_ENTER | op_flags, ref, flags, (unsigned long)who);
}

/* Lines of /proc/self/rgroups: how many rgroups the process has. */
static int count_rgroups(void)
{
	char buf[65536];
	int n = 0;

	if (nt_read_file("/proc/self/rgroups", buf, sizeof(buf)) < 0)
		return -1;
	for (const char *p = buf; (p = strchr(p, '\n')); p++)
		n++;
	return n;
}

/* Is the rgroup with this id listed? Its line in *rg if so. */
static int listed(uint64_t id, struct nt_rg *rg)
{
	char buf[65536];

	return nt_read_file("/proc/self/rgroups", buf, sizeof(buf)) >= 0 &&
	       rgroup__find_kgroup_list(buf, id, rg) == 0;
}

static int enter_other_child(void *arg)
{
	struct nt_agent a, b, c;
	struct nt_rg rg;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(nt_agent_start(&a, 1) == 0 && nt_agent_start(&b, 0) == 0 && nt_agent_start(&c, 0) == 0,
	      "agents");
	uint64_t aid = nt_rg_id(a.tid);
	CHECK(enter_as(0, a.tid, 0, b.tid) == 0, "b put in a's rgroup by the main thread: %s",
	      strerror(errno));
	CHECK(nt_rg_id(b.tid) == aid, "b is in a's rgroup");
	CHECK(nt_rg_read(0, b.tid, &rg) == 0 && rg.attached == 1, "and scheduled there");
	CHECK(nt_rg_id(nt_gettid()) == 0, "the caller stays where it was");
	CHECK(enter_as(0, a.tid, 0, b.tid) == -1 && errno == EBUSY, "b once only: EBUSY");
	CHECK(setpriority(PRIO_PROCESS, (id_t)c.tid, 6) == 0, "c at nice 6");
	CHECK(enter_as(0, 0, PR_RGROUP_ENTER_NEW, c.tid) == 0, "c put in a new top-level rgroup: %s",
	      strerror(errno));
	CHECK(nt_rg_read(0, c.tid, &rg) == 0 && rg.depth == 1 && rg.nice == 6,
	      "at c's own nice (depth %u nice %d)", rg.depth, rg.nice);
	CHECK(enter_as(0, a.tid, 0, 1) == -1 && errno == ESRCH, "a thread of another process: ESRCH");
	CHECK(enter_as(0, a.tid, 0, 4194304) == -1 && errno == ESRCH, "no such thread: ESRCH");
	nt_agent_stop(&a);
	nt_agent_stop(&b);
	nt_agent_stop(&c);
	return rgt_failures ? 1 : 0;
}

/* Two threads enter the same third at once, into two rgroups: one wins. */
struct race {
	volatile int start, done;
	unsigned long ref;
	pid_t target;
	long result;
	int err;
};

static void *racer(void *p)
{
	struct race *r = p;

	while (!__atomic_load_n(&r->start, __ATOMIC_ACQUIRE))
		;
	r->result = enter_as(0, r->ref, 0, r->target);
	r->err = errno;
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int enter_race_child(void *arg)
{
	struct nt_agent a, b;
	int both = 0, none = 0, wrong = 0, exits = 0, rounds = 300;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(nt_agent_start(&a, 1) == 0 && nt_agent_start(&b, 1) == 0, "two rgroups");
	uint64_t ids[2] = { nt_rg_id(a.tid), nt_rg_id(b.tid) };
	int base = count_rgroups();
	for (int i = 0; i < rounds; i++) {
		struct nt_raw t = { 0 };
		struct race r[2] = { { .ref = (unsigned long)a.tid }, { .ref = (unsigned long)b.tid } };
		pthread_t th[2];
		volatile int stop = 0;
		/* Every third round the target exits while it is entered. */
		int exiting = i % 3 == 2;
		int tid = nt_raw_start(&t, 0, exiting ? nt_rt_spin : nt_rt_wait, (void *)&stop);

		if (tid < 0)
			break;
		r[0].target = r[1].target = tid;
		pthread_create(&th[0], NULL, racer, &r[0]);
		pthread_create(&th[1], NULL, racer, &r[1]);
		__atomic_store_n(&r[0].start, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&r[1].start, 1, __ATOMIC_RELEASE);
		if (exiting)
			nt_wake(&stop);
		pthread_join(th[0], NULL);
		pthread_join(th[1], NULL);
		int won = (r[0].result == 0) + (r[1].result == 0);
		if (exiting) {
			exits++;
			both += won > 1;
		} else {
			uint64_t id = nt_rg_id(tid);
			both += won != 1;
			none += won == 0;
			wrong += won == 1 && id != ids[r[0].result == 0 ? 0 : 1];
			wrong += won == 1 && (r[r[0].result == 0 ? 1 : 0].err != EBUSY);
		}
		nt_wake(&stop);
		nt_raw_join(&t);
	}
	CHECK(both == 0 && none == 0 && wrong == 0,
	      "%d rounds: exactly one of two racing entries won, the loser got EBUSY (both or none %d, wrong %d)",
	      rounds, both, wrong);
	CHECK(exits == rounds / 3, "%d rounds raced the target's exit", exits);
	double end = nt_now() + 2;
	while (count_rgroups() != base && nt_now() < end)
		nt_sleep(0.01);
	CHECK(count_rgroups() == base, "no rgroup left over (%d, %d before)", count_rgroups(), base);
	nt_agent_stop(&a);
	nt_agent_stop(&b);
	return rgt_failures ? 1 : 0;
}

static int enter_chain_child(void *arg)
{
	struct nt_agent a, b, c, d, e;
	struct nt_rg rg, mid, low;
	struct pr_rgroup_cap cap = { 20000, 100000 }, got = { 0 };
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(nt_agent_start(&a, 1) == 0 && nt_agent_start(&b, 0) == 0 && nt_agent_start(&c, 0) == 0 &&
	      nt_agent_start(&d, 0) == 0 && nt_agent_start(&e, 0) == 0, "agents");
	uint64_t aid = nt_rg_id(a.tid);
	int base = count_rgroups();

	/* Errors first: none of them leaves anything behind. */
	CHECK(enter_as(PR_RGROUP_BY_ID, 0, 0, b.tid) == -1 && errno == EINVAL, "id 0: EINVAL");
	CHECK(enter_as(PR_RGROUP_BY_ID, 1UL << 40, 0, b.tid) == -1 && errno == ESRCH,
	      "an id no rgroup has: ESRCH");
	CHECK(enter_as(0, a.tid, PR_RGROUP_ENTER_LEVELS(2), b.tid) == -1 && errno == EINVAL,
	      "levels without NEW: EINVAL");
	CHECK(enter_as(0, a.tid, PR_RGROUP_ENTER_NEW | PR_RGROUP_ENTER_LEVELS(RGROUP_MAX_DEPTH + 1),
		       b.tid) == -1 && errno == EINVAL, "more levels than the limit: EINVAL");
	CHECK(enter_as(PR_RGROUP_BY_ID, aid, PR_RGROUP_ENTER_NEW | PR_RGROUP_ENTER_LEVELS(RGROUP_MAX_DEPTH),
		       b.tid) == -1 && errno == ENOSPC, "a chain past the depth limit: ENOSPC");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_NEXT_NEW | PR_RGROUP_BY_ID, 1, 0, 0) == -1 && errno == EINVAL,
	      "BY_ID on the one-shot: EINVAL");
	CHECK(count_rgroups() == base && nt_rg_id(b.tid) == 0, "the errors left nothing (%d, %d)",
	      count_rgroups(), base);

	/* By id: b joins a's rgroup. */
	CHECK(enter_as(PR_RGROUP_BY_ID, aid, 0, b.tid) == 0, "b joins rgroup %" PRIu64 " by id: %s", aid,
	      strerror(errno));
	CHECK(nt_rg_id(b.tid) == aid, "b is in it");

	/* A chain of three below a's: c in the last, two levels no thread is in. */
	CHECK(enter_as(PR_RGROUP_BY_ID, aid, PR_RGROUP_ENTER_NEW | PR_RGROUP_ENTER_LEVELS(3), c.tid) == 0,
	      "c in a chain of three new rgroups: %s", strerror(errno));
	CHECK(nt_rg_read(0, c.tid, &low) == 0 && low.depth == 4, "c at depth 4 (%u)", low.depth);
	CHECK(listed(low.parent, &mid) && mid.depth == 3 && listed(mid.parent, &rg) && rg.depth == 2 &&
	      rg.parent == aid, "its parents: %" PRIu64 " (depth %u) under %" PRIu64 " under a's",
	      mid.id, mid.depth, rg.id);
	CHECK(count_rgroups() == base + 3, "three new rgroups listed (%d)", count_rgroups() - base);
	uint64_t got_id = 99;
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_ID, c.tid, (unsigned long)&got_id, 0) == 0 && got_id == low.id,
	      "PR_RGROUP_GET_ID: c's rgroup %" PRIu64 " (want %" PRIu64 ")", got_id, low.id);
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_ID, 0, (unsigned long)&got_id, 0) == 0 && got_id == 0,
	      "the main thread is in none: 0 (%" PRIu64 ")", got_id);
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_ID, 1, (unsigned long)&got_id, 0) == -1 && errno == ESRCH,
	      "GET_ID of another process's thread: ESRCH");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_ID, c.tid, 8, 0) == -1 && errno == EFAULT,
	      "GET_ID into a bad address: EFAULT");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_ID | PR_RGROUP_BY_ID, aid, (unsigned long)&got_id, 0) == -1 &&
	      errno == EINVAL, "GET_ID by id: EINVAL");
	uint64_t top = rg.id;

	/* The memberless ones by id: d joins the upper one, e a new one under the middle one. */
	CHECK(enter_as(PR_RGROUP_BY_ID, top, 0, d.tid) == 0 && nt_rg_id(d.tid) == top,
	      "d joins the chain's upper rgroup by id: %s", strerror(errno));
	CHECK(enter_as(PR_RGROUP_BY_ID, mid.id, PR_RGROUP_ENTER_NEW, e.tid) == 0 &&
	      nt_rg_read(0, e.tid, &rg) == 0 && rg.parent == mid.id,
	      "e in a new rgroup under the middle one: %s", strerror(errno));

	/* Weight and cap of the middle one, which no thread names. */
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_NICE | PR_RGROUP_BY_ID, mid.id, 7, 0) == 0,
	      "PR_RGROUP_SET_NICE by id: %s", strerror(errno));
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_NICE | PR_RGROUP_BY_ID, mid.id, 0, 0) == 13,
	      "PR_RGROUP_GET_NICE by id: 20 - 7");
	CHECK(listed(mid.id, &rg) && rg.nice == 7, "its /proc line says nice %d", rg.nice);
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_NICE | PR_RGROUP_BY_ID, mid.id, 100, 0) == 0 &&
	      listed(mid.id, &rg) && rg.nice == 19, "clamped to 19 (%d)", rg.nice);
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_NICE, c.tid, (unsigned long)-3L, 0) == 0 &&
	      prctl(PR_RGROUP, PR_RGROUP_GET_NICE, c.tid, 0, 0) == 23 && nt_getprio(c.tid) == -3,
	      "PR_RGROUP_SET_NICE by thread, as PRIO_RGRP: %s", strerror(errno));
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_CAP | PR_RGROUP_BY_ID, mid.id, (unsigned long)&cap,
		    sizeof(cap)) == 0, "PR_RGROUP_SET_CAP by id: %s", strerror(errno));
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_CAP | PR_RGROUP_BY_ID, mid.id, (unsigned long)&got,
		    sizeof(got)) == 0 && got.quota_us == 20000 && got.period_us == 100000,
	      "PR_RGROUP_GET_CAP by id: %llu/%llu", got.quota_us, got.period_us);
	CHECK(listed(mid.id, &rg) && rg.has_cap && rg.cap_quota_us == 20000, "its /proc line has the cap");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_NICE | PR_RGROUP_BY_ID, 0, 0, 0) == -1 && errno == EINVAL,
	      "GET_NICE by id 0: EINVAL");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_NICE | PR_RGROUP_BY_ID, 1UL << 40, 0, 0) == -1 &&
	      errno == ESRCH, "GET_NICE by an unknown id: ESRCH");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_NICE, c.tid, 1, 0) == -1 && errno == EINVAL,
	      "GET_NICE with arg4: EINVAL");

	/* Rule 3: when c and e go, the middle and lower rgroups go; the upper
	 * one stays while d is in it. */
	nt_agent_stop(&c);
	nt_agent_stop(&e);
	double end = nt_now() + 2;
	while ((listed(mid.id, &rg) || listed(low.id, &rg)) && nt_now() < end)
		nt_sleep(0.01);
	CHECK(!listed(mid.id, &rg) && !listed(low.id, &rg), "the emptied levels went");
	CHECK(listed(top, &rg), "the one d is in stays");
	nt_agent_stop(&d);
	end = nt_now() + 2;
	while (listed(top, &rg) && nt_now() < end)
		nt_sleep(0.01);
	CHECK(!listed(top, &rg), "and goes with d");
	nt_agent_stop(&a);
	nt_agent_stop(&b);
	return rgt_failures ? 1 : 0;
}

static void enter_other(void)
{
	nt_in_child("another thread enters", enter_other_child, NULL);
	nt_in_child("two threads race to enter a third", enter_race_child, NULL);
	nt_in_child("by id and in a chain", enter_chain_child, NULL);
}

static const struct rgt_case cases[] = {
	{ "clone3_new_top_level", clone3_new_top_level },
	{ "clone3_nested_and_join", clone3_nested_and_join },
	{ "clone3_errors", clone3_errors },
	{ "clone3_depth_limit", clone3_depth_limit },
	{ "one_shot_prctl", one_shot_prctl },
	{ "enter_once", enter_once },
	{ "enter_other", enter_other },
};

NT_MAIN(cases)
