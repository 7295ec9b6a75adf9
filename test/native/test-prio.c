/* SPDX-License-Identifier: MIT */
/*
 * test-prio.c - rules 5 and 6 on the native kernel: setpriority(PRIO_RGRP)
 * and getpriority(PRIO_RGRP), clamping, the error cases, and who may lower
 * a top-level rgroup's nice value (RLIMIT_NICE, CAP_SYS_NICE), run partly
 * as an unprivileged user.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

struct prio_job {
	pid_t who;
	int nice, ret, err;
};

static int set_job(void *p)
{
	struct prio_job *j = p;
	j->ret = nt_setprio(j->who, j->nice);
	j->err = errno;
	return 0;
}

static int get_job(void *p)
{
	struct prio_job *j = p;
	j->ret = nt_getprio(j->who);
	j->err = errno;
	return 0;
}

static int line_nice(pid_t tid)
{
	struct nt_rg rg;
	return nt_rg_read(0, tid, &rg) ? -100 : rg.nice;
}

static void prio_set_get(void)
{
	struct nt_agent a, b;
	struct prio_job j;

	CHECK(nt_agent_start(&a, 1) == 0, "agent in a new rgroup");
	CHECK(nt_setprio(a.tid, 5) == 0, "set nice 5 by tid: %s", strerror(errno));
	CHECK(nt_getprio(a.tid) == 5, "glibc getpriority: %d", nt_getprio(a.tid));
	CHECK(nt_getprio_raw(a.tid) == 15, "raw getpriority returns 20 - nice: %ld",
	      nt_getprio_raw(a.tid));
	CHECK(line_nice(a.tid) == 5, "the /proc line says nice 5: %d", line_nice(a.tid));

	j = (struct prio_job){ .who = 0, .nice = 7 };
	nt_agent_run(&a, set_job, &j);
	CHECK(j.ret == 0, "who 0 inside the rgroup: %s", strerror(j.err));
	j = (struct prio_job){ .who = 0 };
	nt_agent_run(&a, get_job, &j);
	CHECK(j.ret == 7, "getpriority(PRIO_RGRP, 0) inside: %d", j.ret);

	/* a second member: the value belongs to the rgroup, not the thread */
	CHECK(nt_agent_start_in(&a, &b, 0) == 0 && nt_rg_id(b.tid) == nt_rg_id(a.tid), "b joins a's rgroup");
	CHECK(nt_getprio(b.tid) == 7, "b sees the rgroup's nice: %d", nt_getprio(b.tid));
	CHECK(nt_setprio(b.tid, -2) == 0 && nt_getprio(a.tid) == -2, "set through b, read through a");
	nt_agent_stop(&b);
	nt_agent_stop(&a);
}

static void prio_clamp(void)
{
	struct nt_agent a;

	CHECK(nt_agent_start(&a, 1) == 0, "agent in a new rgroup");
	CHECK(nt_setprio(a.tid, 100) == 0 && nt_getprio(a.tid) == 19, "100 clamps to 19: %d",
	      nt_getprio(a.tid));
	CHECK(nt_setprio(a.tid, -100) == 0 && nt_getprio(a.tid) == -20, "-100 clamps to -20 (root): %d",
	      nt_getprio(a.tid));
	CHECK(nt_setprio(a.tid, 0) == 0 && nt_getprio(a.tid) == 0, "back to 0");
	nt_agent_stop(&a);
}

/*
 * PRIO_RGRP reweights the group's entity at once on every CPU where the
 * group has a queued task, also where nothing of the group runs: the
 * kernel skips only CPUs where the group holds nothing. On CPU 1 a busy
 * member of the group waits behind a SCHED_FIFO thread, so neither an
 * enqueue nor the tick (which updates only the running hierarchy) touches
 * the group's entity there; the renice to nice 10 must scale that entity's
 * weight (sched_debug's se->load.weight) by about 110/1024 right away,
 * where a control read 20 ms apart shows that nothing else moves it.
 * The factor 2 each way covers what moves the weight besides the shares
 * (the group's load on CPU 0, its agent, which sleeps). If the real-time
 * thread is throttled meanwhile, the member runs and the tick reweights:
 * the case passes for the wrong reason, it cannot fail for one.
 */
struct pinned {
	int cpu, fifo;
	volatile int stop;
	volatile int nap, woken; /* nap: block on a futex until woken */
	volatile pid_t tid;
	pthread_t thread;
};

static void *pinned_spin(void *p)
{
	struct pinned *t = p;
	struct sched_param sp = { .sched_priority = 1 };
	double t0 = nt_now();

	if (nt_pin_cpu(t->cpu) ||
	    (t->fifo && sched_setscheduler(0, SCHED_FIFO, &sp)))
		t->tid = -errno;
	else
		t->tid = nt_gettid();
	/* A real-time spinner ends by itself, whatever the test does. */
	while (!t->stop && (!t->fifo || nt_now() - t0 < 2.0)) {
		if (t->nap) {
			nt_rt_wait((void *)&t->woken);
			t->nap = 0;
		}
	}
	return NULL;
}

static int start_pinned(void *p)
{
	struct pinned *t = p;
	if (pthread_create(&t->thread, NULL, pinned_spin, t))
		return -1;
	while (!t->tid)
		nt_sleep(0.001);
	return t->tid > 0 ? 0 : -1;
}

static void stop_pinned(struct pinned *t)
{
	t->stop = 1;
	pthread_join(t->thread, NULL);
}

/*
 * The start of the weight cases: an agent in a new rgroup, and a busy
 * member of its group on CPU 1 for 0.2 s. 0, or -1 when the case cannot
 * go on (skipped or failed, and said).
 */
static int member_on_cpu1(struct nt_agent *a, struct pinned *member)
{
	long long w[NT_MAX_CPUS];

	if (nt_group_weights(nt_gettid(), w, NT_MAX_CPUS) < 0) {
		rgt_skip_case("no /sys/kernel/debug/sched/debug (CONFIG_SCHED_DEBUG)");
		return -1;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		rgt_skip_case("one CPU online: the case needs CPU 1");
		return -1;
	}
	if (nt_agent_start(a, 1)) {
		CHECK(0, "agent in a new rgroup");
		return -1;
	}
	/* the member joins the agent's rgroup */
	CHECK(nt_agent_run(a, start_pinned, member) == 0, "a busy member on CPU 1: %s",
	      strerror(-member->tid));
	nt_sleep(0.2);
	return 0;
}

static void prio_reweights_queued(void)
{
	long long wc[NT_MAX_CPUS], w0[NT_MAX_CPUS], w1[NT_MAX_CPUS];
	struct pinned member = { .cpu = 1 }, hog = { .cpu = 1, .fifo = 1 };
	struct nt_agent a;
	const double want = 110.0 / 1024.0;

	if (member_on_cpu1(&a, &member))
		return;
	CHECK(start_pinned(&hog) == 0, "a SCHED_FIFO spinner on CPU 1: %s", strerror(-hog.tid));
	nt_sleep(0.05);
	/* the control: with the member waiting, nothing else moves its weight */
	nt_group_weights(a.tid, wc, NT_MAX_CPUS);
	nt_sleep(0.02);
	int n0 = nt_group_weights(a.tid, w0, NT_MAX_CPUS);
	int still = wc[1] > 0 && wc[1] == w0[1];
	CHECK(nt_setprio(a.tid, 10) == 0, "renice to 10: %s", strerror(errno));
	int n1 = nt_group_weights(a.tid, w1, NT_MAX_CPUS);
	stop_pinned(&hog);
	stop_pinned(&member);
	fprintf(stderr, "  the group is listed on %d CPUs before the renice, %d after\n", n0, n1);
	double q = w0[1] > 0 && w1[1] >= 0 ? (double)w1[1] / (double)w0[1] : -1;
	fprintf(stderr, "  CPU 1: weight %lld -> %lld, %.3f (want about %.3f)\n", w0[1], w1[1], q,
		want);
	fprintf(stderr, "  control: weight %lld, 20 ms later %lld\n", wc[1], w0[1]);
	CHECK(still, "the member's weight holds still while it waits");
	CHECK(q > want / 2 && q < want * 2, "CPU 1 reweighted at once: %.3f", q);
	nt_agent_stop(&a);
}

/*
 * Where the group has nothing queued, PRIO_RGRP leaves its entity alone
 * (an empty group's entity keeps its weight) and the next enqueue there
 * computes the weight from the new shares. On CPU 1 a member of the group
 * runs, then blocks; the group is reniced to nice 10 while a SCHED_FIFO
 * thread holds CPU 1; then the member is woken: queued behind the
 * real-time thread it does not run, so no tick reweights the group's
 * entity there, and its weight must already be about 110/1024 of what it
 * was while the member ran at nice 0 (the factor 2 each way as above).
 * If real-time throttling lets the member run meanwhile, the tick may
 * reweight: the case then passes for a weaker reason, as above.
 */
static void prio_reweights_at_wakeup(void)
{
	long long w0[NT_MAX_CPUS], w1[NT_MAX_CPUS];
	struct pinned member = { .cpu = 1 }, hog = { .cpu = 1, .fifo = 1 };
	struct nt_agent a;
	const double want = 110.0 / 1024.0;

	if (member_on_cpu1(&a, &member))
		return;
	nt_group_weights(a.tid, w0, NT_MAX_CPUS);
	member.nap = 1;
	nt_sleep(0.05);
	CHECK(start_pinned(&hog) == 0, "a SCHED_FIFO spinner on CPU 1: %s", strerror(-hog.tid));
	nt_sleep(0.02);
	CHECK(nt_setprio(a.tid, 10) == 0, "renice to 10: %s", strerror(errno));
	nt_wake(&member.woken);
	nt_sleep(0.02);
	nt_group_weights(a.tid, w1, NT_MAX_CPUS);
	int queued = member.nap; /* still 1: woken, but not run yet */
	stop_pinned(&hog);
	stop_pinned(&member);
	double q = w0[1] > 0 && w1[1] >= 0 ? (double)w1[1] / (double)w0[1] : -1;
	fprintf(stderr, "  CPU 1: weight %lld while running, %lld queued after the renice: "
		"%.3f (want about %.3f)\n", w0[1], w1[1], q, want);
	if (!queued)
		fprintf(stderr, "  the member ran meanwhile (real-time throttling): the tick may "
			"have reweighted, so this run shows less\n");
	CHECK(q > want / 2 && q < want * 2, "CPU 1 took the new weight at the enqueue: %.3f", q);
	nt_agent_stop(&a);
}

struct other_job {
	pid_t tid, pid;
};

/* uid 1000, no capabilities: another process's rgroup is ESRCH, and its
 * /proc files are not readable (EACCES) */
static int other_unprivileged(void *arg)
{
	struct other_job *oj = arg;
	char path[64], buf[256];

	rgt_failures = 0; /* this child's own count */
	CHECK(nt_drop_privileges(1000) == 0, "become uid 1000: %s", strerror(errno));
	CHECK(nt_setprio(oj->tid, 1) == -1 && errno == ESRCH, "another process's thread: ESRCH");
	CHECK(nt_getprio(oj->tid) == -1 && errno == ESRCH, "get, another process's thread: ESRCH");
	snprintf(path, sizeof(path), "/proc/%d/rgroups", (int)oj->pid);
	CHECK(nt_read_file(path, buf, sizeof(buf)) == -EACCES,
	      "another uid's /proc/PID/rgroups: EACCES");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/rgroup", (int)oj->pid, (int)oj->tid);
	CHECK(nt_read_file(path, buf, sizeof(buf)) == -EACCES,
	      "another uid's /proc/PID/task/TID/rgroup: EACCES");
	return rgt_failures ? 1 : 0;
}

static void prio_errors(void)
{
	struct nt_agent b;

	CHECK(nt_setprio(0, 1) == -1 && errno == EINVAL, "the caller in no rgroup: EINVAL");
	CHECK(nt_getprio(0) == -1 && errno == EINVAL, "get, the caller in no rgroup: EINVAL");
	CHECK(nt_agent_start(&b, 0) == 0, "agent in no rgroup");
	CHECK(nt_setprio(b.tid, 1) == -1 && errno == EINVAL, "a thread in no rgroup: EINVAL");
	nt_agent_stop(&b);
	CHECK(nt_setprio(30000, 1) == -1 && errno == ESRCH, "no such thread: ESRCH");
	CHECK(nt_getprio(30000) == -1 && errno == ESRCH, "get, no such thread: ESRCH");
	CHECK(nt_setprio(-5, 1) == -1 && errno == ESRCH, "negative who: ESRCH");
	CHECK(setpriority(4, 0, 1) == -1 && errno == EINVAL, "which 4 is still EINVAL");

	/* a thread of another process, in an rgroup */
	struct nt_other o;
	CHECK(nt_other_start(&o) == 0, "another process: %s", strerror(errno));
	pid_t pid = o.pid, other_tid = o.tid;
	struct nt_rg rg;
	CHECK(nt_rg_read(pid, other_tid, &rg) == 0 && rg.id > 0,
	      "the other process's thread is in an rgroup");
	/* Without CAP_SYS_NICE a process never touches another's rgroups */
	struct other_job oj = { .tid = other_tid, .pid = pid };
	nt_in_child("another process's rgroups as uid 1000", other_unprivileged, &oj);
	/* With it, an administrator's tools may read and set them */
	CHECK(nt_setprio(other_tid, 7) == 0, "CAP_SYS_NICE sets another process's rgroup: %s",
	      strerror(errno));
	CHECK(nt_getprio(other_tid) == 7, "and reads it: %d", nt_getprio(other_tid));
	CHECK(nt_rg_read(pid, other_tid, &rg) == 0 && rg.nice == 7, "the /proc line says 7: %d",
	      rg.nice);
	CHECK(nt_setprio(pid, 1) == -1 && errno == EINVAL,
	      "another process's main thread, in no rgroup: EINVAL");
	CHECK(nt_other_end(&o) == 0, "the other process");
}

/* Rule 6 as root: a new top-level rgroup starts at its creator's nice,
 * a nested one at 0; CAP_SYS_NICE may go anywhere. */
static int rule6_root_child(void *arg)
{
	struct nt_agent a, n;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(setpriority(PRIO_PROCESS, 0, 5) == 0, "the main thread at nice 5");
	CHECK(nt_agent_start(&a, 1) == 0, "top-level rgroup");
	CHECK(nt_getprio(a.tid) == 5, "starts at its creator's nice 5: %d", nt_getprio(a.tid));
	CHECK(nt_setprio(a.tid, -20) == 0, "root goes below its own nice: %s", strerror(errno));
	CHECK(nt_agent_start_in(&a, &n, 1) == 0, "nested rgroup");
	CHECK(nt_getprio(n.tid) == 0, "a nested rgroup starts at 0: %d", nt_getprio(n.tid));
	CHECK(nt_getprio(a.tid) == -20, "its parent keeps -20");
	nt_agent_stop(&n);
	nt_agent_stop(&a);
	return rgt_failures ? 1 : 0;
}

static void rule6_root(void)
{
	nt_in_child("rule 6 as root", rule6_root_child, NULL);
}

static int rule6_user_child(void *arg)
{
	struct rlimit rl = { 23, 23 }; /* nice down to 20 - 23 = -3 */
	struct nt_agent top, nested;
	struct prio_job j;
	(void)arg;
	rgt_failures = 0; /* this child's own count */

	CHECK(setrlimit(RLIMIT_NICE, &rl) == 0, "RLIMIT_NICE 23");
	CHECK(nt_drop_privileges(1000) == 0, "become uid 1000: %s", strerror(errno));
	CHECK(geteuid() == 1000, "uid 1000");

	CHECK(nt_agent_start(&top, 1) == 0, "top-level rgroup");
	CHECK(nt_getprio(top.tid) == 0, "starts at 0 (the creator's nice)");
	CHECK(nt_setprio(top.tid, 5) == 0, "up to 5: %s", strerror(errno));
	CHECK(nt_setprio(top.tid, -3) == 0, "down to -3, RLIMIT_NICE allows it: %s", strerror(errno));
	CHECK(nt_setprio(top.tid, -4) == -1 && errno == EACCES, "-4, beyond RLIMIT_NICE: EACCES");
	CHECK(nt_getprio(top.tid) == -3, "unchanged after EACCES: %d", nt_getprio(top.tid));

	CHECK(nt_agent_start_in(&top, &nested, 1) == 0, "a nested rgroup");
	CHECK(nt_getprio(nested.tid) == 0, "a nested rgroup starts at 0: %d", nt_getprio(nested.tid));
	CHECK(nt_setprio(nested.tid, -20) == 0, "nested: -20 without privilege: %s", strerror(errno));
	CHECK(nt_setprio(nested.tid, 19) == 0, "nested: 19");
	CHECK(nt_setprio(nested.tid, -20) == 0 && nt_getprio(nested.tid) == -20, "nested: -20 again");

	/* no RLIMIT_NICE room: nothing below the calling thread's nice */
	rl.rlim_cur = rl.rlim_max = 0;
	CHECK(setrlimit(RLIMIT_NICE, &rl) == 0, "RLIMIT_NICE 0");
	CHECK(nt_setprio(top.tid, 0) == 0, "0, the caller's nice: %s", strerror(errno));
	CHECK(nt_setprio(top.tid, -1) == -1 && errno == EACCES, "-1: EACCES");
	CHECK(nt_setprio(nested.tid, -20) == 0, "nested: still free");

	/* Lowering: the calling thread's nice counts, not the target's.
	 * Raising is always allowed, as PRIO_PROCESS allows it for a task. */
	CHECK(setpriority(PRIO_PROCESS, 0, 10) == 0, "the main thread at nice 10");
	CHECK(nt_setprio(top.tid, 5) == 0, "raised 0 -> 5 from a caller at nice 10: %s",
	      strerror(errno));
	CHECK(nt_setprio(top.tid, 3) == -1 && errno == EACCES,
	      "lowered 5 -> 3, below the caller's nice 10: EACCES");
	j = (struct prio_job){ .who = 0, .nice = 3 };
	nt_agent_run(&top, set_job, &j);
	CHECK(j.ret == 0, "the same from a thread at nice 0 works: %s", strerror(j.err));
	CHECK(nt_setprio(top.tid, 12) == 0, "12, above the caller's: %s", strerror(errno));

	/* a new top-level rgroup of a thread at nice 10 starts at 10 */
	struct nt_agent t2;
	CHECK(nt_agent_start(&t2, 1) == 0, "another top-level rgroup");
	CHECK(nt_getprio(t2.tid) == 10, "starts at its creator's nice 10: %d", nt_getprio(t2.tid));

	nt_agent_stop(&t2);
	nt_agent_stop(&nested);
	nt_agent_stop(&top);
	return rgt_failures ? 1 : 0;
}

static void rule6_unprivileged(void)
{
	nt_in_child("rule 6 as uid 1000", rule6_user_child, NULL);
}

static const struct rgt_case cases[] = {
	{ "prio_set_get", prio_set_get },
	{ "prio_clamp", prio_clamp },
	{ "prio_reweights_queued", prio_reweights_queued },
	{ "prio_reweights_at_wakeup", prio_reweights_at_wakeup },
	{ "prio_errors", prio_errors },
	{ "rule6_root", rule6_root },
	{ "rule6_unprivileged", rule6_unprivileged },
};

NT_MAIN(cases)
