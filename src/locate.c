/* SPDX-License-Identifier: MIT */
/*
 * locate.c - where a process's cgroup is, and the /proc readers around it
 * (locate.h). I/O only; the text itself is parsed by parse.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "locate.h"

int rgroup__read_fd(int fd, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return -EINVAL;
	for (;;) {
		ssize_t r = pread(fd, buf + off, len - 1 - off, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		off += (size_t)r;
		if (off == len - 1)
			return -EFBIG;
	}
	buf[off] = '\0';
	return (int)off;
}

int rgroup__read_path(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = rgroup__read_fd(fd, buf, len);
	close(fd);
	return r;
}

int rgroup__why(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* "/proc/<pid>/<file>", or /proc/self for pid 0. */
static void proc_file(char *out, size_t len, pid_t pid, const char *file)
{
	if (pid)
		snprintf(out, len, "/proc/%d/%s", (int)pid, file);
	else
		snprintf(out, len, "/proc/self/%s", file);
}

/* mountinfo can be long on busy hosts: a static buffer, under a lock of its
 * own (the library calls this with its core lock held, tools and tests from
 * any thread). */
static char text[1 << 17];
static pthread_mutex_t text_lock = PTHREAD_MUTEX_INITIALIZER;

static int locate_locked(pid_t pid, const char *ctrl, struct rgroup__cgloc *loc,
			 char *why, size_t wlen)
{
	const char *kind = ctrl ? "cgroup v1 'cpu'" : "cgroup v2";
	char file[64];
	int r;

	proc_file(file, sizeof(file), pid, "mountinfo");
	r = rgroup__read_path(file, text, sizeof(text));
	if (r < 0)
		return rgroup__why(why, wlen, r, "cannot read %s: %s; mount /proc", file, strerror(-r));
	r = rgroup__parse_mountinfo(text, ctrl, &loc->mount);
	if (r < 0)
		return rgroup__why(why, wlen, -ENOTSUP, ctrl ?
			"no cgroup v1 hierarchy has the cpu controller mounted (it is on cgroup v2, or not mounted)" :
			"no cgroup v2 hierarchy is mounted; mount cgroup2 on /sys/fs/cgroup");
	if (loc->mount.ro)
		return rgroup__why(why, wlen, -EROFS, "the %s hierarchy at %s is mounted read-only (a container?); ask for a writable, delegated cgroup", kind, loc->mount.point);
	/* A process's group is its main thread's: the library never puts the
	 * main thread into an rgroup. */
	proc_file(file, sizeof(file), pid, "cgroup");
	r = rgroup__read_path(file, text, sizeof(text));
	if (r < 0)
		return rgroup__why(why, wlen, r == -ENOENT ? -ESRCH : r, "cannot read %s: %s", file, strerror(-r));
	r = rgroup__parse_proc_cgroup(text, ctrl, loc->path, sizeof(loc->path));
	if (r < 0)
		return rgroup__why(why, wlen, -ENOTSUP, "the process is in no %s group (%s has no such line)", kind, file);
	r = rgroup__cgroup_dir(&loc->mount, loc->path, loc->dir, sizeof(loc->dir));
	if (r < 0)
		return rgroup__why(why, wlen, r, "the process's %s group %s is outside the mount at %s (another cgroup namespace?)", kind, loc->path, loc->mount.point);
	return 0;
}

int rgroup__cg_locate(pid_t pid, const char *ctrl, struct rgroup__cgloc *loc,
		      char *why, size_t wlen)
{
	int r;

	pthread_mutex_lock(&text_lock);
	r = locate_locked(pid, ctrl, loc, why, wlen);
	pthread_mutex_unlock(&text_lock);
	return r;
}

int rgroup__cg_mounts(int (*fn)(void *arg, const struct rgroup__mount *m, int v2),
		      void *arg)
{
	static const char *const ctrls[] = { NULL, "cpu" };   /* v2, then v1 */
	struct rgroup__mount m;
	char seen[64][sizeof(m.dev)];
	int nseen = 0, r = 0;

	pthread_mutex_lock(&text_lock);
	r = rgroup__read_path("/proc/self/mountinfo", text, sizeof(text));
	for (size_t i = 0; r >= 0 && i < sizeof(ctrls) / sizeof(ctrls[0]); i++) {
		const char *pos = text;

		r = 0;
		while (r == 0 && rgroup__parse_mountinfo_next(&pos, ctrls[i], &m) == 0) {
			int dup = 0;

			for (int k = 0; k < nseen; k++)
				dup |= strcmp(seen[k], m.dev) == 0;
			if (dup || nseen == 64)
				continue;
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", m.dev);
			r = fn(arg, &m, ctrls[i] == NULL);
		}
	}
	pthread_mutex_unlock(&text_lock);
	return r;
}

uint64_t rgroup__starttime(pid_t pid)
{
	char file[64], buf[1024];
	uint64_t t = 0;

	proc_file(file, sizeof(file), pid, "stat");
	if (rgroup__read_path(file, buf, sizeof(buf)) > 0)
		rgroup__parse_stat_starttime(buf, &t);
	return t;
}

int rgroup__owner_alive(pid_t pid, uint64_t start)
{
	char file[64], buf[1024];
	uint64_t now;
	int r;

	proc_file(file, sizeof(file), pid, "stat");
	r = rgroup__read_path(file, buf, sizeof(buf));
	if (r == -ENOENT || r == -ESRCH || r == 0)
		return 0;   /* gone (or went away between open and read) */
	if (r < 0)
		return 1;   /* e.g. hidepid: cannot tell */
	if (rgroup__parse_stat_starttime(buf, &now) < 0)
		return 1;   /* cannot tell: keep what is its */
	return now == start;
}
