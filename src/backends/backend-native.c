/* SPDX-License-Identifier: MIT */
/*
 * backend-native.c - rgroups in the kernel itself: a kernel with the
 * project's patch series (kernel/, native-uapi.h) makes a thread's group at
 * clone time (CLONE_NEWRGRP), weighs it with setpriority(PRIO_RGRP),
 * removes it with its last thread and follows the process when it is
 * moved. Nothing shows in cgroupfs.
 *
 * So this backend does little: a new group exists from the birth of its
 * first thread, asked for with the one-shot prctl that gives
 * pthread_create()'s next clone CLONE_NEWRGRP; no thread is ever moved, no
 * file written. The core frees a node when its last thread leaves
 * (self_managed). A node learns its kernel id (for group_of and usage)
 * lazily, from /proc, only when someone asks.
 *
 * Rule 10's CPU sets are per-thread affinity (affinity.c), given to the
 * members the kernel lists (/proc/self/task/TID/rgroup); threads born in
 * a group inherit their creator's; a fork child and an exec'd program get
 * the process's CPUs back. CPU caps are the kernel's, on the group's own
 * task group (PR_RGROUP_SET_CAP), read back from it.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "affinity.h"
#include "backend.h"
#include "fault.h"
#include "locate.h"
#include "native-uapi.h"
#include "parse.h"

/* The native backend's per-node data. */
struct native_node {
	uint64_t kid;           /* the kernel's id of the group, 0: not known yet */
	pid_t hint;             /* a member the library did not make, if known */
};

static struct native_node *nn(const struct rgroup__node *n)
{
	return rgroup__node_priv(n);
}

static int nat_probe(void *priv, char *why, size_t len)
{
	if (prctl(PR_RGROUP, PR_RGROUP_GET_NEXT_NEW, 0, 0, 0) < 0)
		return rgroup__why(why, len, -ENOTSUP, "this kernel has no native resource groups (prctl PR_RGROUP: %s); boot a kernel with the rgroup patch series (kernel/README.md)", strerror(errno));
	return 0;
}

static int nat_birth(void *priv, struct rgroup__node *n, int fresh, pthread_t *thread,
		     const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	int r;

	if (fresh && ((r = rgroup__fault()) < 0 ||
		      prctl(PR_RGROUP, PR_RGROUP_SET_NEXT_NEW, 1, 0, 0) < 0))
		return r < 0 ? -r : errno;
	r = rgroup__birth_create(thread, attr, start, arg);
	/* The request is consumed by the clone, but pthread_create() can
	 * fail before it clones (no stack): then it must not stay pending. */
	if (r && fresh)
		prctl(PR_RGROUP, PR_RGROUP_SET_NEXT_NEW, 0, 0, 0);
	return r;
}

/* A live member of n the kernel knows: a tracked thread, else a hint. */
static pid_t member(const struct rgroup__node *n)
{
	return n->threads ? n->threads->tid : nn(n)->hint;
}

static int read_kgroup(pid_t tid, struct rgroup__kgroup *g)
{
	char path[64], buf[256];
	int r;

	snprintf(path, sizeof(path), "/proc/self/task/%d/rgroup", (int)tid);
	r = rgroup__read_path(path, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	return rgroup__parse_kgroup(buf, g);
}

/*
 * Only the calling thread, and only from no rgroup: the kernel's "enter
 * once" (rgroup run's preload). Into n if it has a member, else into a new
 * group nested under n's parent's member (or a new top-level one).
 */
static int nat_place(void *priv, struct rgroup__node *n, pid_t tid)
{
	pid_t where;
	unsigned long flags = 0;
	int r;

	if (!n || tid != rgroup__self_tid())
		return -EOPNOTSUPP;   /* the kernel moves no thread */
	where = member(n);
	if (!where) {
		flags = PR_RGROUP_ENTER_NEW;
		where = n->parent ? member(n->parent) : 0;
		if (n->parent && !where)
			return -EOPNOTSUPP;
	}
	r = rgroup__fault();
	if (r < 0)
		return r;
	if (prctl(PR_RGROUP, PR_RGROUP_ENTER, (unsigned long)where, flags, 0) < 0)
		return -errno;
	return rgroup__aff_place(n, tid);    /* rule 10 */
}

/* The member through which the kernel is asked to change n: 0 and *tid,
 * an injected fault, or -ESRCH when the library knows no member. */
static int change_through(const struct rgroup__node *n, pid_t *tid)
{
	int r = rgroup__fault();

	if (r < 0)
		return r;
	*tid = member(n);
	return *tid ? 0 : -ESRCH;
}

static int nat_set_nice(void *priv, struct rgroup__node *n, int nice)
{
	pid_t tid;
	int r = change_through(n, &tid);

	if (r < 0)
		return r;
	if (setpriority(PRIO_RGRP, (id_t)tid, nice) < 0)
		return -errno;
	return 0;
}

/* The kernel's value: any code in the process may call PRIO_RGRP */
static int nat_get_nice(void *priv, const struct rgroup__node *n, int *nice)
{
	pid_t tid = member(n);
	int v;

	if (!tid)
		return -ESRCH;
	errno = 0;
	v = getpriority(PRIO_RGRP, (id_t)tid);
	if (v == -1 && errno)
		return -errno;
	*nice = v;
	return 0;
}

/* The node's kernel id, learnt from a member once. */
static uint64_t kid_of(const struct rgroup__node *n)
{
	struct rgroup__kgroup g;
	pid_t tid = member(n);

	if (!nn(n)->kid && tid && read_kgroup(tid, &g) == 0)
		nn(n)->kid = g.id;
	return nn(n)->kid;
}

static int nat_usage(void *priv, const struct rgroup__node *n, uint64_t *ns)
{
	struct rgroup__kgroup g;
	pid_t tid = member(n);

	if (!tid || read_kgroup(tid, &g) < 0 || !g.id)
		return -ENOTSUP;
	nn(n)->kid = g.id;
	*ns = g.usage_ns;
	return 0;
}

static int find_kid(struct rgroup__node *n, void *arg)
{
	struct { uint64_t kid; struct rgroup__node *found; } *q = arg;

	if (kid_of(n) != q->kid)
		return 0;
	q->found = n;
	return 1;
}

static int nat_group_of(void *priv, pid_t tid, struct rgroup__node **out)
{
	struct { uint64_t kid; struct rgroup__node *found; } q = { 0, NULL };
	struct rgroup__kgroup g;
	int r = read_kgroup(tid, &g);

	if (r < 0)
		return r;
	if (!g.id)
		return 0;
	q.kid = g.id;
	rgroup__walk_pre(rgroup__core.top, find_kid, &q);
	if (!q.found)
		return 0;   /* a group made outside the library: not ours */
	if (!q.found->threads)
		nn(q.found)->hint = tid;
	*out = q.found;
	return 1;
}

/* Each thread of the process that the kernel has in n itself. */
static int nat_each_tid(void *priv, const struct rgroup__node *n,
			int (*fn)(pid_t tid, void *arg), void *arg)
{
	uint64_t kid = kid_of(n);
	struct rgroup__kgroup g;
	struct dirent *e;
	DIR *d;
	int r = 0;

	if (!kid)
		return 0;   /* no member: nobody to give the CPUs to */
	if (!(d = opendir("/proc/self/task")))
		return -errno;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		int err;

		if (tid <= 0 || read_kgroup(tid, &g) < 0 || g.id != kid)
			continue;   /* gone, or in another group */
		if ((err = fn(tid, arg)) < 0 && r == 0)
			r = err;
	}
	closedir(d);
	return r;
}

static int nat_set_cpus(void *priv, struct rgroup__node *n)
{
	return rgroup__aff_spread(n, nat_each_tid, priv);
}

/*
 * Does the kernel know the cap operations? An older series answers EINVAL
 * to them, as to a bad argument: ask about a thread that cannot exist
 * (ESRCH where the operation is known).
 */
static int kernel_has_caps(void)
{
	struct pr_rgroup_cap cap;

	return prctl(PR_RGROUP, PR_RGROUP_GET_CAP, (unsigned long)INT_MAX, (unsigned long)&cap,
		     sizeof(cap)) < 0 && errno == ESRCH;
}

static int cap_error(int err)
{
	return err == EINVAL && !kernel_has_caps() ? -ENOTSUP : -err;
}

static int nat_set_cap(void *priv, struct rgroup__node *n)
{
	struct pr_rgroup_cap cap = { n->quota_us, n->quota_us ? n->period_us : 0 };
	pid_t tid;
	int r = change_through(n, &tid);

	if (r < 0)
		return r;
	if (prctl(PR_RGROUP, PR_RGROUP_SET_CAP, (unsigned long)tid, (unsigned long)&cap,
		  sizeof(cap)) < 0)
		return cap_error(errno);
	return 0;
}

/* The kernel's value: any code in the process may call PR_RGROUP_SET_CAP */
static int nat_get_cap(void *priv, const struct rgroup__node *n, uint64_t *quota_us,
		       uint64_t *period_us)
{
	struct pr_rgroup_cap cap;
	pid_t tid = member(n);

	if (!tid)
		return -ESRCH;
	if (prctl(PR_RGROUP, PR_RGROUP_GET_CAP, (unsigned long)tid, (unsigned long)&cap,
		  sizeof(cap)) < 0)
		return cap_error(errno);
	*quota_us = cap.quota_us;
	*period_us = cap.period_us;
	return 0;
}

static void nat_fork_child(void *priv)
{
	rgroup__aff_leave_self();
}

/*
 * The kernel moves no thread, so this is only what rule 10 adds to a
 * membership: NULL (before exec: the kernel starts the program outside
 * every group) gives the calling thread the process's CPUs back,
 * async-signal-safe; n (the exec failed, core lock held) gives it n's.
 */
static int nat_place_self(void *priv, const struct rgroup__node *n)
{
	if (!n) {
		rgroup__aff_leave_self();
		return 0;
	}
	return rgroup__aff_place(n, rgroup__self_tid());
}

/* The kernel's id for the name, and how long its cap held it back. */
static void nat_info(void *priv, const struct rgroup__node *n, struct rgroup_info *info)
{
	struct rgroup__kgroup g;
	pid_t tid = member(n);

	if (!tid || read_kgroup(tid, &g) < 0 || !g.id)
		return;
	nn(n)->kid = g.id;
	snprintf(info->name, sizeof(info->name), "kernel rgroup %llu", (unsigned long long)g.id);
	if (g.has_cap)
		info->throttled_ns = g.throttled_us * 1000;
}

const struct rgroup__backend rgroup__backend_native = {
	.name = "native",
	.priv = NULL,
	.node_size = sizeof(struct native_node),
	.self_managed = 1,
	.checks_nice = 1,
	.probe = nat_probe,
	.birth = nat_birth,
	.place = nat_place,
	.set_nice = nat_set_nice,
	.get_nice = nat_get_nice,
	.usage = nat_usage,
	.group_of = nat_group_of,
	.info = nat_info,
	.fork_child = nat_fork_child,
	.place_self = nat_place_self,
	.set_cpus = nat_set_cpus,
	.set_cap = nat_set_cap,
	.get_cap = nat_get_cap,
};
