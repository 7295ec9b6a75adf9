/* SPDX-License-Identifier: MIT */
/*
 * helper.c - the library's own threads: every clone the library makes for
 * itself (rgroup__pthread_create()), and its helpers (the keeper, the
 * governor): their start, their end, and fork.
 *
 * A fork never copies a helper that is starting or ending. A thread's
 * first and last steps, before its function runs and after it returns,
 * are the C library's and an allocator's bookkeeping (a sanitizer's
 * runtime allocates there, under its allocator's locks, and gcc's takes
 * no lock around fork): a child forked in the middle would inherit such a
 * lock held, and hang at its first allocation. So the fork handlers hold
 * the fork lock across a fork, and
 *  - starting, a helper's creator holds it until the helper's function
 *    runs;
 *  - ending, a helper takes it, then the life lock, and lets go of the
 *    fork lock only: the life lock is robust, and the kernel lets go of it
 *    when the thread is gone, after the last of its own steps. Whoever
 *    takes the fork lock next waits for that (wait_dying()).
 * Helpers stay detached: nothing has to join them. A helper is never a
 * tracked member (tree.c), so no destructor of the library's runs in its
 * last steps. The locks' order: the core lock, the fork lock, the life
 * lock.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tree.h"

__thread int rgroup__creating;

int rgroup__pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			   void *(*fn)(void *), void *arg)
{
	int r;

	rgroup__creating++;
	r = pthread_create(thread, attr, fn, arg);
	rgroup__creating--;
	return r;
}

struct start {
	void *(*fn)(void *);
	int running;    /* futex: the helper's function runs */
};

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t life;    /* robust: an ending helper's, to its death */
static pthread_once_t life_once = PTHREAD_ONCE_INIT;
static int life_ok;             /* life could be made robust */
static int dying;               /* fork lock: an ending helper holds life */

static void life_init(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	life_ok = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) == 0 &&
		  pthread_mutex_init(&life, &a) == 0;
	pthread_mutexattr_destroy(&a);
}

/* Wait until the ending helper, if any, is gone. Fork lock held. */
static void wait_dying(void)
{
	if (!dying)
		return;
	if (pthread_mutex_lock(&life) == EOWNERDEAD)
		pthread_mutex_consistent(&life);
	pthread_mutex_unlock(&life);
	dying = 0;
}

static void fork_lock_take(void)
{
	pthread_mutex_lock(&fork_lock);
	wait_dying();
}

/*
 * Will the kernel let go of the calling thread's robust locks when it is
 * gone? Not where the C library could not register its list (a seccomp
 * filter that refuses set_robust_list, a kernel without robust futexes):
 * an ending helper must then not hold the life lock, or whoever waits for
 * it waits for ever; a fork may then copy an ending helper.
 */
static int robust_here(void)
{
	struct robust_list_head *head = NULL;
	size_t len = 0;

	return life_ok && syscall(SYS_get_robust_list, 0, &head, &len) == 0 && head;
}

static void *helper_main(void *arg)
{
	struct start *s = arg;
	void *(*fn)(void *) = s->fn;
	void *r;

	__atomic_store_n(&s->running, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s->running, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	r = fn(NULL);
	fork_lock_take();
	pthread_once(&life_once, life_init);
	if (robust_here()) {
		pthread_mutex_lock(&life);      /* until the kernel sees this thread gone */
		dying = 1;
	}
	pthread_mutex_unlock(&fork_lock);
	return r;
}

RGROUP__EXPORT int rgroup__start_helper(void *(*fn)(void *))
{
	struct start s = { .fn = fn };
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int r;

	fork_lock_take();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* The application's signals are not the library's threads' to take
	 * (and the governor's own signal must never reach the governor). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = rgroup__pthread_create(&t, &attr, helper_main, &s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r == 0)
		while (!__atomic_load_n(&s.running, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &s.running, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	pthread_mutex_unlock(&fork_lock);
	return -r;
}

void rgroup__helpers_fork_prepare(void)
{
	fork_lock_take();
}

void rgroup__helpers_fork_parent(void)
{
	pthread_mutex_unlock(&fork_lock);
}

/* The child has none of the parent's helpers, and none was ending at the
 * fork. The lock, taken in the prepare handler by this very thread, is
 * released, not re-initialised. */
void rgroup__helpers_fork_child(void)
{
	pthread_mutex_unlock(&fork_lock);
}
