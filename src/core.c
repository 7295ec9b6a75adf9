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
#include <pthread.h>
#include <semaphore.h>
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
	unsigned int ngroups;
	pthread_key_t key;
	pthread_cond_t cond;              /* wakes the keeper */
	int keeper_running;
	int reap_wanted;
} st = { .cond = PTHREAD_COND_INITIALIZER };

static __thread struct rgroup__thread self;

static pid_t sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ---- Set-up --------------------------------------------------------- */

static const struct rgroup__backend *const backends[] = {
	&rgroup__backend_cgroup2,
	&rgroup__backend_cgroup1,
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
			rgroup__why(why, len, -ENOENT, "RGROUP_BACKEND=%s names no backend (known: cgroup2, cgroup1)", forced);
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

	st.pid = getpid();
	if (pthread_key_create(&st.key, thread_exit) != 0)
		return; /* st.be stays NULL: ENOTSUP, never a crash */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	pthread_mutex_lock(&lock);
	st.be = choose_backend(why, sizeof(why));
	pthread_mutex_unlock(&lock);
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
	self.tid = sys_gettid();
	self.node = n;
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
	if (tid == self.tid && self.node)
		return self.node;
	if (!st.ngroups || !st.be)
		return NULL;
	if (walk_pre(st.top, match_tid, &q))
		return q.found;
	r = st.be->group_of(st.be->priv, tid, name, sizeof(name));
	if (r <= 0) {
		*err = r;
		return NULL;
	}
	qn.name = name;
	qn.found = NULL;
	walk_pre(st.top, match_name, &qn);
	if (qn.found && tid == sys_gettid())
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
		return ns;
	return clock_usage(n);
}

static void free_node(struct rgroup__node *n)
{
	if (n->parent) {
		n->parent->usage_dead_ns += clock_usage(n);
		n->parent->nchildren--;
	}
	unlink_child(siblings_of(n), n);
	st.ngroups--;
	free(n);
}

/* ---- The keeper: auto-destruction and migration --------------------- */

static void reap_one(struct rgroup__node *n, void *arg)
{
	int *busy = arg;

	if (n->nthreads || n->pending || n->children)
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

	pthread_mutex_lock(&lock);
	/* The keeper is created by whichever thread made an rgroup; it
	 * belongs in the sgroup, never in an rgroup. */
	if (st.attached)
		st.be->place(st.be->priv, NULL, sys_gettid());
	while (!st.shutdown && st.ngroups && st.keeper_running) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		long ms = st.reap_wanted ? KEEPER_REAP_MS : KEEPER_IDLE_MS;
		ts.tv_nsec += ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&st.cond, &lock, &ts);
		if (st.shutdown || st.dismantled || !st.keeper_running)
			break;
		st.reap_wanted = reap() > 0;
		if (st.ngroups)
			follow_migration();
	}
	st.keeper_running = 0;
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Lock held. */
static int start_keeper(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int r;

	if (st.keeper_running)
		return 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* The application's signals are not the keeper's to take. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t, &attr, keeper_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r == 0)
		st.keeper_running = 1;
	return r;
}

static void thread_exit(void *p)
{
	struct rgroup__thread *t = p;
	struct timespec ts;

	pthread_mutex_lock(&lock);
	if (t->node) {
		struct rgroup__node *n = t->node;
		if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
			n->usage_dead_ns += (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
		untrack(t);
		if (!n->nthreads && !n->children) {
			st.reap_wanted = 1;
			pthread_cond_signal(&st.cond);
		}
	}
	pthread_mutex_unlock(&lock);
}

/* ---- fork, exec and exit (rules 3 and 7) ----------------------------- */

static void fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static void forget(struct rgroup__node *n, void *arg)
{
	/* The directories are the parent's: close, never remove. */
	if (n->dirfd >= 0)
		close(n->dirfd);
	if (n->placefd >= 0)
		close(n->placefd);
	if (n->weightfd >= 0)
		close(n->weightfd);
	free(n);
}

/* Rule 7: the child begins in the sgroup with an empty tree. */
static void fork_child(void)
{
	if (st.be && st.attached)
		st.be->fork_child(st.be->priv);
	walk_post(st.top, forget, NULL);
	st.top = NULL;
	st.ngroups = 0;
	st.attached = 0;
	st.keeper_running = 0;
	st.reap_wanted = 0;
	st.pid = getpid();
	st.starttime = 0;
	self.node = NULL;
	self.tid = sys_gettid();
	pthread_mutex_init(&lock, NULL);
	pthread_cond_init(&st.cond, NULL);
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
	pthread_mutex_lock(&lock);
	if (st.ngroups && st.attached) {
		unbind_all(1);
		st.dismantled = 1;
	}
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
	pthread_mutex_unlock(&lock);
}

/* At exit: leave nothing behind (rule 3). Threads still running are moved
 * to the sgroup for their last moments. */
__attribute__((destructor)) static void rgroup_fini(void)
{
	if (!st.be)
		return;
	pthread_mutex_lock(&lock);
	st.shutdown = 1;
	if (st.attached) {
		unbind_all(1);
		st.be->detach(st.be->priv);
		st.attached = 0;
	}
	pthread_cond_signal(&st.cond);
	pthread_mutex_unlock(&lock);
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
	sem_t done;     /* only when place: the creator waits for result */
};

static void *trampoline(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;
	struct rgroup__node *n = s->node;
	int place = s->place, r = 0;

	if (place)
		r = st.be->place(st.be->priv, n, sys_gettid());
	pthread_mutex_lock(&lock);
	if (r == 0) {
		track(n);
		n->pending--;
	}
	pthread_mutex_unlock(&lock);
	if (!place) {
		free(s);
	} else {
		s->result = r;
		sem_post(&s->done); /* s is gone after this */
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
	nice = getpriority(PRIO_PROCESS, sys_gettid());
	if (nice == -1 && errno)
		nice = 0;
	errno = saved;
	return nice;
}

/* Lock held. Make a new node under parent and its kernel group. */
static int make_group(struct rgroup__node *parent, struct rgroup__node **out)
{
	struct rgroup__node *n;
	int r;

	if (!st.attached) {
		r = st.be->attach(st.be->priv);
		if (r < 0)
			return r;
		st.attached = 1;
	} else if (!st.ngroups && st.be->moved(st.be->priv) == 1) {
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
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->id = ++st.next_id;
	n->parent = parent;
	n->depth = parent ? parent->depth + 1 : 1;
	/* Rule 6: a top-level rgroup starts at its creator's nice, a nested
	 * one at 0 (it only divides time the process already has). */
	n->nice = parent ? 0 : my_nice();
	n->dirfd = n->placefd = n->weightfd = -1;
	rgroup__format_dirname(n->name, sizeof(n->name), st.pid, st.starttime, n->id);
	r = st.be->create(st.be->priv, n);
	if (r < 0) {
		free(n);
		return r;
	}
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
	pthread_mutex_lock(&lock);
	n = node_of(sys_gettid(), &err);
	if (!(flags & RGROUP_NEW) && !n) {
		/* A plain thread in the sgroup: nothing to track. */
		pthread_mutex_unlock(&lock);
		return pthread_create(thread, attr, fn, arg);
	}
	if (flags & RGROUP_NEW) {
		if (!st.be || st.shutdown) {
			pthread_mutex_unlock(&lock);
			return ENOTSUP;
		}
		r = make_group(n, &n);
		if (r < 0) {
			pthread_mutex_unlock(&lock);
			return -r;
		}
		local.place = 1;
	} else {
		s = malloc(sizeof(*s));
		if (!s) {
			pthread_mutex_unlock(&lock);
			return EAGAIN;
		}
		*s = local;
	}
	n->pending++;
	s->node = n;
	r = start_keeper();
	if (r)
		goto undo;
	pthread_mutex_unlock(&lock);

	if (!s->place) {
		r = pthread_create(thread, attr, trampoline, s);
		if (r == 0)
			return 0;
		pthread_mutex_lock(&lock);
		goto undo;
	}
	sem_init(&s->done, 0, 0);
	r = pthread_create(thread, attr, trampoline, s);
	if (r == 0) {
		while (sem_wait(&s->done) < 0 && errno == EINTR)
			;
		r = s->result < 0 ? -s->result : 0;
		if (r) {
			/* The thread ran none of fn and is ending; collect it. */
			if (attr)
				pthread_attr_getdetachstate(attr, &detached);
			if (detached != PTHREAD_CREATE_DETACHED)
				pthread_join(*thread, NULL);
		}
	}
	sem_destroy(&s->done);
	if (r == 0)
		return 0;
	pthread_mutex_lock(&lock);
undo:
	abandon(n, s->place);
	if (s != &local)
		free(s);
	pthread_mutex_unlock(&lock);
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

/* tid 0 is the caller; anything else must be a thread of this process. */
static int resolve_tid(id_t who, pid_t *tid)
{
	if (who == 0) {
		*tid = sys_gettid();
		return 0;
	}
	if (who > INT_MAX || syscall(SYS_tgkill, getpid(), (pid_t)who, 0) < 0)
		return -ESRCH;
	*tid = (pid_t)who;
	return 0;
}

/* Lock held on success: the group `who` is in. */
static int lookup_locked(id_t who, struct rgroup__node **out)
{
	pid_t tid;
	int r, err;

	r = resolve_tid(who, &tid);
	if (r < 0)
		return r;
	init();
	pthread_mutex_lock(&lock);
	*out = node_of(tid, &err);
	if (!*out) {
		pthread_mutex_unlock(&lock);
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
	else if (st.dismantled || n->weightfd < 0)
		r = -ENODEV;
	else
		r = st.be->set_nice(st.be->priv, n, nice);
	if (r == 0)
		n->nice = nice;
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_lock(&lock);
	n = node_by_id(id);
	if (!n) {
		pthread_mutex_unlock(&lock);
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
	snprintf(out.name, sizeof(out.name), "%s", n->name);
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_lock(&lock);
	walk_pre(st.top, collect, &c);
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_lock(&lock);
	if (!name) {
		be = choose_backend(why, len);
		r = be ? 0 : -ENOTSUP;
	} else if ((be = backend_by_name(name))) {
		r = be->probe(be->priv, why, len);
	} else {
		r = rgroup__why(why, len, -ENOENT, "no backend named '%s' in this build (known: cgroup2, cgroup1)", name);
	}
	pthread_mutex_unlock(&lock);
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
