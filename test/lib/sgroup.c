/* SPDX-License-Identifier: MIT */
/*
 * sgroup.c - the test's own system group (made with the scenario
 * library's src/scenario/sysgroup.c), what the kernel says of a test's
 * groups, and worker threads. See sgroup.h.
 */
#include "sgroup.h"

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
	scn_sg.delegated = getenv("RGROUP_TEST_DELEGATED") && atoi(getenv("RGROUP_TEST_DELEGATED"));
	if (strcmp(be, "governor") != 0 && geteuid() != 0 && !scn_sg.delegated)
		rgt_skip_all("needs root to make system groups of its own (run the suite as root)");
	if (rgroup_probe(be, why, sizeof(why)) < 0)
		rgt_skip_all("backend %s cannot run here: %s", be, why);
	if (scn_sg_open(be, why, sizeof(why)) < 0)
		rgt_skip_all("%s", why);
}

void rgt_sg_make(const char *tag, char *out, size_t len)
{
	char name[128], why[PATH_MAX + 128];

	if (scn_sg.gov) {
		snprintf(out, len, "(governor: no system group)");
		return;
	}
	snprintf(name, sizeof(name), "rgtest-%s-%d", tag, (int)getpid());
	if (scn_sg_mkdir(name, out, len, why, sizeof(why)) < 0)
		rgt_skip_all("%s", why);
}

void rgt_sg_enter(char *out, size_t len)
{
	char name[64], why[PATH_MAX + 128];

	if (scn_sg.gov) {
		rgt_sg_make("main", out, len);
		return;
	}
	if (scn_sg.delegated) {
		/* The delegated group is the sgroup; nothing made, nothing moved. */
		snprintf(out, len, "%s", scn_sg.home);
		snprintf(scn_sg.made[0], PATH_MAX, "%s", scn_sg.home);
		scn_sg.nmade = 1; /* looked at for leftovers, never removed */
		return;
	}
	snprintf(name, sizeof(name), "rgtest-main-%d", (int)getpid());
	if (scn_sg_join(name, out, len, why, sizeof(why)) < 0)
		rgt_skip_all("%s", why);
}

/* ---- Looking at the hierarchy ---------------------------------------- */

long long rgt_cg_value(const char *cgpath, const char *file)
{
	char dir[PATH_MAX + 64], buf[64];

	scn_cg_dir(cgpath, dir, sizeof(dir));
	strncat(dir, "/", sizeof(dir) - strlen(dir) - 1);
	strncat(dir, file, sizeof(dir) - strlen(dir) - 1);
	if (rgt_read(dir, buf, sizeof(buf)) < 0)
		return LLONG_MIN;
	return strtoll(buf, NULL, 10);
}

int rgt_kernel(void)
{
	return !scn_sg.gov;
}

int rgt_dirs(void)
{
	return !scn_sg.gov && !scn_sg.native;
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

	if (scn_sg.native)
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
	if (scn_thread_cgroup(tid, got, sizeof(got)) < 0)
		return snprintf(why, len, "cannot read thread %d's cgroup", (int)tid), 0;
	if (id && rgroup_info(id, &in) < 0)
		return snprintf(why, len, "no rgroup %llu", (unsigned long long)id), 0;
	if (scn_sg.native) {
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

	snprintf(file, sizeof(file), "/proc/self/task/%d/rgroup", (int)(tid ? tid : scn_gettid()));
	r = rgroup__read_path(file, text, sizeof(text));
	if (r < 0)
		return r;
	return rgroup__parse_kgroup(text, g);
}

long long rgt_cg_weight(const char *cgpath)
{
	long long nice;

	if (!scn_sg.v2)
		return rgt_cg_value(cgpath, "cpu.shares");
	nice = rgt_cg_value(cgpath, "cpu.weight.nice");
	return nice == LLONG_MIN ? nice : rgroup_nice_to_weight((int)nice);
}

/* ---- Worker threads ---------------------------------------------------- */

static void *worker_main(void *p)
{
	struct rgt_worker *w = p;

	w->tid = scn_gettid();
	if (w->set_nice && rgroup_setpriority(PRIO_RGRP, 0, w->nice) < 0)
		w->err = errno;
	for (int i = 0; i < w->nkids; i++) {
		int r = rgroup_thread_create(&w->kids[i].thread, NULL,
					     w->kids[i].new_group ? RGROUP_NEW : 0,
					     worker_main, &w->kids[i]);
		if (r && !w->err)
			w->err = r;
		while (!r && !__atomic_load_n(&w->kids[i].ready, __ATOMIC_ACQUIRE))
			scn_sleep(0.001);
	}
	__atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		if (w->spin)
			w->counter++;
		else
			scn_sleep(0.005);
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
		scn_sleep(0.001);
	return r;
}
