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

#include "cgroupfs.h"

static struct rgroup__cg cg2 = {
	.ctrl = NULL,
	.tidsfile = "cgroup.threads",
	.sgroupfd = -1, .placefd = -1, .procsfd = -1,
	.weight_nice = -1,
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
 * cannot have cpu enabled for children (the root can: leave it). */
static void release_cpu(struct rgroup__cg *cg)
{
	char buf[256];

	if (strcmp(cg->path, "/") == 0 || has_threaded_child(cg->sgroupfd))
		return;
	if (rgroup__cg_read(cg->sgroupfd, "cgroup.subtree_control", buf, sizeof(buf)) >= 0 &&
	    rgroup__has_token(buf, "cpu") == 1)
		rgroup__cg_write(cg->sgroupfd, "cgroup.subtree_control", "-cpu");
}

static int c2_set_nice(void *priv, struct rgroup__node *n, int nice)
{
	struct rgroup__cg *cg = priv;
	char buf[24];

	/* cpu.weight.nice when the kernel has it (4.17+), else cpu.weight,
	 * which rounds to 1/100 of nice 0's weight. */
	if (cg->weight_nice)
		return rgroup__cg_node_write(cg, n, &rgroup__cg_node(n)->weightfd, "cpu.weight.nice",
					     rgroup__cg_itoa(buf, nice));
	return rgroup__cg_node_write(cg, n, &rgroup__cg_node(n)->weightfd, "cpu.weight",
				     rgroup__cg_itoa(buf, rgroup__weight_to_cgroup2(rgroup__nice_to_weight(nice))));
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
	    (r = rgroup__cg_write(cg->sgroupfd, file, "threaded")) < 0)
		goto fail;
	/* The parent (sgroup or rgroup) must hand the cpu controller down. */
	if ((r = rgroup__cg_file(n->parent, "cgroup.subtree_control", file, sizeof(file))) < 0 ||
	    (r = rgroup__cg_read(cg->sgroupfd, file, buf, sizeof(buf))) < 0)
		goto fail;
	if (rgroup__has_token(buf, "cpu") != 1 &&
	    (r = rgroup__cg_write(cg->sgroupfd, file, "+cpu")) < 0)
		goto fail;
	if (cg->weight_nice < 0) {
		rgroup__cg_file(n, "cpu.weight.nice", file, sizeof(file));
		cg->weight_nice = faccessat(cg->sgroupfd, file, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	}
	if (n->nice != 0 && (r = c2_set_nice(priv, n, n->nice)) < 0)
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
	r = rgroup__cg_read(cg->sgroupfd, path, buf, sizeof(buf));
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
	.probe = c2_probe,
	.attach = rgroup__cg_attach,
	.detach = rgroup__cg_detach,
	.moved = rgroup__cg_moved,
	.create = c2_create,
	.place = rgroup__cg_place,
	.set_nice = c2_set_nice,
	.destroy = c2_destroy,
	.evacuate = rgroup__cg_evacuate,
	.usage = c2_usage,
	.counts_exited = c2_counts_exited,
	.group_of = rgroup__cg_group_of,
	.info = rgroup__cg_info,
	.fork_child = rgroup__cg_fork_child,
	.place_self = rgroup__cg_place_self,
};
