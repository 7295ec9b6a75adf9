/* SPDX-License-Identifier: MIT */
/*
 * sgroup.h - the test's own system group (sgroup.c), on the hierarchy of
 * the backend under test (RGROUP_BACKEND), made with the scenario
 * library's calls (src/scenario/sysgroup.h), so that a test never touches
 * a group it did not make and tests do not disturb each other; what the
 * kernel says of a test's groups; and threads that run in rgroups until
 * told to stop.
 *
 * rgt_sg_init() finds the hierarchy (or skips the program), rgt_sg_make()
 * makes a group, rgt_sg_enter() makes one and moves the whole process in;
 * the clean-up at exit (scn_sg_cleanup()) waits until the library has
 * removed its groups, moves the process back and removes what the test
 * made.
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
#include "sysgroup.h"

/* ---- The tests' calls: skip the program when it cannot run ----------- */

/* scn_sg_open() of RGROUP_BACKEND, as root (or delegated). */
void rgt_sg_init(void);
/* Make a new, empty system group; its cgroup path goes to out. */
void rgt_sg_make(const char *tag, char *out, size_t len);
/* Make a group and move in; the usual start of a system test. */
void rgt_sg_enter(char *out, size_t len);

/* ---- Looking at the hierarchy ---------------------------------------- */

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
