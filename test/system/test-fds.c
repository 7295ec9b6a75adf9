/* SPDX-License-Identifier: MIT */
/*
 * test-fds.c - the application owns the descriptor table (fdcache.h).
 *
 * A daemon closes every descriptor above 2 (close_range(3, ~0U, 0), as
 * closefrom(3) does) and opens its own files, which take the numbers the
 * library had: the library writes nothing into them, PRIO_RGRP still
 * changes the group's weight, RGROUP_NEW still works (a spare group
 * reused, and a new one), and the groups are gone after a normal exit.
 * With a small RLIMIT_NOFILE (64, 20) and many groups, the application
 * can still open its own files, and the library still works.
 *
 * Each case runs in a child process of its own (closefrom and the limit
 * are for good); the parent checks its status and that it left no
 * directory.
 *
 *   test-fds [CASE]
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "sgroup.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define NAPP 24                 /* files the application opens */

static char sg[PATH_MAX], sgdir[PATH_MAX];
static char appdir[64];
static int app[NAPP];

static void setup(void)
{
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	scn_cg_dir(sg, sgdir, sizeof(sgdir));
	snprintf(appdir, sizeof(appdir), "/tmp/rgtest-fds-%d", (int)getpid());
	CHECK(mkdir(appdir, 0700) == 0, "mkdir %s: %s", appdir, strerror(errno));
}

/* ---- In the child ----------------------------------------------------- */

static int closefrom3(void)
{
	return (int)syscall(SYS_close_range, 3U, ~0U, 0U);
}

/* The application's files: the lowest free numbers, the library's old ones
 * among them. */
static void open_app_files(void)
{
	char path[128];

	for (int i = 0; i < NAPP; i++) {
		snprintf(path, sizeof(path), "%s/f%d-%d", appdir, (int)getpid(), i);
		app[i] = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		CHECK(app[i] >= 0, "open %s: %s", path, strerror(errno));
	}
}

/* 0 if no application file got a byte; else how many bytes, and which. */
static long app_bytes(void)
{
	long total = 0;

	for (int i = 0; i < NAPP; i++) {
		struct stat st;
		if (app[i] >= 0 && fstat(app[i], &st) == 0 && st.st_size > 0) {
			char buf[32] = "";
			(void)!pread(app[i], buf, sizeof(buf) - 1, 0);
			fprintf(stderr, "  application file %d (fd %d) got %lld bytes: \"%.*s\"\n", i,
				app[i], (long long)st.st_size, (int)strcspn(buf, "\n"), buf);
			total += st.st_size;
		}
	}
	return total;
}

static void close_app_files(void)
{
	char path[128];

	for (int i = 0; i < NAPP; i++) {
		if (app[i] >= 0)
			close(app[i]);
		snprintf(path, sizeof(path), "%s/f%d-%d", appdir, (int)getpid(), i);
		unlink(path);
	}
}

static rgroup_id_t group_of(pid_t tid)
{
	rgroup_id_t id = 0;

	return rgroup_of(tid, &id) == 0 ? id : 0;
}

/* The weight of tid's group is nice's, as the library and the kernel
 * (cgroup backends) say. */
static void check_weight(pid_t tid, int nice)
{
	long long w = rgt_kernel_weight(sg, tid, group_of(tid));

	errno = 0;
	CHECK(rgroup_getpriority(PRIO_RGRP, (id_t)tid) == nice && errno == 0,
	      "thread %d reads nice %d", (int)tid, nice);
	CHECK(w == -1 || w == (long long)rgroup_nice_to_weight(nice),
	      "thread %d: kernel weight %lld, expected %u (nice %d)", (int)tid, w,
	      rgroup_nice_to_weight(nice), nice);
}

/* The thread is where the library says, in the kernel too. */
static void check_placed(pid_t tid)
{
	char why[512] = "";
	rgroup_id_t id = group_of(tid);

	CHECK(id != 0, "thread %d is in an rgroup", (int)tid);
	CHECK(rgt_kernel_agrees(sg, tid, id, why, sizeof(why)), "thread %d: %s", (int)tid, why);
}

/* closefrom, then PRIO_RGRP on a group whose weight file was open. */
static void child_setpriority(void)
{
	struct rgt_worker w[2] = { { .nkids = 0 }, { .nkids = 0 } };

	CHECK(rgt_worker_start(&w[0], RGROUP_NEW) == 0 && rgt_worker_start(&w[1], RGROUP_NEW) == 0,
	      "two groups");
	CHECK(rgroup_setpriority(PRIO_RGRP, (id_t)w[0].tid, 5) == 0, "nice 5: %s", strerror(errno));
	CHECK(rgroup_setpriority(PRIO_RGRP, (id_t)w[1].tid, 3) == 0, "nice 3: %s", strerror(errno));
	CHECK(closefrom3() == 0, "close_range: %s", strerror(errno));
	open_app_files();
	for (int nice = 6; nice <= 9; nice++) {
		CHECK(rgroup_setpriority(PRIO_RGRP, (id_t)w[0].tid, nice) == 0,
		      "nice %d after closefrom: %s", nice, strerror(errno));
		check_weight(w[0].tid, nice);
	}
	CHECK(rgroup_setpriority(PRIO_RGRP, (id_t)w[1].tid, 12) == 0, "nice 12: %s", strerror(errno));
	check_weight(w[1].tid, 12);
	CHECK(app_bytes() == 0, "nothing written into the application's files");
	rgt_worker_stop(&w[0]);
	rgt_worker_stop(&w[1]);
	CHECK(app_bytes() == 0, "nothing written into the application's files at the end");
	close_app_files();
}

/* closefrom, then RGROUP_NEW: a spare (its thread file was open) and new
 * groups, nested too. */
static void child_new(void)
{
	struct rgt_worker first = { .nkids = 0 }, kid = { .new_group = 1 };
	struct rgt_worker w[3] = { { .nkids = 1, .kids = &kid }, { 0 }, { 0 } };
	int r;

	CHECK(rgt_worker_start(&first, RGROUP_NEW) == 0, "a group");
	CHECK(rgroup_setpriority(PRIO_RGRP, (id_t)first.tid, 4) == 0, "nice 4");
	rgt_worker_stop(&first);       /* its group a spare now */
	CHECK(closefrom3() == 0, "close_range: %s", strerror(errno));
	open_app_files();
	for (int i = 0; i < 3; i++) {
		r = rgt_worker_start(&w[i], RGROUP_NEW);
		CHECK(r == 0, "RGROUP_NEW %d after closefrom: %s", i, strerror(r));
	}
	if (rgt_failures == 0) {
		check_placed(w[0].tid);
		check_placed(kid.tid);
		check_placed(w[1].tid);
		check_placed(w[2].tid);
		CHECK(rgroup_setpriority(PRIO_RGRP, (id_t)w[0].tid, 2) == 0, "nice 2");
		check_weight(w[0].tid, 2);
	}
	CHECK(app_bytes() == 0, "nothing written into the application's files");
	for (int i = 0; i < 3; i++)
		rgt_worker_stop(&w[i]);
	close_app_files();
}

/* The thread's CPUs are exactly cpu. */
static int on_cpu(pid_t tid, int cpu)
{
	cpu_set_t set;

	return sched_getaffinity(tid, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1 &&
	       CPU_ISSET(cpu, &set);
}

/* closefrom with a group on a CPU set of its own (rule 10: on cgroup1 a
 * directory in the cpuset hierarchy, whose thread list was open), then
 * its CPUs changed and a new group given CPUs. */
static void child_cpus(void)
{
	struct rgt_worker w = { 0 }, v = { 0 };
	cpu_set_t set;
	int r;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		rgt_skip_case("one CPU: no set to change to");
		return;
	}
	CHECK(rgt_worker_start(&w, RGROUP_NEW) == 0, "a group");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CHECK(rgroup_set_cpus(w.tid, sizeof(set), &set) == 0, "CPU 0: %s", strerror(errno));
	CHECK(on_cpu(w.tid, 0), "the group's thread runs on CPU 0");
	CHECK(closefrom3() == 0, "close_range: %s", strerror(errno));
	open_app_files();
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	CHECK(rgroup_set_cpus(w.tid, sizeof(set), &set) == 0, "CPU 1 after closefrom: %s",
	      strerror(errno));
	CHECK(on_cpu(w.tid, 1), "the group's thread runs on CPU 1");
	CHECK((r = rgt_worker_start(&v, RGROUP_NEW)) == 0, "RGROUP_NEW: %s", strerror(r));
	if (r == 0) {
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		CHECK(rgroup_set_cpus(v.tid, sizeof(set), &set) == 0, "CPU 0: %s", strerror(errno));
		CHECK(on_cpu(v.tid, 0), "the new group's thread runs on CPU 0");
		rgt_worker_stop(&v);
	}
	CHECK(app_bytes() == 0, "nothing written into the application's files");
	rgt_worker_stop(&w);
	close_app_files();
}

/* closefrom while groups exist; they go when their threads do, and at
 * exit (the parent counts the directories). */
static void child_removed(void)
{
	struct rgt_worker kid = { .new_group = 1 };
	struct rgt_worker w[3] = { { .nkids = 1, .kids = &kid }, { 0 }, { 0 } };

	for (int i = 0; i < 3; i++)
		CHECK(rgt_worker_start(&w[i], RGROUP_NEW) == 0, "group %d", i);
	CHECK(rgroup_setpriority(PRIO_RGRP, (id_t)w[1].tid, 7) == 0, "nice 7");
	CHECK(closefrom3() == 0, "close_range: %s", strerror(errno));
	open_app_files();
	rgt_worker_stop(&w[0]);
	rgt_worker_stop(&w[1]);
	/* Emptied groups go (spares after a while); w[2]'s stays. */
	for (int i = 0; i < 300 && scn_own_dirs() > 1; i++)
		scn_sleep(0.01);
	CHECK(scn_own_dirs() <= 1, "%d directories left of 3 emptied groups and a live one",
	      scn_own_dirs());
	CHECK(app_bytes() == 0, "nothing written into the application's files");
	close_app_files();
	/* w[2] still runs: exit() takes it and its group. */
}

/* RLIMIT_NOFILE lim, groups many more than lim/2 (two files each): the
 * application can open its own files, and the library still works. */
static void with_limit(rlim_t lim, int ngroups)
{
	struct rlimit rl = { .rlim_cur = lim, .rlim_max = lim };
	struct rgt_worker *w = calloc((size_t)ngroups, sizeof(*w));
	int made = 0, freefd = 0, r;
	int *fds = calloc((size_t)lim, sizeof(int));

	CHECK(w && fds, "memory");
	if (!w || !fds)
		return;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit %llu: %s", (unsigned long long)lim,
	      strerror(errno));
	for (int i = 0; i < ngroups; i++) {
		r = rgt_worker_start(&w[i], RGROUP_NEW);
		if (r != 0) {
			CHECK(r == 0, "group %d of %d with RLIMIT_NOFILE %llu: %s", i, ngroups,
			      (unsigned long long)lim, strerror(r));
			break;
		}
		made++;
		r = rgroup_setpriority(PRIO_RGRP, (id_t)w[i].tid, i % 20);
		CHECK(r == 0, "group %d: nice %d: %s", i, i % 20, strerror(errno));
	}
	/* What the application can open now: at least a quarter of the table
	 * free, whatever the number of groups. */
	while (freefd < (int)lim && (fds[freefd] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		freefd++;
	fprintf(stderr, "  RLIMIT_NOFILE %llu, %d groups: the application could open %d descriptors (%d open before)\n",
		(unsigned long long)lim, made, freefd, (int)lim - freefd);
	CHECK(freefd >= (int)lim / 4, "only %d of %llu descriptors left to the application", freefd,
	      (unsigned long long)lim);
	for (int i = 0; i < freefd; i++)
		close(fds[i]);
	/* The library still works: every weight, and new groups. */
	for (int i = 0; i < made; i++) {
		int nice = 19 - i % 20;
		CHECK(rgroup_setpriority(PRIO_RGRP, (id_t)w[i].tid, nice) == 0,
		      "group %d: nice %d: %s", i, nice, strerror(errno));
		check_weight(w[i].tid, nice);
	}
	{
		struct rgt_worker more = { 0 };
		CHECK((r = rgt_worker_start(&more, RGROUP_NEW)) == 0, "one more group: %s", strerror(r));
		if (r == 0) {
			check_placed(more.tid);
			rgt_worker_stop(&more);
		}
	}
	freefd = 0;
	while (freefd < (int)lim && (fds[freefd] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		freefd++;
	CHECK(freefd >= (int)lim / 4, "after the weights: only %d of %llu left", freefd,
	      (unsigned long long)lim);
	for (int i = 0; i < freefd; i++)
		close(fds[i]);
	for (int i = 0; i < made; i++)
		rgt_worker_stop(&w[i]);
	free(w);
	free(fds);
}

static void child_limit64(void) { with_limit(64, 40); }
static void child_limit20(void) { with_limit(20, 16); }

/* ---- In the parent ---------------------------------------------------- */

static void in_child(void (*fn)(void), const char *what)
{
	pid_t pid;
	int status = 0;

	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid < 0)
		return;
	if (pid == 0) {
		rgt_failures = 0;
		fn();
		/* A normal exit: the library removes what is left. */
		exit(rgt_failures ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child failed (status 0x%x)",
	      what, status);
	if (rgt_dirs()) {
		int left = scn_count_groups(sgdir, pid);
		CHECK(left == 0, "%s: %d directories left after the child's exit", what, left);
		if (left)
			rgroup_gc(sgdir);
	}
}

static void closefrom_setpriority(void) { in_child(child_setpriority, "closefrom, setpriority"); }
static void closefrom_new(void) { in_child(child_new, "closefrom, RGROUP_NEW"); }
static void closefrom_cpus(void) { in_child(child_cpus, "closefrom, CPU sets"); }
static void closefrom_removed(void) { in_child(child_removed, "closefrom, exit"); }
static void limit64(void) { in_child(child_limit64, "RLIMIT_NOFILE 64"); }
static void limit20(void) { in_child(child_limit20, "RLIMIT_NOFILE 20"); }

static void teardown(void)
{
	rmdir(appdir);
	scn_sg_cleanup();
}

static const struct rgt_case cases[] = {
	{ "setup", setup },
	{ "closefrom-setpriority", closefrom_setpriority },
	{ "closefrom-new", closefrom_new },
	{ "closefrom-cpus", closefrom_cpus },
	{ "closefrom-removed", closefrom_removed },
	{ "limit-64", limit64 },
	{ "limit-20", limit20 },
	{ "teardown", teardown },
};

int main(int argc, char **argv)
{
	/* setup and teardown around whichever cases run. */
	if (argc > 1) {
		struct rgt_case sel[3] = { cases[0], { NULL, NULL }, cases[7] };
		for (size_t i = 1; i + 1 < sizeof(cases) / sizeof(cases[0]); i++)
			if (strstr(cases[i].name, argv[1]))
				sel[1] = cases[i];
		if (!sel[1].name) {
			fprintf(stderr, "no case matches %s\n", argv[1]);
			return 1;
		}
		return rgt_main(sel, 3, 1, argv);
	}
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
