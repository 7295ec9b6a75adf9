/* SPDX-License-Identifier: MIT */
/*
 * tree.c - the process's rgroup tree: its lock, nodes and ids, and the
 * lookups every rule needs.
 *
 * One mutex guards the tree. Threads the library knows of carry a
 * struct rgroup__thread in their TLS, linked into their group; a pthread
 * key destructor (keeper.c) unlinks it at thread exit. Nodes are found by
 * id, and tracked threads by tid, through hash tables (O(1)); a thread the
 * library has not seen is asked of the backend.
 */
#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "fault.h"
#include "locate.h"
#include "weight.h"

struct rgroup__core rgroup__core = { .cond = PTHREAD_COND_INITIALIZER };
__thread struct rgroup__thread rgroup__self;
__thread int rgroup__in_lib;
__thread int rgroup__pause_token;

static struct rgroup__core *const st = &rgroup__core;
pthread_mutex_t rgroup__mutex = PTHREAD_MUTEX_INITIALIZER;
/* ---- The lock ------------------------------------------------------------ */

void rgroup__lock(void)
{
	rgroup__in_lib++;
	pthread_mutex_lock(&rgroup__mutex);
}

int rgroup__trylock(void)
{
	int r;

	rgroup__in_lib++;
	r = pthread_mutex_trylock(&rgroup__mutex);
	if (r)
		rgroup__in_lib--;
	return r;
}

void rgroup__unlock(void)
{
	pthread_mutex_unlock(&rgroup__mutex);
	if (--rgroup__in_lib == 0 && rgroup__pause_token) {
		int token = rgroup__pause_token;
		rgroup__pause_token = 0;
		if (st->be && st->be->deferred)
			st->be->deferred(st->be->priv, token);
	}
}

/*
 * The tid without a system call where the C library allows:
 * pthread_getcpuclockid() computes the thread's CPU clock id from the tid
 * the C library keeps, in the kernel's encoding ((~tid << 3) | 6, as
 * rgroup__clock_usage() builds it), so the tid reads back from it. A new
 * thread asks first thing, and same-group creation pays for every system
 * call. Checked against gettid() at the first call in the process; if the
 * encoding differs, every thread asks the kernel.
 */
static pid_t clock_tid(void)
{
	clockid_t cid;

	if (pthread_getcpuclockid(pthread_self(), &cid) != 0 || (cid & 7) != 6)
		return 0;
	return (pid_t)~(cid >> 3);
}

pid_t rgroup__self_tid(void)
{
	static int from_clock = -1;       /* -1: not checked yet */

	if (!rgroup__self.tid) {
		pid_t tid = __atomic_load_n(&from_clock, __ATOMIC_RELAXED) == 1 ? clock_tid() : 0;

		if (tid <= 0) {
			tid = (pid_t)syscall(SYS_gettid);
			if (__atomic_load_n(&from_clock, __ATOMIC_RELAXED) < 0)
				__atomic_store_n(&from_clock, clock_tid() == tid, __ATOMIC_RELAXED);
		}
		rgroup__self.tid = tid;
	}
	return rgroup__self.tid;
}

/* ---- Walks ----------------------------------------------------------------- */

int rgroup__walk_pre(struct rgroup__node *list,
		     int (*fn)(struct rgroup__node *, void *), void *arg)
{
	for (struct rgroup__node *n = list, *next; n; n = next) {
		next = n->next;
		int r = fn(n, arg);
		if (r)
			return r;
		r = rgroup__walk_pre(n->children, fn, arg);
		if (r)
			return r;
	}
	return 0;
}

void rgroup__walk_post(struct rgroup__node *list,
		       void (*fn)(struct rgroup__node *, void *), void *arg)
{
	for (struct rgroup__node *n = list, *next; n; n = next) {
		next = n->next;
		rgroup__walk_post(n->children, fn, arg);
		fn(n, arg);
	}
}

static void each_in(struct rgroup__node *list, void (*fn)(struct rgroup__node *, void *),
		    void *arg)
{
	for (struct rgroup__node *n = list; n; n = n->next) {
		each_in(n->children, fn, arg);
		each_in(n->spares, fn, arg);
		fn(n, arg);
	}
}

void rgroup__for_each_node(void (*fn)(struct rgroup__node *, void *), void *arg)
{
	each_in(st->top, fn, arg);
	each_in(st->top_spares, fn, arg);
}

/* ---- Nodes and ids ----------------------------------------------------- */

/*
 * Nodes by id and tracked threads by tid: intrusive chained hash tables
 * that double when full. A failed allocation keeps the old size (chains
 * grow), so an insert never fails.
 */
static size_t slot_of(const struct rgroup__htab *h, uint64_t key)
{
	return (size_t)(key * 0x9e3779b97f4a7c15ull >> 32) & (h->size - 1);
}

static void hash_put(struct rgroup__htab *h, struct rgroup__hlink *l)
{
	if (h->count >= h->size) {
		size_t nsize = h->size ? h->size * 2 : 64;
		struct rgroup__hlink **t = calloc(nsize, sizeof(*t));

		if (t) {
			struct rgroup__hlink **old = h->slot;
			size_t osize = h->size;

			h->slot = t;
			h->size = nsize;
			for (size_t i = 0; i < osize; i++)
				for (struct rgroup__hlink *e = old[i], *next; e; e = next) {
					next = e->next;
					e->next = t[slot_of(h, e->key)];
					t[slot_of(h, e->key)] = e;
				}
			free(old);
		}
	}
	if (!h->size)
		return; /* not even the first table: lookups fall back */
	l->next = h->slot[slot_of(h, l->key)];
	h->slot[slot_of(h, l->key)] = l;
	h->count++;
}

static void hash_del(struct rgroup__htab *h, struct rgroup__hlink *l)
{
	if (!h->size)
		return;
	for (struct rgroup__hlink **p = &h->slot[slot_of(h, l->key)]; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			h->count--;
			break;
		}
	l->next = NULL;
}

static struct rgroup__hlink *hash_get(const struct rgroup__htab *h, uint64_t key)
{
	if (!h->size)
		return NULL;
	for (struct rgroup__hlink *e = h->slot[slot_of(h, key)]; e; e = e->next)
		if (e->key == key)
			return e;
	return NULL;
}

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

struct rgroup__node *rgroup__node_by_id(rgroup_id_t id)
{
	struct rgroup__hlink *l = hash_get(&st->ids, id);

	return l ? container_of(l, struct rgroup__node, idlink) : NULL;
}

struct rgroup__thread *rgroup__thread_by_tid(pid_t tid)
{
	struct rgroup__hlink *l = hash_get(&st->tids, (uint64_t)tid);

	return l ? container_of(l, struct rgroup__thread, tidlink) : NULL;
}

int rgroup__node_new(struct rgroup__node *parent, int nice, struct rgroup__node **out)
{
	struct rgroup__node *n;
	int r;

	if ((parent && parent->depth >= RGROUP_MAX_DEPTH) ||
	    st->ngroups >= RGROUP__MAX_GROUPS)
		return -ENOSPC;
	r = rgroup__fault();
	if (r < 0)
		return r;
	n = calloc(1, sizeof(*n) + st->be->node_size);
	if (!n)
		return -ENOMEM;
	n->id = ++st->next_id;
	n->parent = parent;
	n->depth = parent ? parent->depth + 1 : 1;
	n->nice = nice;
	*out = n;
	return 0;
}

void rgroup__node_free(struct rgroup__node *n)
{
	free(n->strays);
	free(n->cpus);
	free(n);
}

static struct rgroup__node **siblings_of(struct rgroup__node *n)
{
	return n->parent ? &n->parent->children : &st->top;
}

void rgroup__node_link(struct rgroup__node *n)
{
	struct rgroup__node **head = siblings_of(n);

	n->prev = NULL;
	n->next = *head;
	if (*head)
		(*head)->prev = n;
	*head = n;
	if (n->parent)
		n->parent->nchildren++;
	n->idlink.key = n->id;
	hash_put(&st->ids, &n->idlink);
	st->ngroups++;
}

void rgroup__node_unlink(struct rgroup__node *n)
{
	struct rgroup__node **head = siblings_of(n);

	if (n->parent) {
		n->parent->usage_dead_ns += rgroup__clock_usage(n);
		n->parent->nchildren--;
	}
	if (n->prev)
		n->prev->next = n->next;
	else
		*head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	hash_del(&st->ids, &n->idlink);
	n->prev = n->next = NULL;
	st->ngroups--;
	if (n->held) {
		n->held = 0;
		st->nheld--;
	}
}

/* ---- Members ------------------------------------------------------------ */

void rgroup__track(struct rgroup__node *n)
{
	rgroup__self_tid();
	rgroup__track_thread(n, &rgroup__self);
	pthread_setspecific(st->key, &rgroup__self);
}

void rgroup__track_thread(struct rgroup__node *n, struct rgroup__thread *self)
{
	self->node = n;
	self->known = 1;
	self->prev = NULL;
	self->next = n->threads;
	if (n->threads)
		n->threads->prev = self;
	n->threads = self;
	n->nthreads++;
	if (n->held) {
		n->held = 0;    /* tracked again: the usual life */
		st->nheld--;
	}
	self->tidlink.key = (uint64_t)self->tid;
	hash_put(&st->tids, &self->tidlink);
}

void rgroup__untrack(struct rgroup__thread *t)
{
	struct rgroup__node *n = t->node;

	if (t->prev)
		t->prev->next = t->next;
	else
		n->threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	n->nthreads--;
	hash_del(&st->tids, &t->tidlink);
	t->node = NULL;
}

/*
 * Membership is forever (rule 2): once a thread's group is known, it stays
 * that (a thread in no rgroup never enters one), so the caller's answer is
 * kept in its TLS. Other threads are asked of the backend.
 */
struct rgroup__node *rgroup__node_of(pid_t tid, int *err)
{
	struct rgroup__node *n = NULL;
	struct rgroup__thread *t;
	int self = tid == rgroup__self_tid(), r;

	*err = 0;
	if (self && rgroup__self.known)
		return rgroup__self.node;
	if ((t = rgroup__thread_by_tid(tid)))
		return t->node;
	if (!st->ngroups || !st->be) {
		if (self)
			rgroup__self.known = 1;
		return NULL;
	}
	r = st->be->group_of(st->be->priv, tid, &n);
	if (r < 0) {
		*err = r;
		return NULL;
	}
	if (self) {
		if (n) {
			rgroup__track(n);
			pthread_setspecific(st->key, &rgroup__self);
		} else {
			rgroup__self.known = 1;
		}
	}
	return n;
}

/* ---- Usage -------------------------------------------------------------- */

uint64_t rgroup__clock_usage(const struct rgroup__node *n)
{
	uint64_t sum = n->usage_dead_ns;
	struct timespec ts;

	for (const struct rgroup__thread *t = n->threads; t; t = t->next) {
		/* The kernel's per-thread CPU clock id for a tid, as glibc
		 * builds it for pthread_getcpuclockid(). */
		clockid_t cid = (clockid_t)((~(unsigned int)t->tid << 3) | 6);
		if (clock_gettime(cid, &ts) == 0)
			sum += (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	for (const struct rgroup__node *c = n->children; c; c = c->next)
		sum += rgroup__clock_usage(c);
	return sum;
}

int rgroup__node_nice(struct rgroup__node *n)
{
	int nice;

	if (st->be && st->be->get_nice && n->bound && st->be->get_nice(st->be->priv, n, &nice) == 0)
		n->nice = nice;
	return n->nice;
}

uint64_t rgroup__node_usage(const struct rgroup__node *n)
{
	uint64_t ns;

	if (st->be && st->be->usage(st->be->priv, n, &ns) == 0)
		return ns - (ns >= n->usage_base_ns ? n->usage_base_ns : ns);
	return rgroup__clock_usage(n);
}

/* ---- A node's group, and time ------------------------------------------- */

int rgroup__node_limited(const struct rgroup__node *n)
{
	for (; n; n = n->parent)
		if (n->cpus || n->quota_us)
			return 1;
	return 0;
}

int rgroup__unbind(struct rgroup__node *n)
{
	int r;

	if (!n->bound)
		return 0;
	r = rgroup__be_destroy(st->be, n);
	if (r == 0)
		n->bound = 0;
	return r;
}

long rgroup__ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}
