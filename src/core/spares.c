/* SPDX-License-Identifier: MIT */
/*
 * spares.c - spare groups, the creation fast path (keeper.c keeps them).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "backend.h"

#define SPARE_MAX          4   /* per parent */
#define SPARE_MAX_TOTAL   16   /* in all: each holds three descriptors */

static struct rgroup__core *const st = &rgroup__core;

/*
 * mkdir and rmdir of a cgroup cost more than creating a thread, so a group
 * that empties while the process is busy creating rgroups is kept, below
 * the same parent, for the next RGROUP_NEW there (backends with `spares`).
 * Spares are not rgroups (no thread, not listed) and vanish RGROUP__SPARE_MS after
 * the last creation and at exit, so rule 3 holds for anyone who looks a
 * moment later.
 */
static struct rgroup__node **pool_of(struct rgroup__node *parent)
{
	return parent ? &parent->spares : &st->top_spares;
}

static void pool_push(struct rgroup__node **pool, struct rgroup__node *n)
{
	n->prev = NULL;
	n->next = *pool;
	if (*pool)
		(*pool)->prev = n;
	*pool = n;
	st->nspares++;
}

static void pool_pop(struct rgroup__node **pool, struct rgroup__node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		*pool = n->next;
	if (n->next)
		n->next->prev = n->prev;
	n->prev = n->next = NULL;
	st->nspares--;
}

/* Remove the spares in one pool; returns how many could not go yet. */
int rgroup__spares_drop_pool(struct rgroup__node **pool, int evacuate)
{
	int busy = 0;

	for (struct rgroup__node *n = *pool, *next; n; n = next) {
		next = n->next;
		if (evacuate && st->be->evacuate)
			st->be->evacuate(st->be->priv, n);
		if (rgroup__unbind(n) == 0) {
			pool_pop(pool, n);
			rgroup__node_free(n);
		} else {
			busy++;
		}
	}
	return busy;
}

static int drop_pool_of(struct rgroup__node *n, void *arg)
{
	*(int *)arg += rgroup__spares_drop_pool(&n->spares, 0);
	return 0;
}

static int has_pool(struct rgroup__node *n, void *arg)
{
	return n->spares != NULL;
}

/* Remove every spare; returns how many could not go yet. Lock held. */
int rgroup__drop_spares(int evacuate)
{
	int busy = 0;

	/* Nested pools first: a spare's parent may be a spare's sibling. */
	rgroup__walk_pre(st->top, drop_pool_of, &busy);
	busy += rgroup__spares_drop_pool(&st->top_spares, evacuate);
	return busy;
}

int rgroup__any_spares(void)
{
	return st->top_spares != NULL || (st->ngroups && rgroup__walk_pre(st->top, has_pool, NULL));
}

/* Keep an emptied group as a spare if the process is creating groups;
 * returns 1 if kept. Lock held. */
int rgroup__spares_recycle(struct rgroup__node *n)
{
	struct rgroup__node **pool = pool_of(n->parent);
	unsigned int len = 0;
	uint64_t ns;

	if (!st->be->spares || !n->bound || st->dismantled ||
	    st->nspares >= SPARE_MAX_TOTAL || rgroup__ms_since(&st->last_create) >= RGROUP__SPARE_MS ||
	    rgroup__node_limited(n))   /* rule 10's settings are not for the next group */
		return 0;
	for (struct rgroup__node *p = *pool; p; p = p->next)
		len++;
	if (len >= SPARE_MAX)
		return 0;
	rgroup__node_unlink(n);
	n->usage_dead_ns = 0;
	n->usage_base_ns = st->be->usage(st->be->priv, n, &ns) == 0 ? ns : 0;
	pool_push(pool, n);
	return 1;
}

struct rgroup__node *rgroup__take_spare(struct rgroup__node *parent, int nice)
{
	struct rgroup__node **pool = pool_of(parent);
	struct rgroup__node *n = *pool;

	if (!n)
		return NULL;
	pool_pop(pool, n);
	if (n->nice != nice && st->be->set_nice(st->be->priv, n, nice) < 0) {
		if (rgroup__unbind(n) == 0)
			rgroup__node_free(n);
		else
			pool_push(pool, n);
		return NULL;
	}
	n->nice = nice;
	return n;
}

