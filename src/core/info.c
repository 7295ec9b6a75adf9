/* SPDX-License-Identifier: MIT */
/*
 * info.c - what a process may ask about its rgroups and the backends:
 * rgroup_backend, rgroup_backend_name, rgroup_of, rgroup_info,
 * rgroup_list, rgroup_nice_to_weight, rgroup_probe, and rgroup_gc for
 * what dead processes left.
 */
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backend.h"
#include "cgroupfs.h"
#include "weight.h"

static struct rgroup__core *const st = &rgroup__core;

RGROUP__EXPORT const char *rgroup_backend(void)
{
	rgroup__init();
	return st->be ? st->be->name : "none";
}

RGROUP__EXPORT const char *rgroup_backend_name(unsigned int i)
{
	return i < rgroup__nbackends ? rgroup__backends[i]->name : NULL;
}

RGROUP__EXPORT unsigned int rgroup_nice_to_weight(int nice)
{
	return rgroup__nice_to_weight(nice);
}

RGROUP__EXPORT int rgroup_of(pid_t tid, rgroup_id_t *id)
{
	struct rgroup__node *n;
	int r;

	if (!id || tid < 0)
		return -EINVAL;
	r = rgroup__init_reentered();   /* a signal handler: rgroup_of(3) */
	if (r < 0)
		return r;
	r = rgroup__lookup_locked((id_t)tid, &n);
	if (r == -EINVAL) {
		*id = 0;    /* a thread of ours in no rgroup */
		return 0;
	}
	if (r < 0)
		return r;
	*id = n->id;
	rgroup__unlock();
	return 0;
}

RGROUP__EXPORT int rgroup_info(rgroup_id_t id, struct rgroup_info *info)
{
	struct rgroup_info out = { .sz = sizeof(out) };
	struct rgroup__node *n;
	size_t sz;

	if (!info || info->sz < offsetof(struct rgroup_info, name))
		return -EINVAL;
	sz = info->sz < sizeof(out) ? info->sz : sizeof(out);
	rgroup__init();
	rgroup__lock();
	n = rgroup__node_by_id(id);
	if (n && n->held) {
		rgroup__forget_gone();
		n = rgroup__node_by_id(id);
	}
	if (!n) {
		rgroup__unlock();
		return -ENOENT;
	}
	out.id = n->id;
	out.parent = n->parent ? n->parent->id : 0;
	out.nice = rgroup__node_nice(n);
	out.weight = rgroup__nice_to_weight(out.nice);
	out.depth = n->depth;
	out.nthreads = n->nthreads;
	out.nchildren = n->nchildren;
	out.usage_ns = rgroup__node_usage(n);
	if (st->be->info)
		st->be->info(st->be->priv, n, &out);
	rgroup__unlock();
	out.sz = sz;
	memcpy(info, &out, sz);
	return 0;
}

static int collect(struct rgroup__node *n, void *arg)
{
	struct { rgroup_id_t *ids; size_t max, count; } *c = arg;

	if (c->count < c->max)
		c->ids[c->count] = n->id;
	c->count++;
	return 0;
}

RGROUP__EXPORT int rgroup_list(rgroup_id_t *ids, size_t max)
{
	struct { rgroup_id_t *ids; size_t max, count; } c = { ids, ids ? max : 0, 0 };

	rgroup__init();
	rgroup__lock();
	rgroup__forget_gone();
	rgroup__walk_pre(st->top, collect, &c);
	rgroup__unlock();
	return c.count > INT_MAX ? INT_MAX : (int)c.count;
}

RGROUP__EXPORT int rgroup_probe(const char *name, char *why, size_t len)
{
	const struct rgroup__backend *be;
	char buf[512];
	int r;

	if (!why || !len) {
		why = buf;
		len = sizeof(buf);
	}
	why[0] = '\0';
	rgroup__init();
	rgroup__lock();
	if (!name) {
		be = rgroup__choose_backend(why, len);
		r = be ? 0 : -ENOTSUP;
	} else if ((be = rgroup__backend_by_name(name))) {
		r = be->probe(be->priv, why, len);
	} else {
		r = rgroup__unknown_backend(name, why, len);
	}
	rgroup__unlock();
	return r;
}

RGROUP__EXPORT int rgroup_gc(const char *dir)
{
	struct statfs sf;
	int fd, r;

	if (!dir)
		return -EINVAL;
	fd = rgroup__cg_open_dir(dir);
	if (fd < 0)
		return fd;
	/* Only groups: a directory elsewhere whose names look like ours is
	 * not ours to remove. */
	if (fstatfs(fd, &sf) < 0 ||
	    (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC)) {
		close(fd);
		return -EMEDIUMTYPE;
	}
	r = rgroup__cg_gc(fd);
	close(fd);
	return r;
}
