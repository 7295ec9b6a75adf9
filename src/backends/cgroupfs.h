/* SPDX-License-Identifier: MIT */
/*
 * cgroupfs.h - what both cgroup backends share: the attached sgroup, each
 * group's directory, the descriptors kept for both (checked before each
 * use, fdcache.h), the file helpers (cgroupfs.c) and the backend
 * operations that work the same on v1 and v2 (cgroup-ops.c).
 */
#ifndef RGROUP_CGROUPFS_H
#define RGROUP_CGROUPFS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "fault.h"
#include "fdcache.h"
#include "locate.h"
#include "parse.h"
#include "weight.h"

/* The state of one cgroup backend: its variant and the attached sgroup. */
struct rgroup__cg {
	const char *ctrl;       /* v1 controller token ("cpu"), NULL for v2 */
	const char *tidsfile;   /* "tasks" (v1) or "cgroup.threads" (v2) */
	char path[PATH_MAX];    /* the sgroup's path in its hierarchy */
	char dir[PATH_MAX];     /* ... its directory ("" while detached) */
	/* The sgroup's directory, thread list and cgroup.procs: reach them
	 * through rgroup__cg_dirfd() and rgroup__cg_sgfd(), which check them. */
	struct rgroup__kfd sgroup, place, procs;
	struct rgroup__fdc fdc; /* the groups' files (fdcache.h) */
	pid_t pid;              /* the owner named in directory names */
	uint64_t starttime;
	uint64_t pidns;         /* its PID namespace (0: the initial one) */
	int weight_nice;        /* v2: weightfd is cpu.weight.nice */
	/* Rule 10: 1 when the cpuset controller gives groups their CPUs, 0
	 * when per-thread affinity does (affinity.h), -1 not known yet (set
	 * at attach). */
	int cpuset;
};

#define RGROUP__CG_INIT .sgroup = RGROUP__KFD_NONE, .place = RGROUP__KFD_NONE, \
			.procs = RGROUP__KFD_NONE, .fdc = RGROUP__FDC_INIT

/* A group's directory: the cgroup backends' per-node data. Its files'
 * descriptors are in the cache (struct rgroup__fdc), by node and kind. */
struct rgroup__cg_node {
	char name[64];          /* rgroup-<pid>-<starttime>-<id>[-ns<pidns>] */
};

/* The group files the cache keeps: by node, the thread list and the
 * weight; cgroup1's cpuset directory's thread list (cgroup1-cpuset.h). */
enum { RGROUP__CG_PLACE, RGROUP__CG_WEIGHT, RGROUP__CG_MIRROR };

static inline struct rgroup__cg_node *rgroup__cg_node(const struct rgroup__node *n)
{
	return rgroup__node_priv(n);
}

/* Where the sgroup of the calling process is, as the backend sees it. */
int rgroup__cg_locate_self(const struct rgroup__cg *cg, struct rgroup__cgloc *loc,
			   char *why, size_t wlen);

/* Generic backend operations (see struct rgroup__backend). */
int rgroup__cg_attach(void *priv);
void rgroup__cg_detach(void *priv);
int rgroup__cg_moved(void *priv);
int rgroup__cg_place(void *priv, struct rgroup__node *n, pid_t tid);
int rgroup__cg_destroy(void *priv, struct rgroup__node *n);
int rgroup__cg_evacuate(void *priv, const struct rgroup__node *n);
int rgroup__cg_group_of(void *priv, pid_t tid, struct rgroup__node **n);
void rgroup__cg_info(void *priv, const struct rgroup__node *n, struct rgroup_info *info);
void rgroup__cg_fork_child(void *priv);
void rgroup__cg_exit_move(struct rgroup__cg *cg);
void rgroup__cg_exit_remove(struct rgroup__cg *cg, const struct rgroup__node *n);
int rgroup__cg_place_self(void *priv, const struct rgroup__node *n);
/* The same into the thread list `file` below the sgroup, opened by path
 * (async-signal-safe). */
int rgroup__cg_place_self_at(struct rgroup__cg *cg, const char *file);
/* Name n's directory, mkdir it below its parent; the caller adds the
 * backend's specifics and calls rgroup__cg_unmake() if they fail. */
int rgroup__cg_make(struct rgroup__cg *cg, struct rgroup__node *n);
void rgroup__cg_unmake(struct rgroup__cg *cg, struct rgroup__node *n);
/* "<n's path>/<file>" (n NULL: the sgroup's own file). */
int rgroup__cg_file(const struct rgroup__node *n, const char *file, char *buf,
		    size_t len);
/* Write val to file `path` (below the sgroup), kept in the cache as
 * (owner, kind): through the cached descriptor, or opened by path (and
 * cached, where the cache takes it). */
int rgroup__cg_cached_write(struct rgroup__cg *cg, const void *owner, int kind,
			    const char *path, const char *val);
/* Write val to n's file, of cache kind `kind`, through the cached
 * descriptor, or opened by path (and cached, where the cache takes it). */
int rgroup__cg_node_write(struct rgroup__cg *cg, struct rgroup__node *n,
			  int kind, const char *file, const char *val);
/* The sgroup's directory, checked: opened again by path when the
 * application closed it or its number names another file now. A
 * descriptor, or -errno. */
int rgroup__cg_dirfd(struct rgroup__cg *cg);
/* The same for the sgroup's file `file`, kept in *k (cg->place,
 * cg->procs), opened for writing. */
int rgroup__cg_sgfd(struct rgroup__cg *cg, struct rgroup__kfd *k, const char *file);

/* Plain helpers, every one asking rgroup__fault() first. All opens stay
 * beneath dirfd (no symlink, no other mount) and use O_CLOEXEC; every
 * value is one write(). */
int rgroup__cg_open(int dirfd, const char *file, int flags);
int rgroup__cg_write(int dirfd, const char *file, const char *val);
int rgroup__cg_write_fd(int fd, const char *val);
int rgroup__cg_write_int(int fd, long long val);
/* val in decimal into buf (24 bytes); returns buf. Async-signal-safe
 * (fork child, vfork child), and cheap: weight writes are a hot path
 * (PRIO_RGRP), where snprintf() cost 7%. */
char *rgroup__cg_itoa(char *buf, long long val);
/* Reads the whole file (NUL-terminated); returns length or -errno. */
int rgroup__cg_read(int dirfd, const char *file, char *buf, size_t len);
int rgroup__cg_read_fd(int fd, char *buf, size_t len);
/* mkdir path (relative to dirfd), a name of this process's own, with its
 * parent's permission bits, never wider; a directory of that name left
 * by an earlier image of the process is removed first (-EBUSY if it
 * cannot be: never -EEXIST). */
int rgroup__cg_mkdir(int dirfd, const char *path);
int rgroup__cg_rmdir(int dirfd, const char *path);
/* Open a cgroup directory by absolute path. */
int rgroup__cg_open_dir(const char *path);
/* Hold the group at directory `dir` for placing threads: the directory,
 * its thread list `tidsfile` and cgroup.procs, opened for writing; and
 * remove what dead rgroup processes left in it. Outputs set on success. */
int rgroup__cg_hold(const char *dir, const char *tidsfile, int *dirfd, int *placefd,
		    int *procsfd);
/* Is the calling thread's group on hierarchy ctrl (NULL: v2) no longer
 * `path`? 1, 0 or -errno. */
int rgroup__cg_moved_from(const char *ctrl, const char *path);
/* Remove, bottom-up, every rgroup directory tree directly in sgroupfd
 * whose owning process is gone (name: rgroup__format_dirname_ns(); owner:
 * rgroup__owner_alive_ns(), in any PID namespace). Never
 * touches a live process's groups or anything not named by rgroup.
 * Returns the number of directories removed or -errno. */
int rgroup__cg_gc(int sgroupfd);
/* Move each thread listed in file `tids` (below dirfd) to placefd. */
int rgroup__cg_move_all(int dirfd, const char *tids, int placefd);
/* Call fn(tid, arg) for each thread in n's group itself, from its
 * thread list (affinity.h's lister for the cgroup backends). */
int rgroup__cg_each_tid(void *priv, const struct rgroup__node *n,
			int (*fn)(pid_t tid, void *arg), void *arg);
/* Write n's cap (rule 10) to file `file` as cgroup v2's cpu.max says it:
 * "QUOTA PERIOD", or "max" for none. */
int rgroup__cg_write_max(struct rgroup__cg *cg, const struct rgroup__node *n, const char *file);

#endif /* RGROUP_CGROUPFS_H */
