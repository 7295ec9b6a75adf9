/* SPDX-License-Identifier: MIT */
/*
 * sysgroup.h - a system group of the program's own (sysgroup.c), on the
 * hierarchy of a backend, so that the demo shows its split in a group
 * nothing else runs in, and a test never touches a group it did not make.
 *
 *   cgroup1: a child of the process's group in the v1 cpu hierarchy.
 *   cgroup2: a child of the parent of the process's group (the process's
 *            own group holds processes, so it cannot hand controllers
 *            down); the parent must already enable cpu for its children,
 *            as the VM's init does for the root.
 *   native:  as cgroup2 (the kernel's rgroups live inside it).
 *   governor: none (the governor divides the process's own time).
 *
 * scn_sg_open() finds the hierarchy, scn_sg_join() makes a group and moves
 * the whole process in, scn_sg_leave() moves it back and removes what was
 * made; scn_sg_cleanup() (registered at exit by scn_sg_open()) waits until
 * the library has removed its groups, then leaves. The test library
 * (test/lib/sgroup.h) builds its skipping calls on these.
 */
#ifndef RGROUP_SCENARIO_SYSGROUP_H
#define RGROUP_SCENARIO_SYSGROUP_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "locate.h"

#define SCN_MAX_SG 4

struct scn_sgroup {
	int v2;
	int gov;                /* the governor: no kernel groups to look at */
	int native;             /* the kernel's own rgroups: in /proc, not in
	                         * cgroupfs (the sgroup is a cgroup v2 group) */
	int delegated;          /* the process's own group is used as is:
	                         * nothing made, nothing removed (an
	                         * unprivileged user in a delegated group) */
	char home[PATH_MAX];    /* the process's group when it started */
	char base[PATH_MAX];    /* where the groups are made */
	struct rgroup__mount mount;   /* the hierarchy's mount */
	char made[SCN_MAX_SG][PATH_MAX];
	int nmade;
	pid_t owner;            /* forked children must not clean up */
};
extern struct scn_sgroup scn_sg;

/* ---- 0, or -errno and one line in why -------------------------------- */

/* Find the hierarchy of `backend` ("cgroup1", "cgroup2" and "native": the
 * v1 cpu or the v2 hierarchy; "governor": none needed) and where groups
 * can be made; scn_sg_cleanup() runs at exit. */
int scn_sg_open(const char *backend, char *why, size_t len);
/* Make the empty group `name` below the base (at most SCN_MAX_SG); its
 * cgroup path goes to out. An empty group of that name left by a killed
 * process is made again. */
int scn_sg_mkdir(const char *name, char *out, size_t len, char *why, size_t wlen);
/* Make group `name` below the base and move the whole process in; its
 * cgroup path goes to out. Nothing is left behind on failure. */
int scn_sg_join(const char *name, char *out, size_t len, char *why, size_t wlen);
/* Move the process back to its first group and remove what was made. Call
 * when the library has removed its groups (scn_wait_no_groups()). A group
 * that cannot be removed is named in why. */
int scn_sg_leave(char *why, size_t len);
/* Wait for the library, then scn_sg_leave(); says on stderr what it
 * could not do. Only in the process that opened the group. */
void scn_sg_cleanup(void);

/* Move the whole process (the administrator's move: cgroup.procs). */
int scn_sg_move(const char *cgpath);

/* ---- Looking at the hierarchy ---------------------------------------- */

/* The cgroup path of thread tid (0: the caller) on the hierarchy. */
int scn_thread_cgroup(pid_t tid, char *out, size_t len);
/* Absolute directory of a cgroup path on the hierarchy ("" if the path is
 * outside the mount). */
void scn_cg_dir(const char *cgpath, char *out, size_t len);
/* Directories named rgroup-<pid>-... at and below dir (pid 0: any owner;
 * nested groups carry their owner's pid too). */
int scn_count_groups(const char *dir, pid_t pid);
/* Directories of this process's groups in its system groups. The library
 * keeps emptied groups as spares for up to 0.5 s after its last creation
 * (the fast path), so "gone" is waited for, not assumed. */
int scn_own_dirs(void);
/* Wait until the library has no rgroup left and its directories are gone
 * from the system groups, and what the library does to the system groups
 * after removing the last of them is done; 0 on success. */
int scn_wait_no_groups(double timeout);

#endif /* RGROUP_SCENARIO_SYSGROUP_H */
