/* SPDX-License-Identifier: MIT */
/*
 * census.c - the keeper's census: members the library did not make
 * (rule 8).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"

static struct rgroup__core *const st = &rgroup__core;

/*
 * A thread a member makes without the library seeing it born (raw
 * clone(CLONE_THREAD), glibc's helper threads, a static link without the
 * --wrap of pthread_create: thread-create.c) starts in its creator's
 * group (the kernel's doing), unseen by the library. When the
 * process is moved, the kernel moves every thread into the new sgroup
 * itself, and where each of those was is lost. So the keeper takes a
 * census at every tick: threads it has not classified yet are asked of the
 * backend once, and kept as the group's strays (or as plain threads); the
 * tree is rebuilt with them. A thread made less than a tick before a move
 * is missed (it stays in the sgroup): the window is KEEPER_IDLE_MS.
 */
static int tids_find(const pid_t *v, size_t n, pid_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid] == tid)
			return 1;
		if (v[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int rgroup__tids_add(pid_t **v, size_t *n, size_t *cap, pid_t tid)
{
	size_t i = *n;

	if (tids_find(*v, *n, tid))
		return 0;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		pid_t *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	while (i > 0 && (*v)[i - 1] > tid) {
		(*v)[i] = (*v)[i - 1];
		i--;
	}
	(*v)[i] = tid;
	(*n)++;
	return 0;
}

/* The tids listed in /proc/self/task, sorted; -errno. */
static int list_tasks(pid_t **v, size_t *n, size_t *cap)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int r = 0;

	if (!d)
		return -errno;
	*n = 0;
	while (r == 0 && (e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			r = rgroup__tids_add(v, n, cap, (pid_t)atoi(e->d_name));
	closedir(d);
	return r;
}

/* Drop the strays that are gone. */
static int prune_strays(struct rgroup__node *n, void *arg)
{
	const struct { pid_t *v; size_t n; } *live = arg;
	unsigned int k = 0;

	for (unsigned int i = 0; i < n->nstrays; i++)
		if (tids_find(live->v, live->n, n->strays[i]))
			n->strays[k++] = n->strays[i];
	n->nstrays = k;
	return 0;
}

static int add_stray(struct rgroup__node *n, pid_t tid)
{
	if (n->nstrays == n->cap_strays) {
		unsigned int ncap = n->cap_strays ? n->cap_strays * 2 : 4;
		pid_t *nv = realloc(n->strays, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM; /* unknown still: the next census tries again */
		n->strays = nv;
		n->cap_strays = ncap;
	}
	n->strays[n->nstrays++] = tid;
	return 0;
}

void rgroup__census(void)
{
	static pid_t *live;
	static size_t nlive, cap_live;
	pid_t *plain = NULL, *strays = NULL;
	size_t nplain = 0, cap_plain = 0, nstrays = 0, cap_strays = 0;
	struct { pid_t *v; size_t n; } arg;

	if (!st->be->moved || list_tasks(&live, &nlive, &cap_live) < 0)
		return;
	arg.v = live;
	arg.n = nlive;
	rgroup__walk_pre(st->top, prune_strays, &arg);
	for (size_t i = 0; i < nlive; i++) {
		struct rgroup__node *n = NULL;
		pid_t tid = live[i];

		if (rgroup__thread_by_tid(tid))
			continue;
		if (tids_find(st->strays, st->nstrays, tid)) {
			rgroup__tids_add(&strays, &nstrays, &cap_strays, tid);
		} else if (tids_find(st->plain, st->nplain, tid) ||
			   st->be->group_of(st->be->priv, tid, &n) <= 0 || !n) {
			rgroup__tids_add(&plain, &nplain, &cap_plain, tid);
		} else if (add_stray(n, tid) == 0) {
			rgroup__tids_add(&strays, &nstrays, &cap_strays, tid);
		}
	}
	free(st->plain);
	free(st->strays);
	st->plain = plain;
	st->nplain = nplain;
	st->cap_plain = cap_plain;
	st->strays = strays;
	st->nstrays = nstrays;
	st->cap_strays = cap_strays;
}

