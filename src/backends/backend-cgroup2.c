/* SPDX-License-Identifier: MIT */
/*
 * backend-cgroup2.c - rgroups as a threaded subtree below the process's own
 * cgroup v2 group.
 *
 * The first rgroup turns the sgroup into a threaded domain (a child whose
 * cgroup.type is "threaded"); only then may the cpu controller be enabled in
 * the sgroup's cgroup.subtree_control while the process lives there, because
 * threaded controllers are exempt from the no-internal-process rule. We
 * enable +cpu only below the process's own group (rule 9) and take it back
 * when no threaded child is left. That decision is made from the kernel's
 * state, not from memory, so it also holds after a killed rgroup process:
 * a non-root group that holds processes can have cpu in subtree_control
 * only while it is a thread root, so no administrator set that value.
 * Weights go through cpu.weight.nice, which the kernel maps through the same
 * table as a task's nice value; cpu.weight (1..10000) is the fallback.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "cgroupfs.h"

static struct rgroup__cg cg2 = {
	.ctrl = NULL,
	.tidsfile = "cgroup.threads",
	RGROUP__CG_INIT,
	.weight_nice = -1,
	.cpuset = -1,
};

/* Threaded controllers; anything else in subtree_control forbids a
 * threaded subtree (kernel: cgroup_can_be_thread_root()). */
static int only_threaded_controllers(const char *subtree)
{
	static const char *const threaded[] = { "cpu", "cpuset", "perf_event", "pids" };
	char tok[64];
	const char *p = subtree;

	while (*p) {
		size_t n = 0;
		while (*p == ' ' || *p == '\n')
			p++;
		while (p[n] && p[n] != ' ' && p[n] != '\n')
			n++;
		if (!n)
			break;
		snprintf(tok, sizeof(tok), "%.*s", (int)n, p);
		int ok = 0;
		for (size_t i = 0; i < sizeof(threaded) / sizeof(threaded[0]); i++)
			ok |= strcmp(tok, threaded[i]) == 0;
		if (!ok)
			return 0;
		p += n;
	}
	return 1;
}

static int c2_probe(void *priv, char *why, size_t len)
{
	struct rgroup__cg *cg = priv;
	struct rgroup__cgloc loc;
	const char *dir = loc.dir;
	char buf[512];
	int fd, r;

	r = rgroup__cg_locate_self(cg, &loc, why, len);
	if (r < 0)
		return r;
	fd = rgroup__cg_open_dir(dir);
	if (fd < 0)
		return rgroup__why(why, len, fd, "cannot open %s: %s", dir, strerror(-fd));
	r = rgroup__cg_read(fd, "cgroup.controllers", buf, sizeof(buf));
	if (r < 0 || rgroup__has_token(buf, "cpu") != 1) {
		r = rgroup__why(why, len, -ENOTSUP, "the cpu controller is not available in %s (it is bound to cgroup v1, or the parent group does not enable it in cgroup.subtree_control); ask the administrator to enable cpu for your group", dir);
		goto out;
	}
	r = rgroup__cg_read(fd, "cgroup.type", buf, sizeof(buf));
	if (r >= 0 && rgroup__parse_cgtype(buf) == RGROUP__CG_DOMAIN_INVALID) {
		r = rgroup__why(why, len, -EOPNOTSUPP, "%s is an invalid domain (cgroup.type); the process must live in a valid cgroup", dir);
		goto out;
	}
	r = rgroup__cg_read(fd, "cgroup.subtree_control", buf, sizeof(buf));
	if (r >= 0 && !only_threaded_controllers(buf)) {
		r = rgroup__why(why, len, -EOPNOTSUPP, "%s enables domain controllers for its children (cgroup.subtree_control: %.*s), so it cannot hold a threaded subtree; run the process in a leaf group of its own", dir, (int)strcspn(buf, "\n"), buf);
		goto out;
	}
	if (faccessat(fd, ".", W_OK, 0) < 0 ||
	    faccessat(fd, "cgroup.threads", W_OK, 0) < 0 ||
	    faccessat(fd, "cgroup.subtree_control", W_OK, 0) < 0 ||
	    faccessat(fd, "cgroup.procs", W_OK, 0) < 0) {
		r = rgroup__why(why, len, -EACCES, "the process's cgroup %s is not delegated to it; run under `systemd-run --user --scope -p Delegate=yes` (or as root)", dir);
		goto out;
	}
	r = 0;
out:
	close(fd);
	return r;
}

/* Does the sgroup still have a threaded child (ours or anyone's)? */
static int has_threaded_child(int sgroupfd)
{
	int fd = openat(sgroupfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	DIR *d;
	int found = 0;

	if (fd < 0)
		return 1; /* cannot tell: leave things alone */
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 1;
	}
	while (!found && (e = readdir(d))) {
		char type[64], file[300];
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/cgroup.type", e->d_name);
		if (rgroup__cg_read(sgroupfd, file, type, sizeof(type)) >= 0 &&
		    rgroup__parse_cgtype(type) == RGROUP__CG_THREADED)
			found = 1;
	}
	closedir(d);
	return found;
}

/* Rule 9: once no threaded child is left, the sgroup goes back to what the
 * administrator configured: a non-root domain holding processes, which
 * cannot have cpu enabled for children (the root can: leave it). The root
 * is the one group without a cgroup.type; "/" in a cgroup namespace (a
 * container's delegated group) has one and is not the root. */
static void release_cpu(struct rgroup__cg *cg)
{
	char buf[256];

	if (faccessat(rgroup__cg_dirfd(cg), "cgroup.type", F_OK, 0) < 0 || has_threaded_child(rgroup__cg_dirfd(cg)))
		return;
	if (rgroup__cg_read(rgroup__cg_dirfd(cg), "cgroup.subtree_control", buf, sizeof(buf)) < 0)
		return;
	/* cpuset (rule 10) by the same argument as cpu. */
	if (rgroup__has_token(buf, "cpuset") == 1)
		rgroup__cg_write(rgroup__cg_dirfd(cg), "cgroup.subtree_control", "-cpuset");
	if (rgroup__has_token(buf, "cpu") == 1)
		rgroup__cg_write(rgroup__cg_dirfd(cg), "cgroup.subtree_control", "-cpu");
}

static int c2_set_nice(void *priv, struct rgroup__node *n, int nice)
{
	struct rgroup__cg *cg = priv;
	char buf[24];

	/* cpu.weight.nice when the kernel has it (4.17+), else cpu.weight,
	 * which rounds to 1/100 of nice 0's weight. */
	if (cg->weight_nice)
		return rgroup__cg_node_write(cg, n, RGROUP__CG_WEIGHT, "cpu.weight.nice",
					     rgroup__cg_itoa(buf, nice));
	return rgroup__cg_node_write(cg, n, RGROUP__CG_WEIGHT, "cpu.weight",
				     rgroup__cg_itoa(buf, rgroup__weight_to_cgroup2(rgroup__nice_to_weight(nice))));
}

/* ---- Rule 10: threaded cpuset, cpu.max ------------------------------- */

/* Does the sgroup get the cpuset controller from its parent? Else the
 * groups' CPUs are per-thread affinity (affinity.h). Once per attach. */
static int c2_has_cpuset(struct rgroup__cg *cg)
{
	char buf[512];

	if (cg->cpuset < 0)
		cg->cpuset = rgroup__cg_read(rgroup__cg_dirfd(cg), "cgroup.controllers", buf, sizeof(buf)) >= 0 &&
			     rgroup__has_token(buf, "cpuset") == 1;
	return cg->cpuset;
}

/* Hand cpuset down from the sgroup to n, as create() does cpu: a group
 * whose parent does not enable it runs on its nearest ancestor's set,
 * so only a group with a set of its own needs the files. */
static int c2_enable_cpuset(struct rgroup__cg *cg, const struct rgroup__node *n)
{
	const struct rgroup__node *chain[RGROUP_MAX_DEPTH + 1];
	char file[PATH_MAX], buf[256];
	int k = 0, r;

	chain[k++] = NULL;   /* the sgroup, last to first below */
	for (const struct rgroup__node *p = n->parent; p && k <= RGROUP_MAX_DEPTH; p = p->parent)
		chain[k++] = p;
	/* Top-down: the sgroup first. */
	for (int i = 0; i < k; i++) {
		const struct rgroup__node *p = i == 0 ? NULL : chain[k - i];

		if ((r = rgroup__cg_file(p, "cgroup.subtree_control", file, sizeof(file))) < 0 ||
		    (r = rgroup__cg_read(rgroup__cg_dirfd(cg), file, buf, sizeof(buf))) < 0)
			return r;
		if (rgroup__has_token(buf, "cpuset") != 1 &&
		    (r = rgroup__cg_write(rgroup__cg_dirfd(cg), file, "+cpuset")) < 0)
			return r;
	}
	return 0;
}

/* n's CPUs (its own or inherited) into its cpuset.cpus; a group whose
 * parent does not hand cpuset down has no such file and needs none (it
 * runs on its nearest ancestor's set): ENOENT is fine unless `must`. */
static int c2_write_cpus(struct rgroup__cg *cg, const struct rgroup__node *n, int must)
{
	char list[4096], file[PATH_MAX];
	cpu_set_t set;
	int r;

	rgroup__node_cpus(n, &set);
	if ((r = rgroup__cg_file(n, "cpuset.cpus", file, sizeof(file))) < 0 ||
	    (r = rgroup__format_cpulist(&set, sizeof(set), list, sizeof(list))) < 0)
		return r;
	r = rgroup__cg_write(rgroup__cg_dirfd(cg), file, list);
	return r == -ENOENT && !must ? 0 : r;
}

/* The descendants that inherit n's set and have files of their own get
 * it written: an emptied cpuset.cpus would follow the parent by itself,
 * but the kernel refuses to empty the set of a group with threads
 * (ENOSPC), so a lifted set is a copy, kept up to date from here. */
static int c2_spread(struct rgroup__cg *cg, const struct rgroup__node *n)
{
	int r = 0;

	for (const struct rgroup__node *c = n->children; c && r == 0; c = c->next)
		if (!c->cpus && (r = c2_write_cpus(cg, c, 0)) == 0)
			r = c2_spread(cg, c);
	return r;
}

static int c2_set_cpus(void *priv, struct rgroup__node *n)
{
	struct rgroup__cg *cg = priv;
	int r;

	if (!c2_has_cpuset(cg))
		return rgroup__aff_spread(n, rgroup__cg_each_tid, cg);
	if (n->cpus && (r = c2_enable_cpuset(cg, n)) < 0)
		return r;
	r = c2_write_cpus(cg, n, n->cpus != NULL);
	return r < 0 ? r : c2_spread(cg, n);
}

static int c2_set_cap(void *priv, struct rgroup__node *n)
{
	return rgroup__cg_write_max(priv, n, "cpu.max");
}

static int c2_place(void *priv, struct rgroup__node *n, pid_t tid)
{
	int r = rgroup__cg_place(priv, n, tid);

	if (r == 0 && !c2_has_cpuset(priv))
		r = rgroup__aff_place(n, tid);
	return r;
}

static int c2_evacuate(void *priv, const struct rgroup__node *n)
{
	if (!c2_has_cpuset(priv))
		rgroup__aff_release(n, rgroup__cg_each_tid, priv);
	return rgroup__cg_evacuate(priv, n);
}

static void c2_exit_move(void *priv)
{
	rgroup__cg_exit_move(priv);
}

static void c2_exit_remove(void *priv, const struct rgroup__node *n)
{
	rgroup__cg_exit_remove(priv, n);
}

static void c2_fork_child(void *priv)
{
	struct rgroup__cg *cg = priv;

	if (cg->cpuset == 0)
		rgroup__aff_leave_self();
	rgroup__cg_fork_child(priv);
}

static int c2_create(void *priv, struct rgroup__node *n)
{
	struct rgroup__cg *cg = priv;
	char file[PATH_MAX], buf[256];
	int r;

	r = rgroup__cg_make(cg, n);
	if (r < 0)
		return r;
	if ((r = rgroup__cg_file(n, "cgroup.type", file, sizeof(file))) < 0 ||
	    (r = rgroup__cg_write(rgroup__cg_dirfd(cg), file, "threaded")) < 0)
		goto fail;
	/* The parent (sgroup or rgroup) must hand the cpu controller down. */
	if ((r = rgroup__cg_file(n->parent, "cgroup.subtree_control", file, sizeof(file))) < 0 ||
	    (r = rgroup__cg_read(rgroup__cg_dirfd(cg), file, buf, sizeof(buf))) < 0)
		goto fail;
	if (rgroup__has_token(buf, "cpu") != 1 &&
	    (r = rgroup__cg_write(rgroup__cg_dirfd(cg), file, "+cpu")) < 0)
		goto fail;
	if (cg->weight_nice < 0) {
		rgroup__cg_file(n, "cpu.weight.nice", file, sizeof(file));
		cg->weight_nice = faccessat(rgroup__cg_dirfd(cg), file, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	}
	if (n->nice != 0 && (r = c2_set_nice(priv, n, n->nice)) < 0)
		goto fail;
	/* Rebinding (rule 8, a failed exec): the group's rule 10 settings. */
	if (n->cpus && c2_has_cpuset(cg) && (r = c2_set_cpus(priv, n)) < 0)
		goto fail;
	if (n->quota_us && (r = c2_set_cap(priv, n)) < 0)
		goto fail;
	return 0;
fail:
	rgroup__cg_unmake(cg, n);
	if (!n->parent)
		release_cpu(cg);
	return r;
}

static int c2_destroy(void *priv, struct rgroup__node *n)
{
	struct rgroup__cg *cg = priv;
	int top = !n->parent, r;

	r = rgroup__cg_destroy(priv, n);
	if (r == 0 && top)
		release_cpu(cg);
	return r;
}

static int c2_usage(void *priv, const struct rgroup__node *n, uint64_t *ns)
{
	struct rgroup__cg *cg = priv;
	char buf[1024], path[PATH_MAX];
	uint64_t usec;
	int r;

	if (!n->bound || rgroup__cg_file(n, "cpu.stat", path, sizeof(path)) < 0)
		return -ENOTSUP;
	r = rgroup__cg_read(rgroup__cg_dirfd(cg), path, buf, sizeof(buf));
	if (r < 0)
		return r;
	r = rgroup__parse_keyed(buf, "usage_usec", &usec);
	if (r < 0)
		return r;
	*ns = usec * 1000;
	return 0;
}

/* cpu.stat's usage_usec counts every thread the group ever had. */
static int c2_counts_exited(void *priv)
{
	return 1;
}

const struct rgroup__backend rgroup__backend_cgroup2 = {
	.name = "cgroup2",
	.priv = &cg2,
	.node_size = sizeof(struct rgroup__cg_node),
	.spares = 1,
	.forks_inherit = 1,
	.probe = c2_probe,
	.attach = rgroup__cg_attach,
	.detach = rgroup__cg_detach,
	.moved = rgroup__cg_moved,
	.create = c2_create,
	.place = c2_place,
	.set_nice = c2_set_nice,
	.destroy = c2_destroy,
	.evacuate = c2_evacuate,
	.usage = c2_usage,
	.counts_exited = c2_counts_exited,
	.group_of = rgroup__cg_group_of,
	.info = rgroup__cg_info,
	.fork_child = c2_fork_child,
	.exit_move = c2_exit_move,
	.exit_remove = c2_exit_remove,
	.place_self = rgroup__cg_place_self,
	.set_cpus = c2_set_cpus,
	.set_cap = c2_set_cap,
};
