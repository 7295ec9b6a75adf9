/* SPDX-License-Identifier: MIT */
/*
 * sgroup.c - the test's (or the demo's) own system group, found through
 * the project's one locator (rgroup__cg_locate), and worker threads. See
 * sgroup.h.
 */
#include <ftw.h>

#include "sgroup.h"

struct rgt_sgroup rgt_sg;

int rgt_sg_open(const char *backend, char *why, size_t len)
{
	static int registered;
	struct rgroup__cgloc loc;
	int r;

	if (!registered) {
		atexit(rgt_sg_cleanup);
		registered = 1;
	}
	rgt_sg.owner = getpid();
	if (strcmp(backend, "governor") == 0) {
		/* In-process only: no system group to make. */
		rgt_sg.gov = 1;
		return 0;
	}
	rgt_sg.native = strcmp(backend, "native") == 0;
	rgt_sg.v2 = strcmp(backend, "cgroup2") == 0 || rgt_sg.native;
	r = rgroup__cg_locate(0, rgt_sg.v2 ? NULL : "cpu", &loc, why, len);
	if (r < 0)
		return r;
	rgt_sg.mount = loc.mount;
	snprintf(rgt_sg.home, sizeof(rgt_sg.home), "%s", loc.path);
	snprintf(rgt_sg.base, sizeof(rgt_sg.base), "%s", rgt_sg.home);
	if (rgt_sg.v2 && strcmp(rgt_sg.home, "/") != 0) {
		char *slash = strrchr(rgt_sg.base, '/');

		if (slash == rgt_sg.base)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (rgt_sg.v2 && !rgt_sg.delegated) {
		/* Enabling cpu in a group that is not ours would change what
		 * the administrator configured: only use it if it is on. */
		char file[PATH_MAX + 32], buf[256];

		rgt_cg_dir(rgt_sg.base, file, sizeof(file));
		strncat(file, "/cgroup.subtree_control", sizeof(file) - strlen(file) - 1);
		if (rgt_read(file, buf, sizeof(buf)) < 0 || !rgroup__has_token(buf, "cpu"))
			return rgroup__why(why, len, -ENOTSUP, "%s does not enable cpu for its "
					   "children, so a group made there gets no CPU share of "
					   "its own", file);
	}
	return 0;
}

void rgt_sg_init(void)
{
	const char *be = getenv("RGROUP_BACKEND");
	char why[PATH_MAX + 256];

	if (!be || !*be)
		rgt_skip_all("RGROUP_BACKEND is not set: the test harness sets it to the backend under test");
	/*
	 * RGROUP_BACKEND=kernel: the kernel backend this machine has, as the
	 * library picks it with nothing forced (native, cgroup2, cgroup1), so
	 * that the system suite runs on a cgroup2-only host, a cgroup1 one or
	 * a native kernel alike. Exported again for helpers the test starts.
	 */
	if (strcmp(be, "kernel") == 0) {
		unsetenv("RGROUP_BACKEND");
		be = rgroup_backend();
		if (strcmp(be, "native") && strcmp(be, "cgroup2") && strcmp(be, "cgroup1")) {
			char n[512], v2[512], v1[512];

			rgroup_probe("native", n, sizeof(n));
			rgroup_probe("cgroup2", v2, sizeof(v2));
			rgroup_probe("cgroup1", v1, sizeof(v1));
			rgt_skip_all("no kernel backend works here (native: %s; cgroup2: %s; "
				     "cgroup1: %s)", n, v2, v1);
		}
		setenv("RGROUP_BACKEND", be, 1);
		fprintf(stderr, "# the kernel backend here: %s\n", be);
	}
	rgt_sg.delegated = getenv("RGROUP_TEST_DELEGATED") && atoi(getenv("RGROUP_TEST_DELEGATED"));
	if (strcmp(be, "governor") != 0 && geteuid() != 0 && !rgt_sg.delegated)
		rgt_skip_all("needs root to make system groups of its own (run the suite as root)");
	if (rgroup_probe(be, why, sizeof(why)) < 0)
		rgt_skip_all("backend %s cannot run here: %s", be, why);
	if (rgt_sg_open(be, why, sizeof(why)) < 0)
		rgt_skip_all("%s", why);
}

/* Make group `name` below the base; its cgroup path into out. */
static int sg_mkdir(const char *name, char *out, size_t len, char *why, size_t wlen)
{
	char dir[PATH_MAX];

	if (rgt_sg.nmade == RGT_MAX_SG)
		return rgroup__why(why, wlen, -ENOSPC, "test bug: more than %d system groups",
				   RGT_MAX_SG);
	if ((size_t)snprintf(out, len, "%s/%s", strcmp(rgt_sg.base, "/") ? rgt_sg.base : "",
			     name) >= len)
		return rgroup__why(why, wlen, -ENAMETOOLONG, "cgroup path too long");
	rgt_cg_dir(out, dir, sizeof(dir));
	/* The name carries this process's pid: one already there was left by
	 * an earlier process with the same pid that was killed. Empty, it is
	 * removed (rmdir fails while anything is in it) and made again. */
	if (mkdir(dir, 0755) < 0 && (errno != EEXIST || rmdir(dir) < 0 || mkdir(dir, 0755) < 0))
		return rgroup__why(why, wlen, -errno, "cannot make system group %s: %s", dir,
				   strerror(errno));
	snprintf(rgt_sg.made[rgt_sg.nmade++], PATH_MAX, "%s", out);
	return 0;
}

void rgt_sg_make(const char *tag, char *out, size_t len)
{
	char name[128], why[PATH_MAX + 128];

	if (rgt_sg.gov) {
		snprintf(out, len, "(governor: no system group)");
		return;
	}
	snprintf(name, sizeof(name), "rgtest-%s-%d", tag, (int)getpid());
	if (sg_mkdir(name, out, len, why, sizeof(why)) < 0)
		rgt_skip_all("%s", why);
}

int rgt_sg_move(const char *cgpath)
{
	char dir[PATH_MAX], pid[32];

	rgt_cg_dir(cgpath, dir, sizeof(dir));
	strncat(dir, "/cgroup.procs", sizeof(dir) - strlen(dir) - 1);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return rgt_write(dir, pid);
}

int rgt_sg_join(const char *name, char *out, size_t len, char *why, size_t wlen)
{
	char dir[PATH_MAX];
	int r = sg_mkdir(name, out, len, why, wlen);

	if (r < 0)
		return r;
	r = rgt_sg_move(out);
	if (r < 0) {
		rgt_cg_dir(out, dir, sizeof(dir));
		rmdir(dir);
		rgt_sg.nmade--;
		return rgroup__why(why, wlen, r, "cannot move this process into %s: %s", dir,
				   strerror(-r));
	}
	return 0;
}

void rgt_sg_enter(char *out, size_t len)
{
	char name[64], why[PATH_MAX + 128];

	if (rgt_sg.gov) {
		rgt_sg_make("main", out, len);
		return;
	}
	if (rgt_sg.delegated) {
		/* The delegated group is the sgroup; nothing made, nothing moved. */
		snprintf(out, len, "%s", rgt_sg.home);
		snprintf(rgt_sg.made[0], PATH_MAX, "%s", rgt_sg.home);
		rgt_sg.nmade = 1; /* looked at for leftovers, never removed */
		return;
	}
	snprintf(name, sizeof(name), "rgtest-main-%d", (int)getpid());
	if (rgt_sg_join(name, out, len, why, sizeof(why)) < 0)
		rgt_skip_all("%s", why);
}

static int rmdir_below(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	if (type == FTW_DP && ftw->level > 0)
		rmdir(path);   /* failures show as the top's EBUSY */
	return 0;
}

/* Every directory below dir, innermost first: all of them the test's, as
 * dir is (a group the library failed to remove must not keep dir). */
static void remove_below(const char *dir)
{
	nftw(dir, rmdir_below, 16, FTW_DEPTH | FTW_PHYS);
}

int rgt_sg_leave(char *why, size_t len)
{
	char dir[PATH_MAX];
	int r = 0;

	if (rgt_sg.gov || rgt_sg.delegated || !rgt_sg.nmade)
		return 0;   /* nothing made; the delegated group is not ours */
	if ((r = rgt_sg_move(rgt_sg.home)) < 0) {
		rgt_cg_dir(rgt_sg.home, dir, sizeof(dir));
		return rgroup__why(why, len, r, "cannot move this process back to %s: %s "
				   "(its groups are left behind)", dir, strerror(-r));
	}
	for (int i = rgt_sg.nmade - 1; i >= 0; i--) {
		rgt_cg_dir(rgt_sg.made[i], dir, sizeof(dir));
		/* A child the test killed may have left groups here. */
		rgroup_gc(dir);
		remove_below(dir);
		/* Exited threads leave a group a moment later: EBUSY from
		 * rmdir means "not yet". */
		for (int tries = 0; rmdir(dir) < 0 && errno != ENOENT; tries++) {
			int e = errno;

			if (e != EBUSY || tries == 100) {
				r = rgroup__why(why, len, -e, "cannot remove %s: %s (left behind)",
						dir, strerror(e));
				break;
			}
			rgt_sleep(0.02);
		}
	}
	rgt_sg.nmade = 0;
	return r;
}

void rgt_sg_cleanup(void)
{
	char why[PATH_MAX + 128];

	if (getpid() != rgt_sg.owner)
		return;
	if (!rgt_sg.gov && !rgt_sg.nmade)
		return;
	if (rgt_wait_no_groups(3.0) < 0)
		fprintf(stderr, "  cleanup: the library still has %d rgroups\n", rgroup_list(NULL, 0));
	if (rgt_sg_leave(why, sizeof(why)) < 0)
		fprintf(stderr, "  cleanup: %s\n", why);
}

/* ---- Looking at the hierarchy ---------------------------------------- */

int rgt_thread_cgroup(pid_t tid, char *out, size_t len)
{
	char file[64], text[8192];

	snprintf(file, sizeof(file), "/proc/self/task/%d/cgroup",
		 (int)(tid ? tid : rgt_gettid()));
	if (rgt_read(file, text, sizeof(text)) < 0)
		return -1;
	return rgroup__parse_proc_cgroup(text, rgt_sg.v2 ? NULL : "cpu", out, len);
}

void rgt_cg_dir(const char *cgpath, char *out, size_t len)
{
	if (rgroup__cgroup_dir(&rgt_sg.mount, cgpath, out, len) < 0 && len)
		out[0] = '\0';
}

static int count_groups_at(const char *dir, pid_t pid, int depth)
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
		n += 1 + count_groups_at(sub, pid, depth + 1);
	}
	closedir(d);
	return n;
}

int rgt_count_groups(const char *dir, pid_t pid)
{
	return count_groups_at(dir, pid, 0);
}

int rgt_own_dirs(void)
{
	int n = 0;

	for (int i = 0; i < rgt_sg.nmade; i++) {
		char dir[PATH_MAX];

		rgt_cg_dir(rgt_sg.made[i], dir, sizeof(dir));
		n += rgt_count_groups(dir, getpid());
	}
	return n;
}

int rgt_wait_no_groups(double timeout)
{
	double end = rgt_now() + timeout;

	while (rgroup_list(NULL, 0) > 0 || rgt_own_dirs() > 0) {
		if (rgt_now() > end)
			return -1;
		rgt_sleep(0.01);
	}
	return 0;
}

long long rgt_cg_value(const char *cgpath, const char *file)
{
	char dir[PATH_MAX + 64], buf[64];

	rgt_cg_dir(cgpath, dir, sizeof(dir));
	strncat(dir, "/", sizeof(dir) - strlen(dir) - 1);
	strncat(dir, file, sizeof(dir) - strlen(dir) - 1);
	if (rgt_read(dir, buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	return strtoll(buf, NULL, 10);
}

int rgt_kernel(void)
{
	return !rgt_sg.gov;
}

int rgt_dirs(void)
{
	return !rgt_sg.gov && !rgt_sg.native;
}

int rgt_group_path(const char *sgpath, rgroup_id_t id, char *out, size_t len)
{
	char names[40][64];
	int n = 0;

	for (rgroup_id_t at = id; at && n < 40; n++) {
		struct rgroup_info up = { .sz = sizeof(up) };

		if (rgroup_info(at, &up) < 0)
			return -1;
		snprintf(names[n], sizeof(names[n]), "%s", up.name);
		at = up.parent;
	}
	/* Each name brings its '/': the root's "/" (also a cgroup namespace's
	 * root) is not written before them. */
	snprintf(out, len, "%s", n && strcmp(sgpath, "/") == 0 ? "" : sgpath);
	while (n--) {
		strncat(out, "/", len - strlen(out) - 1);
		strncat(out, names[n], len - strlen(out) - 1);
	}
	return 0;
}

long long rgt_kernel_weight(const char *sgpath, pid_t tid, rgroup_id_t id)
{
	struct rgroup__kgroup g;
	char path[PATH_MAX];

	if (rgt_sg.native)
		return rgt_kgroup(tid, &g) == 0 && g.id ? (long long)rgroup_nice_to_weight(g.nice) : -2;
	if (!rgt_kernel())
		return -1;
	if (rgt_group_path(sgpath, id, path, sizeof(path)) < 0)
		return -2;
	return rgt_cg_weight(path);
}

int rgt_kernel_agrees(const char *sgpath, pid_t tid, rgroup_id_t id, char *why, size_t len)
{
	char want[PATH_MAX] = "", got[PATH_MAX] = "";
	struct rgroup_info in = { .sz = sizeof(in) };
	struct rgroup__kgroup g = { 0 };
	unsigned long long kid = 0;

	if (!rgt_kernel())
		return 1;
	if (rgt_thread_cgroup(tid, got, sizeof(got)) < 0)
		return snprintf(why, len, "cannot read thread %d's cgroup", (int)tid), 0;
	if (id && rgroup_info(id, &in) < 0)
		return snprintf(why, len, "no rgroup %llu", (unsigned long long)id), 0;
	if (rgt_sg.native) {
		if (rgt_kgroup(tid, &g) < 0)
			return snprintf(why, len, "cannot read thread %d's /proc rgroup", (int)tid), 0;
		if (id && sscanf(in.name, "kernel rgroup %llu", &kid) != 1)
			return snprintf(why, len, "rgroup %llu has no kernel id ('%s')",
					(unsigned long long)id, in.name), 0;
		if (g.id != kid || (id && g.depth != in.depth) || strcmp(got, sgpath) != 0)
			return snprintf(why, len, "thread %d: kernel rgroup %llu depth %u (library: %llu "
					"depth %u), cgroup %s (the system group %s)", (int)tid,
					(unsigned long long)g.id, g.depth, kid, in.depth, got, sgpath), 0;
		return 1;
	}
	if (rgt_group_path(sgpath, id, want, sizeof(want)) < 0)
		return snprintf(why, len, "a group of rgroup %llu's chain is gone", (unsigned long long)id), 0;
	if (strcmp(want, got) != 0)
		return snprintf(why, len, "thread %d is in %s, expected %s", (int)tid, got, want), 0;
	return 1;
}

int rgt_kgroup(pid_t tid, struct rgroup__kgroup *g)
{
	char file[64], text[256];
	int r;

	snprintf(file, sizeof(file), "/proc/self/task/%d/rgroup", (int)(tid ? tid : rgt_gettid()));
	r = rgroup__read_path(file, text, sizeof(text));
	if (r < 0)
		return r;
	return rgroup__parse_kgroup(text, g);
}

long long rgt_cg_weight(const char *cgpath)
{
	long long nice;

	if (!rgt_sg.v2)
		return rgt_cg_value(cgpath, "cpu.shares");
	nice = rgt_cg_value(cgpath, "cpu.weight.nice");
	return nice == LLONG_MIN ? nice : rgroup_nice_to_weight((int)nice);
}

/* ---- Worker threads ---------------------------------------------------- */

static void *worker_main(void *p)
{
	struct rgt_worker *w = p;

	w->tid = rgt_gettid();
	if (w->set_nice && rgroup_setpriority(PRIO_RGRP, 0, w->nice) < 0)
		w->err = errno;
	for (int i = 0; i < w->nkids; i++) {
		int r = rgroup_thread_create(&w->kids[i].thread, NULL,
					     w->kids[i].new_group ? RGROUP_NEW : 0,
					     worker_main, &w->kids[i]);
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

void rgt_worker_stop(struct rgt_worker *w)
{
	for (int i = 0; i < w->nkids; i++)
		rgt_worker_stop(&w->kids[i]);
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	pthread_join(w->thread, NULL);
}

int rgt_worker_start(struct rgt_worker *w, unsigned flags)
{
	int r = rgroup_thread_create(&w->thread, NULL, flags, worker_main, w);

	while (!r && !__atomic_load_n(&w->ready, __ATOMIC_ACQUIRE))
		rgt_sleep(0.001);
	return r;
}
