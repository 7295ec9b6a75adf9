/* SPDX-License-Identifier: MIT */
/*
 * tree.h - the core: the process's rgroup tree and what the files that
 * apply the rules (DESIGN.md §2) share. Nothing here is exported: internal
 * non-static names start with rgroup__.
 *
 *   tree.c     the tree, its lock, ids and lookups; set-up and the choice
 *              of backend (the one table of backends)
 *   birth.c    rgroup_thread_create: a new group, the thread's birth in it,
 *              the hand-off (rule 1)
 *   keeper.c   the keeper thread: spares, reaping emptied groups (rule 3),
 *              following a migration (rule 8), exit
 *   prio.c     PRIO_RGRP (rule 5) and its permission (rule 6)
 *   info.c     rgroup_backend, rgroup_of, rgroup_info, rgroup_list,
 *              rgroup_probe, rgroup_gc
 *   spawn.c    fork, the exec family, posix_spawn, system, popen (rule 7)
 *   limits.c   rule 10: a group's CPUs and CPU cap, and their inheritance
 *   enter.c    a thread in no rgroup enters a chain of groups once
 *              (`rgroup run`'s preload, by thread name)
 *
 * The backends (backend.h) see a node and its private data; only the
 * governor reads the tree itself, under rgroup__trylock().
 */
#ifndef RGROUP_TREE_H
#define RGROUP_TREE_H

#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "rgroup.h"

#define RGROUP__EXPORT __attribute__((visibility("default")))

/* The library's own limits (cgroup v1 has no cgroup.max.depth or
 * cgroup.max.descendants): beyond them RGROUP_NEW fails with ENOSPC.
 * The nesting limit is the public RGROUP_MAX_DEPTH (rgroup.h). */
#define RGROUP__MAX_GROUPS 65536

struct rgroup__backend;

/* A link in one of the core's hash tables (tree.c). */
struct rgroup__hlink {
	struct rgroup__hlink *next;
	uint64_t key;
};
struct rgroup__htab {
	struct rgroup__hlink **slot;
	size_t size, count;              /* size: a power of 2, or 0 */
};

/* A thread the library tracks: lives in that thread's TLS. */
struct rgroup__thread {
	pid_t tid;
	struct rgroup__node *node;
	int known;                      /* node is known (NULL: in no rgroup) */
	struct rgroup__thread *prev, *next;
	struct rgroup__hlink tidlink;   /* in the table of tracked tids */
};

struct rgroup__node {
	rgroup_id_t id;
	struct rgroup__node *parent;    /* NULL: top-level (parent is the sgroup) */
	struct rgroup__node *children;  /* first child */
	struct rgroup__node *spares;    /* emptied children kept for reuse */
	struct rgroup__node *prev, *next; /* siblings */
	struct rgroup__hlink idlink;    /* in the table of ids */
	struct rgroup__thread *threads; /* tracked members */
	unsigned int nthreads;          /* tracked members */
	/* Members the library did not see born (raw clone inside the group,
	 * thread-create.c), found by the keeper's census (keeper.c), so that
	 * they come along when the process is moved (rule 8). */
	pid_t *strays;
	unsigned int nstrays, cap_strays;
	unsigned int nchildren;
	unsigned int pending;           /* threads being started into it */
	unsigned int depth;             /* 1 for top-level */
	int nice;
	int bound;                      /* the backend's group exists */
	/* Rule 10 (limits.c): its own CPUs (NULL: its parent's) and its CPU
	 * cap (quota_us per period_us; quota 0: none). */
	cpu_set_t *cpus;
	uint64_t quota_us, period_us;
	int held;                       /* self_managed: kept, emptied of
	                                 * tracked threads, until the kernel is
	                                 * asked whether others hold it */
	pid_t leaving;                  /* ... and its last tracked thread */
	uint64_t usage_dead_ns;         /* CPU time of tracked members that exited */
	uint64_t usage_base_ns;         /* backend usage when it was recycled */
	/* The backend's own data: backend->node_size bytes, zeroed at birth
	 * (backend.h, rgroup__node_priv()). */
	max_align_t priv[];
};

static inline void *rgroup__node_priv(const struct rgroup__node *n)
{
	return (void *)n->priv;
}

/* The core's state. Each field belongs to the file named beside it; all
 * are guarded by the core lock unless said otherwise. */
struct rgroup__core {
	const struct rgroup__backend *be; /* tree.c; NULL: none can enforce here */
	int attached;                     /* keeper.c: the backend holds the sgroup */
	int exit_clock;                   /* keeper.c: read an exiting thread's
	                                   * CPU clock (be->counts_exited) */
	int shutdown;                     /* keeper.c: the process is exiting */
	int dismantled;                   /* spawn.c: exec in progress, groups unbound */
	pid_t pid;                        /* tree.c */
	uint64_t starttime;               /* tree.c */
	uint64_t next_id;                 /* tree.c */
	struct rgroup__node *top;         /* tree.c: top-level rgroups */
	unsigned int ngroups;             /* tree.c */
	struct rgroup__htab ids;          /* tree.c: nodes by id */
	struct rgroup__htab tids;         /* tree.c: tracked threads by tid */
	pthread_key_t key;                /* tree.c: runs rgroup__thread_exit() */
	struct rgroup__node *top_spares;  /* keeper.c: emptied top-level groups kept */
	unsigned int nspares;             /* keeper.c */
	struct timespec last_create;      /* keeper.c: spares live on after it */
	struct timespec last_check;       /* keeper.c: of migration */
	int spare_timer;                  /* keeper.c: the keeper is timing spares */
	pthread_cond_t cond;              /* keeper.c: wakes the keeper */
	int keeper_running;               /* keeper.c */
	pid_t keeper_tid;                 /* keeper.c (atomic: the governor reads it) */
	int reap_wanted;                  /* keeper.c */
	unsigned int nheld;               /* keeper.c: nodes held (node->held) */
	pid_t *plain;                     /* keeper.c: at the last census, the */
	size_t nplain, cap_plain;         /* threads seen in no rgroup and */
	pid_t *strays;                    /* those seen in one (the nodes' */
	size_t nstrays, cap_strays;       /* strays), sorted */
	struct rgroup__node *stale_top;   /* spawn.c: a fork child's copy of the */
	struct rgroup__node *stale_spares; /* parent's tree, freed at its first group */
	struct rgroup__hlink **stale_slots[2]; /* and of its hash tables */
	int spin_ok;                      /* birth.c: a second CPU can run a new
	                                   * thread while its creator spins */
	/* A new thread places itself without the core lock (birth.c); the
	 * keeper's rebinding (rule 8) must not run under such a placement.
	 * rgroup__place_begin()/_end() and rgroup__rebind_begin()/_end()
	 * (keeper.c) keep the two apart; atomic, not under the lock. */
	int placing;                      /* placements in flight */
	int rebinding;                    /* the keeper is rebinding: place
	                                   * under the core lock instead */
	unsigned int bind_gen;            /* keeper.c: rebinds so far (lock) */
};

extern struct rgroup__core rgroup__core;
/* The calling thread's record. */
extern __thread struct rgroup__thread rgroup__self;

/* ---- setup.c -------------------------------------------------------- */

/* Set the library up once (backend choice, fork hooks); every entry point
 * calls it first. */
void rgroup__init(void);
/* -EDEADLK if the calling thread is inside the library already: setting it
 * up, or in (or waiting for) its lock, which a signal handler that
 * interrupted it would wait for for ever; else 0. Async-signal-safe. */
int rgroup__init_reentered(void);

/* ---- tree.c --------------------------------------------------------- */

/* Does n, or one of its ancestors, have a CPU set or a cap? Such a group
 * is never kept as a spare (its settings would go to the next group). */
int rgroup__node_limited(const struct rgroup__node *n);
/* Destroy n's backend group; 0, or -EBUSY while a thread is still in it. */
int rgroup__unbind(struct rgroup__node *n);
/* Milliseconds since *t (CLOCK_MONOTONIC). */
long rgroup__ms_since(const struct timespec *t);

/*
 * The core lock. rgroup__in_lib counts how deep the calling thread is in
 * it, so that the governor's signal handler never pauses a thread that
 * holds (or waits for) the library's lock: it leaves a token instead, and
 * the thread pauses in rgroup__unlock(), on its way out.
 */
extern __thread int rgroup__in_lib;
extern __thread int rgroup__pause_token;
extern pthread_mutex_t rgroup__mutex;          /* for condition variables */
void rgroup__lock(void);
int rgroup__trylock(void);                     /* 0 or an error number */
void rgroup__unlock(void);

/* The caller's tid, asked of the kernel once per thread. */
pid_t rgroup__self_tid(void);

/* Walks. Pre-order: parents first, fn returns non-zero to stop. Post-order:
 * children first, fn may free n. Spares are not in the tree. */
int rgroup__walk_pre(struct rgroup__node *list,
		     int (*fn)(struct rgroup__node *, void *), void *arg);
void rgroup__walk_post(struct rgroup__node *list,
		       void (*fn)(struct rgroup__node *, void *), void *arg);
/* Every node, spares included, children (and spares) before their
 * parent (fork child, _exit: no lock, no allocation). */
void rgroup__for_each_node(void (*fn)(struct rgroup__node *, void *), void *arg);

/* A new node under parent (not yet linked, not bound): -ENOMEM, -ENOSPC
 * (the library's limits). Lock held. */
int rgroup__node_new(struct rgroup__node *parent, int nice, struct rgroup__node **out);
/* Link n into the tree below its parent, with a fresh id. */
void rgroup__node_link(struct rgroup__node *n);
/* Take n out of the tree (its backend group stays), then free it. */
void rgroup__node_unlink(struct rgroup__node *n);
void rgroup__node_free(struct rgroup__node *n);
/* The node with this id, or NULL. O(1). */
struct rgroup__node *rgroup__node_by_id(rgroup_id_t id);
/* The group of thread tid, or NULL (in no rgroup; *err says if asking the
 * backend failed). Tracked threads are found at once; others are asked of
 * the backend, and the caller itself is then adopted. Lock held. */
struct rgroup__node *rgroup__node_of(pid_t tid, int *err);
/* The tracked thread tid, or NULL. O(1). */
struct rgroup__thread *rgroup__thread_by_tid(pid_t tid);
/* Make the calling thread a tracked member of n; and the reverse, for a
 * thread that exits. Lock held. The caller makes sure that
 * rgroup__thread_exit() runs when the thread ends (the pthread key, or a
 * cleanup handler around the thread's function). */
void rgroup__track(struct rgroup__node *n);
void rgroup__untrack(struct rgroup__thread *t);
/* The same for the record t of any thread (t->tid set): enter.c tracks a
 * thread on its behalf; no key destructor is set for it. Lock held. */
void rgroup__track_thread(struct rgroup__node *n, struct rgroup__thread *t);
/* CPU time used in n and below, as rgroup_info() reports it. Lock held. */
uint64_t rgroup__node_usage(const struct rgroup__node *n);
/* n's nice value: the kernel's where the backend can read it (any code
 * in the process may change it there), kept in n->nice; else n->nice.
 * Lock held. */
int rgroup__node_nice(struct rgroup__node *n);
/* The CPU time of n's tracked threads (exited ones included) and of its
 * children, from their clocks. */
uint64_t rgroup__clock_usage(const struct rgroup__node *n);

/* ---- birth.c ---------------------------------------------------------- */

/* A new group under parent at `nice`, bound by the backend (a spare if
 * one is kept). Lock held. */
int rgroup__make_group(struct rgroup__node *parent, int nice, struct rgroup__node **out);

/* The clone of a thread that rgroup_thread_create() starts (the default
 * birth, a backend's birth()): through rgroup__pthread_create(), or,
 * while the shared library's pthread_create() serves the application,
 * through the definition it found next. */
int rgroup__birth_create(pthread_t *thread, const pthread_attr_t *attr,
			 void *(*fn)(void *), void *arg);
/* pthread_create() for the application (thread-create.c): a caller inside
 * an rgroup gets rgroup_thread_create() without RGROUP_NEW, any other
 * caller next(...) unchanged. pthread_create()'s contract. */
typedef int rgroup__pthread_create_fn(pthread_t *thread, const pthread_attr_t *attr,
				      void *(*fn)(void *), void *arg);
int rgroup__app_pthread_create(rgroup__pthread_create_fn *next, pthread_t *thread,
			       const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

/* ---- keeper.c --------------------------------------------------------- */

/* The backend holds the sgroup (attach, or follow a move made while the
 * process had no groups). Lock held. */
int rgroup__attach(void);
/* Start the keeper if it is not running. Lock held. */
int rgroup__start_keeper(void);
/* A spare below parent, ready to be a group at nice `nice`, or NULL. */
struct rgroup__node *rgroup__take_spare(struct rgroup__node *parent, int nice);
/* Remove the tree's backend groups, keeping the tree (their threads
 * moved to the sgroup first), and make them again; a group that stays
 * busy stays bound, and binding again only puts its threads back.
 * Lock held. */
void rgroup__unbind_all(void);
int rgroup__bind_all(void);
/* A new thread's unlocked placement (birth.c): rgroup__place_begin()
 * returns 1 when it may place itself now, 0 when the keeper is rebinding
 * (then it places itself under the core lock); each 1 is followed by one
 * rgroup__place_end(). */
int rgroup__place_begin(void);
void rgroup__place_end(void);
/* Are any spares kept? */
int rgroup__any_spares(void);
/* pthread key destructor: a tracked thread exits. */
void rgroup__thread_exit(void *self);
/* Settle the held nodes (node->held): forget those whose groups the
 * kernel has let go, keep the others. Lock held. */
void rgroup__forget_gone(void);
/* Add tid to a sorted, growing array of tids (the census's sets):
 * -ENOMEM, or 0 (also when it is there already). */
int rgroup__tids_add(pid_t **v, size_t *n, size_t *cap, pid_t tid);
pid_t rgroup__keeper_tid(void);               /* 0 if none */
/* The keeper's census of threads the library did not make (census.c).
 * Lock held. */
void rgroup__census(void);

/* ---- spares.c --------------------------------------------------------- */

/* Spares vanish this long after the last creation. */
#define RGROUP__SPARE_MS 500
/* Remove the spares in one pool (evacuate: threads out first); returns
 * how many could not go yet. Lock held. */
int rgroup__spares_drop_pool(struct rgroup__node **pool, int evacuate);
/* Keep an emptied group as a spare if the process is creating groups;
 * returns 1 if kept. Lock held. */
int rgroup__spares_recycle(struct rgroup__node *n);
/* Remove every spare; returns how many could not go yet. Lock held. */
int rgroup__drop_spares(int evacuate);

/* ---- bind.c ----------------------------------------------------------- */

/* Rule 8: if the process was moved to another sgroup (or away and
 * back), rebuild the tree there. Lock held; only the keeper calls it. */
void rgroup__follow_migration(void);
/* The process ends without its destructors (_exit, exit.c): its groups
 * are removed, best effort, async-signal-safe: only when no thread holds
 * the core lock, which then stays taken. */
void rgroup__exit_now(void);

/* ---- helper.c ---------------------------------------------------------- */

/*
 * The library's own thread creations (its helpers, and the clone under
 * rgroup_thread_create's trampoline) go through this, never through
 * pthread_create() directly: it marks the calling thread as creating for
 * the library, so that the shared library's pthread_create()
 * (thread-create.c) passes the call on unchanged to the next definition
 * (an interposer such as a sanitizer's, else libc's). pthread_create()'s
 * contract.
 */
extern __thread int rgroup__creating;
int rgroup__pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			   void *(*fn)(void *), void *arg);
/* Start one of the library's own threads (the keeper, the governor): a
 * small stack, every signal blocked; running fn when this returns 0 (or
 * a negative error number). A fork never copies one that is starting or
 * ending. */
int rgroup__start_helper(void *(*fn)(void *));
/* The fork handlers' part for them (rgroup__fork_*): prepare with the
 * core lock held. */
void rgroup__helpers_fork_prepare(void);
void rgroup__helpers_fork_parent(void);
void rgroup__helpers_fork_child(void);

/* ---- prio.c ------------------------------------------------------------ */

/* The calling thread's nice value (0 if it cannot be read). */
int rgroup__my_nice(void);
/* May this process give a thread (or a top-level group) nice value
 * `nice`? The kernel's can_nice(): RLIMIT_NICE, else CAP_SYS_NICE. */
int rgroup__can_nice(int nice);
/* The group of thread `who` (0: the caller), with the core lock held on
 * success: 0, -ESRCH (not a thread of this process), -EINVAL (in no
 * rgroup). */
int rgroup__lookup_locked(id_t who, struct rgroup__node **out);
/* Give n (lock held) nice value `nice` (clamped), with rule 6 for a
 * top-level group: 0, -EACCES, -ENODEV (n is gone), or the backend's
 * error; n is unchanged on failure. */
int rgroup__set_nice_locked(struct rgroup__node *n, int nice);

/* ---- limits.c (rule 10) ------------------------------------------------ */

/* The CPUs n's threads may run on: its own, else its nearest ancestor's,
 * else the process's (rgroup__process_cpus). Lock held. */
void rgroup__node_cpus(const struct rgroup__node *n, cpu_set_t *out);
/* What the process may use, the bound of top-level groups: its main
 * thread's affinity (while that thread is in no group with a CPU set;
 * else the affinity it had when the first CPU set was made). Lock held. */
int rgroup__process_cpus(cpu_set_t *out);
/* Give n (bound, lock held) its own CPUs (NULL: lift them) or its cap
 * (quota 0: lift it), with the inheritance checks of rule 10: 0, -EINVAL
 * (empty set, quota or period out of range), -EPERM (wider than its
 * parent), -EBUSY (narrower than a child's own), -ENOTSUP (the backend
 * cannot), or the backend's error; n is unchanged on failure. */
int rgroup__set_cpus_locked(struct rgroup__node *n, const cpu_set_t *cpus);
int rgroup__set_cap_locked(struct rgroup__node *n, uint64_t quota_us, uint64_t period_us);

/* ---- enter.c ------------------------------------------------------------ */

/*
 * One level of a chain of groups that a thread in no rgroup enters
 * (rgroup__enter()), parents first. `id` is the group this level had the
 * last time (0: none yet); it is reused while it still exists under the
 * level above, else a new group is made with the level's settings and
 * its id written back. Settings apply only to a group made here.
 */
struct rgroup__level {
	rgroup_id_t id;
	int has_nice, nice;
	const cpu_set_t *cpus;          /* NULL: its parent's */
	uint64_t quota_us, period_us;   /* quota 0: no cap */
};

/*
 * Put a thread that is in no rgroup into the last group of chain[0..depth),
 * making the groups that do not exist any more (rgroup run's preload,
 * when the program names a thread). `who` is a record the caller keeps
 * for another thread (zeroed but for its tid, valid until that thread
 * has gone: rgroup__enter_gone()), NULL for the caller itself. From
 * then on rule 2 holds for it. 0, -EEXIST (already in an rgroup: nothing
 * done), -ENOTSUP (no backend), -EINVAL (depth 0 or too deep), or the
 * errors of making a group or of its settings (rule 6 for a top-level
 * nice, rule 10); a group made for a failed entry is removed again.
 * Where a group comes into being with its first thread (the native
 * backend), its nice is set just after the entry, rule 6 checked before.
 */
int rgroup__enter(struct rgroup__level *chain, unsigned int depth, void *who);
/* A thread entered by another thread (through record who) calls this as
 * it exits: it leaves its group, and the record is the caller's again. */
void rgroup__enter_gone(void *who);
/*
 * Change live group `id` (one of a chain's, made by rgroup__enter()) to
 * level l's settings, those named in `what` (RGROUP__CHANGE_*: nice, cpus,
 * cap; l->cpus NULL and quota 0 lift them), as rgroup_setpriority(),
 * rgroup_set_cpus() and rgroup_set_cap() would, with the same rules: all
 * or nothing. 0, -ESRCH (no such group any more: the next one made gets
 * the settings of its level), or the first error of those calls.
 */
#define RGROUP__CHANGE_NICE 1u
#define RGROUP__CHANGE_CPUS 2u
#define RGROUP__CHANGE_CAP  4u
int rgroup__enter_change(rgroup_id_t id, const struct rgroup__level *l, unsigned int what);
/* The real-time signal the governor pauses threads with, if the governor
 * is this process's backend; else 0 (also when called from inside the
 * library, with the core lock held). */
int rgroup__enter_signal(void);

/* ---- spawn.c ----------------------------------------------------------- */

/* posix_spawn()'s shape. */
typedef int rgroup__spawn_fn(pid_t *pid, const char *path,
			     const posix_spawn_file_actions_t *actions,
			     const posix_spawnattr_t *attr, char *const argv[],
			     char *const envp[]);
/* fn(...), made from the sgroup when a child of the calling thread would
 * start inside an rgroup (rule 7). posix_spawn()'s error contract. */
int rgroup__spawn(rgroup__spawn_fn *fn, pid_t *pid, const char *path,
		  const posix_spawn_file_actions_t *actions,
		  const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);

/* The fork handlers (pthread_atfork). */
void rgroup__fork_prepare(void);
void rgroup__fork_parent(void);
void rgroup__fork_child(void);
/* Free a fork child's copy of its parent's tree. Lock held. */
void rgroup__drop_stale(void);

#endif /* RGROUP_TREE_H */
