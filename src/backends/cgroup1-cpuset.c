/* SPDX-License-Identifier: MIT */
/*
 * cgroup1-cpuset.c - rule 10's CPU sets in the v1 cpuset hierarchy, for
 * the cgroup1 backend; see cgroup1-cpuset.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup1-cpuset.h"

static int confined(const struct rgroup__node *n)
{
	for (; n; n = n->parent)
		if (n->cpus)
			return 1;
	return 0;
}

int rgroup__cs_attach(struct rgroup__cs *cs)
{
	struct rgroup__cgloc loc, cpu;
	int r;

	r = rgroup__cg_locate(0, "cpuset", &loc, NULL, 0);
	if (r < 0)
		return r;
	/* Mounted together with cpu ("cpu,cpuset"), the cpu directories would
	 * need CPUs and memory nodes of their own: not supported. */
	if (rgroup__cg_locate(0, "cpu", &cpu, NULL, 0) == 0 &&
	    strcmp(cpu.mount.dev, loc.mount.dev) == 0)
		return -ENOTSUP;
	if (access(loc.dir, W_OK) < 0)
		return -errno;
	return rgroup__cg_attach(&cs->cg);
}

void rgroup__cs_detach(struct rgroup__cs *cs)
{
	rgroup__cg_detach(&cs->cg);
}

int rgroup__cs_moved(struct rgroup__cs *cs)
{
	return !cs->cg.dir[0] ? 0 : rgroup__cg_moved_from("cpuset", cs->cg.path);
}

void rgroup__cs_init_node(struct rgroup__node *n)
{
	rgroup__c1_node(n)->mirror = 0;
}

/* The cpuset group's own thread list, checked (cgroupfs.h). */
static int tasksfd(struct rgroup__cs *cs)
{
	return rgroup__cg_sgfd(&cs->cg, &cs->cg.place, "tasks");
}

static int mirror_file(const struct rgroup__node *n, const char *file, char *out, size_t len)
{
	int w = snprintf(out, len, "%s/%s", rgroup__cg_node(n)->name, file);

	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

static int write_cpus(struct rgroup__cs *cs, const struct rgroup__node *n)
{
	char file[128], list[4096];
	cpu_set_t set;
	int r;

	rgroup__node_cpus(n, &set);
	if ((r = mirror_file(n, "cpuset.cpus", file, sizeof(file))) < 0 ||
	    (r = rgroup__format_cpulist(&set, sizeof(set), list, sizeof(list))) < 0)
		return r;
	return rgroup__cg_write(rgroup__cg_dirfd(&cs->cg), file, list);
}

/* Its directory: the group's CPUs, the cpuset group's memory nodes (v1
 * attaches no task to a cpuset without both). */
static int mirror_make(struct rgroup__cs *cs, struct rgroup__node *n)
{
	struct rgroup__c1_node *c = rgroup__c1_node(n);
	char file[128], mems[1024];
	int r;

	if (c->mirror)
		return 0;
	r = rgroup__cg_read(rgroup__cg_dirfd(&cs->cg), "cpuset.mems", mems, sizeof(mems));
	if (r < 0)
		return r;
	r = rgroup__cg_mkdir(rgroup__cg_dirfd(&cs->cg), c->cg.name);
	if (r < 0)
		return r;
	if ((r = mirror_file(n, "cpuset.mems", file, sizeof(file))) < 0 ||
	    (r = rgroup__cg_write(rgroup__cg_dirfd(&cs->cg), file, mems)) < 0 ||
	    (r = write_cpus(cs, n)) < 0)
		goto fail;
	c->mirror = 1;
	return 0;
fail:
	rgroup__cg_rmdir(rgroup__cg_dirfd(&cs->cg), c->cg.name);
	return r;
}

static void mirror_drop(struct rgroup__cs *cs, struct rgroup__node *n)
{
	struct rgroup__c1_node *c = rgroup__c1_node(n);
	char file[128];

	if (!c->mirror)
		return;
	if (mirror_file(n, "tasks", file, sizeof(file)) == 0)
		rgroup__cg_move_all(rgroup__cg_dirfd(&cs->cg), file, tasksfd(cs));
	rgroup__fdc_drop(&cs->cg.fdc, n);
	/* A directory that will not go (a thread someone else put there)
	 * stays until the process is gone; rgroup_gc() then removes it. */
	if (rgroup__cg_rmdir(rgroup__cg_dirfd(&cs->cg), c->cg.name) == 0)
		c->mirror = 0;
}

/* Thread tid into n's directory, through the cache (cgroupfs.h). */
static int mirror_join(struct rgroup__cs *cs, const struct rgroup__node *n, pid_t tid)
{
	char file[128], buf[24];
	int r = mirror_file(n, "tasks", file, sizeof(file));

	return r < 0 ? r : rgroup__cg_cached_write(&cs->cg, n, RGROUP__CG_MIRROR, file,
						   rgroup__cg_itoa(buf, tid));
}

struct join { struct rgroup__cs *cs; const struct rgroup__node *n; };

static int join(pid_t tid, void *arg)
{
	struct join *j = arg;
	int r = mirror_join(j->cs, j->n, tid);

	return r == -ESRCH ? 0 : r;
}

int rgroup__cs_sync(struct rgroup__cs *cs, struct rgroup__cg *cg, struct rgroup__node *n)
{
	struct rgroup__c1_node *c = rgroup__c1_node(n);
	int r;

	if (!confined(n)) {
		mirror_drop(cs, n);
		r = 0;
	} else if (!c->mirror) {
		r = mirror_make(cs, n);
	} else {
		r = write_cpus(cs, n);
	}
	if (r == 0 && c->mirror)
		r = rgroup__cg_each_tid(cg, n, join, &(struct join){ cs, n });
	for (struct rgroup__node *k = n->children; k && r == 0; k = k->next)
		if (!k->cpus)   /* its own set is unchanged */
			r = rgroup__cs_sync(cs, cg, k);
	return r;
}

int rgroup__cs_place(struct rgroup__cs *cs, const struct rgroup__node *n, pid_t tid)
{
	int r;

	if (!n)
		return (r = tasksfd(cs)) < 0 ? r : rgroup__cg_write_int(r, tid);
	if (!confined(n))
		return 0;
	r = mirror_make(cs, (struct rgroup__node *)n);
	return r < 0 ? r : mirror_join(cs, n, tid);
}

void rgroup__cs_destroy(struct rgroup__cs *cs, struct rgroup__node *n)
{
	mirror_drop(cs, n);
}

int rgroup__cs_evacuate(struct rgroup__cs *cs, const struct rgroup__node *n)
{
	char file[128];
	int r;

	if (!rgroup__c1_node(n)->mirror)
		return 0;
	r = mirror_file(n, "tasks", file, sizeof(file));
	return r < 0 ? r : rgroup__cg_move_all(rgroup__cg_dirfd(&cs->cg), file, tasksfd(cs));
}

void rgroup__cs_exit_remove(struct rgroup__cs *cs, const struct rgroup__node *n)
{
	const struct rgroup__c1_node *c = rgroup__c1_node(n);

	if (c->mirror)
		rgroup__cg_rmdir(rgroup__cg_dirfd(&cs->cg), c->cg.name);
}

void rgroup__cs_fork_child(struct rgroup__cs *cs)
{
	rgroup__cg_fork_child(&cs->cg);
}

int rgroup__cs_place_self(struct rgroup__cs *cs, const struct rgroup__node *n)
{
	char file[128];

	if (!n)
		return rgroup__cg_place_self(&cs->cg, NULL);
	if (!rgroup__c1_node(n)->mirror || mirror_file(n, "tasks", file, sizeof(file)) < 0)
		return 0;
	return rgroup__cg_place_self_at(&cs->cg, file);
}
