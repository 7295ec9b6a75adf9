/* SPDX-License-Identifier: MIT */
/*
 * setup.c - the library's set-up, once per process, from the first call
 * of any entry point: the backend chosen (backends/table.c), the fork
 * handlers (fork.c) and the destructor of a tracked thread's record
 * (keeper.c) registered.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "backend.h"

static struct rgroup__core *const st = &rgroup__core;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread int initialising;  /* this thread is in pthread_once() */

static void init_once(void)
{
	char why[512];
	cpu_set_t cpus;

	st->pid = getpid();
	st->spin_ok = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 1;
	if (pthread_key_create(&st->key, rgroup__thread_exit) != 0)
		return; /* st->be stays NULL: ENOTSUP, never a crash */
	pthread_atfork(rgroup__fork_prepare, rgroup__fork_parent, rgroup__fork_child);
	rgroup__lock();
	st->be = rgroup__choose_backend(why, sizeof(why));
	rgroup__unlock();
}

void rgroup__init(void)
{
	/* A signal handler that interrupts this thread in pthread_once()
	 * and calls it again would wait for itself (rgroup__init_reentered). */
	initialising++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_once(&once, init_once);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	initialising--;
}

int rgroup__init_reentered(void)
{
	return initialising || rgroup__in_lib ? -EDEADLK : 0;
}

