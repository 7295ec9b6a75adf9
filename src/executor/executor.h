/* SPDX-License-Identifier: MIT */
/*
 * executor.h - what the executor's parts share: the pool, its groups,
 * their anchors and workers (the design is at the top of executor.c).
 *
 *   executor.c  the public API: pools, groups, submission, waiting,
 *               destruction
 *   threads.c   the threads: anchors that make each group's rgroup and
 *               start its workers, and the workers that run its items
 *   handles.c   handles that stay checkable after a pool or group is gone
 *
 * Not installed, not exported (rgroup__exec_ prefix, hidden).
 */
#ifndef RGROUP_EXECUTOR_H
#define RGROUP_EXECUTOR_H

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rgroup.h"
#include "handles.h"

#define IDLE_MS_DEFAULT   1000
#define MAX_WORKERS_LIMIT 1024
#define RING_MIN          16
#define RETRY_MIN_MS      10    /* a failed thread creation is retried... */
#define RETRY_MAX_MS      1000  /* ...backing off up to this */
#define ANCHOR_TICK_MS    1000  /* an anchor looks around at least this often */
/* Anchors run only the library's code, never the caller's: a stack of
 * their own, so that a pool of many groups fits under RLIMIT_AS whatever
 * the default stack (sanitizer builds need about twice the plain depth). */
#define ANCHOR_STACK      (256 * 1024)

/* ---- Clocks and futexes ---------------------------------------------- */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void futex_wake(uint32_t *word, int n)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Sleep while *word == val, until the CLOCK_MONOTONIC time `until` (ns; 0:
 * no limit). Returns 0 (woken, or the word changed, or a signal: the
 * caller looks again) or ETIMEDOUT. */
static inline int futex_wait_until(uint32_t *word, uint32_t val, uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };

	if (until && now_ns() >= until)
		return ETIMEDOUT;
	if (syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, val, until ? &ts : NULL,
		    NULL, FUTEX_BITSET_MATCH_ANY) < 0 && errno == ETIMEDOUT)
		return ETIMEDOUT;
	return 0;
}

static inline pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline uint64_t thread_cpu_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum { A_NONE, A_WANTED, A_UP };          /* an anchor's state */
enum { G_LIVE, G_CLOSED, G_DYING };       /* what submit says: 0, -ESHUTDOWN, -ENOENT */
enum { W_FREE, W_STARTING, W_RUNNING, W_EXITED };

struct xpool;
struct xgroup;

/* The thread that can add threads to one rgroup (see the top). All fields
 * but poke are under the pool lock; state is written with the group's lock
 * held too, so that submit may read it under the group's alone. */
struct anchor {
	uint32_t poke;            /* futex: something to look at */
	int state;
	int creating;             /* the parent's anchor is starting it now */
	int have_th, exited;      /* th is to be joined by the parent's anchor */
	pthread_t th;
	pid_t tid;
	clockid_t clk;
	uint64_t retry_ns;        /* a failed start is tried again then */
	unsigned int backoff_ms;
};

struct item {
	void (*fn)(void *);
	void *arg;
};

struct worker {
	struct worker *next;      /* the group's records */
	struct worker *sprev, *snext; /* the group's sleeping stack */
	struct xgroup *g;
	pthread_t th;             /* the anchor's (it joins) */
	clockid_t clk;
	int state;                /* group lock */
	uint32_t wake;            /* futex: 1 = taken off the stack */
};

struct xgroup {
	struct slot hdr;          /* hdr.lock: the group's lock */
	struct xpool *pool;       /* set at creation, fixed */
	uint64_t pool_id;
	/* The tree: pool lock. */
	struct xgroup *parent, *children, *prev, *next;
	int owned;                /* someone is destroying it */
	int nice;
	int depth;                /* 1: top-level work group */
	char name[RGROUP_EXEC_NAME_MAX];
	unsigned int max_workers;
	struct anchor a;
	/* Group lock from here. */
	int state;                /* G_* */
	int dead;                 /* workers end: the group is being destroyed */
	struct item *ring, *spare;
	uint32_t cap, spare_cap, head, count;
	unsigned int nworkers;    /* running worker threads */
	unsigned int nstarting;   /* asked for, not yet running */
	unsigned int spawn_req;   /* asked for, not yet seen by the anchor */
	unsigned int nrunning;    /* items being run */
	unsigned int nsleeping;
	unsigned int unjoined;    /* records not W_FREE */
	struct worker *sleepers;  /* most recent first */
	struct worker *records;
	uint32_t idle_seq;        /* futex: rgroup_exec_wait() */
	unsigned int nwaiters;
	int error;
	rgroup_id_t rgroup;
	uint64_t rgroups, submitted, completed, canceled, cpu_dead_ns;
	uint64_t exits;           /* workers that added to cpu_dead_ns */
};

struct xpool {
	struct slot hdr;          /* hdr.lock: the pool's lock */
	pthread_cond_t cond;      /* threads ended, anchors joined */
	int shutdown;
	int dying;                /* rgroup_exec_destroy() under way */
	int root_exit;
	int base_depth;           /* depth of the creator's rgroup (0: sgroup) */
	int top_level;            /* groups are top-level rgroups: rule 6 */
	unsigned int max_workers, idle_ms;
	void (*canceled)(void (*fn)(void *), void *arg);
	pthread_attr_t attr;          /* the workers' (stack_size) */
	pthread_attr_t anchor_attr;   /* the anchors': ANCHOR_STACK */
	struct anchor root;
	struct xgroup *top;
};

/* The tables of pools and groups (executor.c). */
extern struct table rgroup__exec_pools, rgroup__exec_groups;

#define POOL_ID(p)  rgroup__exec_slot_id(&rgroup__exec_pools, &(p)->hdr)
#define GROUP_ID(g) rgroup__exec_slot_id(&rgroup__exec_groups, &(g)->hdr)

/* The worker the calling thread is, if any (threads.c). */
extern __thread struct worker *rgroup__exec_cur_worker;

#define G_LOCK(g)   pthread_mutex_lock(&(g)->hdr.lock)
#define G_UNLOCK(g) pthread_mutex_unlock(&(g)->hdr.lock)
#define P_LOCK(p)   pthread_mutex_lock(&(p)->hdr.lock)
#define P_UNLOCK(p) pthread_mutex_unlock(&(p)->hdr.lock)

/* ---- threads.c ---------------------------------------------------------- */

/* Wake anchor a to look at its groups' work. */
void rgroup__exec_poke(struct anchor *a);
/* Pool lock held. g needs threads: make sure its anchor exists or is on
 * its way, asking up the chain as far as an anchor is missing. */
void rgroup__exec_want_anchor(struct xgroup *g);
/* Poke the anchor that would start g's. Pool lock held. */
void rgroup__exec_poke_maker(struct xgroup *g);
/* Wake the rgroup_exec_wait() callers of g if it just became idle. Group
 * lock held; returns whether to wake after unlocking. */
int rgroup__exec_became_idle(struct xgroup *g);
/* The pool's root anchor: started by rgroup_exec_create() in the
 * creator's rgroup, it starts the anchors of the top-level groups. */
void *rgroup__exec_root_main(void *arg);

#endif /* RGROUP_EXECUTOR_H */
