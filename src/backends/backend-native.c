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
 * lazily, from /proc, only when someone asks; the kernel is asked about a
 * group through a member, or by that id where no member is known (the
 * upper levels of a chain that `rgroup run` made for a nested rule).
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

/*
 * Does the kernel name groups by id (PR_RGROUP_BY_ID), and so let a
 * thread place another and make a chain? An older series answers EINVAL;
 * asked about an id no group has, the whole series answers ESRCH.
 */
static int kernel_names_by_id(void)
{
	static int known = -1;
	int v = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (v < 0) {
		v = prctl(PR_RGROUP, PR_RGROUP_GET_NICE | PR_RGROUP_BY_ID, ULONG_MAX, 0, 0) < 0 &&
		    errno == ESRCH;
		__atomic_store_n(&known, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* How the kernel is asked about a group: through a member's tid, or by
 * the group's id (by_id is then PR_RGROUP_BY_ID, or'ed into the prctl
 * operation). */
struct kname {
	unsigned long ref;
	unsigned long by_id;
};

/* 0 and *k, or -ESRCH when neither a member nor the id is known. */
static int name_of(const struct rgroup__node *n, struct kname *k)
{
	pid_t tid = member(n);

	if (tid) {
		*k = (struct kname){ (unsigned long)tid, 0 };
		return 0;
	}
	if (nn(n)->kid && kernel_names_by_id()) {
		*k = (struct kname){ (unsigned long)nn(n)->kid, PR_RGROUP_BY_ID };
		return 0;
	}
	return -ESRCH;
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
 * The process's groups as the kernel lists them (/proc/self/rgroups, up
 * to kernel.sched_rgroup_max lines): their number, the lines in *out, or
 * -errno. The text and the lines are kept for the next call, grown as the
 * list grows; the core lock guards them (every caller holds it).
 */
static struct rgroup__kgroup *kg_lines;   /* the last read's lines */
static int kg_count = -1;                 /* ... and their number (-1: none yet) */

static int read_kgroups(const struct rgroup__kgroup **out)
{
	static char *text;
	static size_t cap;
	static size_t vcap;
	struct rgroup__kgroup *v = kg_lines;
	const char *line;
	size_t lines = 1;
	int r, n = 0;

	for (;;) {
		if (!cap || (r = rgroup__read_path("/proc/self/rgroups", text, cap)) == -EFBIG) {
			size_t want = cap ? cap * 2 : 16384;
			char *t = want <= (64u << 20) ? realloc(text, want) : NULL;

			if (!t)
				return -ENOMEM;
			text = t;
			cap = want;
			continue;
		}
		if (r < 0)
			return r;
		break;
	}
	for (line = text; (line = strchr(line, '\n')); line++)
		lines++;
	if (lines > vcap) {
		struct rgroup__kgroup *nv = realloc(v, lines * sizeof(*v));

		if (!nv)
			return -ENOMEM;
		kg_lines = v = nv;
		vcap = lines;
	}
	for (line = text; (size_t)n < lines && rgroup__parse_kgroup_list_next(&line, &v[n]) == 0;)
		n++;
	kg_count = n;
	*out = v;
	return n;
}

/* The line of group kid in /proc/self/rgroups. */
static int find_kgroup(uint64_t kid, struct rgroup__kgroup *g)
{
	const struct rgroup__kgroup *v;
	int n = read_kgroups(&v);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		if (v[i].id == kid) {
			*g = v[i];
			return 0;
		}
	return -ESRCH;
}

/* What the kernel says of n: through a member, else by its id. */
static int read_node(const struct rgroup__node *n, struct rgroup__kgroup *g)
{
	pid_t tid = member(n);

	if (tid)
		return read_kgroup(tid, g);
	return nn(n)->kid ? find_kgroup(nn(n)->kid, g) : -ESRCH;
}

/* After an entry made levels new groups, the last n with thread tid in
 * it: their ids, the last's from the thread, each other's from the one
 * below (its parent). */
static void learn_chain(struct rgroup__node *n, pid_t tid, unsigned int levels)
{
	struct rgroup__kgroup g;

	if (read_kgroup(tid, &g) < 0 || !g.id)
		return;
	nn(n)->kid = g.id;
	while (--levels && (n = n->parent) && g.parent) {
		nn(n)->kid = g.parent;
		if (levels > 1 && find_kgroup(g.parent, &g) < 0)
			return;
	}
}

/*
 * The kernel's "enter once" (rgroup run's preload), for the thread tid,
 * which is in no rgroup: into n if the kernel has it, else into a chain
 * of new groups, the first under the nearest ancestor the kernel has (or
 * at the top), n the last. An older series lets only the calling thread
 * enter, and only into a group it can name through a member: anything
 * else is EOPNOTSUPP there.
 */
static int enter(struct rgroup__node *n, pid_t tid)
{
	struct rgroup__node *up = n;
	struct kname k = { 0, 0 };
	unsigned long flags = 0, who = 0;
	unsigned int levels = 0;
	int by_id = kernel_names_by_id(), r;

	if (tid != rgroup__self_tid()) {
		if (!by_id)
			return -EOPNOTSUPP;
		who = (unsigned long)tid;
	}
	/* k stays { 0, 0 } (a new top-level chain) when no ancestor is named */
	for (; up && name_of(up, &k) < 0; up = up->parent)
		levels++;
	if (levels > 1 && !by_id)
		return -EOPNOTSUPP;
	if (levels)
		flags = PR_RGROUP_ENTER_NEW | (levels > 1 ? PR_RGROUP_ENTER_LEVELS(levels) : 0);
	r = rgroup__fault();
	if (r < 0)
		return r;
	if (prctl(PR_RGROUP, PR_RGROUP_ENTER | k.by_id, k.ref, flags, who) < 0) {
		struct rgroup__kgroup g;

		r = -errno;
		/* A group known by id only went with its last child: the
		 * chain starts higher up. */
		if (r == -ESRCH && k.by_id && up && find_kgroup(k.ref, &g) == -ESRCH) {
			nn(up)->kid = 0;
			return enter(n, tid);
		}
		return r;
	}
	if (levels)
		learn_chain(n, tid, levels);
	return 0;
}

static int nat_place(void *priv, struct rgroup__node *n, pid_t tid)
{
	int r;

	if (!n)
		return -EOPNOTSUPP;   /* the kernel moves no thread out */
	r = enter(n, tid);
	return r < 0 ? r : rgroup__aff_place(n, tid);    /* rule 10 */
}

/* The name through which the kernel is asked to change n: 0 and *k, an
 * injected fault, or -ESRCH when the library knows no way to name it. */
static int change_through(const struct rgroup__node *n, struct kname *k)
{
	int r = rgroup__fault();

	return r < 0 ? r : name_of(n, k);
}

static int nat_set_nice(void *priv, struct rgroup__node *n, int nice)
{
	struct kname k;
	int r = change_through(n, &k);

	if (r < 0)
		return r;
	if (k.by_id ? prctl(PR_RGROUP, PR_RGROUP_SET_NICE | k.by_id, k.ref, (unsigned long)(long)nice,
			    0) < 0
		    : setpriority(PRIO_RGRP, (id_t)k.ref, nice) < 0)
		return -errno;
	return 0;
}

/* The kernel's value: any code in the process may call PRIO_RGRP */
static int nat_get_nice(void *priv, const struct rgroup__node *n, int *nice)
{
	struct kname k;
	int v;

	if (name_of(n, &k) < 0)
		return -ESRCH;
	if (k.by_id) {
		v = prctl(PR_RGROUP, PR_RGROUP_GET_NICE | k.by_id, k.ref, 0, 0);
		if (v < 0)
			return -errno;
		*nice = 20 - v;
		return 0;
	}
	errno = 0;
	v = getpriority(PRIO_RGRP, (id_t)k.ref);
	if (v == -1 && errno)
		return -errno;
	*nice = v;
	return 0;
}

/* The kernel's id of thread tid's group (0: none), or 0 if it cannot be
 * read: one system call where the kernel has PR_RGROUP_GET_ID (the whole
 * series), else the thread's /proc line. */
static uint64_t kernel_id(pid_t tid)
{
	struct rgroup__kgroup g;
	uint64_t id = 0;

	if (kernel_names_by_id())
		return prctl(PR_RGROUP, PR_RGROUP_GET_ID, (unsigned long)tid, (unsigned long)&id, 0) < 0
			       ? 0 : id;
	return read_kgroup(tid, &g) == 0 ? g.id : 0;
}

/* The node's kernel id, learnt from a member once. */
static uint64_t kid_of(const struct rgroup__node *n)
{
	pid_t tid = member(n);

	if (!nn(n)->kid && tid)
		nn(n)->kid = kernel_id(tid);
	return nn(n)->kid;
}

static int nat_usage(void *priv, const struct rgroup__node *n, uint64_t *ns)
{
	struct rgroup__kgroup g;

	if (read_node(n, &g) < 0 || !g.id)
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
	struct kname k;
	int r = change_through(n, &k);

	if (r < 0)
		return r;
	if (prctl(PR_RGROUP, PR_RGROUP_SET_CAP | k.by_id, k.ref, (unsigned long)&cap,
		  sizeof(cap)) < 0)
		return cap_error(errno);
	return 0;
}

/* The kernel's value: any code in the process may call PR_RGROUP_SET_CAP */
static int nat_get_cap(void *priv, const struct rgroup__node *n, uint64_t *quota_us,
		       uint64_t *period_us)
{
	struct pr_rgroup_cap cap;
	struct kname k;

	if (name_of(n, &k) < 0)
		return -ESRCH;
	if (prctl(PR_RGROUP, PR_RGROUP_GET_CAP | k.by_id, k.ref, (unsigned long)&cap,
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

/* Is id one of the ids[0..n)? */
static int among(const uint64_t *ids, int n, uint64_t id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/*
 * Does the kernel hold n for threads the library does not track: any
 * thread in n or below it but `leaving`, a tracked member on its way out?
 * The library's own nested groups are n's children; a group below n that
 * the kernel lists and the library does not know was made by such a
 * thread (a raw clone3 with CLONE_NEWRGRP).
 */
static int nat_held(void *priv, struct rgroup__node *n, pid_t leaving, int fresh)
{
	static int stale = 1;   /* no list read since the last fresh call */
	const struct rgroup__kgroup *v = kg_lines;
	uint64_t kid = nn(n)->kid, threads = 0, lid;
	int count = kg_count;

	stale |= fresh;
	if (!kid)
		return 0;   /* never learnt: no member was ever asked about */
	/* Gone (the usual answer, once the last thread is out): one system
	 * call, no list. */
	if (prctl(PR_RGROUP, PR_RGROUP_GET_NICE | PR_RGROUP_BY_ID, (unsigned long)kid, 0, 0) < 0 &&
	    errno == ESRCH)
		return 0;
	if (stale || count < 0) {
		count = read_kgroups(&v);   /* else the last read's lines */
		stale = 0;
	}
	if (count < 0)
		return count;
	/* The list has parents before children: one pass collects n's
	 * subtree, usually a few groups, and the threads in it. */
	uint64_t *sub = malloc((size_t)(count ? count : 1) * sizeof(*sub));
	int nsub = 0;

	if (!sub)
		return -ENOMEM;
	for (int i = 0; i < count; i++)
		if (v[i].id == kid || among(sub, nsub, v[i].parent)) {
			sub[nsub++] = v[i].id;
			threads += v[i].threads;
		}
	if (threads && leaving && (lid = kernel_id(leaving)) && among(sub, nsub, lid))
		threads--;
	free(sub);
	return threads > 0;
}

/* n's last tracked thread, leaving, is on its way out, still in n: learn
 * n's kernel id from it now, for nat_held() later. */
static void nat_emptying(void *priv, struct rgroup__node *n, pid_t leaving)
{
	if (!nn(n)->kid && leaving)
		nn(n)->kid = kernel_id(leaving);
}

/* The kernel's id for the name, and how long its cap held it back; for
 * a group that only threads the library does not track hold, the
 * kernel's count of its threads. */
static void nat_info(void *priv, const struct rgroup__node *n, struct rgroup_info *info)
{
	struct rgroup__kgroup g;
	uint64_t kid;

	if (n->threads ? read_kgroup(n->threads->tid, &g) < 0
		       : !(kid = kid_of(n)) || find_kgroup(kid, &g) < 0)
		return;
	if (!g.id)
		return;
	nn(n)->kid = g.id;
	snprintf(info->name, sizeof(info->name), "kernel rgroup %llu", (unsigned long long)g.id);
	if (!n->threads)
		info->nthreads = g.threads > UINT_MAX ? UINT_MAX : (unsigned int)g.threads;
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
	.held = nat_held,
	.emptying = nat_emptying,
	.fork_child = nat_fork_child,
	.place_self = nat_place_self,
	.set_cpus = nat_set_cpus,
	.set_cap = nat_set_cap,
	.get_cap = nat_get_cap,
};
