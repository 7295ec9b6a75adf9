/* SPDX-License-Identifier: MIT */
/*
 * rgroup.h - resource groups: hierarchical, thread-level control of how a
 * process divides its own CPU time among its own threads.
 *
 * The semantics are Tejun Heo's 2016 "rgroup" proposal (CLONE_NEWRGRP,
 * setpriority(PRIO_RGRP)); see rgroup(7) for the rules and the backends.
 *
 * Compile with:  cc prog.c $(pkg-config --cflags --libs rgroup)
 */
#ifndef RGROUP_H
#define RGROUP_H

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RGROUP_VERSION_MAJOR 0
#define RGROUP_VERSION_MINOR 2

/* Flag for rgroup_thread_create(): start the thread in a new rgroup nested
 * under the creating thread's own group (the analogue of CLONE_NEWRGRP). */
#define RGROUP_NEW 0x1u

/* Rgroups nest at most this deep (a top-level rgroup is at depth 1):
 * creating one deeper fails with ENOSPC, on every backend; the native
 * kernel's limit is the same. */
#define RGROUP_MAX_DEPTH 32

/* `which` for rgroup_setpriority()/rgroup_getpriority(): the rgroup of the
 * thread `who` (0: the calling thread). The value Heo's patch set used. */
#ifndef PRIO_RGRP
#define PRIO_RGRP 3
#endif

/*
 * pthread_create(3) plus flags. Without RGROUP_NEW the thread joins its
 * creator's group; with it, the thread starts in a new rgroup. When this
 * returns 0 the thread is already in its group; on error no thread runs
 * `start` and nothing is left behind. Returns 0 or an error number:
 * EINVAL (unknown flag, NULL thread or start), ENOTSUP (RGROUP_NEW where
 * no backend can enforce rgroups; without the flag creation always works,
 * like pthread_create), pthread_create's own errors, and the cgroupfs
 * errors of making the group: EACCES, EPERM, EAGAIN/ENOSPC (cgroup.max.*
 * limits, and the library's own: depth 32, 65536 groups), ENODEV, EBUSY
 * (also: a directory of the new group's name, left by an earlier program
 * of this process, still holds threads; an empty one is replaced),
 * ENOMEM, EMFILE, ENFILE, EXDEV (a path below the process's cgroup leads
 * through a symlink or another mount: the library does not follow it),
 * ENOTDIR (a path the library uses is not a directory), ENOENT (the parent's
 * directory was removed), EROFS (cgroupfs read-only), EMEDIUMTYPE (a file
 * opened there is not on cgroupfs: something is mounted over it).
 * rgroup_thread_create(3).
 */
int rgroup_thread_create(pthread_t *thread, const pthread_attr_t *attr,
			 unsigned int flags, void *(*start)(void *), void *arg);

/*
 * setpriority(2)/getpriority(2) with PRIO_RGRP added; other `which` values
 * are passed to the libc calls unchanged. For PRIO_RGRP, `who` is a thread
 * id of the calling process (0: the caller) and `prio` a nice value,
 * clamped to -20..19. As with getpriority(2), -1 is a valid result of
 * rgroup_getpriority(): clear errno first. Errors (-1 and errno): ESRCH
 * (not a thread of this process), EINVAL (the thread is in no rgroup),
 * and for rgroup_setpriority() also EACCES (rule 6: a top-level rgroup
 * below the caller's nice without RLIMIT_NICE room or CAP_SYS_NICE) and
 * the errors of writing the weight (ENODEV: the group vanished; EXDEV: its
 * path leads through a symlink or another mount).
 */
int rgroup_setpriority(int which, id_t who, int prio);
int rgroup_getpriority(int which, id_t who);

/* Name of the backend in use: "cgroup2", "cgroup1", "governor", "native";
 * "none" when no backend can enforce rgroups here (see rgroup_probe()).
 * RGROUP_BACKEND=name forces one (ignored in setuid/setgid programs); if
 * the forced backend cannot work, the result is "none": no fallback. */
const char *rgroup_backend(void);

/* The backends this library was built with, best first: the name of the
 * i-th (0, 1, ...), NULL past the last. For listing and probing them all
 * (rgroup_probe()). */
const char *rgroup_backend_name(unsigned int i);

/* ---- Beyond the fixed points: introspection ------------------------- */

/* An rgroup's identity inside this process; 0 stands for "no rgroup" (the
 * process's sgroup). Identities are never reused within a process. */
typedef uint64_t rgroup_id_t;

/* The rgroup of thread `tid` (0: the caller) in *id (0 if it is in none).
 * Returns 0, -EINVAL (id NULL, tid negative), -ESRCH (not a thread of this
 * process) or -EDEADLK (called from a signal handler that interrupted the
 * calling thread inside the library, also while the first call sets it
 * up); *id is untouched on failure. Not async-signal-safe (rgroup_of(3)). */
int rgroup_of(pid_t tid, rgroup_id_t *id);

/* A snapshot of one rgroup. Set `sz` to sizeof(struct rgroup_info) before
 * the call: the struct can grow, older callers keep working. */
struct rgroup_info {
	size_t sz;
	rgroup_id_t id;
	rgroup_id_t parent;     /* 0 for a top-level rgroup */
	int nice;               /* its PRIO_RGRP value */
	unsigned int weight;    /* kernel weight of that nice value */
	unsigned int depth;     /* 1 for a top-level rgroup */
	unsigned int nthreads;  /* threads the library knows are inside */
	unsigned int nchildren; /* child rgroups */
	uint64_t usage_ns;      /* CPU time used by its threads (and children) */
	char name[64];          /* its directory name in the backend, if any */
	uint64_t throttled_ns;  /* time its cap held it back (native: the
	                         * kernel's; governor: its threads' pauses) */
	uint64_t unthrottled;   /* governor: pauses its threads did not take
	                         * (they block the governor's signal) */
	unsigned int flags;     /* RGROUP_INFO_* */
};

/* rgroup_info() flags. UNENFORCED, governor: the program installed a
 * handler of its own for the governor's signal, so the governor enforces
 * no weight and no cap in the process until the program resets the signal
 * to SIG_DFL or SIG_IGN (rgroup_info(3)). */
#define RGROUP_INFO_UNENFORCED 0x1u

/* Fill *info for rgroup `id`. Returns 0, -ENOENT (no such rgroup; also for
 * id 0, the sgroup) or -EINVAL (info NULL, or sz smaller than the struct up
 * to `name`). A larger sz from a newer caller is fine: only the fields this
 * library knows are written, and sz is set to their size. nthreads counts
 * the group's own threads, not its children's. *info is untouched on
 * failure. */
int rgroup_info(rgroup_id_t id, struct rgroup_info *info);

/* Walk the process's tree: writes up to `max` ids in pre-order (a parent
 * before its children) and returns how many rgroups exist (may exceed
 * max: call again with a bigger array). ids may be NULL when max is 0. */
int rgroup_list(rgroup_id_t *ids, size_t max);

/* Kernel weight of a nice value (nice 0 = 1024, each step about 1.25x);
 * `nice` is clamped to -20..19 first. */
unsigned int rgroup_nice_to_weight(int nice);

/* Would backend `name` ("cgroup2", "cgroup1", ...; NULL: the automatic
 * choice) enforce rgroups for this process here? Returns 0 if so, else a
 * negative errno and, in why[len], one line with the reason and the fix
 * (why may be NULL or len 0). An unknown name gives -ENOENT. NULL honours
 * RGROUP_BACKEND as rgroup_backend() does. Creates nothing. */
int rgroup_probe(const char *name, char *why, size_t len);

/* Remove, bottom-up, the rgroup directories in cgroup directory `dir` that
 * processes which no longer exist left behind (killed with SIGKILL, say).
 * Never touches a live process's groups or anything rgroup did not make.
 * Returns how many directories were removed, or a negative errno
 * (-EMEDIUMTYPE: dir is not on a cgroup filesystem). */
int rgroup_gc(const char *dir);

/* ---- The executor: work items that run in their work group's rgroup -- */

/*
 * A pool of worker threads divided into work groups. Each work group's
 * workers live in an rgroup of their own (nested like the work groups), so
 * the kernel divides the CPU between the groups by their nice values however
 * many items each submits. Workers start on demand, up to a maximum per
 * group, and end when idle: an unused group has no thread and no rgroup
 * (rule 3), and gets a new rgroup, at the same nice value, when work comes.
 * See rgroup_exec_create(3).
 *
 * Handles are numbers, never reused within a process: a call with a
 * handle of a destroyed pool or group fails with -ENOENT. Functions return
 * 0 (or a count) or a negative errno.
 */
typedef uint64_t rgroup_exec_t;          /* a pool; 0 is never one */
typedef uint64_t rgroup_exec_group_t;    /* a work group; 0 is never one */

#define RGROUP_EXEC_NAME_MAX 32          /* a group's name, with its NUL */
#define RGROUP_EXEC_DRAIN    0x1u        /* destroy: run pending items first */

/* Set `sz` to sizeof(struct rgroup_exec_opts); zeroed fields take the
 * default. The struct can grow: older callers keep working. */
struct rgroup_exec_opts {
	size_t sz;
	unsigned int max_workers;  /* per group (0: the CPUs the creator may use) */
	unsigned int idle_ms;      /* an idle worker ends after this (0: 1000) */
	size_t stack_size;         /* of each worker (0: pthread's default) */
	/* Called, if set, for each item removed without running (cancel,
	 * destroy), by the thread that removed it, outside every lock. */
	void (*canceled)(void (*fn)(void *), void *arg);
};

/* Make a pool. Its groups' rgroups nest under the calling thread's group:
 * top-level rgroups when it is in none. -EINVAL (bad opts), -ENOTSUP (no
 * backend here: see rgroup_probe()), -ENOMEM, -ENOSPC (65536 pools),
 * and rgroup_thread_create()'s errors (negated) for its first thread. */
int rgroup_exec_create(rgroup_exec_t *pool, const struct rgroup_exec_opts *opts);

/* Stop taking work: from now on rgroup_exec_submit() and
 * rgroup_exec_group_create() fail with -ESHUTDOWN; what was submitted
 * still runs. */
int rgroup_exec_shutdown(rgroup_exec_t pool);

/* Shut down, then cancel the pending items (flags 0) or run them
 * (RGROUP_EXEC_DRAIN), wait for the running ones, end every thread and
 * free the pool. Returns how many items were canceled. -EDEADLK from one
 * of the pool's own workers. */
int rgroup_exec_destroy(rgroup_exec_t pool, unsigned int flags);

/* Set `sz` to sizeof(struct rgroup_exec_group_opts). NULL opts: a
 * top-level group with the pool's max_workers, at the nice value a new
 * rgroup there starts at (the caller's for a top-level rgroup, else 0). */
struct rgroup_exec_group_opts {
	size_t sz;
	rgroup_exec_group_t parent; /* 0: a top-level group of the pool */
	int nice;                   /* its rgroup's PRIO_RGRP value */
	unsigned int max_workers;   /* 0: the pool's */
};

/* Make a work group named `name` (for people: thread names, info; at most
 * RGROUP_EXEC_NAME_MAX - 1 bytes, else -ENAMETOOLONG). The nice value
 * follows rule 6: below the caller's own, a top-level group needs
 * RLIMIT_NICE room or CAP_SYS_NICE (-EACCES). -ENOENT (no such pool or
 * parent), -ESHUTDOWN, -EINVAL, -ENOSPC (nested too deep), -ENOMEM. */
int rgroup_exec_group_create(rgroup_exec_t pool, const char *name,
			     const struct rgroup_exec_group_opts *opts,
			     rgroup_exec_group_t *group);

/* Destroy a group that has no subgroups (else -EBUSY): cancel its pending
 * items (flags 0) or run them (RGROUP_EXEC_DRAIN), wait for the running
 * ones and its threads. Returns how many items were canceled. */
int rgroup_exec_group_destroy(rgroup_exec_group_t group, unsigned int flags);

/* Set the group's nice value (clamped to -20..19), in its rgroup now if it
 * has one, and in every rgroup it gets later. Rule 6 as for creation. */
int rgroup_exec_group_setnice(rgroup_exec_group_t group, int nice);

/* A snapshot of one work group. Set `sz` to sizeof(struct
 * rgroup_exec_group_info); a newer caller's larger struct is fine. */
struct rgroup_exec_group_info {
	size_t sz;
	rgroup_exec_t pool;
	rgroup_exec_group_t parent;   /* 0: top-level */
	char name[RGROUP_EXEC_NAME_MAX];
	int nice;
	unsigned int max_workers;
	unsigned int workers;         /* worker threads alive */
	unsigned int running;         /* items being run */
	unsigned int queued;          /* items waiting */
	int error;                    /* last error getting it threads, or 0 */
	rgroup_id_t rgroup;           /* its rgroup now; 0: it has none */
	uint64_t rgroups;             /* rgroups it has had */
	uint64_t submitted, completed, canceled;
	uint64_t cpu_ns;              /* CPU time of its threads, all rgroups */
};
int rgroup_exec_group_info(rgroup_exec_group_t group, struct rgroup_exec_group_info *info);

/* Queue fn(arg) to run on one of the group's workers, in the group's
 * rgroup. No system call when a worker is awake, no allocation once the
 * group's queue has grown to its backlog. -ENOENT (no such group),
 * -ESHUTDOWN (pool shut down), -EINVAL (fn NULL), -ENOMEM. */
int rgroup_exec_submit(rgroup_exec_group_t group, void (*fn)(void *), void *arg);

/* Wait until the group (0: every group of the pool) has no item queued or
 * running, at most timeout_ms (-1: no limit). -ETIMEDOUT, -ENOENT,
 * -EDEADLK (from a worker of what it would wait for), -ENOMEM (group 0). */
int rgroup_exec_wait(rgroup_exec_t pool, rgroup_exec_group_t group, int timeout_ms);

/* Remove the items not yet started of the group (0: every group of the
 * pool); running ones go on. Returns how many were removed, -ENOENT or
 * -ENOMEM (group 0). */
int rgroup_exec_cancel(rgroup_exec_t pool, rgroup_exec_group_t group);

/* ---- Rule 10: a group's CPUs and its CPU cap -------------------------- */

/*
 * The CPUs the threads of thread `who`'s rgroup (0: the caller's) may run
 * on, given as sched_setaffinity(2) takes them: `setsize` bytes at `cpus`.
 * cpus NULL lifts the group's own set: it runs on its parent's again.
 * Child groups without a set of their own follow it. A child group can
 * only narrow its parent: the set must lie within the parent's (the
 * nearest ancestor's set; for a top-level rgroup, what the process may
 * use: its main thread's affinity). Returns 0 or a negative errno: EINVAL
 * (empty set, setsize 0, a CPU beyond 1023, `who` negative or in no
 * rgroup), ESRCH (not a thread of this process), EPERM (a CPU outside the
 * parent's set), EBUSY (a child group's own set would no longer lie
 * within it: narrow the child first), ENOTSUP (the backend cannot; see
 * rgroup(7)), ENODEV (the group vanished), ENOMEM, and cgroupfs errors.
 * The group is unchanged on failure.
 */
int rgroup_set_cpus(pid_t who, size_t setsize, const cpu_set_t *cpus);

/* The CPUs the group's threads may run on: its own set, else its nearest
 * ancestor's, else the process's. EINVAL also when setsize is too small
 * for one of them (as sched_getaffinity(2)); *cpus is untouched on
 * failure. */
int rgroup_get_cpus(pid_t who, size_t setsize, cpu_set_t *cpus);

/*
 * A CPU bandwidth cap for `who`'s rgroup and its children together: at
 * most quota_us of CPU time in every period_us of wall time, as cgroup
 * v2's cpu.max (150000 per 100000: one and a half CPUs). period_us 0
 * means 100000 (100 ms); quota_us 0 lifts the cap. A child's cap, as a
 * share of a CPU, can be at most its nearest capped ancestor's. Returns
 * 0 or a negative errno: EINVAL (period not 1000..1000000, quota below
 * 1000 or above 1024 CPUs, `who` negative or in no rgroup), ESRCH, EPERM
 * (above the nearest capped ancestor's cap), EBUSY (below a child
 * group's cap: lower the child first), ENOTSUP, ENODEV, and cgroupfs
 * errors. The group is unchanged on failure.
 */
int rgroup_set_cap(pid_t who, uint64_t quota_us, uint64_t period_us);

/* The group's own cap: 0 and 0 when it has none (its ancestors' caps
 * still apply). *quota_us and *period_us are untouched on failure. */
int rgroup_get_cap(pid_t who, uint64_t *quota_us, uint64_t *period_us);

#ifdef __cplusplus
}
#endif

#endif /* RGROUP_H */
