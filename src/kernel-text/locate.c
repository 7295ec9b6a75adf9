/* SPDX-License-Identifier: MIT */
/*
 * locate.c - where a process's cgroup is, and the /proc readers around it
 * (locate.h). I/O only; the text itself is parsed by parse.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

/* The inode of /proc/<name>/ns/<ns>: 0, -errno. */
static int ns_inode(const char *name, const char *ns, uint64_t *ino)
{
	char file[64];
	struct stat sb;

	snprintf(file, sizeof(file), "/proc/%s/ns/%s", name, ns);
	if (stat(file, &sb) < 0)
		return -errno;
	*ino = sb.st_ino;
	return 0;
}

/* The inode of the caller's PID namespace: 0, -errno. A kernel without
 * PID namespaces (no /proc/self/ns/pid where /proc/self is) has only the
 * initial one. */
static int self_pidns(uint64_t *ino)
{
	int r = ns_inode("self", "pid", ino);

	if (r == -ENOENT && access("/proc/self/stat", F_OK) == 0) {
		*ino = RGROUP__PIDNS_INIT;
		return 0;
	}
	return r;
}

/* Does /proc/<name> (a live process) count time as we do? A time
 * namespace moves the boot time that start times count from. 1 yes
 * (also on a kernel without time namespaces), 0 no or cannot tell. */
static int same_clock(const char *name)
{
	uint64_t mine = 0, its = 0;
	int r = ns_inode("self", "time", &mine);

	if (r == -ENOENT)
		return 1;
	if (r < 0 || (r = ns_inode(name, "time", &its)) < 0)
		return r == -ENOENT;   /* gone meanwhile: it is not the owner */
	return mine == its;
}

/* The judgement of rgroup__owner_alive() for the process /proc/<name>. */
static int owner_judged(const char *name, uint64_t start)
{
	char file[64], buf[1024];
	uint64_t now;
	int r;

	snprintf(file, sizeof(file), "/proc/%s/stat", name);
	r = rgroup__read_path(file, buf, sizeof(buf));
	if (r == -ENOENT || r == -ESRCH || r == 0)
		return 0;   /* gone (or went away between open and read) */
	if (r < 0)
		return 1;   /* e.g. hidepid: cannot tell */
	if (rgroup__parse_stat_starttime(buf, &now) < 0)
		return 1;   /* cannot tell: keep what is its */
	return now == start || !same_clock(name);
}

int rgroup__owner_alive(pid_t pid, uint64_t start)
{
	char name[16];

	snprintf(name, sizeof(name), "%d", (int)pid);
	return owner_judged(name, start);
}

uint64_t rgroup__pidns_self(void)
{
	uint64_t ino = 0;

	if (self_pidns(&ino) < 0 || ino == RGROUP__PIDNS_INIT)
		return 0;
	return ino;
}

/* Does this /proc number processes as the caller's PID namespace does
 * (its own mount, not an ancestor's)? 1, 0, or -errno. */
static int proc_is_own(void)
{
	char buf[4096];
	pid_t inner;
	int levels, r = rgroup__read_path("/proc/self/status", buf, sizeof(buf));

	if (r < 0)
		return r;
	r = rgroup__parse_status_nspid(buf, &inner, &levels);
	if (r == -ENOENT)
		return 1;   /* a kernel before 4.1: no namespace lists pids twice */
	return r < 0 ? r : levels == 1;
}

/* /proc/<name>/status's NSpid line: 0, -errno. */
static int nspid_of(const char *name, pid_t *inner, int *levels)
{
	char file[64], buf[4096];
	int r;

	snprintf(file, sizeof(file), "/proc/%s/status", name);
	r = rgroup__read_path(file, buf, sizeof(buf));
	return r < 0 ? r : rgroup__parse_status_nspid(buf, inner, levels);
}

/*
 * Look for the owner among every process this /proc shows, by its PID
 * namespace and its pid there (owner: the namespace's inode; mine: the
 * caller's; own: this /proc is the caller's namespace's). A /proc that
 * shows one process of a namespace shows them all (it is that
 * namespace's or an ancestor's), so the owner is gone if its namespace is
 * seen without it, or if no process is in that namespace and this /proc
 * is the initial namespace's (it shows every process). A process whose
 * namespace cannot be asked, unless it is in this /proc's own, or a /proc
 * that shows less, leaves the answer "alive".
 */
static int owner_scan(uint64_t owner, pid_t pid, uint64_t start, uint64_t mine, int own)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int seen = 0, unsure = 0, alive = 0;
	uint64_t ino = 0;

	if (!d)
		return 1;
	while (!alive && !unsure && (e = readdir(d))) {
		pid_t inner;
		int levels, r;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if ((r = ns_inode(e->d_name, "pid", &ino)) < 0) {
			if (r == -ENOENT || r == -ESRCH)
				continue;   /* gone, or a zombie */
			/* Not ours to ask (EACCES): in this /proc's own
			 * namespace, it is not in the owner's. */
			r = nspid_of(e->d_name, &inner, &levels);
			unsure = r < 0 ? r != -ENOENT && r != -ESRCH
				       : !(levels == 1 && own && owner != mine);
			continue;
		}
		if (ino != owner)
			continue;
		seen = 1;
		r = nspid_of(e->d_name, &inner, &levels);
		if (r < 0)
			unsure = r != -ENOENT && r != -ESRCH;
		else if (inner == pid)
			alive = owner_judged(e->d_name, start);
	}
	closedir(d);
	if (alive || unsure)
		return 1;
	return !seen && !(mine == RGROUP__PIDNS_INIT && own);
}

int rgroup__owner_alive_ns(pid_t pid, uint64_t start, uint64_t pidns)
{
	uint64_t owner = pidns ? pidns : RGROUP__PIDNS_INIT, mine = 0;
	int own;

	if (self_pidns(&mine) < 0)
		return 1;   /* cannot tell whose pids these are */
	own = proc_is_own() == 1;
	if (mine == owner && own)
		return rgroup__owner_alive(pid, start);
	return owner_scan(owner, pid, start, mine, own);
}

/*
 * Is the owner of file `name` in dir alive? Its name gives its pid and
 * start time as its own PID namespace numbers it; its first line names
 * that namespace ("pidns=N", 0 the initial one) where its writer knows
 * it, and then the owner is judged wherever the caller is. A file without
 * it (a writer older than that) is judged by pid and start time alone.
 */
static int file_owner_alive(int dirfd, const char *name, pid_t pid, uint64_t start)
{
	char head[512], *p;
	const char *end;
	uint64_t pidns;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : 1;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n < 0)
		return 1;
	head[n] = '\0';
	head[strcspn(head, "\n")] = '\0';
	for (p = head; (p = strstr(p, "pidns=")); p += 6)
		if ((p == head || p[-1] == ' ') && rgroup__parse_u64(p + 6, &end, &pidns) == 0)
			return rgroup__owner_alive_ns(pid, start, pidns);
	return rgroup__owner_alive(pid, start);
}

int rgroup__sweep_dead_owners(const char *dir,
			      int (*parse)(const char *name, pid_t *pid, uint64_t *start, int *tmp),
			      int dry_run, int any_owner,
			      void (*seen)(void *arg, const char *path, int err), void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid_t pid;
		uint64_t start;
		int tmp, err = 0;
		struct stat sb;
		char p[PATH_MAX];

		if (parse(e->d_name, &pid, &start, &tmp) < 0 ||
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(sb.st_mode) || file_owner_alive(dirfd(d), e->d_name, pid, start))
			continue;
		/* Another user's: the sticky /dev/shm would refuse anyway. */
		if (!any_owner && sb.st_uid != geteuid())
			continue;
		if (!dry_run && unlinkat(dirfd(d), e->d_name, 0) < 0) {
			if (errno == ENOENT)
				continue; /* another collector was first */
			err = errno;
		}
		n += !err;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (seen)
			seen(arg, p, err);
	}
	closedir(d);
	return n;
}
