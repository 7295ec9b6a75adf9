/* SPDX-License-Identifier: MIT */
/*
 * cgroup-ops.c - the backend operations that work the same on cgroup v1
 * and v2 (cgroupfs.h): holding the sgroup, each group's directory and
 * files, placing threads, following a move, fork and exit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroupfs.h"

int rgroup__cg_locate_self(const struct rgroup__cg *cg, struct rgroup__cgloc *loc,
			   char *why, size_t wlen)
{
	return rgroup__cg_locate(0, cg->ctrl, loc, why, wlen);
}

int rgroup__cg_hold(const char *dir, const char *tidsfile, int *dirfd, int *placefd,
		    int *procsfd)
{
	int r, fd, place = -1, procs;

	fd = rgroup__cg_open_dir(dir);
	if (fd < 0)
		return fd;
	place = rgroup__cg_open(fd, tidsfile, O_WRONLY);
	if (place < 0) {
		r = place;
		goto fail;
	}
	procs = rgroup__cg_open(fd, "cgroup.procs", O_WRONLY);
	if (procs < 0) {
		r = procs;
		goto fail;
	}
	/* Directories that killed rgroup processes left here (rule 3). */
	rgroup__cg_gc(fd);
	*dirfd = fd;
	*placefd = place;
	*procsfd = procs;
	return 0;
fail:
	if (place >= 0)
		close(place);
	close(fd);
	return r;
}

int rgroup__cg_attach(void *priv)
{
	struct rgroup__cg *cg = priv;
	struct rgroup__cgloc loc;
	int r, dirfd, placefd, procsfd;

	r = rgroup__cg_locate_self(cg, &loc, NULL, 0);
	if (r < 0)
		return r;
	r = rgroup__cg_hold(loc.dir, cg->tidsfile, &dirfd, &placefd, &procsfd);
	if (r < 0)
		return r;
	/* rgroup__kfd_set() closes what it refuses. */
	if ((r = rgroup__kfd_set(&cg->sgroup, dirfd)) < 0) {
		close(placefd);
		close(procsfd);
		return r;
	}
	if ((r = rgroup__kfd_set(&cg->place, placefd)) < 0) {
		close(procsfd);
		rgroup__kfd_close(&cg->sgroup);
		return r;
	}
	if ((r = rgroup__kfd_set(&cg->procs, procsfd)) < 0) {
		rgroup__kfd_close(&cg->place);
		rgroup__kfd_close(&cg->sgroup);
		return r;
	}
	snprintf(cg->path, sizeof(cg->path), "%s", loc.path);
	snprintf(cg->dir, sizeof(cg->dir), "%s", loc.dir);
	cg->pid = getpid();
	cg->starttime = rgroup__starttime(0);
	cg->pidns = rgroup__pidns_self();
	cg->cpuset = -1;
	return 0;
}

void rgroup__cg_detach(void *priv)
{
	struct rgroup__cg *cg = priv;

	rgroup__fdc_clear(&cg->fdc);
	rgroup__kfd_close(&cg->sgroup);
	rgroup__kfd_close(&cg->place);
	rgroup__kfd_close(&cg->procs);
	cg->dir[0] = '\0';
}

/* Open what k should hold again (the sgroup's directory when file is
 * NULL, else its file), under the cache's lock: two threads that both
 * found it gone open it once. */
static int reopen(struct rgroup__cg *cg, struct rgroup__kfd *k, const char *file)
{
	int fd, r;

	pthread_mutex_lock(&cg->fdc.lock);
	fd = rgroup__kfd_get(k);
	if (fd < 0 && !cg->dir[0])
		fd = -EBADF;   /* detached */
	else if (fd < 0) {
		if (file) {
			int dirfd = rgroup__kfd_get(&cg->sgroup);
			fd = dirfd < 0 ? rgroup__cg_open_dir(cg->dir) : dirfd;
			if (fd >= 0) {
				r = rgroup__cg_open(fd, file, O_WRONLY);
				if (fd != dirfd)
					close(fd);
				fd = r;
			}
		} else {
			fd = rgroup__cg_open_dir(cg->dir);
		}
		if (fd >= 0)
			fd = (r = rgroup__kfd_set(k, fd)) < 0 ? r : k->fd;
	}
	pthread_mutex_unlock(&cg->fdc.lock);
	/* Never AT_FDCWD, which callers would take for a directory. */
	return fd == AT_FDCWD ? -EIO : fd;
}

int rgroup__cg_dirfd(struct rgroup__cg *cg)
{
	int fd = rgroup__kfd_get(&cg->sgroup);

	return fd >= 0 ? fd : reopen(cg, &cg->sgroup, NULL);
}

int rgroup__cg_sgfd(struct rgroup__cg *cg, struct rgroup__kfd *k, const char *file)
{
	int fd = rgroup__kfd_get(k);

	return fd >= 0 ? fd : reopen(cg, k, file);
}

/*
 * Write id to the sgroup's file through k, checked; where k's number is
 * no longer ours, through the file opened by its path for this write.
 * Async-signal-safe (fork child, vfork child): no lock, no allocation,
 * nothing kept.
 */
static int write_self(const struct rgroup__cg *cg, struct rgroup__kfd *k, const char *file,
		      pid_t id)
{
	char path[PATH_MAX], buf[24];
	size_t dl = strlen(cg->dir), fl = strlen(file);
	int fd = rgroup__kfd_get(k), own = 0, r = 0;

	if (fd < 0) {
		if (!dl || dl + 1 + fl + 1 > sizeof(path))
			return -EBADF;
		memcpy(path, cg->dir, dl);
		path[dl] = '/';
		memcpy(path + dl + 1, file, fl + 1);
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return -errno;
		own = 1;
	}
	rgroup__cg_itoa(buf, id);
	if (pwrite(fd, buf, strlen(buf), 0) < 0)
		r = -errno;
	if (own)
		close(fd);
	return r;
}

/*
 * Moved means the main thread is neither in the group at `path` nor below
 * it. The main thread, not the caller: the keeper may have written itself
 * back into the old sgroup (through its open tasks file) just after the
 * move, and from there it would never see one.
 */
int rgroup__cg_moved_from(const char *ctrl, const char *path)
{
	char text[8192], now[PATH_MAX];
	size_t plen = strlen(path);
	int r;

	r = rgroup__read_path("/proc/self/cgroup", text, sizeof(text));
	if (r < 0)
		return r;
	r = rgroup__parse_proc_cgroup(text, ctrl, now, sizeof(now));
	if (r < 0)
		return r;
	if (strcmp(path, "/") == 0)
		return 0;
	return !(strncmp(now, path, plen) == 0 && (now[plen] == '\0' || now[plen] == '/'));
}

int rgroup__cg_moved(void *priv)
{
	struct rgroup__cg *cg = priv;

	return rgroup__cg_moved_from(cg->ctrl, cg->path);
}

/*
 * A group's path below the sgroup is its ancestors' names and its own,
 * built when a file is opened rather than kept: nodes stay small, and
 * opens are rare (recently used groups' descriptors are cached).
 */
int rgroup__cg_file(const struct rgroup__node *n, const char *file, char *buf,
		    size_t len)
{
	size_t flen = strlen(file), end = len;

	if (flen + 1 > end)
		return -ENAMETOOLONG;
	end -= flen + 1;
	memcpy(buf + end, file, flen + 1);
	for (; n; n = n->parent) {
		const char *name = rgroup__cg_node(n)->name;
		size_t k = strlen(name);

		if (k + 1 > end)
			return -ENAMETOOLONG;
		buf[--end] = '/';
		end -= k;
		memcpy(buf + end, name, k);
	}
	memmove(buf, buf + end, len - end);
	return 0;
}

int rgroup__cg_cached_write(struct rgroup__cg *cg, const void *owner, int kind,
			    const char *path, const char *val)
{
	struct rgroup__kfd k;
	int slot, dirfd, fd, r;

	fd = rgroup__fdc_get(&cg->fdc, owner, kind, &slot);
	if (fd >= 0) {
		r = rgroup__cg_write_fd(fd, val);
		rgroup__fdc_release(&cg->fdc, slot);
		return r;
	}
	dirfd = rgroup__cg_dirfd(cg);
	if (dirfd < 0)
		return dirfd;
	fd = rgroup__cg_open(dirfd, path, O_WRONLY);
	if (fd == -EMFILE) {
		/* The table is full: give back what the cache holds. */
		rgroup__fdc_clear(&cg->fdc);
		fd = rgroup__cg_open(dirfd, path, O_WRONLY);
	}
	if (fd < 0)
		return fd;
	/* On cgroupfs before a byte is written (closed if not). */
	r = rgroup__kfd_set(&k, fd);
	if (r < 0)
		return r;
	r = rgroup__cg_write_fd(k.fd, val);
	rgroup__fdc_add(&cg->fdc, owner, kind, &k);
	return r;
}

int rgroup__cg_node_write(struct rgroup__cg *cg, struct rgroup__node *n,
			  int kind, const char *file, const char *val)
{
	char path[PATH_MAX];
	int r = rgroup__cg_file(n, file, path, sizeof(path));

	return r < 0 ? r : rgroup__cg_cached_write(cg, n, kind, path, val);
}

static void close_node(struct rgroup__cg *cg, struct rgroup__node *n)
{
	rgroup__fdc_drop(&cg->fdc, n);
}

/* The directory is named after the process and the node's id when it is
 * first made; a spare reused under a new id keeps its name. */
int rgroup__cg_make(struct rgroup__cg *cg, struct rgroup__node *n)
{
	struct rgroup__cg_node *c = rgroup__cg_node(n);
	char path[PATH_MAX];
	int r;

	r = rgroup__format_dirname_ns(c->name, sizeof(c->name), cg->pid, cg->starttime, cg->pidns,
				      n->id);
	if (r == 0)
		r = rgroup__cg_file(n, "", path, sizeof(path));
	if (r == 0 && strlen(path) >= PATH_MAX - 32)
		r = -ENAMETOOLONG;   /* room for its files' names */
	if (r < 0)
		return r;
	path[strlen(path) - 1] = '\0';   /* the trailing '/' */
	return rgroup__cg_mkdir(rgroup__cg_dirfd(cg), path);
}

static int rmdir_node(struct rgroup__cg *cg, const struct rgroup__node *n)
{
	char path[PATH_MAX];
	int r = rgroup__cg_file(n, "", path, sizeof(path));

	if (r < 0)
		return r;
	path[strlen(path) - 1] = '\0';
	return rgroup__cg_rmdir(rgroup__cg_dirfd(cg), path);
}

void rgroup__cg_unmake(struct rgroup__cg *cg, struct rgroup__node *n)
{
	close_node(cg, n);
	rmdir_node(cg, n);
}

int rgroup__cg_place(void *priv, struct rgroup__node *n, pid_t tid)
{
	struct rgroup__cg *cg = priv;
	char buf[24];
	int fd;

	if (!n) {
		fd = rgroup__cg_sgfd(cg, &cg->place, cg->tidsfile);
		return fd < 0 ? fd : rgroup__cg_write_int(fd, tid);
	}
	return rgroup__cg_node_write(cg, n, RGROUP__CG_PLACE, cg->tidsfile,
				     rgroup__cg_itoa(buf, tid));
}

/* 1 if n's directory is still there, 0 if not, or a negative errno. */
static int node_exists(struct rgroup__cg *cg, const struct rgroup__node *n)
{
	char path[PATH_MAX];
	struct stat st;
	int dirfd, r = rgroup__cg_file(n, "", path, sizeof(path));

	if (r < 0)
		return r;
	if ((dirfd = rgroup__cg_dirfd(cg)) < 0)
		return dirfd;
	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
}

/*
 * 0 once n's directory is gone (also when someone else removed it), else a
 * negative errno and n stays as it was, to be retried. ENOENT or ENODEV from
 * rmdir is believed only when the directory is indeed not there: the error
 * may have come from the way to it, and a directory forgotten here would
 * stay for the life of the process.
 */
int rgroup__cg_destroy(void *priv, struct rgroup__node *n)
{
	struct rgroup__cg *cg = priv;
	int r = rmdir_node(cg, n);

	if (r == -ENOENT || r == -ENODEV)
		r = node_exists(cg, n) == 0 ? 0 : -EBUSY;
	if (r < 0)
		return r;
	close_node(cg, n);
	return 0;
}

int rgroup__cg_evacuate(void *priv, const struct rgroup__node *n)
{
	struct rgroup__cg *cg = priv;
	char path[PATH_MAX];
	int r, dirfd, placefd;

	if (!n->bound)
		return 0;
	r = rgroup__cg_file(n, cg->tidsfile, path, sizeof(path));
	if (r < 0)
		return r;
	if ((dirfd = rgroup__cg_dirfd(cg)) < 0)
		return dirfd;
	if ((placefd = rgroup__cg_sgfd(cg, &cg->place, cg->tidsfile)) < 0)
		return placefd;
	return rgroup__cg_move_all(dirfd, path, placefd);
}

void rgroup__cg_info(void *priv, const struct rgroup__node *n, struct rgroup_info *info)
{
	snprintf(info->name, sizeof(info->name), "%s", rgroup__cg_node(n)->name);
}

/* In a fork child: the directories are the parent's, never removed here;
 * only the descriptors are closed (those still ours). */
void rgroup__cg_fork_child(void *priv)
{
	struct rgroup__cg *cg = priv;

	/* Best effort: a child that cannot move keeps running. */
	if (cg->dir[0])
		write_self(cg, &cg->procs, "cgroup.procs", (pid_t)syscall(SYS_getpid));
	rgroup__fdc_fork_child(&cg->fdc);
	rgroup__kfd_close(&cg->sgroup);
	rgroup__kfd_close(&cg->place);
	rgroup__kfd_close(&cg->procs);
	cg->dir[0] = '\0';
}

/* Into n's group through its own file, opened by path for this write:
 * the cache's descriptors are the parent's to manage (vfork child). */
void rgroup__cg_exit_move(struct rgroup__cg *cg)
{
	/* Every thread at once: cgroup.procs moves the whole process. */
	if (cg->dir[0])
		write_self(cg, &cg->procs, "cgroup.procs", (pid_t)syscall(SYS_getpid));
}

void rgroup__cg_exit_remove(struct rgroup__cg *cg, const struct rgroup__node *n)
{
	/* Best effort: a group that will not go waits for gc. */
	if (n->bound)
		rmdir_node(cg, n);
}

int rgroup__cg_place_self(void *priv, const struct rgroup__node *n)
{
	struct rgroup__cg *cg = priv;
	struct rgroup__kfd none = RGROUP__KFD_NONE;
	char file[PATH_MAX];
	int r;

	if (!n)
		return write_self(cg, &cg->place, cg->tidsfile, (pid_t)syscall(SYS_gettid));
	r = rgroup__cg_file(n, cg->tidsfile, file, sizeof(file));
	return r < 0 ? r : write_self(cg, &none, file, (pid_t)syscall(SYS_gettid));
}

int rgroup__cg_place_self_at(struct rgroup__cg *cg, const char *file)
{
	struct rgroup__kfd none = RGROUP__KFD_NONE;

	return write_self(cg, &none, file, (pid_t)syscall(SYS_gettid));
}

static int match_name(struct rgroup__node *n, void *arg)
{
	struct { const char *name; struct rgroup__node *found; } *q = arg;

	if (strcmp(rgroup__cg_node(n)->name, q->name) != 0)
		return 0;
	q->found = n;
	return 1;
}

int rgroup__cg_group_of(void *priv, pid_t tid, struct rgroup__node **out)
{
	struct rgroup__cg *cg = priv;
	struct { const char *name; struct rgroup__node *found; } q = { NULL, NULL };
	char file[64], text[8192], path[PATH_MAX];
	size_t plen = strlen(cg->path);
	const char *rest, *last;
	int r;

	snprintf(file, sizeof(file), "/proc/self/task/%d/cgroup", (int)tid);
	r = rgroup__read_path(file, text, sizeof(text));
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	r = rgroup__parse_proc_cgroup(text, cg->ctrl, path, sizeof(path));
	if (r < 0)
		return r;
	/* Below the sgroup means "<sgroup>/..." (or "/..." for the root). */
	if (strcmp(cg->path, "/") == 0)
		rest = path;
	else if (strncmp(path, cg->path, plen) == 0 && path[plen] == '/')
		rest = path + plen;
	else
		return 0;
	last = strrchr(rest, '/');
	if (!last || !last[1])
		return 0;
	q.name = last + 1;
	rgroup__walk_pre(rgroup__core.top, match_name, &q);
	if (!q.found)
		return 0;
	*out = q.found;
	return 1;
}

int rgroup__cg_each_tid(void *priv, const struct rgroup__node *n,
			int (*fn)(pid_t tid, void *arg), void *arg)
{
	enum { BUFSZ = 65536, MAXT = 4096 };
	struct rgroup__cg *cg = priv;
	char *buf = malloc(BUFSZ), path[PATH_MAX];
	pid_t *tids = malloc(MAXT * sizeof(*tids));
	int r, nt;

	if (!buf || !tids) {
		r = -ENOMEM;
		goto out;
	}
	r = rgroup__cg_file(n, cg->tidsfile, path, sizeof(path));
	if (r < 0)
		goto out;
	r = rgroup__cg_read(rgroup__cg_dirfd(cg), path, buf, BUFSZ);
	if (r < 0)
		goto out;
	nt = rgroup__parse_tids(buf, tids, MAXT);
	r = nt < 0 ? nt : 0;
	for (int i = 0; i < nt && i < MAXT; i++) {
		int e = fn(tids[i], arg);
		if (e < 0 && r == 0)
			r = e;
	}
out:
	free(buf);
	free(tids);
	return r;
}

int rgroup__cg_write_max(struct rgroup__cg *cg, const struct rgroup__node *n, const char *file)
{
	char path[PATH_MAX], val[48];
	int r = rgroup__cg_file(n, file, path, sizeof(path));

	if (r < 0)
		return r;
	if (n->quota_us)
		snprintf(val, sizeof(val), "%llu %llu", (unsigned long long)n->quota_us,
			 (unsigned long long)n->period_us);
	else
		snprintf(val, sizeof(val), "max");
	return rgroup__cg_write(rgroup__cg_dirfd(cg), path, val);
}
