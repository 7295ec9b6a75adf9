/* SPDX-License-Identifier: MIT */
/*
 * core.c - the process's rgroup tree and the rules of DESIGN.md §2,
 * independent of the backend that enforces them.
 *
 * One mutex guards the tree. Threads the library knows of carry a
 * struct rgroup__thread in their TLS, linked into their group; a pthread key
 * destructor unlinks it at thread exit. A "keeper" thread, alive only while
 * the process has rgroups, removes groups that have emptied (rule 3) and
 * rebuilds the tree when the administrator moves the process (rule 8). It
 * sits in the sgroup itself, so it competes like any plain thread there
 * (it sleeps almost always).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <sched.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define KEEPER_IDLE_MS   250   /* migration check period (rule 8: < 1 s) */
#define KEEPER_REAP_MS    20   /* retry while a group's last thread leaves */
#define SPARE_MS         500   /* keep emptied groups this long after a creation */
#define SPARE_MAX          4   /* per parent */
#define SPARE_MAX_TOTAL   16   /* in all: each holds three descriptors */
#define HANDOFF_SPIN_NS 50000 /* the creator spins this long, then sleeps */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static struct {
	const struct rgroup__backend *be; /* NULL: none can enforce here */
	int attached;                     /* the backend holds the sgroup */
	int shutdown;                     /* the process is exiting */
	int dismantled;                   /* exec in progress: groups unbound */
	pid_t pid;
	uint64_t starttime;
	uint64_t next_id;
	struct rgroup__node *top;         /* top-level rgroups */
	struct rgroup__node *top_spares;  /* emptied top-level groups kept */
	struct timespec last_create;      /* of a group: spares live on after it */
	struct timespec last_check;       /* of migration, by the keeper */
	int spare_timer;                  /* the keeper is timing spares */
	unsigned int nspares;
	unsigned int ngroups;
	pthread_key_t key;
	pthread_cond_t cond;              /* wakes the keeper */
	int keeper_running;
	pid_t keeper_tid;
	int reap_wanted;
	struct rgroup__node *stale_top;   /* a fork child's copy of the parent's */
	struct rgroup__node *stale_spares; /* tree, freed at its first group */
} st = { .cond = PTHREAD_COND_INITIALIZER };

static __thread struct rgroup__thread self;
static int spin_ok;     /* a second CPU can run a new thread while we spin */

static pid_t sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The caller's tid, asked of the kernel once per thread (fork_child()
 * resets it for the child's thread). */
static pid_t self_tid(void)
{
	if (!self.tid)
		self.tid = sys_gettid();
	return self.tid;
}

/*
 * The core lock. rgroup__in_lib counts how deep the calling thread is in it,
 * so that the governor's signal handler never pauses a thread that holds
 * (or waits for) the library's lock: it leaves a token instead, and the
 * thread pauses here, on its way out.
 */
__thread int rgroup__in_lib;
__thread int rgroup__pause_token;

static void free_tree(struct rgroup__node *list);

static void core_lock(void)
{
	rgroup__in_lib++;
	pthread_mutex_lock(&lock);
}

static void core_unlock(void)
{
	pthread_mutex_unlock(&lock);
	if (--rgroup__in_lib == 0 && rgroup__pause_token) {
		int token = rgroup__pause_token;
		rgroup__pause_token = 0;
		if (st.be && st.be->deferred)
			st.be->deferred(st.be->priv, token);
	}
}

void rgroup__lock(void)
{
	core_lock();
}

int rgroup__trylock(void)
{
	int r;

	rgroup__in_lib++;
	r = pthread_mutex_trylock(&lock);
	if (r)
		rgroup__in_lib--;
	return r;
}

void rgroup__unlock(void)
{
	core_unlock();
}

struct rgroup__node *rgroup__tree(void)
{
	return st.top;
}

pid_t rgroup__keeper_tid(void)
{
	return __atomic_load_n(&st.keeper_tid, __ATOMIC_RELAXED); /* the governor, unlocked */
}

/* ---- Set-up --------------------------------------------------------- */

/* Chosen automatically, best first: the kernel enforces; where the process
 * can write no cgroup, the governor does it inside the process. */
static const struct rgroup__backend *const backends[] = {
	&rgroup__backend_cgroup2,
	&rgroup__backend_cgroup1,
	&rgroup__backend_governor,
};

static const struct rgroup__backend *backend_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

/* The first backend that can enforce weights for this process, or the one
 * RGROUP_BACKEND names. secure_getenv(): a setuid/setgid program ignores
 * the environment (DESIGN.md §3). */
static const struct rgroup__backend *choose_backend(char *why, size_t len)
{
	const char *forced = secure_getenv("RGROUP_BACKEND");
	const struct rgroup__backend *be;

	if (forced && *forced) {
		be = backend_by_name(forced);
		if (!be) {
			rgroup__why(why, len, -ENOENT, "RGROUP_BACKEND=%s names no backend (known: cgroup2, cgroup1, governor)", forced);
			return NULL;
		}
		return be->probe(be->priv, why, len) == 0 ? be : NULL;
	}
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i]->probe(backends[i]->priv, why, len) == 0)
			return backends[i];
	return NULL;
}

static void thread_exit(void *p);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void init_once(void)
{
	char why[512];

	cpu_set_t cpus;

	st.pid = getpid();
	spin_ok = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 1;
	if (pthread_key_create(&st.key, thread_exit) != 0)
		return; /* st.be stays NULL: ENOTSUP, never a crash */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	core_lock();
	st.be = choose_backend(why, sizeof(why));
	core_unlock();
}

static void init(void)
{
	pthread_once(&once, init_once);
}

uint64_t rgroup__self_starttime(void)
{
	char buf[1024];
	uint64_t t = 0;

	if (rgroup__read_path("/proc/self/stat", buf, sizeof(buf)) > 0)
		rgroup__parse_stat_starttime(buf, &t);
	return t;
}

/* ---- The tree ------------------------------------------------------- */

static void link_child(struct rgroup__node **head, struct rgroup__node *n)
{
	n->prev = NULL;
	n->next = *head;
	if (*head)
		(*head)->prev = n;
	*head = n;
}

static void unlink_child(struct rgroup__node **head, struct rgroup__node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		*head = n->next;
	if (n->next)
		n->next->prev = n->prev;
}

static struct rgroup__node **siblings_of(struct rgroup__node *n)
{
	return n->parent ? &n->parent->children : &st.top;
}

/* Pre-order walk: parents before children. fn returns non-zero to stop. */
static int walk_pre(struct rgroup__node *list, int (*fn)(struct rgroup__node *, void *),
		    void *arg)
{
	for (struct rgroup__node *n = list, *next; n; n = next) {
		next = n->next;
		int r = fn(n, arg);
		if (r)
			return r;
		r = walk_pre(n->children, fn, arg);
		if (r)
			return r;
	}
	return 0;
}

/* Post-order walk: children before parents; fn may free n. */
static void walk_post(struct rgroup__node *list, void (*fn)(struct rgroup__node *, void *),
		      void *arg)
{
	for (struct rgroup__node *n = list, *next; n; n = next) {
		next = n->next;
		walk_post(n->children, fn, arg);
		fn(n, arg);
	}
}

static int match_id(struct rgroup__node *n, void *arg)
{
	struct { rgroup_id_t id; struct rgroup__node *found; } *q = arg;

	if (n->id != q->id)
		return 0;
	q->found = n;
	return 1;
}

static struct rgroup__node *node_by_id(rgroup_id_t id)
{
	struct { rgroup_id_t id; struct rgroup__node *found; } q = { id, NULL };

	walk_pre(st.top, match_id, &q);
	return q.found;
}

static int match_name(struct rgroup__node *n, void *arg)
{
	struct { const char *name; struct rgroup__node *found; } *q = arg;

	if (strcmp(n->name, q->name) != 0)
		return 0;
	q->found = n;
	return 1;
}

static int match_tid(struct rgroup__node *n, void *arg)
{
	struct { pid_t tid; struct rgroup__node *found; } *q = arg;

	for (struct rgroup__thread *t = n->threads; t; t = t->next)
		if (t->tid == q->tid) {
			q->found = n;
			return 1;
		}
	return 0;
}

static void track(struct rgroup__node *n)
{
	self.tid = self_tid();
	self.node = n;
	self.known = 1;
	self.prev = NULL;
	self.next = n->threads;
	if (n->threads)
		n->threads->prev = &self;
	n->threads = &self;
	n->nthreads++;
	pthread_setspecific(st.key, &self);
}

static void untrack(struct rgroup__thread *t)
{
	struct rgroup__node *n = t->node;

	if (t->prev)
		t->prev->next = t->next;
	else
		n->threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	n->nthreads--;
	t->node = NULL;
}

/*
 * The group thread tid is in, or NULL. Tracked threads are found in the
 * tree; others (plain pthread_create inside an rgroup) are asked of the
 * kernel, and the caller itself is then adopted so its exit is seen.
 * Lock held.
 */
static struct rgroup__node *node_of(pid_t tid, int *err)
{
	struct { pid_t tid; struct rgroup__node *found; } q = { tid, NULL };
	struct { const char *name; struct rgroup__node *found; } qn;
	char name[64];
	int r;

	*err = 0;
	/* Membership is forever (rule 2): once a thread's group is known, it
	 * stays that (a thread in no rgroup never enters one). */
	if (self.known && tid == self.tid)
		return self.node;
	if (!st.ngroups || !st.be) {
		if (tid == self_tid()) {
			self.tid = tid;
			self.known = 1;
		}
		return NULL;
	}
	if (walk_pre(st.top, match_tid, &q))
		return q.found;
	r = st.be->group_of(st.be->priv, tid, name, sizeof(name));
	if (r == 0 && tid == self_tid()) {
		self.tid = tid;
		self.known = 1;
	}
	if (r <= 0) {
		*err = r;
		return NULL;
	}
	qn.name = name;
	qn.found = NULL;
	walk_pre(st.top, match_name, &qn);
	if (qn.found && tid == self_tid())
		track(qn.found);
	return qn.found;
}

/* The CPU time of n's tracked threads, exited ones included, and of its
 * children (used where the backend cannot count per group). */
static uint64_t clock_usage(const struct rgroup__node *n)
{
	uint64_t sum = n->usage_dead_ns;
	struct timespec ts;

	for (const struct rgroup__thread *t = n->threads; t; t = t->next) {
		/* The kernel's per-thread CPU clock id for a tid, as glibc
		 * builds it for pthread_getcpuclockid(). */
		clockid_t cid = (clockid_t)((~(unsigned int)t->tid << 3) | 6);
		if (clock_gettime(cid, &ts) == 0)
			sum += (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
	}
	for (const struct rgroup__node *c = n->children; c; c = c->next)
		sum += clock_usage(c);
	return sum;
}

static uint64_t node_usage(const struct rgroup__node *n)
{
	uint64_t ns;

	if (st.be && st.be->usage(st.be->priv, n, &ns) == 0)
		return ns - (ns >= n->usage_base_ns ? n->usage_base_ns : ns);
	return clock_usage(n);
}

static void node_free(struct rgroup__node *n)
{
	free(n->path);
	free(n);
}

/* Take n out of the tree (its kernel group stays). Lock held. */
static void detach_node(struct rgroup__node *n)
{
	if (n->parent) {
		n->parent->usage_dead_ns += clock_usage(n);
		n->parent->nchildren--;
	}
	unlink_child(siblings_of(n), n);
	st.ngroups--;
}

static void free_node(struct rgroup__node *n)
{
	detach_node(n);
	node_free(n);
}

/* ---- Spare groups: the creation fast path ---------------------------- */

/*
 * mkdir and rmdir of a cgroup cost more than creating a thread, so a group
 * that empties while the process is busy creating rgroups is kept, below
 * the same parent, for the next RGROUP_NEW there. Spares are not rgroups
 * (no thread, not listed) and vanish SPARE_MS after the last creation and
 * at exit, so rule 3 holds for anyone who looks a moment later.
 */
static long ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

static struct rgroup__node **pool_of(struct rgroup__node *parent)
{
	return parent ? &parent->spares : &st.top_spares;
}

/* Remove the spares in one pool; returns how many could not go yet. */
static int drop_pool(struct rgroup__node **pool, int evacuate)
{
	int busy = 0;

	for (struct rgroup__node *n = *pool, *next; n; n = next) {
		next = n->next;
		if (evacuate)
			st.be->evacuate(st.be->priv, n);
		if (st.be->destroy(st.be->priv, n) == 0) {
			unlink_child(pool, n);
			node_free(n);
			st.nspares--;
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
	walk_pre(st.top, drop_pool_of, &busy);
	busy += drop_pool(&st.top_spares, evacuate);
	return busy;
}

static int any_spares(void)
{
	return st.top_spares != NULL || (st.ngroups && walk_pre(st.top, has_pool, NULL));
}

/* Keep an emptied group as a spare if the process is creating groups;
 * returns 1 if kept. Lock held. */
static int recycle(struct rgroup__node *n)
{
	struct rgroup__node **pool = pool_of(n->parent);
	unsigned int len = 0;
	uint64_t ns;

	if (!n->bound || st.dismantled || st.nspares >= SPARE_MAX_TOTAL ||
	    ms_since(&st.last_create) >= SPARE_MS)
		return 0;
	for (struct rgroup__node *p = *pool; p; p = p->next)
		len++;
	if (len >= SPARE_MAX)
		return 0;
	detach_node(n);
	n->usage_dead_ns = 0;
	n->throttled_ns = 0;
	n->unthrottled = 0;
	n->usage_base_ns = st.be->usage(st.be->priv, n, &ns) == 0 ? ns : 0;
	link_child(pool, n);
	st.nspares++;
	return 1;
}

/* A spare below parent, ready to become a group at nice `nice`. */
static struct rgroup__node *take_spare(struct rgroup__node *parent, int nice)
{
	struct rgroup__node **pool = pool_of(parent);
	struct rgroup__node *n = *pool;

	if (!n)
		return NULL;
	unlink_child(pool, n);
	st.nspares--;
	if (n->nice != nice && st.be->set_nice(st.be->priv, n, nice) < 0) {
		if (st.be->destroy(st.be->priv, n) == 0) {
			node_free(n);
		} else {
			link_child(pool, n);
			st.nspares++;
		}
		return NULL;
	}
	n->nice = nice;
	return n;
}

/* ---- The keeper: auto-destruction and migration --------------------- */

static void reap_one(struct rgroup__node *n, void *arg)
{
	int *busy = arg;

	if (n->nthreads || n->pending || n->children)
		return;
	/* Its own spares go first: a directory with children cannot. */
	if (n->spares && drop_pool(&n->spares, 0)) {
		(*busy)++;
		return;
	}
	if (recycle(n))
		return;
	if (st.be->destroy(st.be->priv, n) == 0)
		free_node(n);
	else
		(*busy)++; /* a thread is still on its way out */
}

/* Remove every group with no threads and no children; 0 when none is
 * left waiting. Lock held. */
static int reap(void)
{
	int busy = 0;

	walk_post(st.top, reap_one, &busy);
	return busy;
}

static void unbind_one(struct rgroup__node *n, void *arg)
{
	int evacuate = *(int *)arg;

	if (evacuate)
		st.be->evacuate(st.be->priv, n);
	st.be->destroy(st.be->priv, n);
}

static int bind_one(struct rgroup__node *n, void *arg)
{
	int *err = arg;
	int r = st.be->create(st.be->priv, n);

	if (r < 0) {
		*err = r;
		return 0; /* keep going: bind what can be bound */
	}
	for (struct rgroup__thread *t = n->threads; t; t = t->next)
		st.be->place(st.be->priv, n, t->tid);
	return 0;
}

/* Remove the tree's kernel groups, keeping the tree. evacuate: move their
 * threads to the sgroup first (exit, exec); after a migration the kernel
 * has already moved them. Lock held. */
static void unbind_all(int evacuate)
{
	drop_spares(evacuate);
	walk_post(st.top, unbind_one, &evacuate);
}

/* Make the tree's kernel groups again and put the tracked threads back. */
static int bind_all(void)
{
	int err = 0;

	walk_pre(st.top, bind_one, &err);
	return err;
}

/* Rule 8: the process was moved to another sgroup; rebuild the tree there.
 * Lock held; the keeper thread (in the sgroup) calls it. */
static void follow_migration(void)
{
	if (st.attached && st.be->moved(st.be->priv) != 1)
		return;
	if (st.attached) {
		unbind_all(0);
		st.be->detach(st.be->priv);
		st.attached = 0;
	}
	if (st.be->attach(st.be->priv) < 0)
		return; /* retried on the next tick */
	st.attached = 1;
	bind_all();
}

static void *keeper_main(void *unused)
{
	struct timespec ts;

	core_lock();
	__atomic_store_n(&st.keeper_tid, self_tid(), __ATOMIC_RELAXED);
	/* The keeper is created by whichever thread made an rgroup; it
	 * belongs in the sgroup, never in an rgroup. */
	if (st.attached)
		st.be->place(st.be->priv, NULL, sys_gettid());
	while (!st.shutdown && st.keeper_running && (st.ngroups || any_spares())) {
		long ms = KEEPER_IDLE_MS;
		if (st.reap_wanted)
			ms = KEEPER_REAP_MS;
		else if (any_spares())
			ms = SPARE_MS - ms_since(&st.last_create) + 1;
		if (ms < KEEPER_REAP_MS)
			ms = KEEPER_REAP_MS;
		st.spare_timer = any_spares();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		/* The deadline is on the monotonic clock: the condition variable
		 * must be told (its default clock is the realtime one). */
		pthread_cond_clockwait(&st.cond, &lock, CLOCK_MONOTONIC, &ts);
		if (st.shutdown || st.dismantled || !st.keeper_running)
			break;
		int busy = reap();
		if (ms_since(&st.last_create) >= SPARE_MS)
			busy += drop_spares(0);
		st.reap_wanted = busy > 0;
		if (st.ngroups && ms_since(&st.last_check) >= KEEPER_IDLE_MS) {
			clock_gettime(CLOCK_MONOTONIC, &st.last_check);
			follow_migration();
		}
	}
	st.keeper_running = 0;
	__atomic_store_n(&st.keeper_tid, 0, __ATOMIC_RELAXED);
	core_unlock();
	return NULL;
}

int rgroup__start_helper(void *(*fn)(void *))
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int r;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* The application's signals are not the library's threads' to take
	 * (and the governor's own signal must never reach the governor). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t, &attr, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return r;
}

/* Lock held. */
static int start_keeper(void)
{
	int r;

	if (st.keeper_running)
		return 0;
	r = rgroup__start_helper(keeper_main);
	if (r == 0)
		st.keeper_running = 1;
	return r;
}

static void thread_exit(void *p)
{
	struct rgroup__thread *t = p;
	struct timespec ts;

	core_lock();
	if (t->node) {
		struct rgroup__node *n = t->node;
		if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
			n->usage_dead_ns += (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
		untrack(t);
		/* The last thread out: while the process keeps making groups,
		 * the group becomes a spare at once, ready for the next
		 * RGROUP_NEW; otherwise the keeper removes it. */
		if (!n->nthreads && !n->children && !n->pending && !n->spares &&
		    recycle(n)) {
			if (!st.spare_timer && !st.reap_wanted)
				pthread_cond_signal(&st.cond); /* spares expire */
		} else if (!n->nthreads && !n->children) {
			st.reap_wanted = 1;
			pthread_cond_signal(&st.cond);
		}
	}
	core_unlock();
}

/* ---- fork, exec and exit (rules 3 and 7) ----------------------------- */

static void fork_prepare(void)
{
	core_lock();
}

static void fork_parent(void)
{
	core_unlock();
}

/* In a fork child: close a node's descriptors (async-signal-safe); the
 * directories are the parent's, never removed here. */
static void forget(struct rgroup__node *n, void *arg)
{
	if (n->placefd >= 0)
		close(n->placefd);
	if (n->weightfd >= 0)
		close(n->weightfd);
	for (struct rgroup__node *sp = n->spares; sp; sp = sp->next)
		forget(sp, NULL);
}

static int forget_pre(struct rgroup__node *n, void *arg)
{
	forget(n, arg);
	return 0;
}

static void free_tree(struct rgroup__node *list)
{
	for (struct rgroup__node *n = list, *next; n; n = next) {
		next = n->next;
		free_tree(n->children);
		free_tree(n->spares);
		node_free(n);
	}
}

/*
 * Rule 7: the child begins in the sgroup with an empty tree. This runs in
 * the child of a multi-threaded process, so it only closes descriptors and
 * resets state; the parent's tree is freed when the child makes its first
 * group (free() here is not async-signal-safe). The lock, taken in
 * fork_prepare() by this very thread, is released, not re-initialised.
 */
static void fork_child(void)
{
	if (st.be && st.attached)
		st.be->fork_child(st.be->priv);
	walk_pre(st.top, forget_pre, NULL);
	for (struct rgroup__node *n = st.top_spares; n; n = n->next)
		forget(n, NULL);
	st.stale_top = st.top;
	st.stale_spares = st.top_spares;
	st.top = NULL;
	st.top_spares = NULL;
	st.nspares = 0;
	st.ngroups = 0;
	st.attached = 0;
	st.keeper_running = 0;
	st.keeper_tid = 0;
	st.reap_wanted = 0;
	st.pid = getpid();
	st.starttime = 0;
	self.node = NULL;
	self.known = 1;
	self.tid = sys_gettid();
	pthread_cond_init(&st.cond, NULL);
	core_unlock();
}

/*
 * exec replaces the process: the new program starts in the sgroup and our
 * groups must not outlive the old image. So before an exec every group is
 * emptied into the sgroup and removed; the lock stays held so nobody makes
 * another, and if the exec fails the tree is rebuilt as it was.
 * In a vfork child (another process sharing our memory) only the child
 * itself moves: it must not touch the parent's tree or lock.
 */
void rgroup__exec_prepare(void)
{
	if (!st.be)
		return;
	if ((pid_t)syscall(SYS_getpid) != st.pid) {
		if (self.node && st.attached)
			st.be->place_self(st.be->priv, NULL);
		return;
	}
	core_lock();
	if ((st.ngroups || any_spares()) && st.attached) {
		unbind_all(1);
		st.dismantled = 1;
	}
	if (st.be->quiesce)
		st.be->quiesce(st.be->priv);
}

void rgroup__exec_failed(void)
{
	if (!st.be || (pid_t)syscall(SYS_getpid) != st.pid)
		return;
	if (st.dismantled) {
		bind_all();
		st.dismantled = 0;
		pthread_cond_signal(&st.cond);
	}
	core_unlock();
}

/* At exit: leave nothing behind (rule 3). Threads still running are moved
 * to the sgroup for their last moments. */
__attribute__((destructor)) static void rgroup_fini(void)
{
	if (!st.be)
		return;
	core_lock();
	st.shutdown = 1;
	if (st.attached) {
		unbind_all(1);
		st.be->detach(st.be->priv);
		st.attached = 0;
	}
	pthread_cond_signal(&st.cond);
	core_unlock();
}

/* ---- Thread creation (rule 1) ---------------------------------------- */

/*
 * What a new thread needs to start. With RGROUP_NEW the creator waits for
 * the thread to place itself (so that an error can still be returned and
 * no thread runs), and the record lives on the creator's stack. Without the
 * flag the creator does not wait, so the record is on the heap and the
 * thread frees it.
 */
struct start {
	void *(*fn)(void *);
	void *arg;
	struct rgroup__node *node;
	int place;      /* RGROUP_NEW: the thread moves itself into node */
	int result;
	int state;      /* only when place: 0 pending, 1 done, 2 creator asleep */
};

/*
 * The creator waits for the new thread's placement. The thread needs a few
 * microseconds on another CPU, while putting the creator to sleep and
 * waking it costs tens of microseconds on a virtual machine: so spin a
 * little first (only with a second CPU to run the thread), then sleep on a
 * futex. After the new thread marks `state` done it touches nothing of the
 * creator's but, if the creator sleeps, the futex word (a spurious wake-up
 * of a stale address is harmless to every futex user).
 */
static void handoff_wait(int *state)
{
	struct timespec t0, t;
	int expect = 0;

	if (spin_ok) {
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

static void *trampoline(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;
	struct rgroup__node *n = s->node;
	int place = s->place, r = 0;

	if (place)
		r = st.be->place(st.be->priv, n, self_tid());
	core_lock();
	if (r == 0) {
		track(n);
		n->pending--;
	}
	core_unlock();
	if (!place) {
		free(s);
	} else {
		s->result = r;
		handoff_post(&s->state); /* s is gone after this */
		if (r)
			return NULL;
	}
	return fn(arg);
}

/* Undo a group made for a thread that did not start. Lock held. */
static void abandon(struct rgroup__node *n, int made)
{
	n->pending--;
	if (made && !n->nthreads && !n->children &&
	    st.be->destroy(st.be->priv, n) == 0)
		free_node(n);
	else if (made)
		st.reap_wanted = 1;
}

static int my_nice(void)
{
	int saved = errno, nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, self_tid());
	if (nice == -1 && errno)
		nice = 0;
	errno = saved;
	return nice;
}

/* Lock held. Make a new node under parent and its kernel group. */
static int make_group(struct rgroup__node *parent, struct rgroup__node **out)
{
	struct rgroup__node *n;
	int r, nice;

	if (!st.attached) {
		r = st.be->attach(st.be->priv);
		if (r < 0)
			return r;
		st.attached = 1;
	} else if (!st.ngroups && !st.keeper_running && st.be->moved(st.be->priv) == 1) {
		/* Moved while we had no groups: just follow. */
		st.be->detach(st.be->priv);
		st.attached = 0;
		r = st.be->attach(st.be->priv);
		if (r < 0)
			return r;
		st.attached = 1;
	}
	if (!st.starttime)
		st.starttime = rgroup__self_starttime();
	/* A fork child frees its copy of the parent's tree here, at its first
	 * group, not earlier: a child that only asks or execs never calls the
	 * allocator, which is not safe in every fork child (sanitizers). */
	if (st.stale_top || st.stale_spares) {
		free_tree(st.stale_top);
		free_tree(st.stale_spares);
		st.stale_top = st.stale_spares = NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &st.last_create);
	/* Rule 6: a top-level rgroup starts at its creator's nice, a nested
	 * one at 0 (it only divides time the process already has). */
	nice = parent ? 0 : my_nice();
	if ((parent && parent->depth >= RGROUP__MAX_DEPTH) ||
	    st.ngroups >= RGROUP__MAX_GROUPS)
		return -ENOSPC;
	n = take_spare(parent, nice);
	if (n) {
		n->id = ++st.next_id;
		goto linked;
	}
	r = rgroup__fault();
	if (r < 0)
		return r;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->id = ++st.next_id;
	n->parent = parent;
	n->depth = parent ? parent->depth + 1 : 1;
	n->nice = nice;
	n->placefd = n->weightfd = -1;
	rgroup__format_dirname(n->name, sizeof(n->name), st.pid, st.starttime, n->id);
	if (parent)
		r = asprintf(&n->path, "%s/%s", parent->path, n->name);
	else
		r = (n->path = strdup(n->name)) ? 0 : -1;
	if (r < 0 || strlen(n->path) >= PATH_MAX - 32) {
		node_free(n);
		return r < 0 ? -ENOMEM : -ENAMETOOLONG;
	}
	r = st.be->create(st.be->priv, n);
	if (r < 0) {
		node_free(n);
		return r;
	}
linked:
	link_child(parent ? &parent->children : &st.top, n);
	if (parent)
		parent->nchildren++;
	st.ngroups++;
	*out = n;
	return 0;
}

RGROUP__EXPORT int rgroup_thread_create(pthread_t *thread, const pthread_attr_t *attr,
					unsigned int flags, void *(*fn)(void *), void *arg)
{
	struct start local = { .fn = fn, .arg = arg }, *s = &local;
	struct rgroup__node *n;
	int r, err, detached = 0;

	if ((flags & ~RGROUP_NEW) || !thread || !fn)
		return EINVAL;
	init();
	core_lock();
	n = node_of(self_tid(), &err);
	if (!(flags & RGROUP_NEW) && !n) {
		/* A plain thread in the sgroup: nothing to track. */
		core_unlock();
		return pthread_create(thread, attr, fn, arg);
	}
	if (flags & RGROUP_NEW) {
		if (!st.be || st.shutdown) {
			core_unlock();
			return ENOTSUP;
		}
		r = make_group(n, &n);
		if (r < 0) {
			core_unlock();
			return -r;
		}
		local.place = 1;
	} else {
		s = malloc(sizeof(*s));
		if (!s) {
			core_unlock();
			return EAGAIN;
		}
		*s = local;
	}
	n->pending++;
	s->node = n;
	r = start_keeper();
	if (r)
		goto undo;
	core_unlock();

	if (!s->place) {
		r = pthread_create(thread, attr, trampoline, s);
		if (r == 0)
			return 0;
		core_lock();
		goto undo;
	}
	r = -rgroup__fault();
	if (r == 0)
		r = pthread_create(thread, attr, trampoline, s);
	if (r == 0) {
		handoff_wait(&s->state);
		r = s->result < 0 ? -s->result : 0;
		if (r) {
			/* The thread ran none of fn and is ending; collect it. */
			if (attr)
				pthread_attr_getdetachstate(attr, &detached);
			if (detached != PTHREAD_CREATE_DETACHED)
				pthread_join(*thread, NULL);
		}
	}
	if (r == 0)
		return 0;
	core_lock();
undo:
	abandon(n, s->place);
	if (s != &local)
		free(s);
	core_unlock();
	return r;
}

/* ---- PRIO_RGRP (rules 5 and 6) ---------------------------------------- */

/* The kernel's can_nice(): RLIMIT_NICE allows nice values down to
 * 20 - rlim_cur; CAP_SYS_NICE allows any. */
static int can_nice(int nice)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	struct rlimit rl;

	if (getrlimit(RLIMIT_NICE, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - nice) <= rl.rlim_cur))
		return 1;
	if (syscall(SYS_capget, &h, d) == 0 &&
	    (d[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32))))
		return 1;
	return 0;
}

/* Lock held on success: the group of thread `who` (0: the caller). A
 * thread the library tracks is one of ours; any other tid is asked of the
 * kernel first (tgkill with no signal), so that another process's thread
 * gets ESRCH, never EINVAL. */
static int lookup_locked(id_t who, struct rgroup__node **out)
{
	struct { pid_t tid; struct rgroup__node *found; } q = { (pid_t)who, NULL };
	pid_t tid = who ? (pid_t)who : self_tid();
	int err;

	if (who > INT_MAX)
		return -ESRCH;
	init();
	core_lock();
	if (who && tid != self_tid() && !walk_pre(st.top, match_tid, &q) &&
	    syscall(SYS_tgkill, st.pid, tid, 0) < 0) {
		core_unlock();
		return -ESRCH;
	}
	*out = q.found ? q.found : node_of(tid, &err);
	if (!*out) {
		core_unlock();
		return err == -ESRCH ? -ESRCH : -EINVAL;
	}
	return 0;
}

RGROUP__EXPORT int rgroup_setpriority(int which, id_t who, int prio)
{
	struct rgroup__node *n;
	int nice, r;

	if (which != PRIO_RGRP)
		return setpriority(which, who, prio);
	nice = rgroup__clamp_nice(prio);
	r = lookup_locked(who, &n);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	if (!n->parent && nice < my_nice() && !can_nice(nice))
		r = -EACCES;
	else if (st.dismantled || !n->bound)
		r = -ENODEV;
	else
		r = st.be->set_nice(st.be->priv, n, nice);
	if (r == 0)
		n->nice = nice;
	else if (r == -ENOENT || r == -ENODEV)
		st.be->destroy(st.be->priv, n); /* removed by hand: it is gone */
	core_unlock();
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

RGROUP__EXPORT int rgroup_getpriority(int which, id_t who)
{
	struct rgroup__node *n;
	int r;

	if (which != PRIO_RGRP)
		return getpriority(which, who);
	r = lookup_locked(who, &n);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	r = n->nice;
	core_unlock();
	return r;
}

/* ---- Introspection ---------------------------------------------------- */

RGROUP__EXPORT const char *rgroup_backend(void)
{
	init();
	return st.be ? st.be->name : "none";
}

RGROUP__EXPORT int rgroup_of(pid_t tid, rgroup_id_t *id)
{
	struct rgroup__node *n;
	int r;

	if (!id || tid < 0)
		return -EINVAL;
	r = lookup_locked((id_t)tid, &n);
	if (r == -EINVAL) {
		*id = 0;
		return 0;
	}
	if (r < 0)
		return r;
	*id = n->id;
	core_unlock();
	return 0;
}

RGROUP__EXPORT int rgroup_info(rgroup_id_t id, struct rgroup_info *info)
{
	struct rgroup_info out = { .sz = sizeof(out) };
	struct rgroup__node *n;
	size_t sz;

	if (!info || info->sz < offsetof(struct rgroup_info, name))
		return -EINVAL;
	sz = info->sz < sizeof(out) ? info->sz : sizeof(out);
	init();
	core_lock();
	n = node_by_id(id);
	if (!n) {
		core_unlock();
		return -ENOENT;
	}
	out.id = n->id;
	out.parent = n->parent ? n->parent->id : 0;
	out.nice = n->nice;
	out.weight = rgroup__nice_to_weight(n->nice);
	out.depth = n->depth;
	out.nthreads = n->nthreads;
	out.nchildren = n->nchildren;
	out.usage_ns = node_usage(n);
	out.throttled_ns = n->throttled_ns;
	out.unthrottled = n->unthrottled;
	snprintf(out.name, sizeof(out.name), "%s", n->name);
	core_unlock();
	out.sz = sz;
	memcpy(info, &out, sz);
	return 0;
}

static int collect(struct rgroup__node *n, void *arg)
{
	struct { rgroup_id_t *ids; size_t max, count; } *c = arg;

	if (c->count < c->max)
		c->ids[c->count] = n->id;
	c->count++;
	return 0;
}

RGROUP__EXPORT int rgroup_list(rgroup_id_t *ids, size_t max)
{
	struct { rgroup_id_t *ids; size_t max, count; } c = { ids, ids ? max : 0, 0 };

	init();
	core_lock();
	walk_pre(st.top, collect, &c);
	core_unlock();
	return c.count > INT_MAX ? INT_MAX : (int)c.count;
}

RGROUP__EXPORT int rgroup_probe(const char *name, char *why, size_t len)
{
	const struct rgroup__backend *be;
	char buf[512];
	int r;

	if (!why || !len) {
		why = buf;
		len = sizeof(buf);
	}
	why[0] = '\0';
	init();
	core_lock();
	if (!name) {
		be = choose_backend(why, len);
		r = be ? 0 : -ENOTSUP;
	} else if ((be = backend_by_name(name))) {
		r = be->probe(be->priv, why, len);
	} else {
		r = rgroup__why(why, len, -ENOENT, "no backend named '%s' in this build (known: cgroup2, cgroup1, governor)", name);
	}
	core_unlock();
	return r;
}

RGROUP__EXPORT int rgroup_gc(const char *dir)
{
	int fd, r;

	if (!dir)
		return -EINVAL;
	fd = rgroup__cg_open_dir(dir);
	if (fd < 0)
		return fd;
	r = rgroup__cg_gc(fd);
	close(fd);
	return r;
}

/* For publish.c (the governor's state file): the usage rgroup_info()
 * reports. Lock held. */
uint64_t rgroup__node_usage(const struct rgroup__node *n)
{
	return node_usage(n);
}
