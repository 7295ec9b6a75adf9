/* SPDX-License-Identifier: MIT */
/*
 * limits.c - rule 10: a group's CPUs (affinity) and CPU cap, set and read
 * through a thread of the group as PRIO_RGRP is, with the inheritance the
 * rule asks for: a child group only narrows its parent.
 *
 *   CPUs: a group's own set must lie within its parent's (the nearest
 *   ancestor with a set; for a top-level group, what the process may
 *   use); a group without a set of its own runs on its parent's.
 *   Narrowing a parent below a child's own set is refused (EBUSY), as the
 *   v1 cpuset controller does: narrow the child first.
 *
 *   Cap: quota per period, as cgroup v2's cpu.max; a group's cap (as a
 *   share of a CPU) must be at most its nearest capped ancestor's, and a
 *   parent cannot go below a capped child's.
 *
 * The core keeps the settings in the node and checks them; the backend
 * makes them take effect (backend.h, set_cpus/set_cap).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static struct rgroup__core *const st = &rgroup__core;

#define CAP_MIN_US     1000u      /* the kernel's smallest quota and period */
#define CAP_PERIOD_MAX 1000000u   /* and its longest period */
#define CAP_DEFAULT_PERIOD 100000u

static int has_cpus_chain(const struct rgroup__node *n)
{
	for (; n; n = n->parent)
		if (n->cpus)
			return 1;
	return 0;
}

int rgroup__process_cpus(cpu_set_t *out)
{
	static cpu_set_t snapshot;
	static int have;
	const struct rgroup__thread *main_thread = rgroup__thread_by_tid(st->pid);

	/* The main thread in a group with a CPU set has our narrowing, not
	 * the process's: use what it had before. */
	if (have && main_thread && main_thread->node && has_cpus_chain(main_thread->node)) {
		*out = snapshot;
		return 0;
	}
	if (sched_getaffinity(st->pid, sizeof(*out), out) < 0)
		return -errno;
	snapshot = *out;
	have = 1;
	return 0;
}

void rgroup__node_cpus(const struct rgroup__node *n, cpu_set_t *out)
{
	for (; n; n = n->parent)
		if (n->cpus) {
			*out = *n->cpus;
			return;
		}
	if (rgroup__process_cpus(out) < 0) {
		CPU_ZERO(out);
		for (int c = 0; c < CPU_SETSIZE; c++)
			CPU_SET(c, out);
	}
}

static int subset(const cpu_set_t *a, const cpu_set_t *b)
{
	cpu_set_t both;

	CPU_AND(&both, a, b);
	return CPU_EQUAL(&both, a);
}

/* Does a child's own set (the nearest below n that has one) leave `set`? */
static int child_outside(const struct rgroup__node *list, const cpu_set_t *set)
{
	for (const struct rgroup__node *c = list; c; c = c->next) {
		if (c->cpus ? !subset(c->cpus, set) : child_outside(c->children, set))
			return 1;
	}
	return 0;
}

/* q/p > Q/P, in integers (q, Q <= 2^30; p, P <= 10^6). */
static int cap_above(uint64_t q, uint64_t p, uint64_t Q, uint64_t P)
{
	return q * P > Q * p;
}

static int child_cap_above(const struct rgroup__node *list, uint64_t quota, uint64_t period)
{
	for (const struct rgroup__node *c = list; c; c = c->next) {
		if (c->quota_us ? cap_above(c->quota_us, c->period_us, quota, period)
				: child_cap_above(c->children, quota, period))
			return 1;
	}
	return 0;
}

int rgroup__set_cpus_locked(struct rgroup__node *n, const cpu_set_t *cpus)
{
	const struct rgroup__backend *be = st->be;
	cpu_set_t bound, *copy = NULL, *old = n->cpus;
	int r;

	if (!be->set_cpus)
		return -ENOTSUP;
	if (cpus) {
		if (CPU_COUNT(cpus) == 0)
			return -EINVAL;
		if (n->parent) {
			rgroup__node_cpus(n->parent, &bound);
		} else if ((r = rgroup__process_cpus(&bound)) < 0) {
			return r;
		}
		if (!subset(cpus, &bound))
			return -EPERM;
		if (child_outside(n->children, cpus))
			return -EBUSY;
		copy = malloc(sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		*copy = *cpus;
	}
	n->cpus = copy;
	r = be->set_cpus(be->priv, n);
	if (r < 0) {
		n->cpus = old;
		be->set_cpus(be->priv, n);   /* best effort: what was there */
		free(copy);
		return r;
	}
	free(old);
	return 0;
}

int rgroup__set_cap_locked(struct rgroup__node *n, uint64_t quota, uint64_t period)
{
	const struct rgroup__backend *be = st->be;
	uint64_t oq = n->quota_us, op = n->period_us;
	const struct rgroup__node *p;
	int r;

	if (!be->set_cap)
		return -ENOTSUP;
	if (quota) {
		if (!period)
			period = CAP_DEFAULT_PERIOD;
		if (period < CAP_MIN_US || period > CAP_PERIOD_MAX || quota < CAP_MIN_US ||
		    quota > period * CPU_SETSIZE)
			return -EINVAL;
		for (p = n->parent; p && !p->quota_us; p = p->parent)
			;
		if (p && cap_above(quota, period, p->quota_us, p->period_us))
			return -EPERM;
		if (child_cap_above(n->children, quota, period))
			return -EBUSY;
	} else {
		period = 0;
	}
	n->quota_us = quota;
	n->period_us = period;
	r = be->set_cap(be->priv, n);
	if (r < 0) {
		n->quota_us = oq;
		n->period_us = op;
		be->set_cap(be->priv, n);
	}
	return r;
}

/* The group of `who`, locked, bound: as PRIO_RGRP finds it. */
static int lookup(pid_t who, struct rgroup__node **n)
{
	int r;

	if (who < 0)
		return -EINVAL;
	r = rgroup__lookup_locked((id_t)who, n);
	if (r < 0)
		return r;
	if (st->dismantled || !(*n)->bound) {
		rgroup__unlock();
		return -ENODEV;
	}
	return 0;
}

RGROUP__EXPORT int rgroup_set_cpus(pid_t who, size_t setsize, const cpu_set_t *cpus)
{
	struct rgroup__node *n;
	cpu_set_t set;
	int r;

	if (cpus) {
		const unsigned char *b = (const unsigned char *)cpus;

		if (!setsize)
			return -EINVAL;
		/* CPUs beyond what this library can name must not be asked for. */
		for (size_t i = sizeof(set); i < setsize; i++)
			if (b[i])
				return -EINVAL;
		memset(&set, 0, sizeof(set));
		memcpy(&set, cpus, setsize < sizeof(set) ? setsize : sizeof(set));
	}
	r = lookup(who, &n);
	if (r < 0)
		return r;
	r = rgroup__set_cpus_locked(n, cpus ? &set : NULL);
	rgroup__unlock();
	return r;
}

RGROUP__EXPORT int rgroup_get_cpus(pid_t who, size_t setsize, cpu_set_t *cpus)
{
	struct rgroup__node *n;
	cpu_set_t set;
	int r;

	if (!cpus || !setsize)
		return -EINVAL;
	r = lookup(who, &n);
	if (r < 0)
		return r;
	rgroup__node_cpus(n, &set);
	rgroup__unlock();
	/* As sched_getaffinity(2): a mask too small for a CPU in the set is
	 * EINVAL, and *cpus is untouched then. */
	for (size_t c = setsize * CHAR_BIT; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return -EINVAL;
	memset(cpus, 0, setsize);
	memcpy(cpus, &set, setsize < sizeof(set) ? setsize : sizeof(set));
	return 0;
}

RGROUP__EXPORT int rgroup_set_cap(pid_t who, uint64_t quota_us, uint64_t period_us)
{
	struct rgroup__node *n;
	int r = lookup(who, &n);

	if (r < 0)
		return r;
	r = rgroup__set_cap_locked(n, quota_us, period_us);
	rgroup__unlock();
	return r;
}

RGROUP__EXPORT int rgroup_get_cap(pid_t who, uint64_t *quota_us, uint64_t *period_us)
{
	struct rgroup__node *n;
	uint64_t q, p;
	int r;

	if (!quota_us || !period_us)
		return -EINVAL;
	r = lookup(who, &n);
	if (r < 0)
		return r;
	if (st->be->get_cap) {
		r = st->be->get_cap(st->be->priv, n, &q, &p);
	} else {
		q = n->quota_us;
		p = n->period_us;
	}
	rgroup__unlock();
	if (r < 0)
		return r;
	*quota_us = q;
	*period_us = p;
	return 0;
}
