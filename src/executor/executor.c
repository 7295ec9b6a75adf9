/* SPDX-License-Identifier: MIT */
/*
 * executor.c - a pool whose work items run in their work group's rgroup.
 * Built on the public API of <rgroup.h> (and the core's rule
 * 6 judge, prio.c), so it works on every backend, the native one
 * included, and knows nothing of any.
 *
 * Where the threads live. A work group G that has work has one rgroup, and
 * in it one *anchor* thread and up to max_workers *workers*:
 *
 *   - RGROUP_NEW nests the new rgroup under the CREATING thread's group
 *     (rule 1), and no thread ever moves (rule 2). So a submitting thread,
 *     which may sit in any rgroup (or be a worker of another group), can
 *     never start a worker itself: only a thread inside G's parent's rgroup
 *     can make G's rgroup, and only a thread inside G's rgroup can add a
 *     thread to it.
 *   - G's anchor is the first thread of G's rgroup. The anchor of G's parent
 *     creates it with RGROUP_NEW; for a top-level work group, the pool's
 *     *root anchor* does, which rgroup_exec_create() starts with flags 0 in
 *     the creating thread's own group. So top-level work groups are
 *     top-level rgroups when the pool is made from the sgroup, and nest
 *     under the creator's rgroup otherwise.
 *   - At birth the anchor applies G's nice (PRIO_RGRP on its own group);
 *     then, on request, it starts G's workers with flags 0 (they join G's
 *     rgroup) and the anchors of G's subgroups with RGROUP_NEW (their
 *     rgroups nest under G's). It joins every thread it started.
 *   - A worker that found no work for idle_ms ends. An anchor ends when its
 *     group has no worker, no queued item and no subgroup with an anchor:
 *     then G's rgroup has no thread and no child, and the library removes it
 *     (rule 3). Work that comes later asks for a new anchor up the chain
 *     (want_anchor()): a new rgroup, the same nice. A parent's anchor never
 *     ends while a subgroup has one, so a subgroup's rgroup is always
 *     nested under the rgroup its parent's own workers run in.
 *
 * The hot path, rgroup_exec_submit(): find the group's slot (no lock), take
 * its mutex, append to its ring, take a sleeping worker off its stack if
 * there is one, unlock; then a futex wake only if a worker was asleep, and
 * a poke of the anchor only when the group should grow. The ring grows by
 * doubling and never shrinks while the group lives, so a group whose
 * backlog has been seen allocates nothing more. Sleeping workers are a
 * stack: the most recent one is woken, the others time out and end.
 *
 * Handles. Pools and groups live in slots that are never freed (only
 * recycled, each with a generation), so a handle of a destroyed pool or
 * group is found stale under the slot's own lock: -ENOENT, never a crash.
 *
 * Locks: a pool's mutex (the tree of groups, anchors, nice values) is taken
 * before a group's mutex (its queue, its workers, its counters), never
 * after; the table lock is innermost. No lock is held while user code runs
 * or while a thread is created; the pool's lock is held while an anchor
 * applies a nice value (a cgroupfs write, on the slow path only), so that a
 * concurrent rgroup_exec_group_setnice() cannot be overwritten by a stale
 * value.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "executor.h"
#include "tree.h"
#include "weight.h"

struct table rgroup__exec_pools = { .size = sizeof(struct xpool), .kind = 1 };
struct table rgroup__exec_groups = { .size = sizeof(struct xgroup), .kind = 2 };

/* ---- Options and permission ---------------------------------------------- */

/*
 * Rule 6 for a top-level rgroup, judged for the calling thread before the
 * group has an rgroup to ask the library about (when it has one, the
 * library judges: rgroup_setpriority()): at or above the caller's own
 * nice, or what can_nice() allows.
 */
static int may_nice(int nice)
{
	return nice >= rgroup__my_nice() || rgroup__can_nice(nice);
}

/* Options structs that can grow (libbpf's rule): a caller's struct may be
 * larger than ours if the part we do not know is zero. Copies the caller's
 * opts (sz bytes; NULL: the defaults stay) over ours; -EINVAL if invalid. */
static int opts_take(void *ours, size_t our_sz, const void *opts, size_t sz)
{
	const unsigned char *p = opts;

	if (!opts)
		return 0;
	if (sz < our_sz)
		return -EINVAL;
	for (size_t i = our_sz; i < sz; i++)
		if (p[i])
			return -EINVAL;
	memcpy(ours, opts, our_sz);
	return 0;
}

/* ---- Pools ------------------------------------------------------------ */

RGROUP__EXPORT int rgroup_exec_create(rgroup_exec_t *out, const struct rgroup_exec_opts *opts)
{
	struct rgroup_exec_opts o = { .sz = sizeof(o) };
	struct rgroup_info info = { .sz = sizeof(info) };
	struct xpool *p;
	rgroup_id_t self = 0;
	cpu_set_t cpus;
	int r = 0;

	if (!out || opts_take(&o, sizeof(o), opts, opts ? opts->sz : 0))
		return -EINVAL;
	if (o.max_workers > MAX_WORKERS_LIMIT ||
	    (o.stack_size && o.stack_size < (size_t)PTHREAD_STACK_MIN))
		return -EINVAL;
	if (strcmp(rgroup_backend(), "none") == 0)
		return -ENOTSUP;
	r = rgroup_of(0, &self);
	if (r < 0)
		return r;
	if (self && rgroup_info(self, &info) < 0)
		return -ESRCH; /* our own group vanished: cannot happen */
	if (!o.max_workers)
		o.max_workers = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
	if (!o.idle_ms)
		o.idle_ms = IDLE_MS_DEFAULT;

	p = (struct xpool *)rgroup__exec_slot_alloc(&rgroup__exec_pools, &r);
	if (!p)
		return r;
	p->max_workers = o.max_workers;
	p->idle_ms = o.idle_ms;
	p->canceled = o.canceled;
	p->top_level = self == 0;
	p->base_depth = self ? (int)info.depth : 0;
	r = -pthread_cond_init(&p->cond, NULL);
	if (r)
		goto fail_slot;
	r = -pthread_attr_init(&p->attr);
	if (r)
		goto fail_cond;
	if (o.stack_size)
		r = -pthread_attr_setstacksize(&p->attr, o.stack_size);
	if (r)
		goto fail_attr;
	r = -pthread_attr_init(&p->anchor_attr);
	if (r)
		goto fail_attr;
	r = -pthread_attr_setstacksize(&p->anchor_attr, ANCHOR_STACK);
	if (r)
		goto fail_anchor_attr;
	/* Flags 0: the root anchor joins the caller's group, so the pool's
	 * rgroups nest where the caller's would (rule 1). */
	r = -rgroup_thread_create(&p->root.th, &p->anchor_attr, 0, rgroup__exec_root_main, p);
	if (r)
		goto fail_anchor_attr;
	P_LOCK(p);
	p->hdr.live = 1;
	*out = POOL_ID(p);
	P_UNLOCK(p);
	return 0;

fail_anchor_attr:
	pthread_attr_destroy(&p->anchor_attr);
fail_attr:
	pthread_attr_destroy(&p->attr);
fail_cond:
	pthread_cond_destroy(&p->cond);
fail_slot:
	rgroup__exec_slot_free(&rgroup__exec_pools, &p->hdr);
	return r;
}

/* Lock and return a live pool (not being destroyed), or NULL. */
static struct xpool *pool_lock(rgroup_exec_t id)
{
	struct xpool *p = (struct xpool *)rgroup__exec_slot_lock(&rgroup__exec_pools, id);

	if (p && p->dying) {
		P_UNLOCK(p);
		return NULL;
	}
	return p;
}

/* Is the calling thread one of p's workers? */
static int in_pool(const struct xpool *p)
{
	return rgroup__exec_cur_worker && rgroup__exec_cur_worker->g->pool == p;
}

/* pool_lock() for the calls a worker of the pool must not make (they
 * would wait for themselves): 0 and *out locked, -ENOENT or -EDEADLK. */
static int pool_lock_outside(rgroup_exec_t id, struct xpool **out)
{
	struct xpool *p = pool_lock(id);

	if (!p)
		return -ENOENT;
	if (in_pool(p)) {
		P_UNLOCK(p);
		return -EDEADLK;
	}
	*out = p;
	return 0;
}

/* Pool lock held: no more submissions to any group. */
static void close_groups(struct xgroup *list)
{
	for (struct xgroup *g = list; g; g = g->next) {
		G_LOCK(g);
		if (g->state == G_LIVE)
			g->state = G_CLOSED;
		G_UNLOCK(g);
		close_groups(g->children);
	}
}

RGROUP__EXPORT int rgroup_exec_shutdown(rgroup_exec_t pool)
{
	struct xpool *p = pool_lock(pool);

	if (!p)
		return -ENOENT;
	p->shutdown = 1;
	close_groups(p->top);
	P_UNLOCK(p);
	return 0;
}

/* ---- Groups ----------------------------------------------------------- */

/* Lock g's pool, then check the handle under g's lock; returns the group
 * with only the pool lock held, or NULL (-ENOENT). */
static struct xgroup *group_lock_pool(rgroup_exec_group_t id)
{
	struct xgroup *g = (struct xgroup *)rgroup__exec_slot_at(&rgroup__exec_groups, id);
	struct xpool *p;

	if (!g)
		return NULL;
	G_LOCK(g);
	if (!g->hdr.live || g->hdr.gen != (uint32_t)(id >> 32)) {
		G_UNLOCK(g);
		return NULL;
	}
	uint64_t pid = g->pool_id;
	G_UNLOCK(g);
	/* The pool outlives its groups: if the pool is still live, so is
	 * the group we saw, unless it was destroyed meanwhile: look again. */
	p = pool_lock(pid);
	if (!p)
		return NULL;
	G_LOCK(g);
	int ok = g->hdr.live && g->hdr.gen == (uint32_t)(id >> 32) && g->state != G_DYING;
	G_UNLOCK(g);
	if (!ok) {
		P_UNLOCK(p);
		return NULL;
	}
	return g;
}

RGROUP__EXPORT int rgroup_exec_group_create(rgroup_exec_t pool, const char *name,
				    const struct rgroup_exec_group_opts *opts,
				    rgroup_exec_group_t *out)
{
	struct rgroup_exec_group_opts o = { .sz = sizeof(o) };
	struct xgroup *g, *parent = NULL;
	struct xpool *p;
	int r = 0;

	if (!out || opts_take(&o, sizeof(o), opts, opts ? opts->sz : 0))
		return -EINVAL;
	if (o.max_workers > MAX_WORKERS_LIMIT)
		return -EINVAL;
	if (!name)
		name = "";
	if (strlen(name) >= RGROUP_EXEC_NAME_MAX)
		return -ENAMETOOLONG;
	/* Without opts: where a new rgroup would start (rule 6), i.e. the
	 * caller's nice for a top-level rgroup (set below), else 0. */
	o.nice = rgroup__clamp_nice(o.nice);
	if (o.parent) {
		parent = group_lock_pool(o.parent);
		if (!parent)
			return -ENOENT;
		p = parent->pool;
		if (POOL_ID(p) != pool) {
			P_UNLOCK(p);
			return -EINVAL; /* a group of another pool */
		}
	} else {
		p = pool_lock(pool);
		if (!p)
			return -ENOENT;
	}
	if (p->shutdown) {
		r = -ESHUTDOWN;
		goto out;
	}
	if (p->base_depth + (parent ? parent->depth + 1 : 1) > RGROUP_MAX_DEPTH) {
		r = -ENOSPC;
		goto out;
	}
	if (!opts && !parent && p->top_level)
		o.nice = rgroup__my_nice();
	if (!parent && p->top_level && !may_nice(o.nice)) {
		r = -EACCES;
		goto out;
	}
	g = (struct xgroup *)rgroup__exec_slot_alloc(&rgroup__exec_groups, &r);
	if (!g)
		goto out;
	G_LOCK(g);
	g->pool = p;
	g->pool_id = POOL_ID(p);
	g->parent = parent;
	g->depth = parent ? parent->depth + 1 : 1;
	g->nice = o.nice;
	g->max_workers = o.max_workers ? o.max_workers : p->max_workers;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->state = G_LIVE;
	g->hdr.live = 1;
	*out = GROUP_ID(g);
	G_UNLOCK(g);
	g->prev = NULL;
	g->next = parent ? parent->children : p->top;
	if (g->next)
		g->next->prev = g;
	if (parent)
		parent->children = g;
	else
		p->top = g;
out:
	P_UNLOCK(p);
	return r;
}

RGROUP__EXPORT int rgroup_exec_group_setnice(rgroup_exec_group_t group, int nice)
{
	struct xgroup *g = group_lock_pool(group);
	struct xpool *p;
	int r = 0;

	if (!g)
		return -ENOENT;
	p = g->pool;
	nice = rgroup__clamp_nice(nice);
	if (g->a.state == A_UP) {
		/* It has an rgroup: the library applies rule 6 itself. */
		if (rgroup_setpriority(PRIO_RGRP, (id_t)g->a.tid, nice) < 0)
			r = -errno;
	} else if (!g->parent && p->top_level && !may_nice(nice)) {
		r = -EACCES;
	}
	if (r == 0)
		g->nice = nice;
	P_UNLOCK(p);
	return r;
}

/*
 * The CPU time of g's threads, all its rgroups. Pool lock held, so its
 * anchor cannot end meanwhile; g's lock held on entry and return. Reading
 * another thread's clock is a system call, so the workers' clocks are read
 * with g's lock dropped (a thread that stalled while holding it, a reader
 * preempted under load, would stall the group's workers), and read again
 * if a worker ended meanwhile (its time moved into cpu_dead_ns).
 */
static uint64_t group_cpu_ns(struct xgroup *g)
{
	clockid_t clk[MAX_WORKERS_LIMIT];
	uint64_t sum = 0;

	for (int tries = 0; tries < 3; tries++) {
		uint64_t exits = g->exits;
		unsigned int n = 0;

		sum = g->cpu_dead_ns;
		for (struct worker *w = g->records; w && n < MAX_WORKERS_LIMIT; w = w->next)
			if (w->state == W_RUNNING)
				clk[n++] = w->clk;
		G_UNLOCK(g);
		for (unsigned int i = 0; i < n; i++)
			sum += thread_cpu_ns(clk[i]);
		G_LOCK(g);
		if (g->exits == exits)
			goto anchor;
	}
	/* Workers keep ending: read under the lock. */
	sum = g->cpu_dead_ns;
	for (struct worker *w = g->records; w; w = w->next)
		if (w->state == W_RUNNING)
			sum += thread_cpu_ns(w->clk);
anchor:
	if (g->a.state == A_UP)
		sum += thread_cpu_ns(g->a.clk);
	return sum;
}

RGROUP__EXPORT int rgroup_exec_group_info(rgroup_exec_group_t group, struct rgroup_exec_group_info *info)
{
	struct rgroup_exec_group_info out = { .sz = sizeof(out) };
	struct xgroup *g;
	size_t sz;

	/* Every field of the first version is needed (later versions accept
	 * this size). */
	if (!info || info->sz < offsetof(struct rgroup_exec_group_info, cpu_ns) + sizeof(uint64_t))
		return -EINVAL;
	sz = info->sz < sizeof(out) ? info->sz : sizeof(out);
	g = group_lock_pool(group);
	if (!g)
		return -ENOENT;
	out.pool = g->pool_id;
	out.parent = g->parent ? GROUP_ID(g->parent) : 0;
	out.nice = g->nice;
	memcpy(out.name, g->name, sizeof(out.name));
	G_LOCK(g);
	out.cpu_ns = group_cpu_ns(g); /* drops the lock a moment: first */
	out.max_workers = g->max_workers;
	out.workers = g->nworkers;
	out.running = g->nrunning;
	out.queued = g->count;
	out.error = g->error;
	out.rgroup = g->rgroup;
	out.rgroups = g->rgroups;
	out.submitted = g->submitted;
	out.completed = g->completed;
	out.canceled = g->canceled;
	G_UNLOCK(g);
	P_UNLOCK(g->pool);
	out.sz = sz;
	memcpy(info, &out, sz);
	return 0;
}

/* ---- Submission ------------------------------------------------------- */

/* Make room for one more item. Group lock held. 0 or -ENOMEM. */
static int ring_grow(struct xgroup *g)
{
	uint32_t cap = g->cap ? g->cap * 2 : RING_MIN;
	struct item *ring;

	if (!g->cap && g->spare) {
		/* The ring a canceler took away, handed back. */
		g->ring = g->spare;
		g->cap = g->spare_cap;
		g->spare = NULL;
		return 0;
	}
	if (cap < g->cap)
		return -ENOMEM;
	ring = malloc(cap * sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->count; i++)
		ring[i] = g->ring[(g->head + i) & (g->cap - 1)];
	free(g->ring);
	g->ring = ring;
	g->cap = cap;
	g->head = 0;
	return 0;
}

RGROUP__EXPORT int rgroup_exec_submit(rgroup_exec_group_t group, void (*fn)(void *), void *arg)
{
	struct xgroup *g = (struct xgroup *)rgroup__exec_slot_at(&rgroup__exec_groups, group);
	struct worker *w = NULL;
	struct xpool *p;
	int grow = 0, chain = 0, r;

	if (!fn)
		return -EINVAL;
	if (!g)
		return -ENOENT;
	G_LOCK(g);
	if (!g->hdr.live || g->hdr.gen != (uint32_t)(group >> 32) || g->state == G_DYING) {
		G_UNLOCK(g);
		return -ENOENT;
	}
	if (g->state == G_CLOSED) {
		G_UNLOCK(g);
		return -ESHUTDOWN;
	}
	if (g->count == g->cap && (r = ring_grow(g)) < 0) {
		G_UNLOCK(g);
		return r;
	}
	g->ring[(g->head + g->count) & (g->cap - 1)] = (struct item){ fn, arg };
	g->count++;
	g->submitted++;
	p = g->pool;
	if (g->sleepers) {
		/* Take the most recent sleeper off the stack: it is ours. */
		w = g->sleepers;
		g->sleepers = w->snext;
		if (g->sleepers)
			g->sleepers->sprev = NULL;
		g->nsleeping--;
		__atomic_store_n(&w->wake, 1, __ATOMIC_RELEASE);
	} else if (g->nworkers + g->nstarting < g->max_workers &&
		   g->count > g->nworkers - g->nrunning + g->nstarting) {
		/* More queued than workers free or on their way: grow. */
		g->nstarting++;
		g->spawn_req++;
		if (g->a.state == A_UP)
			grow = 1;
		else if (g->a.state == A_NONE)
			chain = 1;
		/* A_WANTED: the anchor looks at spawn_req when it starts. */
	}
	G_UNLOCK(g);
	/* A spurious wake of a record reused meanwhile is harmless: every
	 * sleeper here looks at its word again. */
	if (w)
		futex_wake(&w->wake, 1);
	if (grow)
		rgroup__exec_poke(&g->a);
	if (chain) {
		/* Pool slots are never freed; if g was destroyed meanwhile
		 * (and recycled), the check below says so. */
		P_LOCK(p);
		G_LOCK(g);
		int ok = g->hdr.live && g->hdr.gen == (uint32_t)(group >> 32) && !g->dead;
		G_UNLOCK(g);
		if (ok)
			rgroup__exec_want_anchor(g);
		P_UNLOCK(p);
	}
	return 0;
}

/* ---- Waiting and canceling -------------------------------------------- */

/* Wait until g (handle id) is idle or `until` (ns; 0: no limit). No lock
 * held. 0, -ETIMEDOUT, or -ENOENT if it was destroyed meanwhile. */
static int wait_idle(struct xgroup *g, uint64_t id, uint64_t until)
{
	int r = 0;

	G_LOCK(g);
	for (;;) {
		if (!g->hdr.live || g->hdr.gen != (uint32_t)(id >> 32)) {
			r = -ENOENT;
			break;
		}
		if (!g->count && !g->nrunning)
			break;
		uint32_t seq = g->idle_seq;
		g->nwaiters++;
		G_UNLOCK(g);
		int t = futex_wait_until(&g->idle_seq, seq, until);
		G_LOCK(g);
		g->nwaiters--;
		if (t == ETIMEDOUT && (g->count || g->nrunning)) {
			r = -ETIMEDOUT;
			break;
		}
	}
	G_UNLOCK(g);
	return r;
}

/* Take g's pending items away and report them canceled. No lock held;
 * returns how many. */
static int cancel_one(struct xgroup *g, uint64_t id)
{
	void (*cb)(void (*)(void *), void *);
	struct item *ring;
	uint32_t cap, head, n;
	int wake;

	G_LOCK(g);
	if (!g->hdr.live || g->hdr.gen != (uint32_t)(id >> 32) || !g->count) {
		G_UNLOCK(g);
		return 0;
	}
	cb = g->pool->canceled;
	n = g->count;
	g->canceled += n;
	g->count = 0;
	if (g->a.state != A_UP) {
		/* Workers asked for that no anchor has seen: not needed now
		 * (else a group whose rgroup cannot be made is retried on). */
		g->nstarting -= g->spawn_req;
		g->spawn_req = 0;
	}
	ring = g->ring;
	cap = g->cap;
	head = g->head;
	g->head = 0;
	if (cb) {
		/* Callbacks run unlocked (they may submit): the ring goes
		 * with them, and comes back as the spare. */
		g->ring = NULL;
		g->cap = 0;
	}
	wake = rgroup__exec_became_idle(g);
	G_UNLOCK(g);
	if (wake)
		futex_wake(&g->idle_seq, INT_MAX);
	if (!cb)
		return (int)n;
	for (uint32_t i = 0; i < n; i++) {
		struct item it = ring[(head + i) & (cap - 1)];
		cb(it.fn, it.arg);
	}
	G_LOCK(g);
	if (g->hdr.live && g->hdr.gen == (uint32_t)(id >> 32) && !g->spare && !g->dead) {
		g->spare = ring;
		g->spare_cap = cap;
		ring = NULL;
	}
	G_UNLOCK(g);
	free(ring);
	return n > INT_MAX ? INT_MAX : (int)n;
}

/* Every group of a list and below, as handles (ids NULL: count only). */
static void collect(struct xgroup *list, uint64_t *ids, size_t *n)
{
	for (struct xgroup *g = list; g; g = g->next) {
		if (ids)
			ids[*n] = GROUP_ID(g);
		(*n)++;
		collect(g->children, ids, n);
	}
}

/* Every group of pool p, as handles, in a new array of *n; NULL if out of
 * memory. Pool lock held. */
static uint64_t *pool_groups(struct xpool *p, size_t *n)
{
	uint64_t *ids;

	*n = 0;
	collect(p->top, NULL, n);
	ids = malloc((*n ? *n : 1) * sizeof(*ids));
	if (!ids)
		return NULL;
	*n = 0;
	collect(p->top, ids, n);
	return ids;
}

RGROUP__EXPORT int rgroup_exec_wait(rgroup_exec_t pool, rgroup_exec_group_t group, int timeout_ms)
{
	uint64_t until = timeout_ms < 0 ? 0 : now_ns() + (uint64_t)timeout_ms * 1000000u + 1;
	struct xpool *p;
	struct xgroup *g;
	uint64_t *ids;
	size_t n;
	int r;

	if (group) {
		g = group_lock_pool(group);
		if (!g)
			return -ENOENT;
		p = g->pool;
		r = POOL_ID(p) != pool ? -ENOENT : rgroup__exec_cur_worker && rgroup__exec_cur_worker->g == g ? -EDEADLK : 0;
		P_UNLOCK(p);
		return r ? r : wait_idle(g, group, until);
	}
	/* Every group: until one pass finds all of them idle. */
	for (;;) {
		int waited = 0;

		r = pool_lock_outside(pool, &p);
		if (r < 0)
			return r;
		ids = pool_groups(p, &n);
		P_UNLOCK(p);
		if (!ids)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			g = (struct xgroup *)rgroup__exec_slot_at(&rgroup__exec_groups, ids[i]);
			G_LOCK(g);
			int busy = g->hdr.live && g->hdr.gen == (uint32_t)(ids[i] >> 32) &&
				   (g->count || g->nrunning);
			G_UNLOCK(g);
			if (!busy)
				continue;
			waited = 1;
			r = wait_idle(g, ids[i], until);
			if (r == -ETIMEDOUT) {
				free(ids);
				return r;
			}
		}
		free(ids);
		if (!waited)
			return 0;
	}
}

RGROUP__EXPORT int rgroup_exec_cancel(rgroup_exec_t pool, rgroup_exec_group_t group)
{
	struct xpool *p;
	struct xgroup *g;
	uint64_t *ids;
	size_t n;
	long total = 0;

	if (group) {
		g = group_lock_pool(group);
		if (!g)
			return -ENOENT;
		p = g->pool;
		int other = POOL_ID(p) != pool;
		P_UNLOCK(p);
		return other ? -ENOENT : cancel_one(g, group);
	}
	p = pool_lock(pool);
	if (!p)
		return -ENOENT;
	ids = pool_groups(p, &n);
	P_UNLOCK(p);
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		total += cancel_one((struct xgroup *)rgroup__exec_slot_at(&rgroup__exec_groups, ids[i]), ids[i]);
	free(ids);
	return total > INT_MAX ? INT_MAX : (int)total;
}

/* ---- Destruction ------------------------------------------------------ */

/*
 * Destroy group g, which the caller owns (g->owned) and which has no
 * subgroups. Pool lock held on entry and on return (dropped while
 * waiting). Refuses new work at once, cancels or drains the pending items,
 * waits for the running ones, then for its workers and anchor to end and
 * the anchor to be joined by its parent's. Returns how many items were
 * canceled.
 */
static int destroy_locked(struct xpool *p, struct xgroup *g, unsigned int flags)
{
	uint64_t id = GROUP_ID(g);
	struct worker *w, *wake = NULL;
	int canceled = 0;

	G_LOCK(g);
	g->state = G_DYING;
	G_UNLOCK(g);
	P_UNLOCK(p);
	if (!(flags & RGROUP_EXEC_DRAIN))
		canceled = cancel_one(g, id);
	wait_idle(g, id, 0);
	P_LOCK(p);
	G_LOCK(g);
	g->dead = 1;
	while ((w = g->sleepers)) {
		g->sleepers = w->snext;
		g->nsleeping--;
		__atomic_store_n(&w->wake, 1, __ATOMIC_RELEASE);
		w->snext = wake;
		wake = w;
	}
	G_UNLOCK(g);
	for (w = wake; w; w = w->snext)
		futex_wake(&w->wake, 1);
	rgroup__exec_poke(&g->a);
	rgroup__exec_poke_maker(g); /* a wanted anchor that is no longer needed */
	for (;;) {
		G_LOCK(g);
		int busy = g->a.state != A_NONE || g->a.have_th || g->a.creating || g->nworkers;
		G_UNLOCK(g);
		if (!busy)
			break;
		pthread_cond_wait(&p->cond, &p->hdr.lock);
	}
	if (g->prev)
		g->prev->next = g->next;
	else if (g->parent)
		g->parent->children = g->next;
	else
		p->top = g->next;
	if (g->next)
		g->next->prev = g->prev;
	G_LOCK(g);
	rgroup__exec_slot_retire(&g->hdr);
	free(g->ring);
	free(g->spare);
	while ((w = g->records)) {
		g->records = w->next;
		free(w);
	}
	G_UNLOCK(g);
	/* The parent's anchor may end now that this child is gone. */
	if (g->parent)
		rgroup__exec_poke(&g->parent->a);
	rgroup__exec_slot_free(&rgroup__exec_groups, &g->hdr);
	pthread_cond_broadcast(&p->cond);
	return canceled;
}

RGROUP__EXPORT int rgroup_exec_group_destroy(rgroup_exec_group_t group, unsigned int flags)
{
	struct xgroup *g;
	struct xpool *p;
	int r;

	if (flags & ~RGROUP_EXEC_DRAIN)
		return -EINVAL;
	g = group_lock_pool(group);
	if (!g)
		return -ENOENT;
	p = g->pool;
	if (g->owned)
		r = -ENOENT; /* someone else is destroying it */
	else if (g->children)
		r = -EBUSY;
	else if (rgroup__exec_cur_worker && rgroup__exec_cur_worker->g == g)
		r = -EDEADLK;
	else {
		g->owned = 1;
		r = destroy_locked(p, g, flags);
	}
	P_UNLOCK(p);
	return r;
}

/* A group of p's tree without subgroups that nobody else is destroying;
 * NULL if none. Pool lock held. */
static struct xgroup *free_leaf(struct xgroup *list)
{
	for (struct xgroup *g = list; g; g = g->next) {
		struct xgroup *l = free_leaf(g->children);

		if (l)
			return l;
		if (!g->children && !g->owned)
			return g;
	}
	return NULL;
}

RGROUP__EXPORT int rgroup_exec_destroy(rgroup_exec_t pool, unsigned int flags)
{
	struct xpool *p;
	long canceled = 0;
	int r;

	if (flags & ~RGROUP_EXEC_DRAIN)
		return -EINVAL;
	r = pool_lock_outside(pool, &p);
	if (r < 0)
		return r;
	p->dying = 1; /* other calls on the pool: -ENOENT from now on */
	p->shutdown = 1;
	close_groups(p->top);
	/* Every group is closed, so no item adds more: cancel what is
	 * pending in all of them at once, or run it all, before the groups
	 * go one by one (a group that went later would otherwise still run
	 * its queue meanwhile). */
	size_t n;
	uint64_t *ids = pool_groups(p, &n);

	P_UNLOCK(p);
	for (size_t i = 0; ids && i < n; i++) {
		struct xgroup *g = (struct xgroup *)rgroup__exec_slot_at(&rgroup__exec_groups, ids[i]);

		if (flags & RGROUP_EXEC_DRAIN)
			wait_idle(g, ids[i], 0);
		else
			canceled += cancel_one(g, ids[i]);
	}
	free(ids);
	P_LOCK(p);
	while (p->top) {
		struct xgroup *g = free_leaf(p->top);

		if (!g) {
			/* Every leaf is being destroyed by another thread. */
			pthread_cond_wait(&p->cond, &p->hdr.lock);
			continue;
		}
		g->owned = 1;
		canceled += destroy_locked(p, g, flags);
	}
	p->root_exit = 1;
	P_UNLOCK(p);
	rgroup__exec_poke(&p->root);
	pthread_join(p->root.th, NULL);
	P_LOCK(p);
	rgroup__exec_slot_retire(&p->hdr);
	P_UNLOCK(p);
	pthread_attr_destroy(&p->anchor_attr);
	pthread_attr_destroy(&p->attr);
	pthread_cond_destroy(&p->cond);
	rgroup__exec_slot_free(&rgroup__exec_pools, &p->hdr);
	return canceled > INT_MAX ? INT_MAX : (int)canceled;
}
