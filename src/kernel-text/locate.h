/* SPDX-License-Identifier: MIT */
/*
 * locate.h - where a process's cgroup is, and the small /proc readers
 * around it (locate.c). The one locator of the project: the library's
 * cgroup backends, the rgroup command and the tests all find groups
 * through it, as every systemd tool goes through cg_pid_get_path().
 */
#ifndef RGROUP_LOCATE_H
#define RGROUP_LOCATE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "parse.h"

/* A process's group on one cgroup hierarchy. */
struct rgroup__cgloc {
	struct rgroup__mount mount;   /* the hierarchy's mount */
	char path[PATH_MAX];          /* the group's path in the hierarchy */
	char dir[PATH_MAX];           /* its directory: mount point + path */
};

/*
 * The group of process `pid` (0: the calling thread) on the v1 hierarchy
 * with controller `ctrl` ("cpu"), or on cgroup v2 (ctrl NULL). 0, or a
 * negative errno and, in why[wlen] (may be NULL), one line saying why and
 * what to do: -ENOTSUP no such hierarchy or group, -EROFS mounted
 * read-only, -ENOENT and others from reading /proc.
 */
int rgroup__cg_locate(pid_t pid, const char *ctrl, struct rgroup__cgloc *loc,
		      char *why, size_t wlen);
/* Call fn for each hierarchy that can hold rgroups (cgroup2, and v1 with
 * the cpu controller), once per hierarchy however often it is mounted;
 * stops at a non-zero return and returns it. -errno if mountinfo cannot be
 * read. fn must not call the locator (it holds its buffer). */
int rgroup__cg_mounts(int (*fn)(void *arg, const struct rgroup__mount *m, int v2),
		      void *arg);

/* Read a whole file by absolute path, NUL-terminated: its length or
 * -errno (-EFBIG when it does not fit). */
int rgroup__read_path(const char *path, char *buf, size_t len);
/* The same through an open descriptor (from offset 0). */
int rgroup__read_fd(int fd, char *buf, size_t len);
/* Format one "reason; fix" line into why[len] (why may be NULL); returns
 * err, so that `return rgroup__why(...)` reports and fails in one. */
int rgroup__why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Start time (field 22 of /proc/<pid>/stat; pid 0: the caller), 0 if it
 * cannot be read. Names made from a pid carry it, so that a reused pid is
 * never mistaken for the owner. */
uint64_t rgroup__starttime(pid_t pid);
/* Is process pid still the one that started at `start`? 1 also when it
 * cannot tell (among others: a process of that pid whose start time
 * differs, in another time namespace), so that nothing of a live process
 * is ever removed. pid as the caller's /proc numbers processes. */
int rgroup__owner_alive(pid_t pid, uint64_t start);

/* The initial PID namespace's inode (the kernel's PROC_PID_INIT_INO). */
#define RGROUP__PIDNS_INIT 0xEFFFFFFCu
/* The calling process's PID namespace as names carry it: its inode, or
 * 0 in the initial namespace (and when /proc cannot say). */
uint64_t rgroup__pidns_self(void);
/* rgroup__owner_alive() for an owner named with its PID namespace
 * (rgroup__parse_dirname_ns(); 0: the initial one) and its pid there,
 * judged wherever the caller is: through its own /proc when that numbers
 * the owner's namespace, else by a walk of /proc (by /proc/N/ns/pid and
 * the NSpid line). 1 also when it cannot tell. */
int rgroup__owner_alive_ns(pid_t pid, uint64_t start, uint64_t pidns);

/* Remove the files in dir (not below) that processes which no longer
 * exist left behind: a name parse() accepts (0; it gives the owner's pid
 * and start time), a regular file, its owner gone (rgroup__owner_alive_ns()
 * when the file's first line names the owner's PID namespace, "pidns=N",
 * else rgroup__owner_alive()), and the caller's own unless any_owner. With dry_run nothing is removed.
 * seen(arg, path, err), if not NULL, is told of each (err 0, or the errno
 * of a failed unlink). Returns how many were (or would be) removed, or
 * -errno if dir cannot be read. */
int rgroup__sweep_dead_owners(const char *dir,
			      int (*parse)(const char *name, pid_t *pid, uint64_t *start, int *tmp),
			      int dry_run, int any_owner,
			      void (*seen)(void *arg, const char *path, int err), void *arg);

#endif /* RGROUP_LOCATE_H */
