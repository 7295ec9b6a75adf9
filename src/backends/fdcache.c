/* SPDX-License-Identifier: MIT */
/*
 * fdcache.c - kept descriptors checked before use, and the bounded cache
 * of group files (fdcache.h).
 */
#include <errno.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fdcache.h"

int rgroup__kfd_set(struct rgroup__kfd *k, int fd)
{
	struct statfs sf;
	struct stat st;

	if (fstatfs(fd, &sf) < 0 || fstat(fd, &st) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	if (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return -EMEDIUMTYPE;
	}
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	__atomic_store_n(&k->fd, fd, __ATOMIC_RELEASE);
	return 0;
}

/* The device and inode were taken on a cgroup filesystem, whose device
 * number no other filesystem shares: a match is that very file. */
static int same_file(const struct rgroup__kfd *k, int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == k->dev && st.st_ino == k->ino;
}

int rgroup__kfd_get(struct rgroup__kfd *k)
{
	int fd = __atomic_load_n(&k->fd, __ATOMIC_ACQUIRE);

	if (fd < 0)
		return -1;
	if (same_file(k, fd))
		return fd;
	/* Closed, or the number is another file now: not ours to close. */
	__atomic_compare_exchange_n(&k->fd, &fd, -1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return -1;
}

void rgroup__kfd_close(struct rgroup__kfd *k)
{
	int fd = rgroup__kfd_get(k);

	if (fd >= 0)
		close(fd);
	__atomic_store_n(&k->fd, -1, __ATOMIC_RELEASE);
}

/* ---- The cache of group files ------------------------------------------ */

static struct rgroup__fdc_slot *find(struct rgroup__fdc *c, const void *owner, int kind)
{
	for (int i = 0; i < RGROUP__FDC_SLOTS; i++)
		if (c->s[i].owner == owner && c->s[i].kind == kind && !c->s[i].dead)
			return &c->s[i];
	return NULL;
}

static void release(struct rgroup__fdc_slot *s)
{
	rgroup__kfd_close(&s->k);
	s->owner = NULL;
	s->busy = s->dead = 0;
}

int rgroup__fdc_get(struct rgroup__fdc *c, const void *owner, int kind, int *slot)
{
	struct rgroup__fdc_slot *s;
	int fd = -1;

	pthread_mutex_lock(&c->lock);
	s = find(c, owner, kind);
	if (s && (fd = rgroup__kfd_get(&s->k)) < 0) {
		/* The application's number now: forgotten. */
		if (s->busy)
			s->dead = 1;
		else
			release(s);
	} else if (s) {
		s->busy++;
		s->used = ++c->clock;
		*slot = (int)(s - c->s);
	}
	pthread_mutex_unlock(&c->lock);
	return fd;
}

void rgroup__fdc_release(struct rgroup__fdc *c, int slot)
{
	struct rgroup__fdc_slot *s = &c->s[slot];

	pthread_mutex_lock(&c->lock);
	if (--s->busy == 0 && s->dead)
		release(s);
	pthread_mutex_unlock(&c->lock);
}

/*
 * How many group files may be cached with this RLIMIT_NOFILE (0: none
 * for fd). An eighth of the table at most, and nothing when fd, the
 * lowest free number when it was opened, lies in the table's last
 * quarter: then the application holds most of the table.
 */
static int room(int fd)
{
	struct rlimit rl;
	unsigned long long lim, cap;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	lim = rl.rlim_cur;
	if ((unsigned long long)fd >= lim - lim / 4)
		return 0;
	cap = lim / 8;
	return cap < RGROUP__FDC_SLOTS ? (int)cap : RGROUP__FDC_SLOTS;
}

/* The least recently used entry no one is using, NULL if none. */
static struct rgroup__fdc_slot *idle_lru(struct rgroup__fdc *c)
{
	struct rgroup__fdc_slot *lru = NULL;

	for (int i = 0; i < RGROUP__FDC_SLOTS; i++) {
		struct rgroup__fdc_slot *s = &c->s[i];
		if (s->owner && !s->busy && (!lru || s->used < lru->used))
			lru = s;
	}
	return lru;
}

void rgroup__fdc_add(struct rgroup__fdc *c, const void *owner, int kind,
		     struct rgroup__kfd *fresh)
{
	struct rgroup__fdc_slot *s = NULL, *lru;
	int cap, n = 0;

	pthread_mutex_lock(&c->lock);
	cap = find(c, owner, kind) ? 0 : room(fresh->fd);
	for (int i = 0; i < RGROUP__FDC_SLOTS; i++)
		n += c->s[i].owner != NULL;
	/* Least recently used out, down to the room there is (the limit
	 * may have been lowered since). */
	while (cap > 0 && n >= cap && (lru = idle_lru(c))) {
		release(lru);
		n--;
	}
	for (int i = 0; cap > 0 && n < cap && !s && i < RGROUP__FDC_SLOTS; i++)
		if (!c->s[i].owner)
			s = &c->s[i];
	if (s) {
		s->owner = owner;
		s->kind = kind;
		s->busy = s->dead = 0;
		s->used = ++c->clock;
		s->k = *fresh;
	} else {
		rgroup__kfd_close(fresh);
	}
	fresh->fd = -1;
	pthread_mutex_unlock(&c->lock);
}

void rgroup__fdc_drop(struct rgroup__fdc *c, const void *owner)
{
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < RGROUP__FDC_SLOTS; i++) {
		struct rgroup__fdc_slot *s = &c->s[i];

		if (s->owner != owner)
			continue;
		if (s->busy)
			s->dead = 1;
		else
			release(s);
	}
	pthread_mutex_unlock(&c->lock);
}

void rgroup__fdc_clear(struct rgroup__fdc *c)
{
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < RGROUP__FDC_SLOTS; i++) {
		if (!c->s[i].owner)
			continue;
		if (c->s[i].busy)
			c->s[i].dead = 1;
		else
			release(&c->s[i]);
	}
	pthread_mutex_unlock(&c->lock);
}

void rgroup__fdc_fork_child(struct rgroup__fdc *c)
{
	for (int i = 0; i < RGROUP__FDC_SLOTS; i++)
		if (c->s[i].owner)
			release(&c->s[i]);
	c->lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

int rgroup__fdc_count(struct rgroup__fdc *c)
{
	int n = 0;

	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < RGROUP__FDC_SLOTS; i++)
		n += c->s[i].owner != NULL;
	pthread_mutex_unlock(&c->lock);
	return n;
}
