/* SPDX-License-Identifier: MIT */
/*
 * birth.c - rgroup_thread_create(): a thread is born into its group
 * (rule 1), a new one with RGROUP_NEW or its creator's without.
 *
 * The backend decides how a thread gets into its group (backend.h,
 * birth()): where the kernel can put it there at clone time (the native
 * backend), it does; otherwise the new thread places itself before it
 * runs any of the caller's code, and with RGROUP_NEW the creator waits for
 * that, so that an error can still be returned and no thread has run.
 *
 * The shared library's pthread_create() (thread-create.c) comes here too
 * when its caller is inside an rgroup: such a thread is born a tracked
 * member of its creator's group, as rgroup_thread_create() without
 * RGROUP_NEW makes it (rule 1; and rule 8, since the keeper carries
 * tracked members along from birth).
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "fault.h"

#define HANDOFF_SPIN_NS 50000 /* the creator spins this long, then sleeps */

static struct rgroup__core *const st = &rgroup__core;

/*
 * What a new thread needs to start. When the creator waits (the default
 * birth with RGROUP_NEW), the record lives on its stack; otherwise it
 * comes from a pool that the core lock guards: the creator takes one, the
 * new thread puts it back under the lock it takes anyway to be tracked.
 * Not malloc() and free(): a thread's first free() sets up its malloc
 * cache (tcache_init, an arena) and its exit tears it down again, which
 * was most of what same-group creation cost over pthread_create().
 */
struct start {
	void *(*fn)(void *);
	void *arg;
	struct rgroup__node *node;
	int place;      /* the thread moves itself into node */
	int wait;       /* the creator waits for the thread's placement */
	int result;
	int state;      /* only when wait: 0 pending, 1 done, 2 creator asleep */
	unsigned int gen; /* st->bind_gen when the creator let go of the lock */
	struct start *next_free;
};

#define START_POOL_KEEP 64 /* records kept beyond those in use */

static struct start *start_pool;  /* core lock */
static unsigned int start_pool_len;

/* A record for a thread about to start. Lock held; NULL: no memory. */
static struct start *start_get(void)
{
	struct start *s = start_pool;

	if (!s)
		return rgroup__fault() < 0 ? NULL : malloc(sizeof(*s));
	start_pool = s->next_free;
	start_pool_len--;
	/* A burst of creations leaves many behind: the creator (whose
	 * malloc cache exists) trims them, one per creation. */
	if (start_pool_len > START_POOL_KEEP) {
		struct start *x = start_pool;

		start_pool = x->next_free;
		start_pool_len--;
		free(x);
	}
	return s;
}

/* Lock held. */
static void start_put(struct start *s)
{
	s->next_free = start_pool;
	start_pool = s;
	start_pool_len++;
}

/*
 * The creator waits for the new thread's placement. The thread needs a few
 * microseconds on another CPU, while putting the creator to sleep and
 * waking it costs more than that on a virtual machine: so spin a little
 * first (only with a second CPU to run the thread), then sleep on a futex.
 * After the new thread marks `state` done it touches nothing of the
 * creator's but, if the creator sleeps, the futex word (a spurious wake-up
 * of a stale address is harmless to every futex user).
 */
static void handoff_wait(int *state)
{
	struct timespec t0, t;
	int expect = 0;

	if (st->spin_ok) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			if (__atomic_load_n(state, __ATOMIC_ACQUIRE))
				return;
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < HANDOFF_SPIN_NS);
	}
	if (!__atomic_compare_exchange_n(state, &expect, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	while (__atomic_load_n(state, __ATOMIC_ACQUIRE) == 2)
		syscall(SYS_futex, state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

static void handoff_post(int *state)
{
	if (__atomic_exchange_n(state, 1, __ATOMIC_ACQ_REL) == 2)
		syscall(SYS_futex, state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * The new thread's first steps: into its group, tracked, then the
 * caller's function, whose end (return, pthread_exit, cancellation) a
 * cleanup handler sees. Not the pthread key that adopted threads use
 * (tree.c): a thread that ever set a key value pays at its exit for a
 * walk of every key.
 */
static void *trampoline(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg, *ret;
	struct rgroup__node *n = s->node;
	int r = 0, wait = s->wait, place = s->place, placed = 0;
	unsigned int gen = s->gen;

	/* Unlocked, unless the keeper is rebinding the tree (rule 8). */
	if (place && rgroup__place_begin()) {
		gen = __atomic_load_n(&st->bind_gen, __ATOMIC_RELAXED);
		r = st->be->place(st->be->priv, n, rgroup__self_tid());
		rgroup__place_end();
		placed = 1;
	}
	rgroup__lock();
	/* A rebinding since the placement, or since the creator made the
	 * thread in its own group, left this thread where the tree was
	 * before: into the group as it is now (rule 8). */
	if (place && (!placed || (r == 0 && gen != st->bind_gen)))
		r = st->be->place(st->be->priv, n, rgroup__self_tid());
	else if (!place && gen != st->bind_gen && n->bound)
		(void)st->be->place(st->be->priv, n, rgroup__self_tid());
	if (r == 0) {
		rgroup__track(n);
		n->pending--;   /* on failure, the creator's abandon() does it */
	}
	if (!wait)
		start_put(s);   /* s is another thread's after the unlock */
	rgroup__unlock();
	if (wait) {
		s->result = r;
		handoff_post(&s->state); /* s is gone after this */
		if (r)
			return NULL;
	}
	pthread_cleanup_push(rgroup__thread_exit, &rgroup__self);
	ret = fn(arg);
	pthread_cleanup_pop(1);
	return ret;
}

/* Undo a group made for a thread that did not start. Lock held. */
static void abandon(struct rgroup__node *n, int made)
{
	n->pending--;
	if (!made)
		return;
	if (!n->nthreads && !n->children && !n->pending &&
	    rgroup__be_destroy(st->be, n) == 0) {
		rgroup__node_unlink(n);
		rgroup__node_free(n);
	} else {
		st->reap_wanted = 1;
	}
}

int rgroup__make_group(struct rgroup__node *parent, int nice, struct rgroup__node **out)
{
	struct rgroup__node *n;
	int r;

	r = rgroup__attach();
	if (r < 0)
		return r;
	rgroup__drop_stale();
	clock_gettime(CLOCK_MONOTONIC, &st->last_create);
	n = rgroup__take_spare(parent, nice);
	if (n) {
		/* A spare keeps its group and name; it gets a new identity. */
		n->id = ++st->next_id;
		goto linked;
	}
	r = rgroup__node_new(parent, nice, &n);
	if (r < 0)
		return r;
	r = rgroup__be_create(st->be, n);
	if (r < 0) {
		rgroup__node_free(n);
		return r;
	}
	n->bound = 1;
linked:
	rgroup__node_link(n);
	*out = n;
	return 0;
}

/*
 * Start the thread through the backend's birth, or the default: create,
 * then the thread places itself, with the creator waiting when it must
 * report the placement's failure (a fresh group: RGROUP_NEW). `gen` is
 * st->bind_gen when the caller let go of the lock. `pooled` is
 * the record from start_get() when the creator does not wait (NULL when
 * it does); on failure the caller puts it back. Called unlocked; 0 or a
 * negative errno.
 */
static int birth(struct rgroup__node *n, int fresh, unsigned int gen, struct start *pooled,
		 pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct start local = { .fn = fn, .arg = arg, .node = n, .gen = gen }, *s = &local;
	int r, detached = 0;

	r = rgroup__fault();
	if (r < 0)
		return r;
	local.wait = !st->be->birth && fresh;
	local.place = local.wait;
	if (pooled) {
		*pooled = local;
		s = pooled;
	}
	if (st->be->birth)
		r = st->be->birth(st->be->priv, n, fresh, thread, attr, trampoline, s);
	else
		r = rgroup__birth_create(thread, attr, trampoline, s);
	if (r)
		return -r;
	if (!local.wait)
		return 0;
	handoff_wait(&s->state);
	r = s->result;
	if (r < 0) {
		/* The thread ran none of fn and is ending; collect it. */
		if (attr)
			pthread_attr_getdetachstate(attr, &detached);
		if (detached != PTHREAD_CREATE_DETACHED)
			pthread_join(*thread, NULL);
	}
	return r;
}

RGROUP__EXPORT int rgroup_thread_create(pthread_t *thread, const pthread_attr_t *attr,
					unsigned int flags, void *(*fn)(void *), void *arg)
{
	struct rgroup__node *n;
	struct start *pooled = NULL;
	int r, err, fresh = flags & RGROUP_NEW;

	/* Internally 0 or a negative errno, like every library function;
	 * turned into pthread_create()'s error number once, at the end. */
	if ((flags & ~RGROUP_NEW) || !thread || !fn)
		return EINVAL;
	rgroup__init();
	rgroup__lock();
	n = rgroup__node_of(rgroup__self_tid(), &err);
	if (!fresh && !n) {
		/* A plain thread in the sgroup: nothing to track. */
		rgroup__unlock();
		return rgroup__birth_create(thread, attr, fn, arg);
	}
	if (fresh) {
		/* Rule 6: a top-level rgroup starts at its creator's nice, a
		 * nested one at 0 (it only divides time the process has). */
		r = !st->be || st->shutdown ? -ENOTSUP
			: rgroup__make_group(n, n ? 0 : rgroup__my_nice(), &n);
		if (r < 0)
			goto out;
	}
	n->pending++;
	r = rgroup__start_keeper();
	/* The creator waits, and the record is on its stack, only in the
	 * default birth of a fresh group (see birth()). */
	if (r == 0 && (st->be->birth || !fresh) && !(pooled = start_get()))
		r = -EAGAIN;
	if (r == 0) {
		unsigned int gen = st->bind_gen;

		rgroup__unlock();
		r = birth(n, fresh, gen, pooled, thread, attr, fn, arg);
		if (r == 0)
			return 0;
		rgroup__lock();
		if (pooled)
			start_put(pooled);   /* no thread took it */
	}
	abandon(n, fresh);
out:
	rgroup__unlock();
	return -r;   /* an error number, as pthread_create returns */
}

/* While the application's pthread_create() is served (below): the next
 * definition after the library's, which the thread it asked for is
 * cloned through (interposers before the library have already seen the
 * call and must not see it twice). */
static __thread rgroup__pthread_create_fn *create_next;

int rgroup__birth_create(pthread_t *thread, const pthread_attr_t *attr,
			 void *(*fn)(void *), void *arg)
{
	rgroup__pthread_create_fn *next = create_next;

	return next ? next(thread, attr, fn, arg) : rgroup__pthread_create(thread, attr, fn, arg);
}

int rgroup__app_pthread_create(rgroup__pthread_create_fn *next, pthread_t *thread,
			       const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int r;

	/* Rule 1. Only a caller inside an rgroup changes anything: the
	 * library's own creations, a thread already known to be in no
	 * rgroup and any thread of a process without rgroups go on to next
	 * unchanged, with no lock, allocation or system call of the
	 * library's. (ngroups is read without the lock: a thread that is
	 * inside an rgroup was put there after the count last rose.) */
	if (rgroup__creating || (rgroup__self.known && !rgroup__self.node) ||
	    !__atomic_load_n(&st->ngroups, __ATOMIC_RELAXED))
		return next(thread, attr, fn, arg);
	create_next = next;
	r = rgroup_thread_create(thread, attr, 0, fn, arg);
	create_next = NULL;
	return r;
}
