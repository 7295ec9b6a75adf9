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
#include <linux/capability.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rgroup.h"
#include "tree.h"
#include "weight.h"


#define IDLE_MS_DEFAULT   1000
#define MAX_WORKERS_LIMIT 1024
#define RING_MIN          16
#define RETRY_MIN_MS      10    /* a failed thread creation is retried... */
#define RETRY_MAX_MS      1000  /* ...backing off up to this */
#define ANCHOR_TICK_MS    1000  /* an anchor looks around at least this often */
/* Anchors run only the library's code, never the caller's: a stack of
 * their own, so that a pool of many groups fits under RLIMIT_AS whatever
 * the default stack (sanitizer builds need about twice the plain depth). */
#define ANCHOR_STACK      (256 * 1024)

/* ---- Small helpers ---------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void futex_wake(uint32_t *word, int n)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Sleep while *word == val, until the CLOCK_MONOTONIC time `until` (ns; 0:
 * no limit). Returns 0 (woken, or the word changed, or a signal: the
 * caller looks again) or ETIMEDOUT. */
static int futex_wait_until(uint32_t *word, uint32_t val, uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };

	if (until && now_ns() >= until)
		return ETIMEDOUT;
	if (syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, val, until ? &ts : NULL,
		    NULL, FUTEX_BITSET_MATCH_ANY) < 0 && errno == ETIMEDOUT)
		return ETIMEDOUT;
	return 0;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static uint64_t thread_cpu_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

/* ---- Slots: handles that stay checkable ------------------------------- */

/*
 * Pools and groups live in slots of chunked tables. Chunks are published
 * once and never freed, so a stale handle always reaches real memory, whose
 * own mutex and generation then say the handle is stale. A handle is
 * generation << 32 | kind << 24 | (index + 1): generations start at 1 and
 * step at every free, so handles are not reused (until 2^32 reuses of one
 * slot), and the kind keeps a pool's handle from ever naming a group.
 */
#define CHUNK_SHIFT 8
#define CHUNK       (1u << CHUNK_SHIFT)
#define MAX_CHUNKS  256       /* 65536 slots: the library's own rgroup limit */

struct slot {
	pthread_mutex_t lock;
	uint32_t gen;             /* under lock */
	uint32_t index;
	int live;                 /* under lock: handed out, not freed */
	struct slot *free_next;   /* under the table lock */
};

struct table {
	char *chunk[MAX_CHUNKS];  /* atomic loads: a chunk is published once */
	size_t size;
	uint32_t kind;            /* 1 pools, 2 groups */
	unsigned int used;
	struct slot *free;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t slot_id(const struct table *t, const struct slot *s)
{
	return (uint64_t)s->gen << 32 | t->kind << 24 | (s->index + 1);
}

/* The slot a handle points at, if the handle could ever have been one; its
 * generation is checked by the caller, under the slot's lock. */
static struct slot *slot_at(struct table *t, uint64_t id)
{
	uint32_t idx = ((uint32_t)id & 0xffffff) - 1;
	char *chunk;

	if (((uint32_t)id >> 24) != t->kind || idx >= MAX_CHUNKS * CHUNK)
		return NULL;
	chunk = __atomic_load_n(&t->chunk[idx >> CHUNK_SHIFT], __ATOMIC_ACQUIRE);
	return chunk ? (struct slot *)(chunk + (idx & (CHUNK - 1)) * t->size) : NULL;
}

/* Lock and return the live slot of handle id, or NULL. */
static struct slot *slot_lock(struct table *t, uint64_t id)
{
	struct slot *s = slot_at(t, id);

	if (!s)
		return NULL;
	pthread_mutex_lock(&s->lock);
	if (s->live && s->gen == (uint32_t)(id >> 32))
		return s;
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* A free slot, zeroed past its header (not yet live), or NULL (-ENOMEM or
 * -ENOSPC in *err). */
static struct slot *slot_alloc(struct table *t, int *err)
{
	struct slot *s = NULL;

	pthread_mutex_lock(&table_lock);
	if (t->free) {
		s = t->free;
		t->free = s->free_next;
	} else if (t->used < MAX_CHUNKS * CHUNK) {
		unsigned int c = t->used >> CHUNK_SHIFT;
		char *chunk = t->chunk[c];

		if (!chunk) {
			chunk = calloc(CHUNK, t->size);
			if (!chunk) {
				*err = -ENOMEM;
				goto out;
			}
			for (unsigned int i = 0; i < CHUNK; i++) {
				struct slot *n = (struct slot *)(chunk + i * t->size);
				pthread_mutex_init(&n->lock, NULL);
				n->gen = 1;
				n->index = c * CHUNK + i;
			}
			__atomic_store_n(&t->chunk[c], chunk, __ATOMIC_RELEASE);
		}
		s = (struct slot *)(chunk + (t->used & (CHUNK - 1)) * t->size);
		t->used++;
	} else {
		*err = -ENOSPC;
	}
out:
	pthread_mutex_unlock(&table_lock);
	if (s) {
		pthread_mutex_lock(&s->lock);
		memset((char *)s + sizeof(*s), 0, t->size - sizeof(*s));
		pthread_mutex_unlock(&s->lock);
	}
	return s;
}

/* Retire a live slot: its handle goes stale at once. Slot lock held. */
static void slot_retire(struct slot *s)
{
	s->live = 0;
	if (++s->gen == 0)
		s->gen = 1;
}

static void slot_free(struct table *t, struct slot *s)
{
	pthread_mutex_lock(&table_lock);
	s->free_next = t->free;
	t->free = s;
	pthread_mutex_unlock(&table_lock);
}

/* ---- Pools, groups, workers ------------------------------------------- */

enum { A_NONE, A_WANTED, A_UP };          /* an anchor's state */
enum { G_LIVE, G_CLOSED, G_DYING };       /* what submit says: 0, -ESHUTDOWN, -ENOENT */
enum { W_FREE, W_STARTING, W_RUNNING, W_EXITED };

struct xpool;
struct xgroup;

/* The thread that can add threads to one rgroup (see the top). All fields
 * but poke are under the pool lock; state is written with the group's lock
 * held too, so that submit may read it under the group's alone. */
struct anchor {
	uint32_t poke;            /* futex: something to look at */
	int state;
	int creating;             /* the parent's anchor is starting it now */
	int have_th, exited;      /* th is to be joined by the parent's anchor */
	pthread_t th;
	pid_t tid;
	clockid_t clk;
	uint64_t retry_ns;        /* a failed start is tried again then */
	unsigned int backoff_ms;
};

struct item {
	void (*fn)(void *);
	void *arg;
};

struct worker {
	struct worker *next;      /* the group's records */
	struct worker *sprev, *snext; /* the group's sleeping stack */
	struct xgroup *g;
	pthread_t th;             /* the anchor's (it joins) */
	clockid_t clk;
	int state;                /* group lock */
	uint32_t wake;            /* futex: 1 = taken off the stack */
};

struct xgroup {
	struct slot hdr;          /* hdr.lock: the group's lock */
	struct xpool *pool;       /* set at creation, fixed */
	uint64_t pool_id;
	/* The tree: pool lock. */
	struct xgroup *parent, *children, *prev, *next;
	int owned;                /* someone is destroying it */
	int nice;
	int depth;                /* 1: top-level work group */
	char name[RGROUP_EXEC_NAME_MAX];
	unsigned int max_workers;
	struct anchor a;
	/* Group lock from here. */
	int state;                /* G_* */
	int dead;                 /* workers end: the group is being destroyed */
	struct item *ring, *spare;
	uint32_t cap, spare_cap, head, count;
	unsigned int nworkers;    /* running worker threads */
	unsigned int nstarting;   /* asked for, not yet running */
	unsigned int spawn_req;   /* asked for, not yet seen by the anchor */
	unsigned int nrunning;    /* items being run */
	unsigned int nsleeping;
	unsigned int unjoined;    /* records not W_FREE */
	struct worker *sleepers;  /* most recent first */
	struct worker *records;
	uint32_t idle_seq;        /* futex: rgroup_exec_wait() */
	unsigned int nwaiters;
	int error;
	rgroup_id_t rgroup;
	uint64_t rgroups, submitted, completed, canceled, cpu_dead_ns;
	uint64_t exits;           /* workers that added to cpu_dead_ns */
};

struct xpool {
	struct slot hdr;          /* hdr.lock: the pool's lock */
	pthread_cond_t cond;      /* threads ended, anchors joined */
	int shutdown;
	int dying;                /* rgroup_exec_destroy() under way */
	int root_exit;
	int base_depth;           /* depth of the creator's rgroup (0: sgroup) */
	int top_level;            /* groups are top-level rgroups: rule 6 */
	unsigned int max_workers, idle_ms;
	void (*canceled)(void (*fn)(void *), void *arg);
	pthread_attr_t attr;          /* the workers' (stack_size) */
	pthread_attr_t anchor_attr;   /* the anchors': ANCHOR_STACK */
	struct anchor root;
	struct xgroup *top;
};

static struct table pools = { .size = sizeof(struct xpool), .kind = 1 };
static struct table groups = { .size = sizeof(struct xgroup), .kind = 2 };

#define POOL_ID(p)  slot_id(&pools, &(p)->hdr)
#define GROUP_ID(g) slot_id(&groups, &(g)->hdr)

static __thread struct worker *cur_worker;

#define G_LOCK(g)   pthread_mutex_lock(&(g)->hdr.lock)
#define G_UNLOCK(g) pthread_mutex_unlock(&(g)->hdr.lock)
#define P_LOCK(p)   pthread_mutex_lock(&(p)->hdr.lock)
#define P_UNLOCK(p) pthread_mutex_unlock(&(p)->hdr.lock)

static void poke(struct anchor *a)
{
	if (__atomic_exchange_n(&a->poke, 1, __ATOMIC_ACQ_REL) == 0)
		futex_wake(&a->poke, 1);
}

/* The anchor of g's parent (the pool's root for a top-level group). */
static struct anchor *parent_anchor(struct xgroup *g)
{
	return g->parent ? &g->parent->a : &g->pool->root;
}

/* Pool lock held; g's lock is taken here. */
static void set_anchor_state(struct xgroup *g, int state)
{
	G_LOCK(g);
	g->a.state = state;
	G_UNLOCK(g);
}

/* Pool lock held. g needs threads (queued work, or a subgroup needing an
 * anchor): make sure its anchor exists or is on its way, asking up the
 * chain as far as an anchor is missing; the nearest ancestor whose anchor
 * runs is poked and makes the next one down, which makes the next... */
static void want_anchor(struct xgroup *g)
{
	for (;;) {
		if (g->a.state == A_UP) {
			poke(&g->a);
			return;
		}
		if (g->a.state == A_WANTED)
			return; /* its maker will start it; it looks at its work */
		set_anchor_state(g, A_WANTED);
		if (!g->parent) {
			poke(&g->pool->root);
			return;
		}
		g = g->parent;
	}
}

/* Does g still need an anchor: work of its own, or a subgroup with
 * threads or needing them? Pool lock held; the groups' locks are taken
 * one at a time. */
static int needs_anchor(struct xgroup *g)
{
	G_LOCK(g);
	int dead = g->dead, own = g->count || g->nstarting;
	G_UNLOCK(g);
	if (dead)
		return 0;
	if (own)
		return 1;
	for (struct xgroup *c = g->children; c; c = c->next) {
		const struct anchor *a = &c->a;

		if (a->state == A_UP || a->have_th || a->creating ||
		    (a->state == A_WANTED && needs_anchor(c)))
			return 1;
	}
	return 0;
}

/* g's anchor is wanted no more: neither are those of its subgroups that
 * were waiting for it. Pool lock held. */
static void unwant(struct xgroup *g)
{
	set_anchor_state(g, A_NONE);
	for (struct xgroup *c = g->children; c; c = c->next)
		if (c->a.state == A_WANTED)
			unwant(c);
}

/* Poke the anchor that would start g's: the nearest ancestor's that runs,
 * or the root's. Pool lock held. */
static void poke_maker(struct xgroup *g)
{
	struct xgroup *p = g->parent;

	while (p && p->a.state != A_UP)
		p = p->parent;
	poke(p ? &p->a : &g->pool->root);
}

/* ---- Workers ---------------------------------------------------------- */

static void set_thread_name(const char *name, const char *suffix)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%s%s", *name ? name : "rgroup-worker", suffix);
	pthread_setname_np(pthread_self(), buf);
}

/* Wake the rgroup_exec_wait() callers of g if it just became idle. Group
 * lock held; returns whether to wake after unlocking. */
static int became_idle(struct xgroup *g)
{
	if (g->count || g->nrunning || !g->nwaiters)
		return 0;
	__atomic_store_n(&g->idle_seq, g->idle_seq + 1, __ATOMIC_RELEASE);
	return 1;
}

/* The calling worker leaves its group: counted out, its CPU time kept,
 * its anchor poked to join it. Group lock held; released. */
static void worker_leave(struct worker *w)
{
	struct xgroup *g = w->g;
	struct timespec ts;
	int wake_idle;

	g->nworkers--;
	w->state = W_EXITED;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		g->cpu_dead_ns += (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	g->exits++;
	wake_idle = became_idle(g);
	poke(&g->a); /* it joins us; it cannot end before (unjoined > 0) */
	G_UNLOCK(g);
	if (wake_idle)
		futex_wake(&g->idle_seq, INT_MAX);
}

/*
 * An item ended its worker thread: it called pthread_exit(), or acted on
 * a cancellation. Runs as the thread unwinds: the item counts as done,
 * the worker leaves as an idle one does, and if items are left that the
 * other workers cannot take, a replacement is asked of the anchor.
 */
static void item_ended_worker(void *arg)
{
	struct worker *w = arg;
	struct xgroup *g = w->g;

	G_LOCK(g);
	g->nrunning--;
	g->completed++;
	if (!g->dead && g->count > g->nworkers - 1 - g->nrunning + g->nstarting) {
		g->nstarting++;
		g->spawn_req++;
	}
	worker_leave(w);
}

/*
 * A worker: born with flags 0 by its group's anchor, so in the group's
 * rgroup for good. Runs items while there are any; then sleeps on its own
 * futex word at the top of the group's sleeping stack until a submitter
 * takes it off (wake = 1) or idle_ms pass, and ends if still unwanted.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct xgroup *g = w->g;
	uint64_t idle_ns = (uint64_t)g->pool->idle_ms * 1000000u;

	cur_worker = w;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	set_thread_name(g->name, "");
	G_LOCK(g);
	if (pthread_getcpuclockid(pthread_self(), &w->clk) != 0)
		w->clk = CLOCK_THREAD_CPUTIME_ID;
	g->nstarting--;
	g->nworkers++;
	w->state = W_RUNNING;
	for (;;) {
		if (g->count) {
			struct item it = g->ring[g->head];

			g->head = (g->head + 1) & (g->cap - 1);
			g->count--;
			g->nrunning++;
			G_UNLOCK(g);
			/* Cancellable only while it runs the item, as the
			 * item's own thread would be */
			pthread_cleanup_push(item_ended_worker, w);
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
			it.fn(it.arg);
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
			pthread_cleanup_pop(0);
			G_LOCK(g);
			g->nrunning--;
			g->completed++;
			if (became_idle(g)) {
				G_UNLOCK(g);
				futex_wake(&g->idle_seq, INT_MAX);
				G_LOCK(g);
			}
			continue;
		}
		if (g->dead)
			break;
		w->sprev = NULL;
		w->snext = g->sleepers;
		if (g->sleepers)
			g->sleepers->sprev = w;
		g->sleepers = w;
		g->nsleeping++;
		__atomic_store_n(&w->wake, 0, __ATOMIC_RELAXED);
		G_UNLOCK(g);
		uint64_t until = now_ns() + idle_ns;
		while (!__atomic_load_n(&w->wake, __ATOMIC_ACQUIRE))
			if (futex_wait_until(&w->wake, 0, until) == ETIMEDOUT)
				break;
		G_LOCK(g);
		if (!__atomic_load_n(&w->wake, __ATOMIC_ACQUIRE)) {
			/* Timed out and nobody took it off the stack. */
			if (w->sprev)
				w->sprev->snext = w->snext;
			else
				g->sleepers = w->snext;
			if (w->snext)
				w->snext->sprev = w->sprev;
			g->nsleeping--;
			if (!g->count)
				break;
		}
	}
	worker_leave(w);
	return NULL;
}

/* The anchor starts one worker for g. 0 or an error number. */
static int start_worker(struct xgroup *g)
{
	struct worker *w;
	int r;

	G_LOCK(g);
	for (w = g->records; w && w->state != W_FREE; w = w->next)
		;
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w) {
			G_UNLOCK(g);
			return ENOMEM;
		}
		w->g = g;
		w->next = g->records;
		g->records = w;
	}
	w->state = W_STARTING;
	g->unjoined++;
	G_UNLOCK(g);
	r = rgroup_thread_create(&w->th, &g->pool->attr, 0, worker_main, w);
	if (r) {
		G_LOCK(g);
		w->state = W_FREE;
		g->unjoined--;
		G_UNLOCK(g);
	}
	return r;
}

/* Join g's workers that have ended. Called by g's anchor, no lock held. */
static void join_workers(struct xgroup *g)
{
	for (;;) {
		struct worker *w;

		G_LOCK(g);
		for (w = g->records; w && w->state != W_EXITED; w = w->next)
			;
		G_UNLOCK(g);
		if (!w)
			return;
		pthread_join(w->th, NULL);
		G_LOCK(g);
		w->state = W_FREE;
		g->unjoined--;
		G_UNLOCK(g);
	}
}

/* ---- Anchors ---------------------------------------------------------- */

static void *anchor_main(void *arg);

/*
 * One round of an anchor's duties towards its children (the top-level
 * groups for the root): join those whose anchor ended, start those wanted.
 * Pool lock held (dropped while joining or creating). Returns the earliest
 * retry time of a child whose start failed (0: none).
 */
static uint64_t tend_children(struct xpool *p, struct xgroup *g)
{
	uint64_t retry = 0;

again:
	for (struct xgroup *c = g ? g->children : p->top; c; c = c->next) {
		struct anchor *a = &c->a;

		if (a->have_th && a->exited) {
			pthread_t th = a->th;

			a->have_th = a->exited = 0;
			P_UNLOCK(p);
			pthread_join(th, NULL);
			P_LOCK(p);
			pthread_cond_broadcast(&p->cond);
			goto again;
		}
		if (a->state != A_WANTED || a->creating || a->have_th)
			continue;
		if (!needs_anchor(c)) {
			unwant(c);
			pthread_cond_broadcast(&p->cond);
			continue;
		}
		uint64_t now = now_ns();
		if (a->retry_ns > now) {
			if (!retry || a->retry_ns < retry)
				retry = a->retry_ns;
			continue;
		}
		pthread_t th;
		a->creating = 1;
		P_UNLOCK(p);
		int r = rgroup_thread_create(&th, &p->anchor_attr, RGROUP_NEW, anchor_main, c);
		P_LOCK(p);
		a->creating = 0;
		if (r == 0) {
			a->th = th;
			a->have_th = 1;
			a->backoff_ms = 0;
			a->retry_ns = 0;
		} else {
			a->backoff_ms = a->backoff_ms ? a->backoff_ms * 2 : RETRY_MIN_MS;
			if (a->backoff_ms > RETRY_MAX_MS)
				a->backoff_ms = RETRY_MAX_MS;
			a->retry_ns = now_ns() + (uint64_t)a->backoff_ms * 1000000u;
			G_LOCK(c);
			c->error = r;
			G_UNLOCK(c);
		}
		pthread_cond_broadcast(&p->cond);
		goto again;
	}
	return retry;
}

/* May g's anchor end? Pool and group lock held. */
static int anchor_may_end(struct xgroup *g)
{
	if (g->nworkers || g->nstarting || g->spawn_req || g->unjoined || g->count)
		return 0;
	for (struct xgroup *c = g->children; c; c = c->next)
		if (c->a.state != A_NONE || c->a.have_th || c->a.creating)
			return 0;
	return 1;
}

/* Sleep until poked or `until` (ns, 0: ANCHOR_TICK_MS from now). */
static void anchor_sleep(struct anchor *a, uint64_t until)
{
	uint64_t tick = now_ns() + (uint64_t)ANCHOR_TICK_MS * 1000000u;

	if (!until || until > tick)
		until = tick;
	while (!__atomic_exchange_n(&a->poke, 0, __ATOMIC_ACQ_REL))
		if (futex_wait_until(&a->poke, 0, until) == ETIMEDOUT)
			return;
}

/*
 * A work group's anchor: the first thread of the group's new rgroup (its
 * parent's anchor made it with RGROUP_NEW). Applies the group's nice, then
 * starts the group's workers and its subgroups' anchors as asked, joins
 * them when they end, and ends itself when nothing is left (see the top).
 */
static void *anchor_main(void *arg)
{
	struct xgroup *g = arg;
	struct xpool *p = g->pool;
	uint64_t retry_workers = 0;
	unsigned int backoff = 0;
	rgroup_id_t id = 0;
	struct timespec ts;

	set_thread_name(g->name, "+");
	P_LOCK(p);
	g->a.tid = gettid_();
	if (pthread_getcpuclockid(pthread_self(), &g->a.clk) != 0)
		g->a.clk = CLOCK_THREAD_CPUTIME_ID;
	rgroup_of(0, &id);
	/* A new top-level rgroup starts at its creator's nice, a nested one
	 * at 0 (rule 6); the pool lock keeps rgroup_exec_group_setnice()
	 * from changing g->nice between this and the state becoming A_UP. */
	if (g->nice != (p->top_level && !g->parent ? rgroup__my_nice() : 0) &&
	    rgroup_setpriority(PRIO_RGRP, 0, g->nice) < 0) {
		G_LOCK(g);
		g->error = errno;
		G_UNLOCK(g);
	}
	G_LOCK(g);
	g->a.state = A_UP;
	g->rgroup = id;
	g->rgroups++;
	G_UNLOCK(g);
	pthread_cond_broadcast(&p->cond);
	P_UNLOCK(p);

	for (;;) {
		unsigned int n;
		uint64_t until;

		/* Workers asked for by submitters. */
		G_LOCK(g);
		n = 0;
		if (!retry_workers || now_ns() >= retry_workers) {
			n = g->spawn_req;
			g->spawn_req = 0;
			retry_workers = 0;
		}
		if (g->dead) {
			g->nstarting -= n;
			n = 0;
		}
		G_UNLOCK(g);
		while (n > 0) {
			int r = start_worker(g);

			if (r == 0) {
				n--;
				backoff = 0;
				continue;
			}
			/* Tried again later; until then the group runs on the
			 * workers it has (if any). */
			backoff = backoff ? backoff * 2 : RETRY_MIN_MS;
			if (backoff > RETRY_MAX_MS)
				backoff = RETRY_MAX_MS;
			retry_workers = now_ns() + (uint64_t)backoff * 1000000u;
			G_LOCK(g);
			g->error = r;
			g->spawn_req += n;
			G_UNLOCK(g);
			break;
		}
		join_workers(g);

		P_LOCK(p);
		until = tend_children(p, g);
		if (retry_workers && (!until || retry_workers < until))
			until = retry_workers;
		G_LOCK(g);
		if (anchor_may_end(g)) {
			g->a.state = A_NONE;
			g->a.exited = 1;
			g->rgroup = 0;
			if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
				g->cpu_dead_ns += (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
			G_UNLOCK(g);
			poke(parent_anchor(g));
			pthread_cond_broadcast(&p->cond);
			P_UNLOCK(p);
			return NULL;
		}
		G_UNLOCK(g);
		P_UNLOCK(p);
		anchor_sleep(&g->a, until);
	}
}

/* The pool's root anchor: in the group of the thread that made the pool;
 * starts the top-level groups' anchors. Ends at rgroup_exec_destroy(). */
static void *root_main(void *arg)
{
	struct xpool *p = arg;

	set_thread_name("rgroup-exec", "");
	P_LOCK(p);
	for (;;) {
		uint64_t until = tend_children(p, NULL);
		int busy = 0;

		for (struct xgroup *c = p->top; c; c = c->next)
			busy |= c->a.state != A_NONE || c->a.have_th || c->a.creating;
		if (p->root_exit && !busy)
			break;
		P_UNLOCK(p);
		anchor_sleep(&p->root, until);
		P_LOCK(p);
	}
	P_UNLOCK(p);
	return NULL;
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

	p = (struct xpool *)slot_alloc(&pools, &r);
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
	r = -rgroup_thread_create(&p->root.th, &p->anchor_attr, 0, root_main, p);
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
	slot_free(&pools, &p->hdr);
	return r;
}

/* Lock and return a live pool (not being destroyed), or NULL. */
static struct xpool *pool_lock(rgroup_exec_t id)
{
	struct xpool *p = (struct xpool *)slot_lock(&pools, id);

	if (p && p->dying) {
		P_UNLOCK(p);
		return NULL;
	}
	return p;
}

/* Is the calling thread one of p's workers? */
static int in_pool(const struct xpool *p)
{
	return cur_worker && cur_worker->g->pool == p;
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
	struct xgroup *g = (struct xgroup *)slot_at(&groups, id);
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
	g = (struct xgroup *)slot_alloc(&groups, &r);
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
	struct xgroup *g = (struct xgroup *)slot_at(&groups, group);
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
		poke(&g->a);
	if (chain) {
		/* Pool slots are never freed; if g was destroyed meanwhile
		 * (and recycled), the check below says so. */
		P_LOCK(p);
		G_LOCK(g);
		int ok = g->hdr.live && g->hdr.gen == (uint32_t)(group >> 32) && !g->dead;
		G_UNLOCK(g);
		if (ok)
			want_anchor(g);
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
	wake = became_idle(g);
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
		r = POOL_ID(p) != pool ? -ENOENT : cur_worker && cur_worker->g == g ? -EDEADLK : 0;
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
			g = (struct xgroup *)slot_at(&groups, ids[i]);
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
		total += cancel_one((struct xgroup *)slot_at(&groups, ids[i]), ids[i]);
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
	poke(&g->a);
	poke_maker(g); /* a wanted anchor that is no longer needed */
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
	slot_retire(&g->hdr);
	free(g->ring);
	free(g->spare);
	while ((w = g->records)) {
		g->records = w->next;
		free(w);
	}
	G_UNLOCK(g);
	/* The parent's anchor may end now that this child is gone. */
	if (g->parent)
		poke(&g->parent->a);
	slot_free(&groups, &g->hdr);
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
	else if (cur_worker && cur_worker->g == g)
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
		struct xgroup *g = (struct xgroup *)slot_at(&groups, ids[i]);

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
	poke(&p->root);
	pthread_join(p->root.th, NULL);
	P_LOCK(p);
	slot_retire(&p->hdr);
	P_UNLOCK(p);
	pthread_attr_destroy(&p->anchor_attr);
	pthread_attr_destroy(&p->attr);
	pthread_cond_destroy(&p->cond);
	slot_free(&pools, &p->hdr);
	return canceled > INT_MAX ? INT_MAX : (int)canceled;
}
