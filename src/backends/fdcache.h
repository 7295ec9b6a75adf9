/* SPDX-License-Identifier: MIT */
/*
 * fdcache.h - the descriptors the cgroup backends keep across calls
 * (fdcache.c), and the small cache of group files that bounds them.
 *
 * The application owns the descriptor table: it may close every number
 * above 2 (closefrom(3)) and open its own files under the numbers the
 * library had. So a kept descriptor is checked before each use (fstat:
 * the device and inode it was opened as, on a cgroup filesystem, checked
 * when it was opened); one that fails the check is forgotten, never
 * written and never closed (the number is the application's now), and
 * the file is opened again by its path.
 *
 * Group files (a group's thread list, its weight) live in a cache of at
 * most RGROUP__FDC_SLOTS descriptors, least recently used out first, and
 * fewer when RLIMIT_NOFILE is small; a miss opens the file by path. Near
 * the limit nothing new is cached: the last descriptors of the table are
 * the application's.
 */
#ifndef RGROUP_FDCACHE_H
#define RGROUP_FDCACHE_H

#include <pthread.h>
#include <sys/types.h>

/* A descriptor the library keeps, and the file it was opened as. */
struct rgroup__kfd {
	int fd;                 /* -1: none */
	dev_t dev;
	ino_t ino;
};

#define RGROUP__KFD_NONE { .fd = -1 }

/* Keep fd, just opened by the library, in *k: 0; -EMEDIUMTYPE (fd
 * closed) when it is not on a cgroup filesystem; -errno from fstat. */
int rgroup__kfd_set(struct rgroup__kfd *k, int fd);
/* k's descriptor if it still is the file it was opened as; else -1, and
 * k forgets it without closing it. Async-signal-safe. */
int rgroup__kfd_get(struct rgroup__kfd *k);
/* Close k's descriptor if it still is ours; forget it either way.
 * Async-signal-safe. */
void rgroup__kfd_close(struct rgroup__kfd *k);

/* Most descriptors of group files cached at once. */
#define RGROUP__FDC_SLOTS 16

/* Group files cached: (owner, kind) names a file, owner is the group's
 * node. Its own lock: threads place themselves without the core lock. */
struct rgroup__fdc {
	pthread_mutex_t lock;
	unsigned long clock;
	struct rgroup__fdc_slot {
		const void *owner;      /* NULL: free */
		int kind;
		int busy;               /* users between get and put */
		int dead;               /* dropped while busy: the last put closes */
		unsigned long used;
		struct rgroup__kfd k;
	} s[RGROUP__FDC_SLOTS];
};

#define RGROUP__FDC_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }

/* The cached descriptor of (owner, kind), checked, held (not closed)
 * until rgroup__fdc_release(c, *slot); -1 when none is cached. */
int rgroup__fdc_get(struct rgroup__fdc *c, const void *owner, int kind, int *slot);
void rgroup__fdc_release(struct rgroup__fdc *c, int slot);
/*
 * A descriptor the caller opened and kept in *fresh (rgroup__kfd_set()):
 * cached, the least recently used idle one closed to make room; or
 * closed, when every slot is in use, (owner, kind) is cached already, or
 * the descriptor table is near RLIMIT_NOFILE. *fresh is empty after.
 */
void rgroup__fdc_add(struct rgroup__fdc *c, const void *owner, int kind,
		     struct rgroup__kfd *fresh);
/* Close what is cached for owner (its group is gone). An entry in use is
 * closed by its last user (rgroup__fdc_put()). */
void rgroup__fdc_drop(struct rgroup__fdc *c, const void *owner);
/* Close everything (detach). */
void rgroup__fdc_clear(struct rgroup__fdc *c);
/* In a fork child (async-signal-safe, no lock): close what is ours,
 * forget everything, reset the lock. */
void rgroup__fdc_fork_child(struct rgroup__fdc *c);
/* Descriptors cached now (tests, rgroup doctor). */
int rgroup__fdc_count(struct rgroup__fdc *c);

#endif /* RGROUP_FDCACHE_H */
