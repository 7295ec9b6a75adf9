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
#define RGROUP_VERSION_MINOR 1

/* Flag for rgroup_thread_create(): start the thread in a new rgroup nested
 * under the creating thread's own group (the analogue of CLONE_NEWRGRP). */
#define RGROUP_NEW 0x1u

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
 * limits, and the library's own: depth 32, 65536 groups), ENODEV, EBUSY,
 * ENOMEM, EMFILE, EXDEV (a path below the process's cgroup leads through
 * a symlink or another mount: the library does not follow it).
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
 * process) or another -errno; *id is untouched on failure. */
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
	uint64_t throttled_ns;  /* governor: time its threads were paused */
	uint64_t unthrottled;   /* governor: pauses its threads did not take
	                         * (they block the governor's signal) */
};

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
 * Returns how many directories were removed, or a negative errno. */
int rgroup_gc(const char *dir);

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
