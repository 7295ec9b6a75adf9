/* SPDX-License-Identifier: MIT */
/*
 * fork.c - rule 7 for fork(): the fork handlers. The child begins in the
 * sgroup with an empty tree (backends with forks_inherit move it out
 * before fork() returns); the parent's tree, copied into the child, is
 * freed at the child's first group.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"

static struct rgroup__core *const st = &rgroup__core;

void rgroup__fork_prepare(void)
{
	rgroup__lock();
	rgroup__helpers_fork_prepare();
}

void rgroup__fork_parent(void)
{
	rgroup__helpers_fork_parent();
	rgroup__unlock();
}

static void free_list(struct rgroup__node *list)
{
	for (struct rgroup__node *n = list, *next; n; n = next) {
		next = n->next;
		free_list(n->children);
		free_list(n->spares);
		rgroup__node_free(n);
	}
}

void rgroup__drop_stale(void)
{
	/* A fork child frees its copy of the parent's tree at its first
	 * group, not earlier: a child that only asks or execs never calls the
	 * allocator, which is not safe in every fork child (sanitizers). */
	if (!st->stale_top && !st->stale_spares && !st->stale_slots[0] && !st->stale_slots[1])
		return;
	free_list(st->stale_top);
	free_list(st->stale_spares);
	free(st->stale_slots[0]);
	free(st->stale_slots[1]);
	st->stale_top = st->stale_spares = NULL;
	st->stale_slots[0] = st->stale_slots[1] = NULL;
}

/*
 * The child begins in the sgroup with an empty tree. This runs in the
 * child of a multi-threaded process, so it only lets go of the backend's
 * resources and resets state; the parent's tree is freed when the child
 * makes its first group. The lock, taken in rgroup__fork_prepare() by this
 * very thread, is released, not re-initialised.
 */
void rgroup__fork_child(void)
{
	rgroup__helpers_fork_child();
	if (st->be && st->be->fork_child)
		st->be->fork_child(st->be->priv);
	st->stale_top = st->top;
	st->stale_spares = st->top_spares;
	st->stale_slots[0] = st->ids.slot;
	st->stale_slots[1] = st->tids.slot;
	st->ids = st->tids = (struct rgroup__htab){ 0 };
	st->top = NULL;
	st->top_spares = NULL;
	st->nspares = 0;
	st->ngroups = 0;
	st->nheld = 0;
	st->attached = 0;
	st->keeper_running = 0;
	st->keeper_tid = 0;
	st->reap_wanted = 0;
	st->placing = 0;                /* the placing threads are not here */
	st->nplain = st->nstrays = 0;   /* the census's buffers are reused */
	st->pid = getpid();
	rgroup__self.node = NULL;
	rgroup__self.known = 1;
	rgroup__self.tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_init(&st->cond, NULL);
	rgroup__unlock();
}

