/* SPDX-License-Identifier: MIT */
/*
 * backend-cgroup1.c - rgroups as child groups of the process's group in the
 * cgroup v1 `cpu` hierarchy.
 *
 * v1 places single threads through `tasks`, so a thread of the process can
 * live in any group below the sgroup. A group's weight is cpu.shares, set
 * from the kernel's nice-to-weight table so that an rgroup at nice N
 * competes exactly like a thread at nice N (rule 4).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"

static struct rgroup__cg cg1 = {
	.ctrl = "cpu",
	.tidsfile = "tasks",
	.sgroupfd = -1, .placefd = -1, .procsfd = -1,
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

	return rgroup__cg_node_write(priv, n, &rgroup__cg_node(n)->weightfd, "cpu.shares",
				     rgroup__cg_itoa(buf, rgroup__nice_to_weight(nice)));
}

static int c1_create(void *priv, struct rgroup__node *n)
{
	struct rgroup__cg *cg = priv;
	int r;

	r = rgroup__cg_make(cg, n);
	if (r < 0)
		return r;
	/* A new group starts at 1024, which is nice 0. */
	if (n->nice != 0 && (r = c1_set_nice(priv, n, n->nice)) < 0) {
		rgroup__cg_unmake(cg, n);
		return r;
	}
	return 0;
}

/* cpuacct counts usage only where it shares the hierarchy with cpu
 * ("cpu,cpuacct"); elsewhere the core adds up thread clocks. Whether it
 * does is a property of the mount: found out once. */
static int has_cpuacct = -1;

static int c1_counts_exited(void *priv)
{
	struct rgroup__cg *cg = priv;

	if (has_cpuacct < 0)
		has_cpuacct = faccessat(cg->sgroupfd, "cpuacct.usage", F_OK, 0) == 0;
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
	r = rgroup__cg_read(cg->sgroupfd, path, buf, sizeof(buf));
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
	.node_size = sizeof(struct rgroup__cg_node),
	.spares = 1,
	.probe = c1_probe,
	.attach = rgroup__cg_attach,
	.detach = rgroup__cg_detach,
	.moved = rgroup__cg_moved,
	.create = c1_create,
	.place = rgroup__cg_place,
	.set_nice = c1_set_nice,
	.destroy = rgroup__cg_destroy,
	.evacuate = rgroup__cg_evacuate,
	.usage = c1_usage,
	.counts_exited = c1_counts_exited,
	.group_of = rgroup__cg_group_of,
	.info = rgroup__cg_info,
	.fork_child = rgroup__cg_fork_child,
	.place_self = rgroup__cg_place_self,
};
