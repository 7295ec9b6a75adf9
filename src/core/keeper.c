/* SPDX-License-Identifier: MIT */
/*
 * keeper.c - the keeper: a thread, alive only while the process has
 * rgroups, that removes groups that have emptied (rule 3), keeps a few as
 * spares while the process is busy creating groups, and rebuilds the tree
 * when the administrator moves the process (rule 8). It sits in the
 * sgroup itself, so it competes like any plain thread there (it sleeps
 * almost always). Also here: what happens when a tracked thread exits,
 * and at process exit.
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
#define SPARE_MS         500   /* keep emptied groups this long after a creation */
#define SPARE_MAX          4   /* per parent */
#define SPARE_MAX_TOTAL   16   /* in all: each holds three descriptors */

static struct rgroup__core *const st = &rgroup__core;

static long ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* Destroy n's backend group; 0, or -EBUSY while a thread is still in it. */
static int unbind(struct rgroup__node *n)
{
	int r;

	if (!n->bound)
		return 0;
	r = rgroup__be_destroy(st->be, n);
	if (r == 0)
		n->bound = 0;
	return r;
}

/* ---- Spare groups: the creation fast path -------------------------- */

/*
 * mkdir and rmdir of a cgroup cost more than creating a thread, so a group
 * that empties while the process is busy creating rgroups is kept, below
 * the same parent, for the next RGROUP_NEW there (backends with `spares`).
 * Spares are not rgroups (no thread, not listed) and vanish SPARE_MS after
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
static int drop_pool(struct rgroup__node **pool, int evacuate)
{
	int busy = 0;

	for (struct rgroup__node *n = *pool, *next; n; n = next) {
		next = n->next;
		if (evacuate && st->be->evacuate)
			st->be->evacuate(st->be->priv, n);
		if (unbind(n) == 0) {
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
	*(int *)arg += drop_pool(&n->spares, 0);
	return 0;
}

static int has_pool(struct rgroup__node *n, void *arg)
{
	return n->spares != NULL;
}

/* Remove every spare; returns how many could not go yet. Lock held. */
static int drop_spares(int evacuate)
{
	int busy = 0;

	/* Nested pools first: a spare's parent may be a spare's sibling. */
	rgroup__walk_pre(st->top, drop_pool_of, &busy);
	busy += drop_pool(&st->top_spares, evacuate);
	return busy;
}

int rgroup__any_spares(void)
{
	return st->top_spares != NULL || (st->ngroups && rgroup__walk_pre(st->top, has_pool, NULL));
}

/* Keep an emptied group as a spare if the process is creating groups;
 * returns 1 if kept. Lock held. */
static int recycle(struct rgroup__node *n)
{
	struct rgroup__node **pool = pool_of(n->parent);
	unsigned int len = 0;
	uint64_t ns;

	if (!st->be->spares || !n->bound || st->dismantled ||
	    st->nspares >= SPARE_MAX_TOTAL || ms_since(&st->last_create) >= SPARE_MS ||
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
		if (unbind(n) == 0)
			rgroup__node_free(n);
		else
			pool_push(pool, n);
		return NULL;
	}
	n->nice = nice;
	return n;
}

/* ---- Reaping (rule 3) ---------------------------------------------------- */

/* n has emptied (no thread, no child, none starting): recycle or remove it.
 * 0, or 1 when it must be tried again (a thread is still on its way out). */
static int reap_node(struct rgroup__node *n)
{
	/* Its own spares go first: a directory with children cannot. */
	if (n->spares && drop_pool(&n->spares, 0))
		return 1;
	if (recycle(n))
		return 0;
	if (unbind(n) < 0)
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
	if (n && !n->nthreads && !n->children && !n->pending) {
		if (st->be->self_managed) {
			/* The kernel removes the group with its last thread; the
			 * emptied chain above it goes with it. */
			while (n && !n->nthreads && !n->children && !n->pending) {
				struct rgroup__node *parent = n->parent;

				rgroup__node_unlink(n);
				rgroup__node_free(n);
				n = parent;
			}
		} else if (!n->spares && recycle(n)) {
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

/* ---- The census: members the library did not make (rule 8) -------------- */

/*
 * A thread a member makes without the library seeing it born (raw
 * clone(CLONE_THREAD), glibc's helper threads, a static link without the
 * --wrap of pthread_create: thread-create.c) starts in its creator's
 * group (the kernel's doing), unseen by the library. When the
 * process is moved, the kernel moves every thread into the new sgroup
 * itself, and where each of those was is lost. So the keeper takes a
 * census at every tick: threads it has not classified yet are asked of the
 * backend once, and kept as the group's strays (or as plain threads); the
 * tree is rebuilt with them. A thread made less than a tick before a move
 * is missed (it stays in the sgroup): the window is KEEPER_IDLE_MS.
 */
static int tids_find(const pid_t *v, size_t n, pid_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid] == tid)
			return 1;
		if (v[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int rgroup__tids_add(pid_t **v, size_t *n, size_t *cap, pid_t tid)
{
	size_t i = *n;

	if (tids_find(*v, *n, tid))
		return 0;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		pid_t *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	while (i > 0 && (*v)[i - 1] > tid) {
		(*v)[i] = (*v)[i - 1];
		i--;
	}
	(*v)[i] = tid;
	(*n)++;
	return 0;
}

/* The tids listed in /proc/self/task, sorted; -errno. */
static int list_tasks(pid_t **v, size_t *n, size_t *cap)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int r = 0;

	if (!d)
		return -errno;
	*n = 0;
	while (r == 0 && (e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			r = rgroup__tids_add(v, n, cap, (pid_t)atoi(e->d_name));
	closedir(d);
	return r;
}

/* Drop the strays that are gone. */
static int prune_strays(struct rgroup__node *n, void *arg)
{
	const struct { pid_t *v; size_t n; } *live = arg;
	unsigned int k = 0;

	for (unsigned int i = 0; i < n->nstrays; i++)
		if (tids_find(live->v, live->n, n->strays[i]))
			n->strays[k++] = n->strays[i];
	n->nstrays = k;
	return 0;
}

static int add_stray(struct rgroup__node *n, pid_t tid)
{
	if (n->nstrays == n->cap_strays) {
		unsigned int ncap = n->cap_strays ? n->cap_strays * 2 : 4;
		pid_t *nv = realloc(n->strays, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM; /* unknown still: the next census tries again */
		n->strays = nv;
		n->cap_strays = ncap;
	}
	n->strays[n->nstrays++] = tid;
	return 0;
}

static void census(void)
{
	static pid_t *live;
	static size_t nlive, cap_live;
	pid_t *plain = NULL, *strays = NULL;
	size_t nplain = 0, cap_plain = 0, nstrays = 0, cap_strays = 0;
	struct { pid_t *v; size_t n; } arg;

	if (!st->be->moved || list_tasks(&live, &nlive, &cap_live) < 0)
		return;
	arg.v = live;
	arg.n = nlive;
	rgroup__walk_pre(st->top, prune_strays, &arg);
	for (size_t i = 0; i < nlive; i++) {
		struct rgroup__node *n = NULL;
		pid_t tid = live[i];

		if (rgroup__thread_by_tid(tid))
			continue;
		if (tids_find(st->strays, st->nstrays, tid)) {
			rgroup__tids_add(&strays, &nstrays, &cap_strays, tid);
		} else if (tids_find(st->plain, st->nplain, tid) ||
			   st->be->group_of(st->be->priv, tid, &n) <= 0 || !n) {
			rgroup__tids_add(&plain, &nplain, &cap_plain, tid);
		} else if (add_stray(n, tid) == 0) {
			rgroup__tids_add(&strays, &nstrays, &cap_strays, tid);
		}
	}
	free(st->plain);
	free(st->strays);
	st->plain = plain;
	st->nplain = nplain;
	st->cap_plain = cap_plain;
	st->strays = strays;
	st->nstrays = nstrays;
	st->cap_strays = cap_strays;
}

/* ---- Binding the tree: exit, exec, migration ----------------------------- */

static void unbind_one(struct rgroup__node *n, void *arg)
{
	if (*(int *)arg && st->be->evacuate)
		st->be->evacuate(st->be->priv, n);
	unbind(n);
}

static int bind_one(struct rgroup__node *n, void *arg)
{
	int *err = arg;
	int r = rgroup__be_create(st->be, n);

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

void rgroup__unbind_all(int evacuate)
{
	drop_spares(evacuate);
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

/* Evacuate and remove every group; one that a thread still keeps busy
 * for a moment (born into it, or joined and not yet out of its cgroup)
 * is tried again, 1 ms apart, UNBIND_TRIES times at most. Lock held. */
static void unbind_until_free(void)
{
	rgroup__unbind_all(1);
	for (int i = 0; i < UNBIND_TRIES && still_bound(); i++) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
		rgroup__unbind_all(1);
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
static void follow_migration(void)
{
	if (!st->be->moved ||
	    (st->attached && st->be->moved(st->be->priv) != 1 && !members_moved()))
		return;
	rebind_begin();
	if (st->attached) {
		unbind_until_free();
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
			ms = SPARE_MS - ms_since(&st->last_create) + 1;
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
		if (ms_since(&st->last_create) >= SPARE_MS)
			busy += drop_spares(0);
		st->reap_wanted = busy > 0;
		if (st->ngroups && ms_since(&st->last_check) >= KEEPER_IDLE_MS) {
			clock_gettime(CLOCK_MONOTONIC, &st->last_check);
			census();   /* first: after a move, where each was is lost */
			follow_migration();
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

/* ---- _exit: an end without destructors ------------------------------------ */

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
		unbind_until_free();
		rgroup__be_detach(st->be);
		st->attached = 0;
	}
	pthread_cond_signal(&st->cond);
	rgroup__unlock();
}
