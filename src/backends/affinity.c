/* SPDX-License-Identifier: MIT */
/*
 * affinity.c - rule 10's CPU sets as per-thread affinity; see affinity.h.
 */
#include <errno.h>
#include <sched.h>

#include "affinity.h"

/* What the process may use, as last seen while setting a group's CPUs:
 * for a fork child, which can ask nobody. */
static cpu_set_t process_snapshot;
static int have_snapshot;

static void snapshot(void)
{
	cpu_set_t set;

	if (rgroup__process_cpus(&set) == 0) {
		process_snapshot = set;
		__atomic_store_n(&have_snapshot, 1, __ATOMIC_RELEASE);
	}
}

static int set_one(pid_t tid, void *arg)
{
	/* ESRCH: the thread exited meanwhile. */
	if (sched_setaffinity(tid, sizeof(cpu_set_t), arg) < 0 && errno != ESRCH)
		return -errno;
	return 0;
}

static int limited(const struct rgroup__node *n)
{
	for (; n; n = n->parent)
		if (n->cpus)
			return 1;
	return 0;
}

int rgroup__aff_place(const struct rgroup__node *n, pid_t tid)
{
	cpu_set_t set;
	int r;

	/* A thread that enters a group without CPUs keeps its affinity (the
	 * program's own choice); one that leaves for the sgroup gets the
	 * process's, once any group has had CPUs (it may have narrowed it). */
	if (n ? !limited(n) : !__atomic_load_n(&have_snapshot, __ATOMIC_ACQUIRE))
		return 0;   /* nothing of ours to undo either */
	snapshot();
	if (n) {
		rgroup__node_cpus(n, &set);
	} else if ((r = rgroup__process_cpus(&set)) < 0) {
		return r;
	}
	return set_one(tid, &set);
}

int rgroup__aff_spread(const struct rgroup__node *n, rgroup__each_tid each, void *priv)
{
	cpu_set_t set;
	int r;

	snapshot();
	rgroup__node_cpus(n, &set);
	r = each(priv, n, set_one, &set);
	for (const struct rgroup__node *c = n->children; c; c = c->next) {
		int rc;

		if (c->cpus)
			continue;   /* its own set: unchanged */
		rc = rgroup__aff_spread(c, each, priv);
		if (rc < 0 && r == 0)
			r = rc;
	}
	return r;
}

int rgroup__aff_tracked(void *priv, const struct rgroup__node *n,
			int (*fn)(pid_t tid, void *arg), void *arg)
{
	int r = 0;

	for (const struct rgroup__thread *t = n->threads; t; t = t->next) {
		int rt = fn(t->tid, arg);
		if (rt < 0 && r == 0)
			r = rt;
	}
	return r;
}

int rgroup__aff_release(const struct rgroup__node *n, rgroup__each_tid each, void *priv)
{
	cpu_set_t set;
	int r;

	if (!limited(n))
		return 0;
	r = rgroup__process_cpus(&set);
	return r < 0 ? r : each(priv, n, set_one, &set);
}

void rgroup__aff_leave_self(void)
{
	const struct rgroup__node *n = rgroup__self.node;

	if (n && limited(n) && __atomic_load_n(&have_snapshot, __ATOMIC_ACQUIRE))
		sched_setaffinity(0, sizeof(process_snapshot), &process_snapshot);
}
