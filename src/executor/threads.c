/* SPDX-License-Identifier: MIT */
/*
 * threads.c - the executor's threads (executor.h; the design is at the top
 * of executor.c): each group's anchor, which makes the group's rgroup and
 * starts its workers and its subgroups' anchors, the pool's root anchor,
 * and the workers that run the items.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "executor.h"
#include "tree.h"

__thread struct worker *rgroup__exec_cur_worker;

/* ---- Asking for anchors ------------------------------------------------- */

void rgroup__exec_poke(struct anchor *a)
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
void rgroup__exec_want_anchor(struct xgroup *g)
{
	for (;;) {
		if (g->a.state == A_UP) {
			rgroup__exec_poke(&g->a);
			return;
		}
		if (g->a.state == A_WANTED)
			return; /* its maker will start it; it looks at its work */
		set_anchor_state(g, A_WANTED);
		if (!g->parent) {
			rgroup__exec_poke(&g->pool->root);
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
void rgroup__exec_poke_maker(struct xgroup *g)
{
	struct xgroup *p = g->parent;

	while (p && p->a.state != A_UP)
		p = p->parent;
	rgroup__exec_poke(p ? &p->a : &g->pool->root);
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
int rgroup__exec_became_idle(struct xgroup *g)
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
	wake_idle = rgroup__exec_became_idle(g);
	rgroup__exec_poke(&g->a); /* it joins us; it cannot end before (unjoined > 0) */
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

	rgroup__exec_cur_worker = w;
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
			if (rgroup__exec_became_idle(g)) {
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
			rgroup__exec_poke(parent_anchor(g));
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
void *rgroup__exec_root_main(void *arg)
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

