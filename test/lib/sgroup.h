/* SPDX-License-Identifier: MIT */
/*
 * sgroup.h - a system group of the test's own (sgroup.c), on the hierarchy
 * of the backend under test (RGROUP_BACKEND), so that a test never touches
 * a group it did not make and tests do not disturb each other; and threads
 * that run in rgroups until told to stop. The demo makes its system group
 * with the same calls.
 *
 *   cgroup1: a child of the process's group in the v1 cpu hierarchy.
 *   cgroup2: a child of the parent of the process's group (the process's
 *            own group holds processes, so it cannot hand controllers
 *            down); the parent must already enable cpu for its children,
 *            as the VM's init does for the root.
 *
 * Tests: rgt_sg_init() finds the hierarchy (or skips the program),
 * rgt_sg_make() makes a group, rgt_sg_enter() makes one and moves the
 * whole process in, rgt_sg_cleanup() (also run at exit) waits until the
 * library has removed its groups, moves the process back and removes what
 * the test made. The calls that return an error instead of skipping
 * (rgt_sg_open(), rgt_sg_join(), rgt_sg_leave()) are for programs that
 * carry on without a group of their own, as the demo does.
 */
#ifndef RGROUP_TEST_SGROUP_H
#define RGROUP_TEST_SGROUP_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "check.h"
#include "governor-state.h"
#include "locate.h"
#include "parse.h"
#include "util.h"
#include "weight.h"
#include "rgroup.h"

#define RGT_MAX_SG 4

struct rgt_sgroup {
	int v2;
	int gov;                /* the governor: no kernel groups to look at */
	int native;             /* the kernel's own rgroups: in /proc, not in
	                         * cgroupfs (the sgroup is a cgroup v2 group) */
	int delegated;          /* RGROUP_TEST_DELEGATED: an unprivileged user in
	                         * a delegated group, used as the sgroup as is */
	char home[PATH_MAX];    /* the process's group when it started */
	char base[PATH_MAX];    /* where the groups are made */
	struct rgroup__mount mount;   /* the hierarchy's mount */
	char made[RGT_MAX_SG][PATH_MAX];
	int nmade;
	pid_t owner;            /* forked children must not clean up */
};
extern struct rgt_sgroup rgt_sg;

/* ---- Calls that return an error: 0, or -errno and one line in why ---- */

/* Find the hierarchy of `backend` ("cgroup1", "cgroup2" and "native": the
 * v1 cpu or the v2 hierarchy; "governor": none needed) and where groups
 * can be made; rgt_sg_cleanup() runs at exit. */
int rgt_sg_open(const char *backend, char *why, size_t len);
/* Make group `name` below the base and move the whole process in; its
 * cgroup path goes to out. Nothing is left behind on failure. */
int rgt_sg_join(const char *name, char *out, size_t len, char *why, size_t wlen);
/* Move the process back to its first group and remove what was made. Call
 * when the library has removed its groups (rgt_wait_no_groups()). A group
 * that cannot be removed is named in why. */
int rgt_sg_leave(char *why, size_t len);

/* ---- The tests' calls: skip the program when it cannot run ----------- */

/* rgt_sg_open() of RGROUP_BACKEND, as root (or delegated). */
void rgt_sg_init(void);
/* Make a new, empty system group; its cgroup path goes to out. */
void rgt_sg_make(const char *tag, char *out, size_t len);
/* Make a group and move in; the usual start of a system test. */
void rgt_sg_enter(char *out, size_t len);
/* Wait for the library, then rgt_sg_leave(); says on stderr what it
 * could not do. Only in the process that opened the group. */
void rgt_sg_cleanup(void);

/* Move the whole process (the administrator's move: cgroup.procs). */
int rgt_sg_move(const char *cgpath);

/* ---- Looking at the hierarchy ---------------------------------------- */

/* The cgroup path of thread tid (0: the caller) on the tested hierarchy. */
int rgt_thread_cgroup(pid_t tid, char *out, size_t len);
/* Absolute directory of a cgroup path on the tested hierarchy ("" if the
 * path is outside the mount). */
void rgt_cg_dir(const char *cgpath, char *out, size_t len);
/* Directories named rgroup-<pid>-... at and below dir (pid 0: any owner;
 * nested groups carry their owner's pid too). */
int rgt_count_groups(const char *dir, pid_t pid);
/* Directories of this process's groups in the test's system groups. The
 * library keeps emptied groups as spares for up to 0.5 s after its last
 * creation (the fast path), so "gone" is waited for, not assumed. */
int rgt_own_dirs(void);
/* Wait until the library has no rgroup left and its directories are gone
 * from the test's system groups; 0 on success. */
int rgt_wait_no_groups(double timeout);
/* The value of a file in the directory of a cgroup path (LLONG_MIN: none). */
long long rgt_cg_value(const char *cgpath, const char *file);
/* The kernel's view of the weight of the rgroup at cgpath, as a nice
 * value's weight (v1 cpu.shares; v2 cpu.weight.nice mapped back). */
long long rgt_cg_weight(const char *cgpath);
/* Is there a kernel side to check (not the governor)? */
int rgt_kernel(void);
/* Are the groups cgroupfs directories (cgroup1, cgroup2; not the native
 * kernel's, nor the governor's)? */
int rgt_dirs(void);
/* The native kernel's view of thread tid's rgroup (0: the caller), from
 * /proc/self/task/TID/rgroup: 0, or -errno (-ENOENT: no such file, not a
 * native kernel). */
int rgt_kgroup(pid_t tid, struct rgroup__kgroup *g);
/* The cgroup path of rgroup id's directory on a cgroup backend: sgpath
 * and the names of its chain (rgroup_info). 0, or -1 if a group of the
 * chain is unknown. */
int rgt_group_path(const char *sgpath, rgroup_id_t id, char *out, size_t len);
/* Does the kernel hold thread tid where the library says, in its group id
 * (0: in none)? cgroup backends: the directory of the group's chain below
 * the system group the process is in (sgpath); native: the kernel rgroup
 * of the same id (rgroup_info's name) and depth, and the system group
 * itself in cgroupfs; the governor has no kernel view (always 1). 1, or 0
 * with what the kernel says in why. */
int rgt_kernel_agrees(const char *sgpath, pid_t tid, rgroup_id_t id, char *why, size_t len);
/* The kernel's weight for thread tid's group (library group id, below the
 * system group sgpath): the cgroupfs file, or the native kernel's nice; -1
 * for the governor (no kernel view), -2 when it cannot be read. */
long long rgt_kernel_weight(const char *sgpath, pid_t tid, rgroup_id_t id);

/* ---- Threads that do something until told to stop ------------------- */

struct rgt_worker {
	pthread_t thread;
	pid_t tid;
	volatile int stop;
	volatile int ready;
	int spin;                /* burn CPU (else sleep) */
	int new_group;           /* children: created with RGROUP_NEW */
	int nice;                /* PRIO_RGRP to set from inside, if set_nice */
	int set_nice;
	int nkids;               /* threads it starts inside its own group */
	struct rgt_worker *kids;
	int err;                 /* first error seen inside */
	volatile unsigned long counter;
};

/* Start w (and, from inside it, its kids) with rgroup_thread_create(); 0
 * or an error number, when w is running and ready. */
int rgt_worker_start(struct rgt_worker *w, unsigned flags);
/* Stop and join w's descendants, then w. */
void rgt_worker_stop(struct rgt_worker *w);

#endif /* RGROUP_TEST_SGROUP_H */
