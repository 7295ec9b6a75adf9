/* SPDX-License-Identifier: MIT */
/*
 * cgroupfs.c - file and directory helpers both cgroup backends use.
 *
 * Learnt from systemd's cgroup-util: O_CLOEXEC always, one write() per
 * value, never follow a symlink or cross a mount (nothing is opened outside
 * the process's own subtree), and expect ENODEV/EBUSY/ENOENT races with the
 * admin.
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

/*
 * Open path below dirfd with no symlink in any of its names, no mount
 * crossed and no step out of dirfd. Groups are reached by path from the
 * sgroup's descriptor ("rgroup-a/rgroup-b/tasks"), where O_NOFOLLOW guards
 * only the last name, and a file bound over a group's is no symlink at
 * all. cgroupfs holds neither, but whoever may mount can plant them
 * (test-admin does). openat2() (Linux 5.6) checks every step; where it is
 * missing (ENOSYS) or a seccomp filter refuses it (EPERM, then openat()
 * works), only the last name is guarded.
 */
static int open_beneath(int dirfd, const char *path, int flags)
{
	static int no_openat2;
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV,
	};
	int fd, refused = 0;

	if (!__atomic_load_n(&no_openat2, __ATOMIC_RELAXED)) {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno == ENOSYS)
			__atomic_store_n(&no_openat2, 1, __ATOMIC_RELAXED);
		else if (errno == EPERM)
			refused = 1;
		else
			return -errno;
	}
	fd = openat(dirfd, path, flags | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (refused) /* by a filter: openat() was allowed */
		__atomic_store_n(&no_openat2, 1, __ATOMIC_RELAXED);
	return fd;
}

/* The directory holding the last name of path (below dirfd), opened as
 * open_beneath() does, and that name. *pfd is dirfd itself when path is
 * one name; else the caller closes it. */
static int open_parent(int dirfd, const char *path, int *pfd, const char **name)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(path, '/');

	*pfd = dirfd;
	*name = path;
	if (!slash)
		return 0;
	if ((size_t)(slash - path) >= sizeof(parent))
		return -ENAMETOOLONG;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	*pfd = open_beneath(dirfd, parent, O_PATH | O_DIRECTORY);
	*name = slash + 1;
	return *pfd < 0 ? *pfd : 0;
}

int rgroup__cg_open(int dirfd, const char *file, int flags)
{
	int f = rgroup__fault();
	if (f < 0)
		return f;
	return open_beneath(dirfd, file, flags);
}

/* cgroupfs takes a value in one write(); a short write is an error. */
/*
 * The system call itself, not pwrite(): pwrite() is a cancellation point,
 * and these writes are made with the core lock held (a thread cancelled
 * there would leave it held for ever); it also spares the wrapper's two
 * cancellation-state switches, 5% of a PRIO_RGRP call.
 */
int rgroup__cg_write_fd(int fd, const char *val)
{
	size_t n = strlen(val);
	ssize_t r;
	int f = rgroup__fault();

	if (f < 0)
		return f;
	do
		r = syscall(SYS_pwrite64, fd, val, n, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

char *rgroup__cg_itoa(char *buf, long long val)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	unsigned long long u = val < 0 ? 0 - (unsigned long long)val : (unsigned long long)val;
	size_t len;

	*--p = '\0';
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (val < 0)
		*--p = '-';
	len = (size_t)(tmp + sizeof(tmp) - p);
	memcpy(buf, p, len);
	return buf;
}

int rgroup__cg_write_int(int fd, long long val)
{
	char buf[24];

	return rgroup__cg_write_fd(fd, rgroup__cg_itoa(buf, val));
}

int rgroup__cg_write(int dirfd, const char *file, const char *val)
{
	int fd = rgroup__cg_open(dirfd, file, O_WRONLY);
	int r;

	if (fd < 0)
		return fd;
	r = rgroup__cg_write_fd(fd, val);
	close(fd);
	return r;
}

int rgroup__cg_read_fd(int fd, char *buf, size_t len)
{
	int f = rgroup__fault();

	return f < 0 ? f : rgroup__read_fd(fd, buf, len);
}

int rgroup__cg_read(int dirfd, const char *file, char *buf, size_t len)
{
	int fd = rgroup__cg_open(dirfd, file, O_RDONLY);
	int r;

	if (fd < 0)
		return fd;
	r = rgroup__cg_read_fd(fd, buf, len);
	close(fd);
	return r;
}

int rgroup__cg_open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* mkdir (make) or rmdir the last name of path, in its parent opened
 * beneath dirfd. */
static int at_parent(int dirfd, const char *path, int make)
{
	const char *name;
	struct stat st;
	int f = rgroup__fault(), pfd, r;

	if (f < 0)
		return f;
	r = open_parent(dirfd, path, &pfd, &name);
	if (r < 0)
		return r;
	if (make ? fstat(pfd, &st) < 0 || mkdirat(pfd, name, st.st_mode & 0777) < 0
		 : unlinkat(pfd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	if (pfd != dirfd)
		close(pfd);
	return r;
}

/*
 * The new group (path relative to dirfd) gets its parent's permission bits,
 * never wider: a delegated sgroup owned by a user stays that user's alone.
 * cgroupfs ignores the umask, so the mode is applied as given.
 */
int rgroup__cg_mkdir(int dirfd, const char *path)
{
	return at_parent(dirfd, path, 1);
}

int rgroup__cg_rmdir(int dirfd, const char *path)
{
	return at_parent(dirfd, path, 0);
}

int rgroup__cg_move_all(int dirfd, const char *tidsfile, int placefd)
{
	enum { BUFSZ = 65536, MAXT = 4096 };
	char *buf = malloc(BUFSZ);
	pid_t *tids = malloc(MAXT * sizeof(*tids));
	int n, r = -EBUSY;

	if (!buf || !tids) {
		r = -ENOMEM;
		goto out;
	}
	/* Threads may come and go while we read: repeat until empty. It ends
	 * because nobody creates threads into a group whose members have all
	 * been moved out; 16 rounds bound it anyway. */
	for (int round = 0; round < 16; round++) {
		r = rgroup__cg_read(dirfd, tidsfile, buf, BUFSZ);
		if (r < 0)
			goto out;
		n = rgroup__parse_tids(buf, tids, MAXT);
		if (n <= 0) {
			r = n;
			goto out;
		}
		if (n > MAXT)
			n = MAXT;
		for (int i = 0; i < n; i++) {
			r = rgroup__cg_write_int(placefd, tids[i]);
			/* ESRCH: the thread exited meanwhile. */
			if (r < 0 && r != -ESRCH)
				goto out;
		}
		r = -EBUSY;
	}
out:
	free(buf);
	free(tids);
	return r;
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

/* Remove an abandoned rgroup directory and everything below, children
 * first. A directory that still has threads (EBUSY) stays. */
static int remove_tree(int parentfd, const char *name, int depth)
{
	int fd, removed = 0;
	DIR *d;
	struct dirent *e;

	if (depth > 64)
		return 0;
	fd = open_beneath(parentfd, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d))) {
		pid_t pid;
		uint64_t start, id;
		if (e->d_type == DT_DIR &&
		    rgroup__parse_dirname(e->d_name, &pid, &start, &id) == 0)
			removed += remove_tree(fd, e->d_name, depth + 1);
	}
	closedir(d);
	if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0)
		removed++;
	return removed;
}

int rgroup__cg_gc(int sgroupfd)
{
	int fd, removed = 0;
	DIR *d;
	struct dirent *e;

	fd = openat(sgroupfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int r = -errno;
		close(fd);
		return r;
	}
	while ((e = readdir(d))) {
		pid_t pid;
		uint64_t start, pidns, id;
		if (e->d_type != DT_DIR ||
		    rgroup__parse_dirname_ns(e->d_name, &pid, &start, &pidns, &id) < 0)
			continue;
		if (rgroup__owner_alive_ns(pid, start, pidns))
			continue;
		removed += remove_tree(sgroupfd, e->d_name, 0);
	}
	closedir(d);
	return removed;
}

/* ---- The generic cgroup backend ------------------------------------- */

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
