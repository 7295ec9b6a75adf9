/* SPDX-License-Identifier: MIT */
/*
 * cgroup1-cpuset.h - rule 10's CPU sets on cgroup v1 (cgroup1-cpuset.c):
 * the cpu hierarchy has no cpuset, so a group with CPUs gets a directory
 * of its own in the v1 cpuset hierarchy too, where that is mounted and
 * the process's cpuset group is writable; elsewhere per-thread affinity
 * does it (affinity.h).
 *
 * The cpuset directories are flat: each lies directly in the process's
 * cpuset group, named as the group's cpu directory
 * (rgroup-<pid>-<starttime>-<id>), with the group's CPUs (its own or
 * inherited) and the cpuset group's memory nodes. Nesting them would add
 * nothing: the core already keeps every child within its parent, and a
 * flat directory can take any subset of the process's CPUs at any time,
 * so no order of writes matters when a parent's set changes. Only groups
 * with CPUs (own or inherited) have one; their threads are placed in
 * both hierarchies. Lock held, except where said.
 */
#ifndef RGROUP_CGROUP1_CPUSET_H
#define RGROUP_CGROUP1_CPUSET_H

#include "cgroupfs.h"

/* The process's group in the v1 cpuset hierarchy, held as a cgroup
 * backend holds its sgroup (its descriptors checked, the directories'
 * thread lists in its cache). */
struct rgroup__cs {
	struct rgroup__cg cg;
};

/* cgroup1's per-node data: the cpu directory, and the cpuset one. */
struct rgroup__c1_node {
	struct rgroup__cg_node cg;      /* first: rgroup__cg_node() works */
	int mirror;                     /* its cpuset directory exists */
};

static inline struct rgroup__c1_node *rgroup__c1_node(const struct rgroup__node *n)
{
	return rgroup__node_priv(n);
}

/* Find and hold the process's cpuset group; remove what dead rgroup
 * processes left there. 0, or -errno when it cannot be used (not
 * mounted, mounted with cpu, not writable): then affinity is used. */
int rgroup__cs_attach(struct rgroup__cs *cs);
void rgroup__cs_detach(struct rgroup__cs *cs);
/* Has the process been moved in the cpuset hierarchy? 1, 0 or -errno. */
int rgroup__cs_moved(struct rgroup__cs *cs);
/* A new node: nothing open yet. */
void rgroup__cs_init_node(struct rgroup__node *n);
/* n's CPUs changed (its own, or n is new and confined): make, update or
 * remove the cpuset directories of n and of the descendants that inherit
 * its set, and move their threads (listed by cg) there or back. */
int rgroup__cs_sync(struct rgroup__cs *cs, struct rgroup__cg *cg, struct rgroup__node *n);
/* Thread tid goes into n (NULL: the sgroup): into n's cpuset directory
 * too, made on first use, or back to the process's cpuset group. */
int rgroup__cs_place(struct rgroup__cs *cs, const struct rgroup__node *n, pid_t tid);
/* n's cpu directory is gone: remove its cpuset directory (stragglers
 * back to the cpuset group first). */
void rgroup__cs_destroy(struct rgroup__cs *cs, struct rgroup__node *n);
/* Move n's threads back to the process's cpuset group (exit, exec). */
int rgroup__cs_evacuate(struct rgroup__cs *cs, const struct rgroup__node *n);
/* Fork child (async-signal-safe): the process back in its cpuset group,
 * every descriptor of ours closed. */
void rgroup__cs_fork_child(struct rgroup__cs *cs);
/* At _exit (backend.h: exit_remove): n's cpuset directory, if it has one. */
void rgroup__cs_exit_remove(struct rgroup__cs *cs, const struct rgroup__node *n);
/* exec (async-signal-safe, no lock): the caller into n's cpuset
 * directory, or (NULL) back into the process's cpuset group. */
int rgroup__cs_place_self(struct rgroup__cs *cs, const struct rgroup__node *n);

#endif /* RGROUP_CGROUP1_CPUSET_H */
