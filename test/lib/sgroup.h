/* SPDX-License-Identifier: MIT */
/*
 * sgroup.h - a system group of the test's own, on the hierarchy of the
 * backend under test (RGROUP_BACKEND), so that a test never touches a group
 * it did not make and tests do not disturb each other.
 *
 *   cgroup1: a child of the process's group in the v1 cpu hierarchy.
 *   cgroup2: a child of the parent of the process's group (the process's
 *            own group holds processes, so it cannot hand controllers
 *            down); the parent must already enable cpu for its children,
 *            as the VM's init does for the root.
 *
 * rgt_sg_make() makes one; rgt_sg_enter() moves the whole process in;
 * rgt_sg_cleanup() (also run at exit) waits until the library has removed
 * its groups, moves the process back and removes what the test made.
 */
#ifndef RGROUP_TEST_SGROUP_H
#define RGROUP_TEST_SGROUP_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "check.h"
#include "governor-state.h"
#include "locate.h"
#include "parse.h"
#include "weight.h"
#include "rgroup.h"

#define RGT_MAX_SG 4

static struct {
	int v2;
	int gov;                /* the governor: no kernel groups to look at */
	int delegated;          /* RGROUP_TEST_DELEGATED: an unprivileged user in
	                         * a delegated group, used as the sgroup as is */
	char home[PATH_MAX];    /* the process's group when the test started */
	char base[PATH_MAX];    /* where the test's groups are made */
	char mount[PATH_MAX];   /* the hierarchy's mount point */
	char made[RGT_MAX_SG][PATH_MAX];
	int nmade;
	pid_t owner;            /* forked children must not clean up */
} rgt_sg;

static inline double rgt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void rgt_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static inline pid_t rgt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline int rgt_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r = write(fd, val, strlen(val));
	int e = errno;
	close(fd);
	return r < 0 ? -e : 0;
}

static inline int rgt_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t off = 0, r;
	while ((r = read(fd, buf + off, len - 1 - off)) > 0 && (size_t)(off += r) < len - 1)
		;
	close(fd);
	buf[off] = '\0';
	return r < 0 ? -1 : (int)off;
}

/* Run child(arg) in a new process with its stdout into out (NUL-ended, at
 * most len - 1 bytes); child execs another program or exits. Returns the
 * process's exit status, or -1 (killed by a signal, or no process). */
static inline int rgt_capture(char *out, size_t len, void (*child)(void *), void *arg)
{
	size_t off = 0;
	ssize_t n;
	int p[2], st;

	out[0] = '\0';
	if (pipe(p) < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 1);
		child(arg);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && off < len - 1 && (n = read(p[0], out + off, len - 1 - off)) > 0)
		off += (size_t)n;
	out[off] = '\0';
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline int rgt_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

/* The cgroup path of thread tid (0: the caller) on the tested hierarchy. */
static inline int rgt_thread_cgroup(pid_t tid, char *out, size_t len)
{
	char file[64], text[8192];
	snprintf(file, sizeof(file), "/proc/self/task/%d/cgroup",
		 (int)(tid ? tid : rgt_gettid()));
	if (rgt_read(file, text, sizeof(text)) < 0)
		return -1;
	return rgroup__parse_proc_cgroup(text, rgt_sg.v2 ? NULL : "cpu", out, len);
}

/* Absolute directory of a cgroup path on the tested hierarchy. */
static inline void rgt_cg_dir(const char *cgpath, char *out, size_t len)
{
	snprintf(out, len, "%s%s", rgt_sg.mount, strcmp(cgpath, "/") ? cgpath : "");
}

static inline void rgt_sg_cleanup(void);

/* Find the hierarchy; skip the whole program when it cannot run here. */
static inline void rgt_sg_init(void)
{
	static char text[1 << 16];
	struct rgroup__mount m;
	const char *be = getenv("RGROUP_BACKEND");
	char why[512];

	if (!be || !*be)
		rgt_skip_all("RGROUP_BACKEND is not set: the test harness sets it to the backend under test");
	if (strcmp(be, "governor") == 0) {
		/* In-process only: no system group to make, no privilege. */
		if (rgroup_probe(be, why, sizeof(why)) < 0)
			rgt_skip_all("backend %s cannot run here: %s", be, why);
		rgt_sg.gov = 1;
		rgt_sg.owner = getpid();
		atexit(rgt_sg_cleanup);
		return;
	}
	rgt_sg.delegated = getenv("RGROUP_TEST_DELEGATED") && atoi(getenv("RGROUP_TEST_DELEGATED"));
	if (geteuid() != 0 && !rgt_sg.delegated)
		rgt_skip_all("needs root to make system groups of its own (run the suite as root)");
	if (rgroup_probe(be, why, sizeof(why)) < 0)
		rgt_skip_all("backend %s cannot run here: %s", be, why);
	rgt_sg.v2 = strcmp(be, "cgroup2") == 0;
	if (rgt_read("/proc/self/mountinfo", text, sizeof(text)) < 0 ||
	    rgroup__parse_mountinfo(text, rgt_sg.v2 ? NULL : "cpu", &m) < 0)
		rgt_skip_all("no %s hierarchy mounted", be);
	if (strcmp(m.root, "/") != 0)
		rgt_skip_all("the hierarchy is mounted from %s, not its root", m.root);
	snprintf(rgt_sg.mount, sizeof(rgt_sg.mount), "%s", m.point);
	if (rgt_thread_cgroup(0, rgt_sg.home, sizeof(rgt_sg.home)) < 0)
		rgt_skip_all("cannot read this process's cgroup");
	if (!rgt_sg.v2 || strcmp(rgt_sg.home, "/") == 0) {
		snprintf(rgt_sg.base, sizeof(rgt_sg.base), "%s", rgt_sg.home);
	} else {
		char *slash;
		snprintf(rgt_sg.base, sizeof(rgt_sg.base), "%s", rgt_sg.home);
		slash = strrchr(rgt_sg.base, '/');
		if (slash == rgt_sg.base)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (rgt_sg.v2 && !rgt_sg.delegated) {
		char dir[PATH_MAX + 32], buf[256];
		rgt_cg_dir(rgt_sg.base, dir, sizeof(dir));
		strcat(dir, "/cgroup.subtree_control");
		if (rgt_read(dir, buf, sizeof(buf)) < 0 || !rgroup__has_token(buf, "cpu"))
			rgt_skip_all("%s does not enable cpu for its children", dir);
	}
	rgt_sg.owner = getpid();
	atexit(rgt_sg_cleanup);
}

/* Make a new, empty system group; its cgroup path goes to out. */
static inline void rgt_sg_make(const char *tag, char *out, size_t len)
{
	char dir[PATH_MAX];

	if (rgt_sg.gov) {
		snprintf(out, len, "(governor: no system group)");
		return;
	}
	if (rgt_sg.nmade == RGT_MAX_SG)
		rgt_skip_all("test bug: too many system groups");
	snprintf(out, len, "%s/rgtest-%s-%d",
		 strcmp(rgt_sg.base, "/") ? rgt_sg.base : "", tag, (int)getpid());
	rgt_cg_dir(out, dir, sizeof(dir));
	if (mkdir(dir, 0755) < 0)
		rgt_skip_all("cannot make test system group %s: %s", dir, strerror(errno));
	snprintf(rgt_sg.made[rgt_sg.nmade++], PATH_MAX, "%s", out);
}

/* Move the whole process (the administrator's move: cgroup.procs). */
static inline int rgt_sg_move(const char *cgpath)
{
	char dir[PATH_MAX], pid[32];
	rgt_cg_dir(cgpath, dir, sizeof(dir));
	strncat(dir, "/cgroup.procs", sizeof(dir) - strlen(dir) - 1);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return rgt_write(dir, pid);
}

/* Make a group and move in; the usual start of a system test. */
static inline void rgt_sg_enter(char *out, size_t len)
{
	if (rgt_sg.delegated) {
		/* The delegated group is the sgroup; nothing made, nothing moved. */
		snprintf(out, len, "%s", rgt_sg.home);
		snprintf(rgt_sg.made[0], PATH_MAX, "%s", rgt_sg.home);
		rgt_sg.nmade = 1; /* looked at for leftovers, never removed */
		return;
	}
	rgt_sg_make("main", out, len);
	if (rgt_sg.gov)
		return;
	if (rgt_sg_move(out) < 0)
		rgt_skip_all("cannot move into the test system group %s", out);
}

/* Directories named rgroup-<pid>-... at and below dir (pid 0: any owner;
 * nested groups carry their owner's pid too). */
static inline int rgt_count_groups_at(const char *dir, pid_t pid, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		pid_t p;
		uint64_t start, id;
		char sub[PATH_MAX + 300];

		if (e->d_type != DT_DIR || rgroup__parse_dirname(e->d_name, &p, &start, &id) < 0)
			continue;
		if (depth == 0 && pid && p != pid)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		n += 1 + rgt_count_groups_at(sub, pid, depth + 1);
	}
	closedir(d);
	return n;
}

static inline int rgt_count_groups(const char *dir, pid_t pid)
{
	return rgt_count_groups_at(dir, pid, 0);
}

/* Open descriptors of this process. */
static inline int rgt_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/* The library's keeper opens a file now and then (/proc reads, the v2
 * clean-up's directory scan): a single count can catch one in flight. The
 * steady count is the smallest of a few samples. */
static inline int rgt_fd_steady(void)
{
	int best = rgt_fd_count();

	for (int i = 0; i < 10; i++) {
		rgt_sleep(0.02);
		int n = rgt_fd_count();
		if (n < best)
			best = n;
	}
	return best;
}

/* Directories of this process's groups in the test's system groups. The
 * library keeps emptied groups as spares for up to 0.5 s after its last
 * creation (the fast path), so "gone" is waited for, not assumed. */
static inline int rgt_own_dirs(void)
{
	int n = 0;
	for (int i = 0; i < rgt_sg.nmade; i++) {
		char dir[PATH_MAX];
		rgt_cg_dir(rgt_sg.made[i], dir, sizeof(dir));
		n += rgt_count_groups(dir, getpid());
	}
	return n;
}

/* Wait until the library has no rgroup left and its directories are gone
 * from the test's system groups; 0 on success. */
static inline int rgt_wait_no_groups(double timeout)
{
	double end = rgt_now() + timeout;
	while (rgroup_list(NULL, 0) > 0 || rgt_own_dirs() > 0) {
		if (rgt_now() > end)
			return -1;
		rgt_sleep(0.01);
	}
	return 0;
}

static inline void rgt_sg_cleanup(void)
{
	char dir[PATH_MAX];

	if (getpid() != rgt_sg.owner)
		return;
	if (rgt_sg.gov) {
		if (rgt_wait_no_groups(3.0) < 0)
			fprintf(stderr, "  cleanup: the library still has %d rgroups\n", rgroup_list(NULL, 0));
		return;
	}
	if (!rgt_sg.nmade)
		return;
	if (rgt_wait_no_groups(3.0) < 0)
		fprintf(stderr, "  cleanup: the library still has %d rgroups\n", rgroup_list(NULL, 0));
	if (rgt_sg.delegated)
		return; /* the process's own group: not ours to remove */
	rgt_sg_move(rgt_sg.home);
	/* The library removes its groups within 0.5 s; give it a moment. */
	for (int i = rgt_sg.nmade - 1; i >= 0; i--) {
		rgt_cg_dir(rgt_sg.made[i], dir, sizeof(dir));
		/* A child the test killed may have left groups here. */
		rgroup_gc(dir);
		for (int tries = 0; tries < 100 && rmdir(dir) < 0 && errno == EBUSY; tries++)
			rgt_sleep(0.02);
		if (rgt_exists(dir))
			fprintf(stderr, "  cleanup: could not remove %s: %s\n", dir, strerror(errno));
	}
	rgt_sg.nmade = 0;
}

/* ---- Threads that do something until told to stop ------------------- */

struct rgt_worker {
	pthread_t thread;
	pid_t tid;
	volatile int stop;
	volatile int ready;
	int spin;                /* burn CPU (else sleep) */
	int new_group;           /* children: created with RGROUP_NEW */
	int nice;                /* PRIO_RGRP to set from inside, if set_nice */
	int set_nice;
	int nkids;               /* threads it starts inside its own group */
	struct rgt_worker *kids;
	int err;                 /* first error seen inside */
	volatile unsigned long counter;
};

static inline void *rgt_worker_main(void *p)
{
	struct rgt_worker *w = p;

	w->tid = rgt_gettid();
	if (w->set_nice && rgroup_setpriority(PRIO_RGRP, 0, w->nice) < 0)
		w->err = errno;
	for (int i = 0; i < w->nkids; i++) {
		int r = rgroup_thread_create(&w->kids[i].thread, NULL,
					     w->kids[i].new_group ? RGROUP_NEW : 0,
					     rgt_worker_main, &w->kids[i]);
		if (r && !w->err)
			w->err = r;
		while (!r && !__atomic_load_n(&w->kids[i].ready, __ATOMIC_ACQUIRE))
			rgt_sleep(0.001);
	}
	__atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		if (w->spin)
			w->counter++;
		else
			rgt_sleep(0.005);
	}
	return NULL;
}

/* Stop and join w's descendants, then w. */
static inline void rgt_worker_stop(struct rgt_worker *w)
{
	for (int i = 0; i < w->nkids; i++)
		rgt_worker_stop(&w->kids[i]);
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	pthread_join(w->thread, NULL);
}

static inline int rgt_worker_start(struct rgt_worker *w, unsigned flags)
{
	int r = rgroup_thread_create(&w->thread, NULL, flags, rgt_worker_main, w);
	while (!r && !__atomic_load_n(&w->ready, __ATOMIC_ACQUIRE))
		rgt_sleep(0.001);
	return r;
}

/* CPU seconds used by thread tid of this process. */
static inline double rgt_thread_cpu(pid_t tid)
{
	struct timespec ts;
	clockid_t cid = (clockid_t)((~(unsigned int)tid << 3) | 6);
	if (clock_gettime(cid, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The value of a file in the directory of a cgroup path. */
static inline long long rgt_cg_value(const char *cgpath, const char *file)
{
	char dir[PATH_MAX + 64], buf[64];
	rgt_cg_dir(cgpath, dir, sizeof(dir));
	strncat(dir, "/", sizeof(dir) - strlen(dir) - 1);
	strncat(dir, file, sizeof(dir) - strlen(dir) - 1);
	if (rgt_read(dir, buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	return strtoll(buf, NULL, 10);
}

/* Is there a kernel side to check (not the governor)? */
static inline int rgt_kernel(void)
{
	return !rgt_sg.gov;
}

/* The kernel's view of the weight of the rgroup at cgpath, as a nice
 * value's weight (v1 cpu.shares; v2 cpu.weight.nice mapped back). */
static inline long long rgt_cg_weight(const char *cgpath)
{
	if (!rgt_sg.v2)
		return rgt_cg_value(cgpath, "cpu.shares");
	long long nice = rgt_cg_value(cgpath, "cpu.weight.nice");
	return nice == LLONG_MIN ? nice : rgroup_nice_to_weight((int)nice);
}

#endif /* RGROUP_TEST_SGROUP_H */
