/* SPDX-License-Identifier: MIT */
/*
 * native-uapi.h - the native kernel interface of resource groups, for
 * programs built without the patched kernel's headers installed.
 *
 * Source of truth: kernel/patches/ (include/uapi/linux/sched.h, prctl.h,
 * resource.h) and kernel/README.md. Values must never change.
 *
 * clone3(2):
 *   CLONE_NEWRGRP       the new thread starts in a new rgroup nested under
 *                       its creator's (or, creator in none, a new top-level
 *                       rgroup under the thread's cpu cgroup). Needs
 *                       CLONE_THREAD; EINVAL without it or with
 *                       CLONE_INTO_CGROUP; ENOSPC beyond 32 levels; EINVAL
 *                       on a kernel without rgroups. Without the flag a
 *                       CLONE_THREAD child joins its creator's rgroup.
 *
 * setpriority(2) / getpriority(2):
 *   PRIO_RGRP           who = a thread of the caller's process (0: the
 *                       caller); the value is the nice value of that
 *                       thread's rgroup (the raw getpriority syscall returns
 *                       20 - nice, glibc's wrapper converts back).
 *                       EINVAL: thread in no rgroup (or no rgroup support);
 *                       ESRCH: no such thread, an exiting one, or a thread
 *                       of another process; EACCES: a top-level rgroup lowered below
 *                       the calling thread's nice without RLIMIT_NICE room
 *                       or CAP_SYS_NICE. Values are clamped to -20..19.
 *
 * prctl(2), option PR_RGROUP, arg2 = operation (unused arguments must be 0):
 *   PR_RGROUP_SET_NEXT_NEW, arg3 = 1 | 0
 *                       1: the calling thread's next clone with CLONE_THREAD
 *                       behaves as with CLONE_NEWRGRP (for pthread_create);
 *                       0: cancel. Consumed by that clone whether it
 *                       succeeds or fails (a clone3() with unreadable or
 *                       malformed arguments leaves it pending); not
 *                       inherited; cleared by exec.
 *   PR_RGROUP_GET_NEXT_NEW
 *                       returns 1 if the request is pending, else 0. Also
 *                       the probe: EINVAL means no rgroup support.
 *   PR_RGROUP_ENTER, arg3 = tid, arg4 = flags
 *                       enter once: a thread in no rgroup joins the rgroup
 *                       of thread tid of its own process, or with
 *                       PR_RGROUP_ENTER_NEW a new rgroup nested under it;
 *                       tid 0 with PR_RGROUP_ENTER_NEW: a new top-level
 *                       rgroup (nice = the caller's). EBUSY: the caller is
 *                       already in an rgroup; ESRCH: tid is no live thread
 *                       of the caller's process; EINVAL: tid's thread is in
 *                       no rgroup, tid 0 without PR_RGROUP_ENTER_NEW, bad
 *                       flags; ENOSPC: nesting beyond 32 levels.
 *
 * /proc/PID/task/TID/rgroup (read-only, one line, fields may be appended):
 *   "id parent depth nice usage_ns attached\n"; a thread in no rgroup reads
 *   "0 0 0 0 0 0". id: system-wide, never reused, kept across migrations;
 *   parent: 0 for a top-level rgroup; depth: 1 for a top-level rgroup;
 *   usage_ns: CPU time of the rgroup and its nested rgroups; attached: 0
 *   when an administrator moved this thread alone out of its rgroup
 *   tree's cgroup (it is then scheduled as a plain thread there).
 *
 * /proc/PID/rgroups (read-only): one line per rgroup of the process that has
 *   a live thread in it or below it, parents first:
 *   "id parent depth nice usage_ns threads\n", threads = the live threads in
 *   that rgroup itself (0: it only holds nested rgroups). Empty: no rgroups.
 */
#ifndef RGROUP_NATIVE_UAPI_H
#define RGROUP_NATIVE_UAPI_H

/* Older mainline clone3() flags this interface refers to. */
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

#ifndef CLONE_NEWRGRP
#define CLONE_NEWRGRP 0x10000000000ULL /* 1ULL << 40 */
#endif

#ifndef PRIO_RGRP
#define PRIO_RGRP 3
#endif

#ifndef PR_RGROUP
#define PR_RGROUP 0x52475250 /* "RGRP" */
#define PR_RGROUP_SET_NEXT_NEW 1
#define PR_RGROUP_GET_NEXT_NEW 2
#define PR_RGROUP_ENTER 3
#define PR_RGROUP_ENTER_NEW 1
#endif

#define RGROUP_MAX_DEPTH 32

#endif /* RGROUP_NATIVE_UAPI_H */
