/* SPDX-License-Identifier: MIT */
/*
 * cgroupfs.c - file and directory helpers both cgroup backends use, and
 * the collection of what dead processes left (rgroup_gc). The operations
 * they share are cgroup-ops.c's.
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

static int remove_tree(int parentfd, const char *name, int depth);

/* mkdir the last name of path in its parent opened beneath dirfd, with
 * the parent's mode; one already there is a leftover of this process's
 * (below), removed with what is under it before a second try. */
static int make_own(int pfd, const char *name)
{
	struct stat st;

	if (fstat(pfd, &st) < 0)
		return -errno;
	if (mkdirat(pfd, name, st.st_mode & 0777) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	remove_tree(pfd, name, 0);
	if (mkdirat(pfd, name, st.st_mode & 0777) == 0)
		return 0;
	return errno == EEXIST ? -EBUSY : -errno;
}

/* mkdir (make) or rmdir the last name of path, in its parent opened
 * beneath dirfd. */
static int at_parent(int dirfd, const char *path, int make)
{
	const char *name;
	int f = rgroup__fault(), pfd, r;

	if (f < 0)
		return f;
	r = open_parent(dirfd, path, &pfd, &name);
	if (r < 0)
		return r;
	if (make)
		r = make_own(pfd, name);
	else if (unlinkat(pfd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	if (pfd != dirfd)
		close(pfd);
	return r;
}

/*
 * The new group (path relative to dirfd) gets its parent's permission bits,
 * never wider: a delegated sgroup owned by a user stays that user's alone.
 * cgroupfs ignores the umask, so the mode is applied as given.
 * Its name is this process's (pid, start time, pid namespace and an id
 * unique to the image), so a directory already there was left by an
 * earlier image of this process: one that exec'd, or was moved away and
 * back, while a group of it was still busy for a moment. rgroup_gc()
 * keeps it, its owner being alive; it is removed here instead, and the
 * group made again (-EBUSY if it still holds threads).
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
