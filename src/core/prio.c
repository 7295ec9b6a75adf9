/* SPDX-License-Identifier: MIT */
/*
 * prio.c - PRIO_RGRP: rgroup_setpriority() and rgroup_getpriority() set
 * and read the nice value of a thread's rgroup (rule 5), with the
 * permission rule of PRIO_PROCESS for top-level groups (rule 6).
 *
 * A manager thread re-weighting its workers' groups is the common case,
 * so a tracked `who` is found in O(1) (tree.c's tid table) and costs no
 * system call but the weight's write (and, when a top-level group's nice
 * goes down, one reading of the caller's nice), and a write that would not
 * change the weight is not made at all.
 */
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"
#include "locate.h"
#include "parse.h"
#include "weight.h"

static struct rgroup__core *const st = &rgroup__core;

int rgroup__my_nice(void)
{
	int saved = errno, nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)rgroup__self_tid());
	if (nice == -1 && errno)
		nice = 0;
	errno = saved;
	return nice;
}

/* The kernel's can_nice(): RLIMIT_NICE allows nice values down to
 * 20 - rlim_cur; CAP_SYS_NICE allows any. */
int rgroup__can_nice(int nice)
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

/*
 * Whether thread tid of this process has begun to exit (or is gone).
 * pthread_join() returns when the kernel clears the thread's tid, early
 * in its exit, but tgkill() finds the thread until the end of it: for a
 * thread its program has joined, that is gone. PF_EXITING is 0x4 in the
 * flags, the ninth field of /proc's stat (proc(5)).
 */
static int thread_exiting(pid_t tid)
{
	char path[64], buf[512];
	uint64_t flags;
	int n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	n = rgroup__read_path(path, buf, sizeof(buf));
	if (n == -ENOENT || n == -ESRCH)
		return 1;
	return n >= 0 && rgroup__parse_stat_flags(buf, &flags) == 0 && (flags & 0x4);
}

/* A thread the library tracks is one of ours; any other tid is asked of
 * the kernel first (tgkill with no signal), so that another process's
 * thread gets ESRCH, never EINVAL, and so does a thread of ours that is
 * exiting (a joined one may still be found). */
int rgroup__lookup_locked(id_t who, struct rgroup__node **out)
{
	pid_t tid = who ? (pid_t)who : rgroup__self_tid();
	struct rgroup__thread *t;
	int err;

	if (who > INT_MAX)
		return -ESRCH;
	rgroup__init();
	rgroup__lock();
	t = rgroup__thread_by_tid(tid);
	if (t) {
		*out = t->node;
		return 0;
	}
	if (tid != rgroup__self_tid() && syscall(SYS_tgkill, st->pid, tid, 0) < 0) {
		rgroup__unlock();
		return -ESRCH;
	}
	*out = rgroup__node_of(tid, &err);
	if (!*out) {
		rgroup__unlock();
		return err == -ESRCH || thread_exiting(tid) ? -ESRCH : -EINVAL;
	}
	return 0;
}

int rgroup__set_nice_locked(struct rgroup__node *n, int nice)
{
	int r = 0;

	/* Rule 6 as PRIO_PROCESS applies it to a task: raising a nice value
	 * (less weight) is always allowed, lowering it needs a value at or
	 * above the caller's own nice, or can_nice(). So the caller's nice is
	 * read only when a top-level group's nice goes down, and not at all
	 * where the kernel applies the rule (the native backend). */
	if (!st->be->checks_nice && !n->parent && nice < n->nice && nice < rgroup__my_nice() &&
	    !rgroup__can_nice(nice))
		r = -EACCES;
	else if (st->dismantled || !n->bound)
		r = -ENODEV;
	/* Where the kernel keeps the value (get_nice), anyone in the process
	 * may have changed it: always set, one call instead of a read first */
	else if (nice != n->nice || st->be->get_nice)
		r = st->be->set_nice(st->be->priv, n, nice);
	if (r == 0)
		n->nice = nice;
	else if ((r == -ENOENT || r == -ENODEV) && n->bound &&
		 rgroup__be_destroy(st->be, n) == 0)
		n->bound = 0; /* removed by hand: it is gone */
	return r;
}

RGROUP__EXPORT int rgroup_setpriority(int which, id_t who, int prio)
{
	struct rgroup__node *n;
	int r;

	if (which != PRIO_RGRP)
		return setpriority(which, who, prio);
	r = rgroup__lookup_locked(who, &n);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	r = rgroup__set_nice_locked(n, rgroup__clamp_nice(prio));
	rgroup__unlock();
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
	r = rgroup__lookup_locked(who, &n);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	r = rgroup__node_nice(n);
	rgroup__unlock();
	return r;
}
