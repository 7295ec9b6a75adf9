/* SPDX-License-Identifier: MIT */
/*
 * keeper.c - the keeper: a thread, alive only while the process has
 * rgroups, that removes groups that have emptied (rule 3), keeps a few as
 * spares while the process is busy creating groups, and rebuilds the tree
 * when the administrator moves the process (rule 8). It sits in the
 * sgroup itself, so it competes like any plain thread there (it sleeps
 * almost always). Also here: what happens when a tracked thread exits.
 * Its parts: spares.c (spare groups), census.c (threads the library did
 * not make), bind.c (the tree bound, unbound and rebound: exit, exec,
 * migration, the process's end).
 *
 * A backend whose kernel does all of this itself (self_managed) gets no
 * keeper: a node is freed the moment its last thread leaves it.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"

#define KEEPER_IDLE_MS   250   /* migration check period (rule 8: < 1 s) */
#define KEEPER_REAP_MS    20   /* retry while a group's last thread leaves */


static struct rgroup__core *const st = &rgroup__core;

/* ---- Reaping (rule 3) ---------------------------------------------------- */

/* n has emptied (no thread, no child, none starting): recycle or remove it.
 * 0, or 1 when it must be tried again (a thread is still on its way out). */
static int reap_node(struct rgroup__node *n)
{
	/* Its own spares go first: a directory with children cannot. */
	if (n->spares && rgroup__spares_drop_pool(&n->spares, 0))
		return 1;
	if (rgroup__spares_recycle(n))
		return 0;
	if (rgroup__unbind(n) < 0)
		return 1;
	rgroup__node_unlink(n);
	rgroup__node_free(n);
	return 0;
}

static void reap_one(struct rgroup__node *n, void *arg)
{
	if (!n->nthreads && !n->nstrays && !n->pending && !n->children)
		*(int *)arg += reap_node(n);
}

/* Remove every group with no threads and no children; 0 when none is
 * left waiting. Lock held. */
static int reap(void)
{
	int busy = 0;

	rgroup__walk_post(st->top, reap_one, &busy);
	return busy;
}

/*
 * A self_managed backend's node n has no tracked thread left (leaving:
 * the last one, on its way out). The kernel removes the group with its
 * last thread, and the emptied chain above it goes with it; but threads
 * the library does not track (a raw clone) may still keep it, and then
 * it must stay known. Asking the kernel while the group still exists
 * (its last thread not yet out) reads the process's whole list of
 * groups, too much for every thread's exit: the node is kept, held, and
 * the held nodes are settled together, HELD_BATCH at a time, or before
 * anyone looks (rgroup__forget_gone()), with one list read for all of
 * them. Lock held.
 */
#define HELD_BATCH 32

static int emptied(const struct rgroup__node *n)
{
	return !n->nthreads && !n->children && !n->pending;
}

static void forget_emptied(struct rgroup__node *n, pid_t leaving)
{
	if (!st->be->held) {
		while (n && emptied(n)) {
			struct rgroup__node *parent = n->parent;

			rgroup__node_unlink(n);
			rgroup__node_free(n);
			n = parent;
		}
		return;
	}
	if (st->be->emptying)
		st->be->emptying(st->be->priv, n, leaving);
	if (!n->held) {
		n->held = 1;
		st->nheld++;
	}
	n->leaving = leaving;
	if (st->nheld >= HELD_BATCH)
		rgroup__forget_gone();
}

struct held_ids {
	rgroup_id_t *ids;
	unsigned int n, max;
};

static int note_held(struct rgroup__node *n, void *arg)
{
	struct held_ids *h = arg;

	if (n->held && h->n < h->max)
		h->ids[h->n++] = n->id;
	return 0;
}

void rgroup__forget_gone(void)
{
	struct held_ids h = { NULL, 0, st->nheld };
	int fresh = 1;

	if (!st->nheld || !(h.ids = malloc(h.max * sizeof(*h.ids))))
		return;
	rgroup__walk_pre(st->top, note_held, &h);
	/* By id: forgetting one may free others' parents. One look at the
	 * kernel's list for all of them (fresh). */
	for (unsigned int i = 0; i < h.n; i++) {
		struct rgroup__node *n = rgroup__node_by_id(h.ids[i]);
		pid_t leaving = n ? n->leaving : 0;

		while (n && emptied(n)) {
			struct rgroup__node *parent = n->parent;

			if (st->be->held(st->be->priv, n, leaving, fresh) == 1) {
				if (!n->held) {
					n->held = 1;
					st->nheld++;
				}
				n->leaving = 0;
				fresh = 0;
				break;
			}
			fresh = 0;
			rgroup__node_unlink(n);
			rgroup__node_free(n);
			n = parent;
			leaving = 0;
		}
	}
	free(h.ids);
}

void rgroup__thread_exit(void *p)
{
	struct rgroup__thread *t = p;
	struct rgroup__node *n;
	struct timespec ts;

	rgroup__lock();
	n = t->node;
	if (n) {
		if (st->exit_clock && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
			n->usage_dead_ns += (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		rgroup__untrack(t);
	}
	if (n && emptied(n)) {
		if (st->be->self_managed) {
			forget_emptied(n, t->tid);
		} else if (!n->spares && rgroup__spares_recycle(n)) {
			/* While the process keeps making groups, the group becomes
			 * a spare at once, ready for the next RGROUP_NEW. */
			if (!st->spare_timer && !st->reap_wanted)
				pthread_cond_signal(&st->cond); /* spares expire */
		} else {
			st->reap_wanted = 1;
			pthread_cond_signal(&st->cond);
		}
	}
	rgroup__unlock();
}

/* ---- The keeper thread ---------------------------------------------------- */

static void *keeper_main(void *unused)
{
	struct timespec ts;

	/* Named, or it would carry the name of whichever thread started it
	 * (a program's "CPU 0/TCG" under rgroup run). */
	pthread_setname_np(pthread_self(), "rgroup-keeper");
	rgroup__lock();
	__atomic_store_n(&st->keeper_tid, rgroup__self_tid(), __ATOMIC_RELAXED);
	/* The keeper is created by whichever thread made an rgroup; it
	 * belongs in the sgroup, never in an rgroup. */
	if (st->attached)
		st->be->place(st->be->priv, NULL, rgroup__self_tid());
	while (!st->shutdown && st->keeper_running && (st->ngroups || rgroup__any_spares())) {
		long ms = KEEPER_IDLE_MS;
		if (st->reap_wanted)
			ms = KEEPER_REAP_MS;
		else if (rgroup__any_spares())
			ms = RGROUP__SPARE_MS - rgroup__ms_since(&st->last_create) + 1;
		if (ms < KEEPER_REAP_MS)
			ms = KEEPER_REAP_MS;
		st->spare_timer = rgroup__any_spares();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		/* The deadline is on the monotonic clock: the condition variable
		 * must be told (its default clock is the realtime one). */
		pthread_cond_clockwait(&st->cond, &rgroup__mutex, CLOCK_MONOTONIC, &ts);
		if (st->shutdown || st->dismantled || !st->keeper_running)
			break;
		int busy = reap();
		if (rgroup__ms_since(&st->last_create) >= RGROUP__SPARE_MS)
			busy += rgroup__drop_spares(0);
		st->reap_wanted = busy > 0;
		if (st->ngroups && rgroup__ms_since(&st->last_check) >= KEEPER_IDLE_MS) {
			clock_gettime(CLOCK_MONOTONIC, &st->last_check);
			rgroup__census();   /* first: after a move, where each was is lost */
			rgroup__follow_migration();
		}
	}
	st->keeper_running = 0;
	__atomic_store_n(&st->keeper_tid, 0, __ATOMIC_RELAXED);
	rgroup__unlock();
	return NULL;
}

int rgroup__start_keeper(void)
{
	int r;

	if (st->keeper_running || st->be->self_managed)
		return 0;
	r = rgroup__start_helper(keeper_main);
	if (r == 0)
		st->keeper_running = 1;
	return r;
}

pid_t rgroup__keeper_tid(void)
{
	return __atomic_load_n(&st->keeper_tid, __ATOMIC_RELAXED); /* the governor, unlocked */
}

