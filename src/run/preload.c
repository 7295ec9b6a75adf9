/* SPDX-License-Identifier: MIT */
/*
 * preload.c - librgroup-preload.so: rgroups for a program nobody changed.
 * `rgroup run` starts the program with this library and librgroup in
 * LD_PRELOAD and the rules (run-spec.h) in RGROUP_RUN_RULES; when the
 * program names a thread, the thread enters the group its name matches.
 *
 * What it interposes, and why:
 *
 *   pthread_setname_np, prctl(PR_SET_NAME)
 *       A thread named for the first time with a name that matches a rule
 *       enters that rule's group (rgroup__enter, enter.c) and stays there
 *       (rule 2: a later name changes nothing). A thread may be named by
 *       another (RocksDB names its pool threads right after creating
 *       them): it is entered on its behalf, or, if it has not started
 *       yet, it enters itself as it starts, before any of its code runs.
 *   pthread_create
 *       A thread made by a thread in a group is born in that group
 *       (rule 1: rgroup_thread_create() without RGROUP_NEW, so the library
 *       tracks it; the governor must know). Every thread made here is
 *       also listed, so that a thread naming another can find it.
 *   the exec family
 *       librgroup's own (rule 7: groups are emptied before an exec); see
 *       below why the program would not reach them otherwise.
 *   pthread_sigmask, sigprocmask
 *       On the governor backend, a thread in a group keeps the governor's
 *       signal unblocked: programs block every signal in their worker
 *       threads (qemu), and a thread that blocks it is never paused.
 *   sigaction, signal, bsd_signal, sysv_signal, sigset
 *       On the governor backend the governor pauses threads with one
 *       real-time signal. A program that installs a handler for it would
 *       break the governor (and get its pauses): it is stopped with a
 *       message (exit 125) instead of misbehaving silently. Resetting the
 *       signal to SIG_DFL or SIG_IGN, which daemons do for every signal,
 *       is let through before the governor runs and kept from undoing
 *       the governor's handler after.
 *
 * One copy of the library's state: this object links librgroup.so (its
 * dependency, loaded with it), so a program that uses librgroup itself
 * shares the same library.
 * Calls the library itself makes to the functions above (its threads, its
 * names, its handler) pass straight through: they are told by their
 * return address.
 *
 * fork: the child starts outside every group (rule 7, the library's fork
 * handler), and keeps the rules unless RGROUP_RUN_INHERIT=0; exec: a
 * program started by the program gets the same environment, so the same
 * rules, unless RGROUP_RUN_INHERIT=0, in which case this library takes
 * itself and librgroup out of LD_PRELOAD and the rules out of the
 * environment as it loads. Under secure execution (setuid) it does
 * nothing. This library prints (stderr, "rgroup run: ..."); librgroup
 * never does. Its other parts: the names file (preload-names.c) and
 * `rgroup set` (preload-control.c); preload.h says what they share.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "parse.h"
#include "preload.h"

#define EXPORT __attribute__((visibility("default")))
#define STOPPED 125     /* exit status when the preload stops the program */

extern char *program_invocation_short_name;

/* ---- What the rules say ---------------------------------------------------- */

/* preload.h says who reads and writes these */
struct rgroup__run_rules preload_rules;
struct rgroup__level preload_levels[RGROUP__RUN_MAX_GROUPS];
int preload_verbose;
static int active, inherit = 1;
/* Why no backend can enforce the rules here (empty: one can); said once,
 * when a thread's name first matches a rule, and only then. */
static char unable[512];
static int unable_said;
static unsigned char reported[RGROUP__RUN_MAX_GROUPS];

/*
 * What each rule did, for the report at exit (report() below): per group,
 * the threads whose names took them in (the first few by id and name),
 * and those whose names matched but which stayed outside. Written with
 * `preload_mu` held (or, with no backend, atomically); read at exit without it.
 */
#define REPORT_NAMES 4
static struct took {
	unsigned int in, outside;
	pid_t tid[REPORT_NAMES];
	char name[REPORT_NAMES][16];
} took[RGROUP__RUN_MAX_GROUPS];
static unsigned int names_seen;   /* threads named, matching or not */

/* librgroup's mapping: calls from there pass through. */
static uintptr_t lib_lo, lib_hi;
/* The governor's handler, as the library installed it. */
static void *gov_handler;

static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int (*real_pthread_setname_np)(pthread_t, const char *);
static int (*real_prctl)(int, ...);
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
typedef void (*handler_t)(int);
static handler_t (*real_signal)(int, handler_t);
static handler_t (*real_bsd_signal)(int, handler_t);
static handler_t (*real_sysv_signal)(int, handler_t);
static handler_t (*real_sigset)(int, handler_t);
static int (*real_pthread_sigmask)(int, const sigset_t *, sigset_t *);
static int (*real_sigprocmask)(int, const sigset_t *, sigset_t *);

static int from_lib(const void *ret)
{
	return (uintptr_t)ret - lib_lo < lib_hi - lib_lo;
}

/*
 * The function a wrapper stands in for, looked up on its first call and
 * kept: another library's constructor, or code before ours ran, may call
 * any wrapper, and it must behave as the function it wraps from the first
 * instruction of the process. libc's from the next object (RTLD_NEXT);
 * librgroup's by its own symbol version (version != NULL). The pointer
 * is written once with the same value by whichever thread gets there.
 */
static void *next_fn(void **slot, const char *name, const char *version)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (f)
		return f;
	if (version) {
		void *h = dlopen("librgroup.so.0", RTLD_LAZY | RTLD_NOLOAD);
		f = h ? dlvsym(h, name, version) : NULL;
		if (h)
			dlclose(h);   /* only the reference NOLOAD took */
	} else {
		f = dlsym(RTLD_NEXT, name);
	}
	if (!f) {
		preload_say("cannot find %s, which it stands in for (%s)", name, dlerror());
		_exit(STOPPED);
	}
	__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	return f;
}

#define REAL(name) ((__typeof__(real_##name))next_fn((void **)&real_##name, #name, NULL))
#define LIB(name, version) ((__typeof__(lib_##name))next_fn((void **)&lib_##name, #name, version))

void preload_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "rgroup run: ");

	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(buf, "\n");
	/* One write: lines of several threads do not mix. */
	(void)!write(2, buf, strlen(buf));
}

void preload_level_settings(struct rgroup__level *l, const struct rgroup__run_group *g)
{
	l->has_nice = g->has_nice;
	l->nice = g->nice;
	l->cpus = g->has_cpus ? &g->cpus : NULL;
	l->quota_us = g->quota_us;
	l->period_us = g->period_us;
}

const char *preload_why(int err)
{
	return err == -EACCES ? " (below the nice the program may give: rule 6 needs RLIMIT_NICE or CAP_SYS_NICE in the program)" :
	       err == -EPERM ? " (its cpus are outside what its parent, or the process, may use)" :
	       err == -EBUSY ? " (a child group's own setting would no longer lie within it: change the child first)" : "";
}

/* ---- Threads: who can be found by whom --------------------------------------- */

/*
 * One per thread started through pthread_create() (from a pool, put back
 * by the last of the thread and its creator to let go of it), and one in
 * TLS for any other thread (the main thread is listed too). `preload_mu` guards
 * the table and the pool, and every entry into a group.
 */
struct pslot {
	struct pslot *next, **pprev;
	pthread_t self;
	void *(*fn)(void *);
	void *arg;
	struct rgroup__thread core;   /* the library's record of it, when
	                               * another thread enters it (core.tid) */
	pid_t tid;              /* 0: not known yet */
	int pending;            /* a group to enter as it starts; -1: none */
	char pending_name[16];
	int grouped;            /* in an rgroup: never moves again (atomic) */
	int foreign;            /* entered by another thread: leave at exit */
	int linked, gone;
};

#define NBUCKETS 1024
pthread_mutex_t preload_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pslot *table[NBUCKETS];
static pthread_key_t key;
static struct pslot main_slot;
static __thread struct pslot *myslot;
static __thread struct pslot own_slot;

/* pthread_t is the address of the thread's descriptor, at a stack's top:
 * threads' values lie megabytes apart, so the low bits say nothing. */
static struct pslot **bucket(pthread_t t)
{
	return &table[((uint64_t)t * 0x9e3779b97f4a7c15ull) >> 54];   /* 10 bits: NBUCKETS */
}

static void slot_link(struct pslot *s)
{
	struct pslot **b = bucket(s->self);

	s->next = *b;
	if (*b)
		(*b)->pprev = &s->next;
	s->pprev = b;
	*b = s;
	s->linked = 1;
}

static void slot_unlink(struct pslot *s)
{
	*s->pprev = s->next;
	if (s->next)
		s->next->pprev = s->pprev;
	s->linked = 0;
}

static struct pslot *slot_find(pthread_t t)
{
	for (struct pslot *s = *bucket(t); s; s = s->next)
		if (pthread_equal(s->self, t))
			return s;
	return NULL;
}

static struct pslot *self_slot(void)
{
	if (!myslot) {
		own_slot.self = pthread_self();
		own_slot.pending = -1;
		myslot = &own_slot;
	}
	return myslot;
}

/* ---- Entering a group ------------------------------------------------------------ */

/* The library's handler was replaced behind our back (a raw rt_sigaction). */
static void check_handler(void)
{
	struct sigaction now;
	int sig;

	if (!gov_handler || !(sig = rgroup__enter_signal()) ||
	    REAL(sigaction)(sig, NULL, &now) < 0 || (void *)now.sa_sigaction == gov_handler)
		return;
	preload_say("%s replaced the handler of signal %d (SIGRTMIN+%d), which the governor pauses threads with; run it with RGROUP_GOVERNOR_SIGNAL set to another offset, or on a cgroup backend",
	    program_invocation_short_name, sig, sig - SIGRTMIN);
	_exit(STOPPED);
}

/* Thread `who` (NULL: the caller; tid for messages) enters group g. preload_mu held. */
static int enter(int g, void *who, pid_t tid, const char *name)
{
	struct rgroup__level chain[RGROUP__RUN_MAX_DEPTH];
	int idx[RGROUP__RUN_MAX_DEPTH], depth = 0, r;

	if (g < 0 || (unsigned int)g >= preload_rules.ngroups)
		return -EINVAL;   /* rgroup__run_match() gives none such */
	check_handler();
	control_start();
	for (int i = g; i >= 0; i = preload_rules.groups[i].parent)
		depth++;
	for (int i = g, k = depth; i >= 0; i = preload_rules.groups[i].parent) {
		idx[--k] = i;
		chain[k] = preload_levels[i];
	}
	r = rgroup__enter(chain, (unsigned int)depth, who);
	if (r == 0) {
		int made = 0;

		for (int k = 0; k < depth; k++) {
			made |= preload_levels[idx[k]].id != chain[k].id;
			preload_levels[idx[k]].id = chain[k].id;
		}
		struct took *t = &took[g];
		unsigned int in = t->in;   /* written only here, preload_mu held */

		if (in < REPORT_NAMES) {
			t->tid[in] = tid;
			snprintf(t->name[in], sizeof(t->name[0]), "%s", name);
		}
		t->in = in + 1;
		if (made)
			names_publish();
		if (preload_verbose)
			preload_say("thread %d '%s' -> %s", (int)tid, name, preload_rules.groups[g].path);
	} else if (r != -EEXIST && __atomic_add_fetch(&took[g].outside, 1, __ATOMIC_RELAXED) &&
		   !reported[g]) {
		reported[g] = 1;
		preload_say("thread %d '%s' stays outside group '%s': %s%s", (int)tid, name,
		    preload_rules.groups[g].path, strerror(-r), preload_why(r));
	}
	return r;
}

/*
 * On the governor backend a thread in a group must take the governor's
 * signal, or it is never paused. Programs block signals in their worker
 * threads (qemu creates every thread with all of them blocked); the
 * signal is the governor's alone (guard() below), so a thread that enters
 * a group has it unblocked, and it stays so (pthread_sigmask below).
 */
static int governor_signal(void)
{
	static int sig = -1;

	if (sig < 0)
		sig = rgroup__enter_signal();
	return sig;
}

static void open_to_governor(pid_t tid, const char *name)
{
	int sig = governor_signal();
	sigset_t set, old;

	if (!sig)
		return;
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (real_pthread_sigmask(SIG_UNBLOCK, &set, &old) == 0 && sigismember(&old, sig) && preload_verbose)
		preload_say("thread %d '%s' blocked signal %d, which the governor pauses threads with: unblocked",
		    (int)tid, name, sig);
}

/* A thread entered by another: its mask is its own. Says so if it blocks
 * the governor's signal (from /proc: SigBlk). preload_mu held. */
static void check_blocked(pid_t tid, const char *name, int g)
{
	char path[64], text[4096], *p;
	unsigned long long mask;
	int sig = governor_signal(), fd;
	ssize_t n;

	if (!sig || reported[g])
		return;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	text[n] = '\0';
	if (!(p = strstr(text, "SigBlk:")) || sscanf(p + 7, "%llx", &mask) != 1 ||
	    !(mask & (1ull << (sig - 1))))
		return;
	reported[g] = 1;
	preload_say("thread %d '%s' (named by another thread) blocks signal %d: the governor cannot pause it, so its group '%s' gets no share or cap from it; a cgroup backend has no such limit",
	    (int)tid, name, sig, preload_rules.groups[g].path);
}

static long tid_offset = -1;   /* see find_tid_offset() */

/*
 * The id of the thread whose thread-local storage the caller uses, as the
 * C library keeps it (0: it cannot be told). It is not the caller's own
 * in a thread made by clone(CLONE_THREAD) without CLONE_SETTLS: such a
 * thread shares its creator's TLS, and with it the creator's records,
 * here and in librgroup (rgroup__self), and the creator's pthread_self().
 */
static pid_t tls_owner(void)
{
	clockid_t cid;

	if (tid_offset >= 0)
		return *(const pid_t *)((const char *)pthread_self() + tid_offset);
	if (pthread_getcpuclockid(pthread_self(), &cid) == 0 && (cid & 7) == 6)
		return (pid_t)~(cid >> 3);   /* the kernel's encoding of a thread's clock */
	return 0;
}

static void enter_self(struct pslot *me, int g, const char *name)
{
	pid_t tid = (pid_t)syscall(SYS_gettid), owner = tls_owner();
	static int said_shared;
	int r;

	/* The caller's own id from the kernel, never from TLS: a thread
	 * that shares its creator's TLS would move its creator. It cannot
	 * be tracked (the library's record of it is its creator's), so it
	 * stays outside, and the user is told once. Before any lock: such
	 * a thread must call as little of the C library as it can. */
	if (owner && owner != tid) {
		if (!__atomic_exchange_n(&said_shared, 1, __ATOMIC_ACQ_REL))
			preload_say("thread %d '%s' was made by clone(CLONE_THREAD) without CLONE_SETTLS: it shares the thread-local storage of thread %d, so it cannot be told from that thread; it stays outside group '%s' (create it with pthread_create, or give it TLS of its own)",
			    (int)tid, name, (int)owner, preload_rules.groups[g].path);
		return;
	}
	if (__atomic_load_n(&me->grouped, __ATOMIC_ACQUIRE))
		return;     /* rule 2: once in a group, a name changes nothing */
	pthread_mutex_lock(&preload_mu);
	r = enter(g, NULL, tid, name);
	if (r == 0 || r == -EEXIST)
		__atomic_store_n(&me->grouped, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&preload_mu);
	if (r == 0)
		open_to_governor(tid, name);
}

static void named(pthread_t t, const char *name)
{
	char comm[16];
	struct pslot *s;
	int g, r;

	/* The kernel keeps 15 characters; prctl() cuts longer names. */
	size_t n = strnlen(name, sizeof(comm) - 1);
	memcpy(comm, name, n);
	comm[n] = '\0';
	__atomic_add_fetch(&names_seen, 1, __ATOMIC_RELAXED);
	g = rgroup__run_match(&preload_rules, comm);
	if (g < 0)
		return;     /* matches nothing: stays where it is */
	if (!active) {
		__atomic_add_fetch(&took[g].outside, 1, __ATOMIC_RELAXED);
		if (!__atomic_exchange_n(&unable_said, 1, __ATOMIC_ACQ_REL))
			preload_say("thread '%s' of %s matches group '%s', but no backend can enforce rgroups here: %s; its threads stay where they are",
			    comm, program_invocation_short_name, preload_rules.groups[g].path, unable);
		return;
	}
	if (pthread_equal(t, pthread_self())) {
		enter_self(self_slot(), g, comm);
		return;
	}
	pthread_mutex_lock(&preload_mu);
	s = slot_find(t);
	if (!s) {
		if (!reported[g]) {
			reported[g] = 1;
			preload_say("thread '%s' was named by another thread and was not started through pthread_create() with this library loaded: it stays outside group '%s'",
			    comm, preload_rules.groups[g].path);
		}
	} else if (__atomic_load_n(&s->grouped, __ATOMIC_ACQUIRE)) {
		/* rule 2 */
	} else if (!s->tid) {
		s->pending = g;   /* it enters itself before its code runs */
		snprintf(s->pending_name, sizeof(s->pending_name), "%s", comm);
	} else {
		r = enter(g, &s->core, s->tid, comm);
		if (r == 0) {
			s->foreign = 1;
			__atomic_store_n(&s->grouped, 1, __ATOMIC_RELEASE);
			check_blocked(s->tid, comm, g);
		} else if (r == -EEXIST) {
			__atomic_store_n(&s->grouped, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&preload_mu);
}

/* ---- pthread_create ------------------------------------------------------------- */

/*
 * Slots come from a pool, refilled by creators, never freed to malloc by
 * the thread that exits: a thread that frees memory gets glibc's per-thread
 * malloc cache, which for a thread that does nothing else costs more than
 * all the rest here (docs/BENCHMARKS.md). preload_mu held.
 */
static struct pslot *pool;

static struct pslot *slot_get(void)
{
	struct pslot *s;

	if (!pool) {
		struct pslot *chunk = calloc(64, sizeof(*chunk));
		if (!chunk)
			return NULL;
		for (int i = 63; i >= 0; i--) {
			chunk[i].next = pool;
			pool = &chunk[i];
		}
	}
	s = pool;
	pool = s->next;
	memset(s, 0, sizeof(*s));
	s->pending = -1;
	return s;
}

static void slot_put(struct pslot *s)
{
	s->next = pool;
	pool = s;
}

static void slot_gone(void *p)
{
	struct pslot *s = p;

	pthread_mutex_lock(&preload_mu);
	if (s->linked) {
		slot_unlink(s);
		/* Entered by another thread: the library tracks it through
		 * this slot's record, and set no exit hook of its own. */
		if (s->foreign)
			rgroup__enter_gone(&s->core);
		slot_put(s);
	} else {
		s->gone = 1;      /* the creator puts it back */
	}
	pthread_mutex_unlock(&preload_mu);
	myslot = NULL;
}

/*
 * glibc keeps each thread's id in its struct pthread, where the kernel
 * writes it at clone (CLONE_PARENT_SETTID), so a creator knows its new
 * thread's id as pthread_create returns. Where the offset glibc tells its
 * debugger (libthread_db) is there and right, it saves every thread a
 * gettid() system call as it starts (most of this library's cost per
 * thread: docs/BENCHMARKS.md); elsewhere the thread asks itself.
 */
static void find_tid_offset(void)
{
	const uint32_t *desc = dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid");

	/* { bits, count, offset }; the main thread's id is the pid. */
	if (desc && desc[0] == 32 && desc[1] == 1 && (pid_t)syscall(SYS_gettid) == getpid() &&
	    *(const pid_t *)((const char *)pthread_self() + desc[2]) == getpid())
		tid_offset = desc[2];
}

static void *start(void *p)
{
	struct pslot *s = p;
	int pending;

	myslot = s;
	pthread_setspecific(key, s);
	if (tid_offset < 0) {
		pid_t tid = (pid_t)syscall(SYS_gettid);
		pthread_mutex_lock(&preload_mu);
		s->tid = s->core.tid = tid;
		pending = s->pending;
		pthread_mutex_unlock(&preload_mu);
	} else {
		/* The creator knew the id: nobody leaves it a pending group
		 * after it is listed, and the creator lists it when it knows. */
		pthread_mutex_lock(&preload_mu);
		pending = s->pending;
		pthread_mutex_unlock(&preload_mu);
	}
	if (pending >= 0)
		enter_self(s, pending, s->pending_name);
	return s->fn(s->arg);
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct pslot *s;
	int r;

	if (!active || from_lib(__builtin_return_address(0)))
		return REAL(pthread_create)(t, attr, fn, arg);
	pthread_mutex_lock(&preload_mu);
	s = slot_get();
	pthread_mutex_unlock(&preload_mu);
	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	s->grouped = __atomic_load_n(&self_slot()->grouped, __ATOMIC_ACQUIRE);
	/* Rule 1: born in its creator's group. */
	r = s->grouped ? rgroup_thread_create(t, attr, 0, start, s) : REAL(pthread_create)(t, attr, start, s);
	pthread_mutex_lock(&preload_mu);
	if (r || s->gone) {
		slot_put(s);    /* not started, or come and gone already */
	} else {
		s->self = *t;
		if (tid_offset >= 0 && !s->tid)
			s->tid = s->core.tid = *(const pid_t *)((const char *)*t + tid_offset);
		slot_link(s);
	}
	pthread_mutex_unlock(&preload_mu);
	return r;
}

/* ---- Names ------------------------------------------------------------------------ */

EXPORT int pthread_setname_np(pthread_t t, const char *name)
{
	int r = REAL(pthread_setname_np)(t, name);

	if (r == 0 && (active || unable[0]) && !from_lib(__builtin_return_address(0)))
		named(t, name);
	return r;
}

EXPORT int prctl(int option, ...)
{
	unsigned long a2, a3, a4, a5;
	va_list ap;
	int r;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	r = REAL(prctl)(option, a2, a3, a4, a5);
	if (r == 0 && option == PR_SET_NAME && (active || unable[0]) && a2 &&
	    !from_lib(__builtin_return_address(0)))
		named(pthread_self(), (const char *)a2);
	return r;
}

/* ---- The governor's signal ----------------------------------------------------------- */

/* 1: swallow the call (a reset that would undo the governor's handler),
 * 0: let it through; a real handler for the signal stops the program. */
static int guard(int sig, void *handler, const void *ret)
{
	int gs;

	if (!active)
		return 0;
	if (from_lib(ret)) {
		if (handler != (void *)SIG_DFL && handler != (void *)SIG_IGN)
			gov_handler = handler;   /* the library's own, to compare */
		return 0;
	}
	gs = rgroup__enter_signal();
	if (!gs || sig != gs)
		return 0;
	if (handler == (void *)SIG_DFL || handler == (void *)SIG_IGN)
		return gov_handler != NULL;
	preload_say("%s installs a handler for signal %d (SIGRTMIN+%d), which the governor backend pauses threads with; run it with RGROUP_GOVERNOR_SIGNAL=N for a real-time signal offset N it leaves alone (0..%d), or on a cgroup backend (see rgroup doctor)",
	    program_invocation_short_name, sig, sig - SIGRTMIN, SIGRTMAX - SIGRTMIN);
	_exit(STOPPED);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (act && guard(sig, (void *)act->sa_handler, __builtin_return_address(0)))
		return old ? REAL(sigaction)(sig, NULL, old) : 0;
	return REAL(sigaction)(sig, act, old);
}

#define SIGNAL_FN(name)                                                             \
	EXPORT handler_t name(int sig, handler_t h)                                  \
	{                                                                            \
		struct sigaction now;                                                \
		if (guard(sig, (void *)h, __builtin_return_address(0)))              \
			return REAL(sigaction)(sig, NULL, &now) == 0 ? now.sa_handler : SIG_ERR; \
		return REAL(name)(sig, h);                                                  \
	}

SIGNAL_FN(signal)
SIGNAL_FN(bsd_signal)
SIGNAL_FN(sysv_signal)
SIGNAL_FN(sigset)

/* A thread in a group keeps the governor's signal open (see
 * open_to_governor()). The library's own masks (its threads block every
 * signal) pass as they are. */
static const sigset_t *keep_open(int how, const sigset_t *set, sigset_t *copy, const void *ret)
{
	int sig;

	if (!set || !active || (how != SIG_BLOCK && how != SIG_SETMASK) || from_lib(ret) ||
	    !__atomic_load_n(&self_slot()->grouped, __ATOMIC_ACQUIRE) || !(sig = governor_signal()) ||
	    !sigismember(set, sig))
		return set;
	*copy = *set;
	sigdelset(copy, sig);
	return copy;
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return REAL(pthread_sigmask)(how, keep_open(how, set, &copy, __builtin_return_address(0)), old);
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return REAL(sigprocmask)(how, keep_open(how, set, &copy, __builtin_return_address(0)), old);
}

/* ---- exec and spawn: librgroup's ------------------------------------------------------- */

/*
 * librgroup defines the exec family (spawn.c: the groups are emptied into
 * the sgroup before the program is replaced, rule 7), but with its own
 * symbol version: a program linked against libc alone asks for libc's
 * versions, which a preloaded librgroup cannot answer. These unversioned
 * definitions can, and hand the call to librgroup's.
 */
static int (*lib_execve)(const char *, char *const[], char *const[]);
static int (*lib_execvpe)(const char *, char *const[], char *const[]);
static int (*lib_fexecve)(int, char *const[], char *const[]);
/* The same for librgroup's spawners (rule 7 for posix_spawn, system and
 * popen: their children start outside every group). */
static rgroup__spawn_fn *lib_posix_spawn, *lib_posix_spawnp;
static int (*lib_system)(const char *);
static FILE *(*lib_popen)(const char *, const char *);
static int (*lib_pclose)(FILE *);

extern char **environ;

/*
 * The names file goes before an exec (the new program's groups start
 * empty, rule 7, and it may run without this library), and comes back
 * if the exec fails. Only in the process that wrote it: a vfork child
 * shares its memory but not its pid, and must not take the lock.
 */
static int names_exec(int r)
{
	if (names_written()) {
		pthread_mutex_lock(&preload_mu);
		names_publish();
		pthread_mutex_unlock(&preload_mu);
	}
	return r;
}

#define BEFORE_EXEC() names_remove()

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	BEFORE_EXEC();
	return names_exec(LIB(execve, "RGROUP_0.1")(path, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
	BEFORE_EXEC();
	return names_exec(LIB(execve, "RGROUP_0.1")(path, argv, environ));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	BEFORE_EXEC();
	return names_exec(LIB(execvpe, "RGROUP_0.1")(file, argv, envp));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	BEFORE_EXEC();
	return names_exec(LIB(execvpe, "RGROUP_0.1")(file, argv, environ));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	BEFORE_EXEC();
	return names_exec(LIB(fexecve, "RGROUP_0.1")(fd, argv, envp));
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return LIB(posix_spawn, "RGROUP_0.2")(pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return LIB(posix_spawnp, "RGROUP_0.2")(pid, file, fa, attr, argv, envp);
}

EXPORT int system(const char *cmd)
{
	return LIB(system, "RGROUP_0.2")(cmd);
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
	return LIB(popen, "RGROUP_0.2")(cmd, mode);
}

EXPORT int pclose(FILE *f)
{
	return LIB(pclose, "RGROUP_0.2")(f);
}

/* execl, execlp, execle: their arguments as an argv, on the stack. */
enum list_exec { BY_PATH, BY_SEARCH, WITH_ENV };

static int exec_list(enum list_exec how, const char *target, const char *arg0, va_list ap)
{
	va_list count;
	size_t n = 0;

	va_copy(count, ap);
	while (va_arg(count, char *))
		n++;
	va_end(count);
	char *argv[n + 2];
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n + 1; i++)   /* the NULL too */
		argv[i] = va_arg(ap, char *);
	char **envp = how == WITH_ENV ? va_arg(ap, char **) : environ;
	BEFORE_EXEC();
	return names_exec(how == BY_SEARCH ? LIB(execvpe, "RGROUP_0.1")(target, argv, envp) : LIB(execve, "RGROUP_0.1")(target, argv, envp));
}

#define EXEC_LIST(name, how)                                                 \
	EXPORT int name(const char *target, const char *arg, ...)            \
	{                                                                    \
		va_list ap;                                                  \
		int r;                                                       \
		va_start(ap, arg);                                           \
		r = exec_list(how, target, arg, ap);                         \
		va_end(ap);                                                  \
		return r;                                                    \
	}

EXEC_LIST(execl, BY_PATH)
EXEC_LIST(execlp, BY_SEARCH)
EXEC_LIST(execle, WITH_ENV)

/* ---- fork --------------------------------------------------------------------------- */

static void fork_prepare(void)
{
	pthread_mutex_lock(&preload_mu);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&preload_mu);
}

/* The child: outside every group (the library's handler, which runs
 * before this one, moved it), one thread, no group ids of the parent's;
 * the rules only if they are inherited. */
static void fork_child(void)
{
	struct pslot *me = self_slot();

	memset(table, 0, sizeof(table));   /* the other threads are not here */
	me->self = pthread_self();
	me->grouped = 0;
	me->foreign = 0;
	me->linked = 0;
	memset(&me->core, 0, sizeof(me->core));   /* the parent's tree's */
	me->tid = me->core.tid = (pid_t)syscall(SYS_gettid);
	slot_link(me);
	for (unsigned int g = 0; g < preload_rules.ngroups; g++)
		preload_levels[g].id = 0;
	memset(reported, 0, sizeof(reported));
	memset(took, 0, sizeof(took));
	names_seen = 0;
	if (!inherit)
		active = 0;
	control_fork_child();
	pthread_mutex_unlock(&preload_mu);
}

/* ---- Loading -------------------------------------------------------------------------- */

/* --no-inherit: programs this one starts get neither this library nor
 * the rules: take our two entries out of LD_PRELOAD. */
static void strip_environment(const char *self_path, const char *lib_path)
{
	const char *old = getenv("LD_PRELOAD");
	char *copy, *tok, *save, *out;
	size_t off = 0;

	unsetenv("RGROUP_RUN_RULES");
	unsetenv("RGROUP_RUN_INHERIT");
	unsetenv("RGROUP_RUN_VERBOSE");
	unsetenv("RGROUP_RUN_PID");
	unsetenv("RGROUP_RUN_CONTROL");
	if (!old || !(copy = strdup(old)) || !(out = calloc(1, strlen(old) + 1)))
		return;
	for (tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		if ((self_path && strcmp(tok, self_path) == 0) || (lib_path && strcmp(tok, lib_path) == 0))
			continue;
		off += (size_t)sprintf(out + off, "%s%s", off ? ":" : "", tok);
	}
	if (off)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
	free(copy);
	free(out);
}

struct range {
	const char *name;
	uintptr_t lo, hi;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct range *r = arg;

	if (!r->name || !info->dlpi_name || strcmp(info->dlpi_name, r->name) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!r->lo || a < r->lo)
			r->lo = a;
		if (a + ph->p_memsz > r->hi)
			r->hi = a + ph->p_memsz;
	}
	return 1;
}

/* ---- The report at exit ------------------------------------------------------------ */

/* The process `rgroup run` started (its pid, which an exec keeps). */
static pid_t started;
static int have_rules;

/*
 * At the program's exit (exit() or a return from main; a process killed
 * by a signal or ended by _exit runs no code to say it): one line per
 * rule with patterns, the threads it took or that it took none, and a
 * warning when the program named no thread at all (a rule can match only
 * a name the program gives). Said by the process rgroup run started when
 * a rule took no thread, or always with -v (then by every process that
 * has the rules); silent when every rule took its threads.
 */
__attribute__((destructor)) static void report(void)
{
	unsigned int idle = 0, seen = __atomic_load_n(&names_seen, __ATOMIC_RELAXED);

	if (!have_rules)
		return;
	names_remove();
	for (unsigned int g = 0; g < preload_rules.ngroups; g++)
		idle += preload_rules.groups[g].npatterns && !__atomic_load_n(&took[g].in, __ATOMIC_RELAXED);
	if (!preload_verbose && (!idle || getpid() != started))
		return;
	if (!seen)
		preload_say("%s (pid %d) named no thread: no rule can match (rgroup run places only threads a program names)",
		    program_invocation_short_name, (int)getpid());
	for (unsigned int g = 0; g < preload_rules.ngroups; g++) {
		const struct rgroup__run_group *rg = &preload_rules.groups[g];
		unsigned int in = __atomic_load_n(&took[g].in, __ATOMIC_RELAXED);
		unsigned int out = __atomic_load_n(&took[g].outside, __ATOMIC_RELAXED);
		char list[REPORT_NAMES * 32 + 8] = "", more[48] = "";
		size_t off = 0;

		if (!rg->npatterns)
			continue;   /* only its child groups' threads */
		for (unsigned int i = 0; i < in && i < REPORT_NAMES; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d '%s'",
						 i ? ", " : ": ", (int)took[g].tid[i], took[g].name[i]);
		if (in > REPORT_NAMES)
			snprintf(list + off, sizeof(list) - off, ", ...");
		if (out)
			snprintf(more, sizeof(more), "; %u more matched but stayed outside", out);
		if (in)
			preload_say("rule %u, group '%s': took %u thread%s%s%s", rg->origin, rg->path, in,
			    in == 1 ? "" : "s", list, more);
		else
			preload_say("rule %u, group '%s': took no thread%s", rg->origin, rg->path, more);
	}
}

__attribute__((constructor)) static void preload_init(void)
{
	Dl_info self, lib;
	struct range range = { 0 };
	const char *text, *v;
	char err[600];

	/* Every wrapper looks its function up on first use; look them all up
	 * now, so that no later first use falls in a signal handler. */
	(void)REAL(pthread_create), (void)REAL(pthread_setname_np), (void)REAL(prctl);
	(void)REAL(sigaction), (void)REAL(signal), (void)REAL(bsd_signal);
	(void)REAL(sysv_signal), (void)REAL(sigset), (void)REAL(pthread_sigmask);
	(void)REAL(sigprocmask), (void)LIB(execve, "RGROUP_0.1");
	(void)LIB(execvpe, "RGROUP_0.1"), (void)LIB(fexecve, "RGROUP_0.1");
	(void)LIB(posix_spawn, "RGROUP_0.2"), (void)LIB(posix_spawnp, "RGROUP_0.2");
	(void)LIB(system, "RGROUP_0.2"), (void)LIB(popen, "RGROUP_0.2");
	(void)LIB(pclose, "RGROUP_0.2");
	/* Secure execution (setuid, file capabilities): the environment is
	 * not the program's to trust. */
	if (getauxval(AT_SECURE) || !(text = secure_getenv("RGROUP_RUN_RULES")))
		return;
	v = getenv("RGROUP_RUN_VERBOSE");
	preload_verbose = v && *v && strcmp(v, "0") != 0;
	v = getenv("RGROUP_RUN_INHERIT");
	inherit = !(v && strcmp(v, "0") == 0);
	control_init();
	rgroup__run_init(&preload_rules);
	if (rgroup__run_add_text(&preload_rules, text, "RGROUP_RUN_RULES", err, sizeof(err)) < 0 ||
	    rgroup__run_check(&preload_rules, err, sizeof(err)) < 0) {
		preload_say("%s", err);
		_exit(STOPPED);
	}
	v = getenv("RGROUP_RUN_PID");
	started = v ? (pid_t)atoi(v) : 0;
	have_rules = 1;
	for (unsigned int g = 0; g < preload_rules.ngroups; g++)
		preload_level_settings(&preload_levels[g], &preload_rules.groups[g]);
	if (!dladdr((void *)preload_init, &self))
		self.dli_fname = NULL;
	if (!dladdr((void *)rgroup__enter, &lib))
		lib.dli_fname = NULL;
	if (!inherit)
		strip_environment(self.dli_fname, lib.dli_fname);
	range.name = lib.dli_fname;
	dl_iterate_phdr(find_range, &range);
	lib_lo = range.lo;
	lib_hi = range.hi;
	/* The library sets itself up first, so that its fork handlers run
	 * after ours in the parent (our lock before its lock, as in enter). */
	/* A program that cannot have its rules (a child that dropped its
	 * privileges, say) runs as it would plainly: nothing said unless a
	 * thread's name matches a rule, or -v asked. */
	if (strcmp(rgroup_backend(), "none") == 0) {
		rgroup_probe(NULL, unable, sizeof(unable));
		if (!unable[0])
			snprintf(unable, sizeof(unable), "no backend");
		if (preload_verbose)
			preload_say("no backend can enforce rgroups in %s: %s; its threads stay where they are",
			    program_invocation_short_name, unable);
		return;
	}
	if (pthread_key_create(&key, slot_gone) != 0) {
		preload_say("no thread-specific key left: %s runs without its rules", program_invocation_short_name);
		return;
	}
	find_tid_offset();
	main_slot.self = pthread_self();
	main_slot.pending = -1;
	main_slot.tid = main_slot.core.tid = getpid();
	myslot = &main_slot;
	slot_link(&main_slot);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	active = 1;
	if (preload_verbose)
		preload_say("%s: %u groups, backend %s%s", program_invocation_short_name, preload_rules.ngroups,
		    rgroup_backend(), inherit ? "" : ", not for its children");
}
