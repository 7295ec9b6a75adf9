/* SPDX-License-Identifier: MIT */
/*
 * backend-cgroup1.c - rgroups as child groups of the process's group in the
 * cgroup v1 `cpu` hierarchy.
 *
 * v1 places single threads through `tasks`, so a thread of the process can
 * live in any group below the sgroup. A group's weight is cpu.shares, set
 * from the kernel's nice-to-weight table so that an rgroup at nice N
 * competes exactly like a thread at nice N (rule 4). *
 * Rule 10: a group's cap is cpu.cfs_quota_us/cfs_period_us in its cpu
 * directory; its CPUs go through the v1 cpuset hierarchy where that is
 * mounted and writable (cgroup1-cpuset.c), else through per-thread
 * affinity (affinity.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "cgroup1-cpuset.h"

/* The cpu hierarchy's state first: the generic operations take priv as
 * a struct rgroup__cg. */
static struct c1 {
	struct rgroup__cg cg;
	struct rgroup__cs cs;           /* used while cg.cpuset is 1 */
} cg1 = {
	.cg = {
		.ctrl = "cpu",
		.tidsfile = "tasks",
		RGROUP__CG_INIT,
		.cpuset = -1,
	},
	.cs = { .cg = { .ctrl = "cpuset", .tidsfile = "tasks", RGROUP__CG_INIT, .cpuset = -1 } },
};

static int c1_probe(void *priv, char *why, size_t len)
{
	struct rgroup__cg *cg = priv;
	struct rgroup__cgloc loc;
	const char *dir = loc.dir;
	char file[PATH_MAX + 16];
	int r;

	r = rgroup__cg_locate_self(cg, &loc, why, len);
	if (r < 0)
		return r;
	snprintf(file, sizeof(file), "%s/cpu.shares", dir);
	if (access(file, F_OK) < 0)
		return rgroup__why(why, len, -ENOTSUP, "%s has no cpu.shares (kernel without CONFIG_FAIR_GROUP_SCHED?)", dir);
	snprintf(file, sizeof(file), "%s/tasks", dir);
	if (access(dir, W_OK) < 0 || access(file, W_OK) < 0)
		return rgroup__why(why, len, -EACCES, "cannot write the process's cpu group %s; run as root, or have the administrator give you a group there (chown the directory and its tasks file)", dir);
	return 0;
}

static int c1_set_nice(void *priv, struct rgroup__node *n, int nice)
{
	char buf[24];

	return rgroup__cg_node_write(priv, n, RGROUP__CG_WEIGHT, "cpu.shares",
				     rgroup__cg_itoa(buf, rgroup__nice_to_weight(nice)));
}

/* ---- Rule 10 ----------------------------------------------------------- */

static int c1_write(struct c1 *c1, const struct rgroup__node *n, const char *file, long long v)
{
	char path[PATH_MAX], buf[24];
	int r = rgroup__cg_file(n, file, path, sizeof(path));

	if (r < 0)
		return r;
	snprintf(buf, sizeof(buf), "%lld", v);
	return rgroup__cg_write(rgroup__cg_dirfd(&c1->cg), path, buf);
}

/* The cap as the v1 files take it: no quota while the period changes, so
 * that the kernel's check of the tree (a child's share of a CPU at most
 * its parent's) never sees half of a change. */
static int c1_set_cap(void *priv, struct rgroup__node *n)
{
	int r = c1_write(priv, n, "cpu.cfs_quota_us", -1);

	if (r == 0 && n->quota_us &&
	    (r = c1_write(priv, n, "cpu.cfs_period_us", (long long)n->period_us)) == 0)
		r = c1_write(priv, n, "cpu.cfs_quota_us", (long long)n->quota_us);
	return r;
}

static int c1_set_cpus(void *priv, struct rgroup__node *n)
{
	struct c1 *c1 = priv;

	if (c1->cg.cpuset == 1)
		return rgroup__cs_sync(&c1->cs, &c1->cg, n);
	return rgroup__aff_spread(n, rgroup__cg_each_tid, &c1->cg);
}

static int c1_place(void *priv, struct rgroup__node *n, pid_t tid)
{
	struct c1 *c1 = priv;
	int r = rgroup__cg_place(priv, n, tid);

	if (r == 0)
		r = c1->cg.cpuset == 1 ? rgroup__cs_place(&c1->cs, n, tid) : rgroup__aff_place(n, tid);
	return r;
}

static int c1_create(void *priv, struct rgroup__node *n)
{
	struct rgroup__cg *cg = priv;
	int r;

	rgroup__cs_init_node(n);
	r = rgroup__cg_make(cg, n);
	if (r < 0)
		return r;
	/* A new group starts at 1024, which is nice 0. Rebinding (rule 8, a
	 * failed exec) brings its cap back; its CPUs come with its threads
	 * (c1_place()). */
	if ((n->nice != 0 && (r = c1_set_nice(priv, n, n->nice)) < 0) ||
	    (n->quota_us && (r = c1_set_cap(priv, n)) < 0)) {
		rgroup__cg_unmake(cg, n);
		return r;
	}
	return 0;
}

static int c1_destroy(void *priv, struct rgroup__node *n)
{
	struct c1 *c1 = priv;
	int r = rgroup__cg_destroy(priv, n);

	if (r == 0)
		rgroup__cs_destroy(&c1->cs, n);
	return r;
}

static int c1_evacuate(void *priv, const struct rgroup__node *n)
{
	struct c1 *c1 = priv;

	if (c1->cg.cpuset == 1)
		rgroup__cs_evacuate(&c1->cs, n);
	else
		rgroup__aff_release(n, rgroup__cg_each_tid, &c1->cg);
	return rgroup__cg_evacuate(priv, n);
}

static int c1_attach(void *priv)
{
	struct c1 *c1 = priv;
	int r = rgroup__cg_attach(priv);

	if (r == 0)
		c1->cg.cpuset = rgroup__cs_attach(&c1->cs) == 0;
	return r;
}

static void c1_detach(void *priv)
{
	struct c1 *c1 = priv;

	rgroup__cs_detach(&c1->cs);
	rgroup__cg_detach(priv);
}

static int c1_moved(void *priv)
{
	struct c1 *c1 = priv;
	int r = rgroup__cg_moved(priv);

	if (r == 0 && c1->cg.cpuset == 1)
		r = rgroup__cs_moved(&c1->cs);
	return r;
}

static void c1_exit_move(void *priv)
{
	struct c1 *c1 = priv;

	rgroup__cg_exit_move(&c1->cg);
	if (c1->cg.cpuset == 1)
		rgroup__cg_exit_move(&c1->cs.cg);
}

static void c1_exit_remove(void *priv, const struct rgroup__node *n)
{
	struct c1 *c1 = priv;

	rgroup__cg_exit_remove(&c1->cg, n);
	if (c1->cg.cpuset == 1)
		rgroup__cs_exit_remove(&c1->cs, n);
}

static void c1_fork_child(void *priv)
{
	struct c1 *c1 = priv;

	if (c1->cg.cpuset == 1)
		rgroup__cs_fork_child(&c1->cs);
	else if (c1->cg.cpuset == 0)
		rgroup__aff_leave_self();
	rgroup__cg_fork_child(priv);
}

static int c1_place_self(void *priv, const struct rgroup__node *n)
{
	struct c1 *c1 = priv;
	int r = rgroup__cg_place_self(priv, n);

	if (r == 0 && c1->cg.cpuset == 1)
		r = rgroup__cs_place_self(&c1->cs, n);
	return r;
}

/* cpuacct counts usage only where it shares the hierarchy with cpu
 * ("cpu,cpuacct"); elsewhere the core adds up thread clocks. Whether it
 * does is a property of the mount: found out once. */
static int has_cpuacct = -1;

static int c1_counts_exited(void *priv)
{
	struct rgroup__cg *cg = priv;

	if (has_cpuacct < 0)
		has_cpuacct = faccessat(rgroup__cg_dirfd(cg), "cpuacct.usage", F_OK, 0) == 0;
	return has_cpuacct;
}

static int c1_usage(void *priv, const struct rgroup__node *n, uint64_t *ns)
{
	struct rgroup__cg *cg = priv;
	char buf[64], path[PATH_MAX];
	int r;

	if (!n->bound || has_cpuacct == 0 ||
	    rgroup__cg_file(n, "cpuacct.usage", path, sizeof(path)) < 0)
		return -ENOTSUP;
	r = rgroup__cg_read(rgroup__cg_dirfd(cg), path, buf, sizeof(buf));
	if (has_cpuacct < 0)
		has_cpuacct = r != -ENOENT;
	if (r < 0)
		return -ENOTSUP;
	*ns = strtoull(buf, NULL, 10);
	return 0;
}

const struct rgroup__backend rgroup__backend_cgroup1 = {
	.name = "cgroup1",
	.priv = &cg1,
	.node_size = sizeof(struct rgroup__c1_node),
	.spares = 1,
	.forks_inherit = 1,
	.probe = c1_probe,
	.attach = c1_attach,
	.detach = c1_detach,
	.moved = c1_moved,
	.create = c1_create,
	.place = c1_place,
	.set_nice = c1_set_nice,
	.destroy = c1_destroy,
	.evacuate = c1_evacuate,
	.usage = c1_usage,
	.counts_exited = c1_counts_exited,
	.group_of = rgroup__cg_group_of,
	.info = rgroup__cg_info,
	.fork_child = c1_fork_child,
	.exit_move = c1_exit_move,
	.exit_remove = c1_exit_remove,
	.place_self = c1_place_self,
	.set_cpus = c1_set_cpus,
	.set_cap = c1_set_cap,
};
