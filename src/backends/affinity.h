/* SPDX-License-Identifier: MIT */
/*
 * affinity.h - rule 10's CPU sets as per-thread affinity (affinity.c):
 * how the governor gives a group its CPUs, and the cgroup backends where
 * no cpuset controller can be used (cgroup v1 without a writable cpuset
 * hierarchy, a cgroup v2 sgroup that does not get cpuset). Weaker than a
 * cpuset: a thread of the group that calls sched_setaffinity(2) itself
 * can leave the set (rgroup(7) says so).
 *
 * A thread's affinity is set when it is placed into a group that has
 * CPUs (its own or inherited), and for every thread of a group and of
 * its inheriting descendants when the group's set changes; a thread put
 * back into the sgroup, or in a group whose set is lifted, gets what the
 * process may use (rgroup__process_cpus()). Threads born in a group
 * inherit their creator's affinity from the kernel. Lock held throughout.
 */
#ifndef RGROUP_AFFINITY_H
#define RGROUP_AFFINITY_H

#include "backend.h"

/* Call fn(tid, arg) for each thread of n itself (not its children): a
 * backend's list of them. 0, or the first error. */
typedef int (*rgroup__each_tid)(void *priv, const struct rgroup__node *n,
				int (*fn)(pid_t tid, void *arg), void *arg);

/* Thread tid is placed into n (NULL: the sgroup): give it n's CPUs. */
int rgroup__aff_place(const struct rgroup__node *n, pid_t tid);
/* n's CPUs changed: give them to its threads and to the threads of the
 * descendants that inherit them, listed by each(priv, ...). */
int rgroup__aff_spread(const struct rgroup__node *n, rgroup__each_tid each, void *priv);
/* n's threads are about to leave for the sgroup (exit, exec): give them
 * what the process may use, if n had narrowed it. */
int rgroup__aff_release(const struct rgroup__node *n, rgroup__each_tid each, void *priv);
/* The calling thread leaves its group for good: in a fork child before
 * the core forgets the tree, or before exec where the kernel starts the
 * program outside every group (async-signal-safe: no lock, no
 * allocation). If its group had CPUs, it gets back the process's CPUs as
 * last seen (rule 7: a child starts outside every group). */
void rgroup__aff_leave_self(void);
/* The lister for the threads the core tracks (the governor's view). */
int rgroup__aff_tracked(void *priv, const struct rgroup__node *n,
			int (*fn)(pid_t tid, void *arg), void *arg);

#endif /* RGROUP_AFFINITY_H */
