/* SPDX-License-Identifier: MIT */
/*
 * bind.c - the tree's groups bound to the backend, unbound and bound
 * again: exec and a failed exec, a migration by the administrator (rule
 * 8), and the process's end, with or without its destructors (rule 3).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"

static struct rgroup__core *const st = &rgroup__core;

static void unbind_one(struct rgroup__node *n, void *arg)
{
	if (*(int *)arg && st->be->evacuate)
		st->be->evacuate(st->be->priv, n);
	rgroup__unbind(n);
}

/* A group whose removal did not finish is still bound: only its
 * threads go back. */
static int bind_one(struct rgroup__node *n, void *arg)
{
	int *err = arg;
	int r = n->bound ? 0 : rgroup__be_create(st->be, n);

	if (r < 0) {
		*err = r;
		return 0; /* keep going: bind what can be bound */
	}
	n->bound = 1;
	for (struct rgroup__thread *t = n->threads; t; t = t->next)
		st->be->place(st->be->priv, n, t->tid);
	for (unsigned int i = 0; i < n->nstrays; i++)
		st->be->place(st->be->priv, n, n->strays[i]);
	return 0;
}

static void unbind_all_once(void)
{
	int evacuate = 1;

	rgroup__drop_spares(evacuate);
	rgroup__walk_post(st->top, unbind_one, &evacuate);
}

int rgroup__bind_all(void)
{
	int err = 0;

	/* A thread being born into a group now places itself (birth.c). */
	st->bind_gen++;
	rgroup__walk_pre(st->top, bind_one, &err);
	return err;
}

int rgroup__attach(void)
{
	int r;

	if (st->attached) {
		/* Moved while we had no groups (and so no keeper): just follow. */
		if (st->ngroups || st->keeper_running || !st->be->moved ||
		    st->be->moved(st->be->priv) != 1)
			return 0;
		rgroup__be_detach(st->be);
		st->attached = 0;
	}
	r = rgroup__be_attach(st->be);
	if (r < 0)
		return r;
	st->attached = 1;
	st->exit_clock = !st->be->counts_exited || st->be->counts_exited(st->be->priv) != 1;
	return 0;
}

/*
 * A new thread places itself before it takes the core lock (birth.c), so
 * that creations do not wait for each other's cgroup writes. A rebinding
 * closes and reopens what such a placement writes through, so the two
 * are kept apart: a placement announces itself (placing) and then checks
 * that no rebinding has begun; the keeper announces a rebinding and then
 * waits for the placements in flight. Both sides store before they load,
 * sequentially consistent, so at least one sees the other. A thread that
 * finds a rebinding places itself under the core lock afterwards, and one
 * whose placement a rebinding overtook before it was tracked places itself
 * again (bind_gen). Each 1 from rgroup__place_begin() needs its _end().
 */
int rgroup__place_begin(void)
{
	__atomic_add_fetch(&st->placing, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&st->rebinding, __ATOMIC_SEQ_CST))
		return 1;
	__atomic_sub_fetch(&st->placing, 1, __ATOMIC_SEQ_CST);
	return 0;
}

void rgroup__place_end(void)
{
	__atomic_sub_fetch(&st->placing, 1, __ATOMIC_SEQ_CST);
}

/* Lock held. */
static void rebind_begin(void)
{
	__atomic_store_n(&st->rebinding, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&st->placing, __ATOMIC_SEQ_CST))
		sched_yield();   /* one cgroup write each */
}

/* Lock held. */
static void rebind_end(void)
{
	__atomic_store_n(&st->bind_gen, st->bind_gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&st->rebinding, 0, __ATOMIC_SEQ_CST);
}

static int count_bound(struct rgroup__node *n, void *arg)
{
	*(int *)arg += n->bound;
	return 0;
}

/* Backend groups of the tree and spares still bound. Lock held. */
static int still_bound(void)
{
	int bound = 0;

	rgroup__walk_pre(st->top, count_bound, &bound);
	return bound + rgroup__any_spares();
}

#define UNBIND_TRIES 50   /* 1 ms apart */

static int first_member(struct rgroup__node *n, void *arg)
{
	if (!n->bound || !n->threads)
		return 0;
	*(pid_t *)arg = n->threads->tid;
	return 1;
}

/* Were the members moved out of their groups, though the process is in
 * its sgroup (moved away and back between two looks)? A move takes every
 * thread, so one member tells. Lock held. */
static int members_moved(void)
{
	struct rgroup__node *n = NULL;
	pid_t tid = 0;

	if (!st->be->group_of || !rgroup__walk_pre(st->top, first_member, &tid))
		return 0;
	return st->be->group_of(st->be->priv, tid, &n) == 0;
}

/* One that a thread still keeps busy for a moment (born into it, or
 * joined and not yet out of its cgroup) is tried again, 1 ms apart,
 * UNBIND_TRIES times at most. */
void rgroup__unbind_all(void)
{
	unbind_all_once();
	for (int i = 0; i < UNBIND_TRIES && still_bound(); i++) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
		unbind_all_once();
	}
}

/* Rule 8: the process was moved to another sgroup (or away and back:
 * members_moved()); rebuild the tree there.
 * Threads may have entered the old groups after the move and before this
 * (a creation, a new thread born in its creator's group): they are
 * evacuated, and every old group removed, before the new ones are made;
 * a thread that is a member is placed in its new group by bind_all(),
 * and one not yet tracked places itself again (rgroup__place_begin()).
 * Lock held; only the keeper calls it. */
void rgroup__follow_migration(void)
{
	if (!st->be->moved ||
	    (st->attached && st->be->moved(st->be->priv) != 1 && !members_moved()))
		return;
	rebind_begin();
	if (st->attached) {
		rgroup__unbind_all();
		rgroup__be_detach(st->be);
		st->attached = 0;
	}
	if (rgroup__be_attach(st->be) == 0) {
		st->attached = 1;
		rgroup__bind_all();
		/* The keeper itself, wherever its first steps put it. */
		st->be->place(st->be->priv, NULL, rgroup__self_tid());
	}   /* else retried on the next tick */
	rebind_end();
}

/* ---- The process's end: _exit (no destructors), and exit ------------------ */

static void exit_remove_one(struct rgroup__node *n, void *unused)
{
	(void)unused;
	st->be->exit_remove(st->be->priv, n);
}

void rgroup__exit_now(void)
{
	const struct rgroup__backend *be = st->be;

	/* Not a vfork child (its pid is its own, the memory its parent's),
	 * nor a process that has nothing to remove. */
	if (!be || !be->exit_move || (pid_t)syscall(SYS_getpid) != st->pid ||
	    !__atomic_load_n(&st->attached, __ATOMIC_RELAXED))
		return;
	if (rgroup__trylock() != 0)
		return;   /* a thread is inside the library: gc collects */
	if (st->attached && !st->shutdown && !st->dismantled && (st->ngroups || st->nspares)) {
		be->exit_move(be->priv);
		rgroup__for_each_node(exit_remove_one, NULL);   /* children first */
	}
	/* The lock stays taken: nothing may change the tree before the
	 * process is gone. */
}

/* At exit: leave nothing behind (rule 3). Threads still running are moved
 * to the sgroup for their last moments. A thread the program has joined
 * may still be in its group for a moment (the kernel takes it out of its
 * cgroup after it wakes the joiner), keeping the group busy: try again,
 * briefly. */
__attribute__((destructor)) static void rgroup_fini(void)
{
	if (!st->be)
		return;
	rgroup__lock();
	st->shutdown = 1;
	if (st->attached) {
		rgroup__unbind_all();
		rgroup__be_detach(st->be);
		st->attached = 0;
	}
	pthread_cond_signal(&st->cond);
	rgroup__unlock();
}
