/* SPDX-License-Identifier: MIT */
/*
 * native-uapi.h - the constants of the native kernel interface of resource
 * groups, for programs built without the patched kernel's headers.
 *
 * The interface is described once, in the kernel series' documentation
 * (the Documentation patch of kernel/patches: sched-rgroup.rst). The values
 * below are those of the series' uapi headers; test/unit/check-uapi.py
 * compares them with the patches, so the two cannot drift. Values never
 * change once released.
 */
#ifndef RGROUP_NATIVE_UAPI_H
#define RGROUP_NATIVE_UAPI_H

/* Mainline clone3() flag this interface refers to. */
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* <linux/sched.h>: start the thread in a new rgroup (with CLONE_THREAD) */
#ifndef CLONE_NEWRGRP
#define CLONE_NEWRGRP 0x400000000ULL
#endif

/* <linux/resource.h>: setpriority/getpriority on a thread's rgroup */
#ifndef PRIO_RGRP
#define PRIO_RGRP 3
#endif

/* <linux/prctl.h> */
#ifndef PR_RGROUP
#define PR_RGROUP 74
#define PR_RGROUP_SET_NEXT_NEW 1
#define PR_RGROUP_GET_NEXT_NEW 2
#define PR_RGROUP_ENTER 3
#define PR_RGROUP_ENTER_NEW 1
#endif
#ifndef PR_RGROUP_SET_CAP
#define PR_RGROUP_SET_CAP 4
#define PR_RGROUP_GET_CAP 5
#define PR_RGROUP_CAP_SIZE_VER0 16
/* arg4 of PR_RGROUP_SET_CAP and PR_RGROUP_GET_CAP (arg5: its size) */
struct pr_rgroup_cap {
	unsigned long long quota_us;    /* CPU time per period; 0: no cap */
	unsigned long long period_us;   /* 1000..1000000; 0 with no cap */
};
#endif

#ifndef PR_RGROUP_BY_ID
/* Or'ed into an operation: arg3 is an rgroup id of the process, not a tid */
#define PR_RGROUP_BY_ID 0x100
/* PR_RGROUP_ENTER, arg5: the thread that enters (0: the caller); arg4
 * with PR_RGROUP_ENTER_NEW: a chain of n new rgroups, the thread in the last */
#define PR_RGROUP_ENTER_LEVELS_SHIFT 8
#define PR_RGROUP_ENTER_LEVELS_MASK (0xffUL << PR_RGROUP_ENTER_LEVELS_SHIFT)
#define PR_RGROUP_ENTER_LEVELS(n) ((unsigned long)(n) << PR_RGROUP_ENTER_LEVELS_SHIFT)
/* PRIO_RGRP's set and get (arg4: the nice value; get returns 20 - nice) */
#define PR_RGROUP_SET_NICE 6
#define PR_RGROUP_GET_NICE 7
/* arg4: a __u64 * that gets the id of thread arg3's rgroup (0: none) */
#define PR_RGROUP_GET_ID 8
#endif

/* The series' nesting limit is <rgroup.h>'s RGROUP_MAX_DEPTH (ENOSPC
 * beyond); check-uapi.py compares the two. */

#endif /* RGROUP_NATIVE_UAPI_H */
