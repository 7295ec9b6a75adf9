/* SPDX-License-Identifier: MIT */
/*
 * test-gc.c - rule 3 "also when the process is killed": child processes
 * make rgroups with threads and are SIGKILLed at different moments (right
 * after start, while creating nested groups in a loop, while changing
 * weights in a loop). Afterwards rgroup_gc() and the `rgroup gc` command
 * remove every leftover, while a live rgroup process's groups in the same
 * system group, a directory named like ours whose owner is alive, and
 * directories rgroup could not have made stay untouched.
 *
 * Every child starts in the test's system group, so its first use of the
 * library collects what the previous victim left (the library's own gc at
 * attach); the figures printed count what each kill left *before* that.
 *
 *   test-gc [CASE]     RGROUP_GC_ROUNDS=N: kills per scenario (default 20)
 */
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "governor-state.h"
#include "locate.h"
#include "run-spec.h"
#include "sgroup.h"

static char sg[PATH_MAX];      /* the test's system group (cgroup path) */
static char sgdir[PATH_MAX];   /* ... its directory */
static pid_t live = -1;        /* the live rgroup process */
static int live_cmd = -1, live_ack = -1;
static unsigned int seed = 12345;

/* Directories the test makes by hand, named like (or almost like) ours. */
static char fake_live[96], fake_reused[96];
static const char *const fake_foreign[] = {
	"rgroup-0-1-1", "rgroup-01-2-3", "rgroup-5-5", "rgroup-7-8-9-x", "rgroupx", "rgroup--1-2-3",
};

static void kill_live(void)
{
	if (live > 0) {
		kill(live, SIGKILL);
		waitpid(live, NULL, 0);
		live = -1;
	}
}

/* What the test and a process in a PID namespace of its own share (see
 * ns_start()). */
struct ns_share {
	int ready, stop;
	pid_t pid;                 /* the namespaced process, as the test sees it */
	pid_t nspid;               /* ... and as its namespace does */
	unsigned long made, failed;
	int err;
	long removed;              /* what its rgroup_gc() calls removed */
	long gc_err;               /* their first error */
	char files[2][PATH_MAX];   /* files it wrote as its own (ns-files) */
};
static struct ns_share *nsh;
static pid_t ns_parent = -1;   /* the test's child that made the namespace */
static int ns_stop(void);

/* Remove what the test made by hand (before scn_sg_cleanup: atexit LIFO). */
static void remove_fakes(void)
{
	char path[PATH_MAX + 128];

	if (getpid() != scn_sg.owner)
		return;
	kill_live();
	ns_stop();
	snprintf(path, sizeof(path), "%s/%s", sgdir, fake_live);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/%s", sgdir, fake_reused);
	rmdir(path);
	for (size_t i = 0; i < sizeof(fake_foreign) / sizeof(fake_foreign[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", sgdir, fake_foreign[i]);
		rmdir(path);
	}
	/* Whatever a failed run left of the victims: collect it like gc. */
	rgroup_gc(sgdir);
}

static int exists_in_sg(const char *name)
{
	char path[PATH_MAX + 128];
	snprintf(path, sizeof(path), "%s/%s", sgdir, name);
	return rgt_exists(path);
}

/* ---- The victims ---------------------------------------------------- */

static void *sleeper(void *p)
{
	for (;;)
		pause();
	return p;
}

static void *nester(void *p)
{
	long depth = (long)p;
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (depth < 3)
		rgroup_thread_create(&t, &a, RGROUP_NEW, nester, (void *)(depth + 1));
	pthread_attr_destroy(&a);
	scn_sleep(0.0005 * (depth + 1));
	return NULL;
}

static void say(int fd, char c)
{
	while (write(fd, &c, 1) < 0 && errno == EINTR)
		;
}

enum scenario { AT_START, WHILE_CREATING, WHILE_WEIGHTING };

static void __attribute__((noreturn)) victim(enum scenario s, int fd)
{
	pthread_t t[4];
	pid_t tids[4];
	pthread_attr_t a;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	switch (s) {
	case AT_START:
		/* Groups being made while the parent may already shoot. */
		say(fd, 'r');
		for (int i = 0; i < 3; i++)
			rgroup_thread_create(&t[i], &a, RGROUP_NEW, sleeper, NULL);
		say(fd, 'g');
		break;
	case WHILE_CREATING:
		say(fd, 'r');
		for (;;) {
			pthread_t x;
			rgroup_thread_create(&x, &a, RGROUP_NEW, nester, (void *)1L);
			scn_sleep(0.0002);
		}
	case WHILE_WEIGHTING: {
		struct rgt_worker w[2] = { { .nkids = 0 }, { .nkids = 0 } };
		struct rgt_worker kid = { .new_group = 1 };
		w[0].nkids = 1;
		w[0].kids = &kid;
		rgt_worker_start(&w[0], RGROUP_NEW);
		rgt_worker_start(&w[1], RGROUP_NEW);
		tids[0] = w[0].tid;
		tids[1] = kid.tid;
		tids[2] = w[1].tid;
		say(fd, 'r');
		for (int i = 0;; i++)
			rgroup_setpriority(PRIO_RGRP, (id_t)tids[i % 3], i % 20);
	}
	}
	for (;;)
		pause();
}

/* One kill: fork a victim, shoot it at a pseudo-random moment, reap it,
 * and return how many of its directories were left. */
static int one_kill(enum scenario s)
{
	int p[2];
	char c;
	pid_t pid;
	int status, left;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		victim(s, p[1]);
	}
	close(p[1]);
	/* Wait for the victim to reach its phase, then a delay: 0-3 ms at
	 * start (often mid-creation), 1-30 ms in the loops. */
	if (read(p[0], &c, 1) == 1) {
		unsigned int us = s == AT_START ? rand_r(&seed) % 3000
						: 1000 + rand_r(&seed) % 29000;
		scn_sleep(us / 1e6);
	}
	kill(pid, SIGKILL);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	left = scn_count_groups(sgdir, pid);
	return left;
}

/* ---- The live process: groups that gc must leave alone -------------- */

static void __attribute__((noreturn)) live_main(int cmd, int ack)
{
	static struct rgt_worker kid = { .new_group = 1, .set_nice = 1, .nice = 7 };
	static struct rgt_worker w[2] = { { .nkids = 1, .kids = &kid, .set_nice = 1, .nice = 3 }, { 0 } };
	rgroup_id_t ids[8];
	char c;
	int bad = 0;

	if (rgt_worker_start(&w[0], RGROUP_NEW) || rgt_worker_start(&w[1], RGROUP_NEW))
		_exit(2);
	say(ack, 'r');
	while (read(cmd, &c, 1) == 1) {
		/* 'c': check that all three groups and their threads are intact. */
		int n = rgroup_list(ids, 8);
		bad = n != 3;
		for (int i = 0; i < n && i < 8; i++) {
			struct rgroup_info in = { .sz = sizeof(in) };
			char path[PATH_MAX];
			rgroup_id_t cur = ids[i];
			if (rgroup_info(ids[i], &in) < 0) {
				bad = 1;
				continue;
			}
			/* Its directory is sgdir/<parent names>/<name>. */
			char chain[4][64];
			int depth = 0;
			while (cur && depth < 4) {
				struct rgroup_info up = { .sz = sizeof(up) };
				if (rgroup_info(cur, &up) < 0)
					break;
				snprintf(chain[depth++], 64, "%s", up.name);
				cur = up.parent;
			}
			snprintf(path, sizeof(path), "%s", sgdir);
			while (depth--) {
				strncat(path, "/", sizeof(path) - strlen(path) - 1);
				strncat(path, chain[depth], sizeof(path) - strlen(path) - 1);
			}
			if (!rgt_exists(path) || in.nthreads < 1)
				bad = 1;
		}
		if (rgroup_getpriority(PRIO_RGRP, (id_t)kid.tid) != 7 ||
		    rgroup_getpriority(PRIO_RGRP, (id_t)w[0].tid) != 3)
			bad = 1;
		say(ack, bad ? 'b' : 'o');
	}
	/* Told to go: leave the way a well-behaved process does. */
	rgt_worker_stop(&w[0]);
	rgt_worker_stop(&w[1]);
	_exit(scn_wait_no_groups(3.0) < 0 ? 3 : 0);
}

/* Ask the live process to check itself: 1 if intact. */
static int live_intact(void)
{
	char c = 'c';
	if (write(live_cmd, &c, 1) != 1 || read(live_ack, &c, 1) != 1)
		return 0;
	return c == 'o';
}

/* ---- Cases ---------------------------------------------------------- */

static void setup(void)
{
	int cmd[2], ack[2];
	char path[PATH_MAX + 128];
	uint64_t me = 0;
	char stat[1024];

	if (rgt_read("/proc/self/stat", stat, sizeof(stat)) > 0)
		rgroup__parse_stat_starttime(stat, &me);

	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	CHECK(me != 0, "read this process's start time");
	nsh = mmap(NULL, sizeof(*nsh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(nsh != MAP_FAILED, "shared memory");
	scn_cg_dir(sg, sgdir, sizeof(sgdir));
	atexit(remove_fakes);
	if (getenv("RGROUP_GC_SEED"))
		seed = (unsigned)atoi(getenv("RGROUP_GC_SEED"));

	/* Named like ours, owner alive (this process): must stay. The same
	 * pid with another start time is a reused pid: its owner is gone. */
	rgroup__format_dirname(fake_live, sizeof(fake_live), getpid(), me, 999999);
	rgroup__format_dirname(fake_reused, sizeof(fake_reused), getpid(), me + 1, 1);
	snprintf(path, sizeof(path), "%s/%s", sgdir, fake_live);
	CHECK(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", sgdir, fake_reused);
	CHECK(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
	for (size_t i = 0; i < sizeof(fake_foreign) / sizeof(fake_foreign[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", sgdir, fake_foreign[i]);
		CHECK(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
	}

	/* The live process starts first: its attach gc sees only the fakes
	 * and removes the reused-pid one already. */
	CHECK(pipe2(cmd, O_CLOEXEC) == 0 && pipe2(ack, O_CLOEXEC) == 0, "pipes");
	live = fork();
	if (live == 0) {
		close(cmd[1]);
		close(ack[0]);
		live_main(cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	live_cmd = cmd[1];
	live_ack = ack[0];
	char c = 0;
	CHECK(read(live_ack, &c, 1) == 1 && c == 'r', "the live rgroup process started");
	CHECK(scn_count_groups(sgdir, live) == 3, "the live process has 3 directories (%d)",
	      scn_count_groups(sgdir, live));
	CHECK(!exists_in_sg(fake_reused), "the reused-pid directory was collected at attach");
	CHECK(exists_in_sg(fake_live), "the live-owner directory stays");
}

static void kills(enum scenario s, const char *what)
{
	int rounds = getenv("RGROUP_GC_ROUNDS") ? atoi(getenv("RGROUP_GC_ROUNDS")) : 20;
	int total = 0, with = 0, maxleft = 0, errs = 0;

	for (int i = 0; i < rounds; i++) {
		int left = one_kill(s);
		if (left < 0) {
			errs++;
			continue;
		}
		total += left;
		with += left > 0;
		if (left > maxleft)
			maxleft = left;
	}
	CHECK(errs == 0, "%d forks failed", errs);
	fprintf(stderr, "  %s: %d kills, %d of them left directories, %d directories in total (max %d at once)\n",
		what, rounds, with, total, maxleft);
	CHECK(live_intact(), "the live process's groups are intact after the kills");
}

static void kill_at_start(void) { kills(AT_START, "killed right after start"); }
static void kill_while_creating(void) { kills(WHILE_CREATING, "killed while creating"); }
static void kill_while_weighting(void) { kills(WHILE_WEIGHTING, "killed while changing weights"); }

static void collect_lib(void)
{
	int before = scn_count_groups(sgdir, 0) - scn_count_groups(sgdir, live) - 1; /* - fake_live */
	int r = -1;

	/* A reaped victim's directories are empty; EBUSY would mean a task
	 * is still being torn down: retry a few times. */
	for (int tries = 0; tries < 50; tries++) {
		int n = rgroup_gc(sgdir);
		if (n < 0) {
			r = n;
			break;
		}
		r = (r < 0 ? 0 : r) + n;
		if (scn_count_groups(sgdir, 0) == scn_count_groups(sgdir, live) + 1)
			break;
		scn_sleep(0.02);
	}
	fprintf(stderr, "  rgroup_gc removed %d of %d leftover directories\n", r, before);
	CHECK(r == before, "rgroup_gc() = %d, %d leftovers", r, before);
	CHECK(scn_count_groups(sgdir, 0) == scn_count_groups(sgdir, live) + 1,
	      "only the live process's groups and the live-owner directory remain (%d, %d)",
	      scn_count_groups(sgdir, 0), scn_count_groups(sgdir, live));
	CHECK(live_intact(), "the live process's groups are intact after rgroup_gc");
	CHECK(exists_in_sg(fake_live), "the live-owner directory stays");
	for (size_t i = 0; i < sizeof(fake_foreign) / sizeof(fake_foreign[0]); i++)
		CHECK(exists_in_sg(fake_foreign[i]), "%s (not ours) stays", fake_foreign[i]);
	CHECK(rgroup_gc(sgdir) == 0, "a second rgroup_gc removes nothing");
	CHECK(rgroup_gc("/nonexistent-rgroup-test") == -ENOENT, "a missing directory is -ENOENT");
	CHECK(rgroup_gc(NULL) == -EINVAL, "NULL is -EINVAL");
}

/* The `rgroup` command built next to this test (build/tools/rgroup), if any. */
static int find_tool(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		return -1;
	self[n] = '\0';
	for (int up = 0; up < 2 && (slash = strrchr(self, '/')); up++)
		*slash = '\0';
	snprintf(out, len, "%.*s/../tools/rgroup", (int)(len - 20), self);
	return access(out, X_OK);
}

/* Run the command, its stdout into out; returns the exit status. */
static int run_tool(const char *tool, const char *a1, const char *a2, char *out, size_t len)
{
	int p[2], status;
	ssize_t n, off = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execl(tool, "rgroup", "gc", a1, a2, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + off, len - 1 - off)) > 0 && (size_t)(off += n) < len - 1)
		;
	out[off] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void collect_command(void)
{
	char tool[PATH_MAX], out[1 << 16], name[PATH_MAX + 64];
	int left = 0, rc;

	if (find_tool(tool, sizeof(tool)) < 0) {
		/* The VM image holds static test programs only. */
		fprintf(stderr, "  note: no rgroup command next to this program; checked rgroup_gc() only\n");
		return;
	}
	/* Each victim's attach collects the previous one's leftovers, so
	 * what is there now is the last victim's. */
	for (int i = 0; i < 3; i++)
		one_kill(i % 2 ? WHILE_CREATING : AT_START);
	one_kill(WHILE_WEIGHTING);
	left = scn_count_groups(sgdir, 0) - scn_count_groups(sgdir, live) - 1;
	CHECK(left > 0, "the victims left something for the command (%d)", left);

	/* --dry-run over the whole hierarchy lists ours and removes nothing.
	 * (The walk also lists other dead processes' leftovers; it touches
	 * nothing, so it is safe to run on a shared machine.) */
	rc = run_tool(tool, "--dry-run", NULL, out, sizeof(out));
	CHECK(rc == 0, "rgroup gc --dry-run exit %d", rc);
	snprintf(name, sizeof(name), "would remove %s/rgroup-", sgdir);
	CHECK(strstr(out, name) != NULL, "the dry run lists our leftovers:\n%s", out);
	CHECK(!strstr(out, fake_live) && !strstr(out, "rgroup-0-1-1"), "the dry run lists no live or foreign name");
	snprintf(name, sizeof(name), "rgroup-%d-", (int)live);
	CHECK(!strstr(out, name), "the dry run does not list the live process's groups");
	CHECK(scn_count_groups(sgdir, 0) == scn_count_groups(sgdir, live) + 1 + left,
	      "the dry run removed nothing");

	/* The real thing, on our system group only. */
	rc = run_tool(tool, sgdir, NULL, out, sizeof(out));
	CHECK(rc == 0, "rgroup gc DIR exit %d", rc);
	snprintf(name, sizeof(name), "%d directories removed", left);
	CHECK(strstr(out, name) != NULL, "the command removed %d:\n%s", left, out);
	CHECK(scn_count_groups(sgdir, 0) == scn_count_groups(sgdir, live) + 1,
	      "only the live process's groups and the live-owner directory remain");
	CHECK(live_intact(), "the live process's groups are intact after the command");
	for (size_t i = 0; i < sizeof(fake_foreign) / sizeof(fake_foreign[0]); i++)
		CHECK(exists_in_sg(fake_foreign[i]), "%s (not ours) stays", fake_foreign[i]);
	rc = run_tool(tool, "/nonexistent-rgroup-test", NULL, out, sizeof(out));
	CHECK(rc == 1, "a missing DIR exits 1 (%d)", rc);
	rc = run_tool(tool, "--no-such-option", NULL, out, sizeof(out));
	CHECK(rc == 2, "bad usage exits 2 (%d)", rc);
}

static void teardown(void)
{
	char c;
	close(live_cmd);
	CHECK(read(live_ack, &c, 1) == 0, "the live process exits");
	close(live_ack);
	int status = 0;
	waitpid(live, &status, 0);
	live = -1;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the live process exited cleanly");
	/* Its library removed its own groups on the way out. */
	for (int i = 0; i < 100 && scn_count_groups(sgdir, 0) > 1; i++)
		scn_sleep(0.01);
	CHECK(scn_count_groups(sgdir, 0) == 1, "only the live-owner directory is left (%d)",
	      scn_count_groups(sgdir, 0));
}

/* ---- An earlier program's leftover ------------------------------------ */

/*
 * A process names its groups after its pid, start time and the group's
 * id, which restart at 1 in a new program: after an exec, a directory the
 * old program could not remove in time has the name of the new program's
 * group. rgroup_gc() keeps it (its owner is alive); the library replaces
 * it, with what is under it, when it makes that group, and says EBUSY
 * while a thread is still in it. A child process plays the new program:
 * it makes its own leftovers, top-level groups 1-8 each with a nested
 * one, as an old program would have left them.
 */
struct leftover {
	int busy;              /* creation while a thread holds leftover 1 */
	int still_there;       /* ... and leftover 1 stays */
	int made, nested;      /* creation of a group and one nested in it */
	int placed;            /* the threads are in the groups' directories */
	char where[2][PATH_MAX];
};

static volatile int leftover_go;
static volatile pid_t leftover_tid;

static void *leftover_sleeper(void *p)
{
	__atomic_store_n(&leftover_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&leftover_go, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	return p;
}

/* One write of val to a cgroup file: 0 or -1. */
static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = -1;

	if (fd >= 0) {
		r = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
		close(fd);
	}
	return r;
}

/* The calling thread's cgroup, relative to the sgroup's parent path. */
static void own_cgroup(char *out, size_t len)
{
	char text[4096], file[64];

	out[0] = '\0';
	snprintf(file, sizeof(file), "/proc/self/task/%d/cgroup", (int)syscall(SYS_gettid));
	if (rgt_read(file, text, sizeof(text)) > 0)
		rgroup__parse_proc_cgroup(text, scn_sg.v2 ? NULL : "cpu", out, len);
}

static struct leftover *lo;

static void *leftover_leaf(void *p)
{
	own_cgroup(lo->where[1], sizeof(lo->where[1]));
	return p;
}

static void *leftover_top(void *p)
{
	pthread_t t;

	own_cgroup(lo->where[0], sizeof(lo->where[0]));
	lo->nested = rgroup_thread_create(&t, NULL, RGROUP_NEW, leftover_leaf, NULL);
	if (lo->nested == 0)
		pthread_join(t, NULL);
	return p;
}

static void __attribute__((noreturn)) leftover_child(void)
{
	char name[3][96], path[PATH_MAX * 2], stat[1024], tid[24];
	const char *tids = scn_sg.v2 ? "cgroup.threads" : "tasks";
	uint64_t start = 0, ns = rgroup__pidns_self();
	pthread_t sleeper, t;

	if (rgt_read("/proc/self/stat", stat, sizeof(stat)) < 0 ||
	    rgroup__parse_stat_starttime(stat, &start) < 0)
		_exit(2);
	for (uint64_t id = 1; id <= 8; id++) {
		rgroup__format_dirname_ns(name[0], sizeof(name[0]), getpid(), start, ns, id);
		rgroup__format_dirname_ns(name[1], sizeof(name[1]), getpid(), start, ns, id + 100);
		snprintf(path, sizeof(path), "%s/%s", sgdir, name[0]);
		if (mkdir(path, 0755) < 0)
			_exit(3);
		snprintf(path, sizeof(path), "%s/%s/%s", sgdir, name[0], name[1]);
		if (mkdir(path, 0755) < 0)
			_exit(3);
	}
	/* A thread of ours in leftover 1's nested directory. */
	rgroup__format_dirname_ns(name[0], sizeof(name[0]), getpid(), start, ns, 1);
	rgroup__format_dirname_ns(name[1], sizeof(name[1]), getpid(), start, ns, 101);
	if (pthread_create(&sleeper, NULL, leftover_sleeper, NULL) != 0)
		_exit(4);
	for (int i = 0; i < 2 && scn_sg.v2; i++) {
		snprintf(path, sizeof(path), "%s/%s%s%s/cgroup.type", sgdir, name[0], i ? "/" : "",
			 i ? name[1] : "");
		if (write_file(path, "threaded") < 0)
			_exit(5);
	}
	snprintf(path, sizeof(path), "%s/%s/%s/%s", sgdir, name[0], name[1], tids);
	while (!__atomic_load_n(&leftover_tid, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	snprintf(tid, sizeof(tid), "%d", (int)leftover_tid);
	if (write_file(path, tid) < 0)
		_exit(6);
	lo->busy = rgroup_thread_create(&t, NULL, RGROUP_NEW, leftover_top, NULL);
	snprintf(path, sizeof(path), "%s/%s/%s", sgdir, name[0], name[1]);
	lo->still_there = rgt_exists(path);
	/* The thread leaves: the next group takes a leftover's place. */
	snprintf(path, sizeof(path), "%s/%s", sgdir, tids);
	if (write_file(path, tid) < 0)
		_exit(7);
	__atomic_store_n(&leftover_go, 1, __ATOMIC_RELEASE);
	pthread_join(sleeper, NULL);
	lo->made = rgroup_thread_create(&t, NULL, RGROUP_NEW, leftover_top, NULL);
	if (lo->made == 0)
		pthread_join(t, NULL);
	_exit(0);   /* the leftovers not replaced stay: gc's, after */
}

static void own_leftover(void)
{
	char mine[PATH_MAX], want[PATH_MAX];
	int status = -1, left;
	pid_t pid;

	lo = mmap(NULL, sizeof(*lo), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(lo != MAP_FAILED, "shared memory");
	if (lo == MAP_FAILED)
		return;
	memset(lo, 0, sizeof(*lo));
	pid = fork();
	if (pid == 0)
		leftover_child();
	CHECK(pid > 0 && rgt_wait_child(pid, 30.0, &status) == 0 && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "the child ran (status %#x)", status);
	CHECK(lo->busy == EBUSY, "a leftover that holds a thread: EBUSY (%d, %s)", lo->busy,
	      strerror(lo->busy));
	CHECK(lo->still_there, "and the leftover that holds a thread stays");
	CHECK(lo->made == 0 && lo->nested == 0, "then a group and a nested one are made (%s, %s)",
	      strerror(lo->made), strerror(lo->nested));
	/* In their own directories, by their names: the leftovers' names. */
	snprintf(mine, sizeof(mine), "%s/rgroup-%d-", sg, (int)pid);
	CHECK(strncmp(lo->where[0], mine, strlen(mine)) == 0 && !strchr(lo->where[0] + strlen(sg) + 1, '/'),
	      "the group's thread is in a top-level directory of the child's: %s", lo->where[0]);
	snprintf(want, sizeof(want), "%s/rgroup-%d-", lo->where[0], (int)pid);
	CHECK(strncmp(lo->where[1], want, strlen(want)) == 0,
	      "the nested group's thread is in a directory below it: %s", lo->where[1]);
	/* What the child did not replace is its leftovers', for gc now. */
	left = scn_count_groups(sgdir, pid);
	CHECK(left > 0 && rgroup_gc(sgdir) == left, "rgroup_gc() removes the %d leftovers left", left);
	CHECK(scn_count_groups(sgdir, 0) == 1, "only the live-owner directory is left (%d)",
	      scn_count_groups(sgdir, 0));
	munmap(lo, sizeof(*lo));
}

/* A directory outside cgroupfs whose subdirectories look like the
 * library's, of a dead owner: neither rgroup_gc() nor the command removes
 * them. */
static void not_cgroupfs(void)
{
	char dir[64], sub[128], tool[PATH_MAX], out[4096];

	snprintf(dir, sizeof(dir), "/tmp/rgtest-gc-%d", (int)getpid());
	snprintf(sub, sizeof(sub), "%s/rgroup-999999-1-1", dir);
	CHECK(mkdir(dir, 0755) == 0 && mkdir(sub, 0755) == 0, "make %s", sub);
	CHECK(rgroup_gc(dir) == -EMEDIUMTYPE, "rgroup_gc() outside cgroupfs is -EMEDIUMTYPE");
	CHECK(access(sub, F_OK) == 0, "rgroup_gc() left %s", sub);
	if (find_tool(tool, sizeof(tool)) == 0) {
		int rc = run_tool(tool, dir, NULL, out, sizeof(out));
		CHECK(rc == 0, "rgroup gc DIR outside cgroupfs exits 0, collecting state files only (%d)",
		      rc);
		CHECK(access(sub, F_OK) == 0, "rgroup gc left %s", sub);
	}
	rmdir(sub);
	rmdir(dir);
}

/* ---- PID namespaces ---------------------------------------------------- */

/*
 * A process in a PID namespace of its own, with its own /proc (as a
 * container's processes are), shares a system group with the test. It
 * names its groups with the pid its namespace gave it (1); neither side's
 * gc may take the other's live groups for a dead process's. Both sides
 * make groups that end at once, so that emptied ones are kept as spares,
 * the directories a gc could remove (struct ns_share: at the top).
 */

static void *brief(void *p)
{
	scn_sleep(0.001);
	return p;
}

/* Make groups until s->stop; counts in s. */
static void make_groups(struct ns_share *s)
{
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		pthread_t t;
		int r = rgroup_thread_create(&t, NULL, RGROUP_NEW, brief, NULL);

		if (r) {
			__atomic_add_fetch(&s->failed, 1, __ATOMIC_RELAXED);
			s->err = r;
			scn_sleep(0.001);
		} else {
			pthread_join(t, NULL);
			__atomic_add_fetch(&s->made, 1, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	}
}

/* In the namespace: collect in the test's system group until s->stop. */
static void collect_until_stop(struct ns_share *s)
{
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		int r = rgroup_gc(sgdir);

		if (r > 0)
			s->removed += r;
		else if (r < 0 && !s->gc_err)
			s->gc_err = r;
		scn_sleep(0.002);
	}
}

/* Run fn(nsh) as pid 1 of a new PID namespace with its own /proc, in the
 * test's system group. 0 when it runs; -1 when namespaces cannot be made
 * here (the case skips). */
static int ns_start(void (*fn)(struct ns_share *))
{
	int status;

	if (!nsh || nsh == MAP_FAILED)
		return -1;
	memset(nsh, 0, sizeof(*nsh));
	ns_parent = fork();
	if (ns_parent < 0)
		return -1;
	if (ns_parent == 0) {
		pid_t c;

		if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(77);
		c = fork();
		if (c == 0) {
			/* Its own /proc: pids as its namespace numbers them. */
			if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
				_exit(77);
			nsh->nspid = getpid();
			fn(nsh);
			_exit(0);
		}
		if (c < 0)
			_exit(1);
		nsh->pid = c;
		waitpid(c, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	}
	for (double t0 = scn_now(); scn_now() - t0 < 10.0; scn_sleep(0.005)) {
		if (__atomic_load_n(&nsh->ready, __ATOMIC_ACQUIRE))
			return 0;
		if (waitpid(ns_parent, &status, WNOHANG) == ns_parent) {
			ns_parent = -1;
			return -1;
		}
	}
	return 0;   /* not ready: the checks say so */
}

/* Stop the namespaced process (killed if it does not end in 5 s): its
 * exit status; 128 + the signal that ended it; -2 if it had to be
 * killed here (it did not end). */
static int ns_stop(void)
{
	int status = 0;

	if (ns_parent < 0)
		return -1;
	__atomic_store_n(&nsh->stop, 1, __ATOMIC_RELEASE);
	for (double t0 = scn_now(); scn_now() - t0 < 5.0; scn_sleep(0.01))
		if (waitpid(ns_parent, &status, WNOHANG) == ns_parent) {
			ns_parent = -1;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
	if (nsh->pid > 0)
		kill(nsh->pid, SIGKILL);
	kill(ns_parent, SIGKILL);
	waitpid(ns_parent, NULL, 0);
	ns_parent = -1;
	return -2;
}

/* rgroup_gc() of the test's system group, as often as it can in `secs`:
 * what it removed in all (or the first error). */
static long gc_for(double secs)
{
	long removed = 0;

	for (double t0 = scn_now(); scn_now() - t0 < secs; scn_sleep(0.002)) {
		int r = rgroup_gc(sgdir);

		if (r < 0)
			return r;
		removed += r;
	}
	return removed;
}

/* The host's gc and the command, while the namespaced process makes
 * groups: none of its groups goes; once it is killed, its leftovers do. */
static void ns_host_gc(void)
{
	char tool[PATH_MAX], out[1 << 16];
	int before = scn_count_groups(sgdir, 0), most = 0;
	long removed;

	if (ns_start(make_groups) < 0) {
		rgt_skip_case("cannot make a PID and mount namespace here (needs root)");
		return;
	}
	CHECK(nsh->nspid == 1, "the namespaced process is pid 1 there (%d)", (int)nsh->nspid);
	removed = gc_for(0.5);
	for (int i = 0; i < 50; i++, scn_sleep(0.002)) {
		int n = scn_count_groups(sgdir, 0) - before;

		most = n > most ? n : most;
	}
	removed += gc_for(0.5);
	CHECK(most > 0, "the namespaced process's groups are in the system group (%d)", most);
	CHECK(removed == 0, "rgroup_gc() on the host removed none of its groups (%ld)", removed);
	if (find_tool(tool, sizeof(tool)) == 0) {
		int rc = run_tool(tool, sgdir, NULL, out, sizeof(out));

		CHECK(rc == 0 && strstr(out, "0 directories removed"),
		      "rgroup gc DIR removed none of its groups (exit %d):\n%s", rc, out);
	}
	scn_sleep(0.1);
	unsigned long made = nsh->made, failed = nsh->failed;
	CHECK(failed == 0, "its creations all succeeded (%lu of %lu failed, last: %s)", failed,
	      made + failed, strerror(nsh->err));
	CHECK(made > 0, "it made groups (%lu)", made);

	/* Killed while creating: what it left goes (its namespace is gone). */
	kill(nsh->pid, SIGKILL);
	ns_stop();
	int left = 0;
	for (double t0 = scn_now(); scn_now() - t0 < 3.0; scn_sleep(0.02)) {
		rgroup_gc(sgdir);
		if ((left = scn_count_groups(sgdir, 0) - before) <= 0)
			break;
	}
	CHECK(left <= 0, "its leftovers were collected once it was dead (%d left)", left);
}

/* The namespaced process's gc while the test makes groups: it cannot see
 * the test's process, and must leave its groups alone. */
static void *maker_main(void *p)
{
	make_groups(p);
	return NULL;
}

static void ns_inner_gc(void)
{
	static struct ns_share mine;
	pthread_t maker;
	int ns;

	/* The collector is forked before the maker starts: a fork while
	 * another thread allocates can leave the child's allocator locked
	 * under a sanitizer (gcc 12's ASan takes no lock around fork; seen
	 * as the collector hanging in free()). */
	ns = ns_start(collect_until_stop);
	CHECK(pthread_create(&maker, NULL, maker_main, &mine) == 0, "a maker");
	while (!__atomic_load_n(&mine.ready, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	if (ns < 0) {
		rgt_skip_case("cannot make a PID and mount namespace here (needs root)");
	} else {
		scn_sleep(1.0);
		int st = ns_stop();

		CHECK(st == 0, "the namespaced collector exited cleanly (status %d%s)", st,
		      st == -2 ? ": it did not end within 5 s" : "");
		CHECK(nsh->gc_err == 0, "its rgroup_gc() worked (%s)", strerror((int)-nsh->gc_err));
		CHECK(nsh->removed == 0, "its gc removed none of the test's groups (%ld)", nsh->removed);
	}
	__atomic_store_n(&mine.stop, 1, __ATOMIC_RELEASE);
	pthread_join(maker, NULL);
	CHECK(mine.failed == 0, "the test's creations all succeeded (%lu of %lu failed, last: %s)",
	      mine.failed, mine.made + mine.failed, strerror(mine.err));
	/* Ours, but the live-owner directory the test made by hand. */
	int ours = 0;
	for (double t0 = scn_now(); scn_now() - t0 < 3.0; scn_sleep(0.01)) {
		ours = scn_count_groups(sgdir, getpid()) - exists_in_sg(fake_live);
		if (ours == 0 && rgroup_list(NULL, 0) == 0)
			break;
	}
	CHECK(ours == 0 && rgroup_list(NULL, 0) == 0, "the test's groups are gone (%d directories)", ours);
}

/*
 * The files a process owns by name (the governor's state file, rgroup
 * run's names file: rgroup-PID-START.*) are named with the pid its own
 * namespace gives it, 1 here, which on the host is init's. Written as
 * their writers write them (the first line names the PID namespace), they
 * stay while the namespaced process lives, whoever collects, and go once
 * it is dead.
 */
static char files_dir[PATH_MAX];

static void write_own_files(struct ns_share *s)
{
	struct rgroup__state h = { .pid = getpid(), .starttime = rgroup__starttime(0),
				   .pidns = rgroup__pidns_self(), .backend = "governor" };
	char name[96], text[512];
	int n = rgroup__format_state_head(text, sizeof(text) - 8, &h);
	FILE *f;

	if (n < 0 || rgroup__format_statename(name, sizeof(name), h.pid, h.starttime, 0) < 0)
		_exit(3);
	strcpy(text + n, "end\n");
	snprintf(s->files[0], sizeof(s->files[0]), "%s/%s", files_dir, name);
	if (rgroup__run_names_name(name, sizeof(name), h.pid, h.starttime, 0) < 0)
		_exit(3);
	snprintf(s->files[1], sizeof(s->files[1]), "%s/%s", files_dir, name);
	if (!(f = fopen(s->files[0], "w")) || fputs(text, f) < 0 || fclose(f) != 0)
		_exit(3);
	if (!(f = fopen(s->files[1], "w")) ||
	    fprintf(f, "# rgroup-names pidns=%llu\n1 work\n", (unsigned long long)h.pidns) < 0 ||
	    fclose(f) != 0)
		_exit(3);
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
		scn_sleep(0.01);
}

/* What `rgroup gc DIR` collects in a plain directory: dead owners' state
 * and names files. How many it removed. */
static int sweep_files(const char *dir)
{
	int a = rgroup__sweep_dead_owners(dir, rgroup__parse_statename, 0, 1, NULL, NULL);
	int b = rgroup__sweep_dead_owners(dir, rgroup__run_parse_names_name, 0, 1, NULL, NULL);

	return (a > 0 ? a : 0) + (b > 0 ? b : 0);
}

static void ns_files(void)
{
	char tool[PATH_MAX], out[1 << 14];
	int removed, gone = 0;

	if (!nsh || nsh == MAP_FAILED) {
		CHECK(0, "no shared page for the namespaced process");
		return;
	}
	const char *dir = files_dir;

	snprintf(files_dir, sizeof(files_dir), "/tmp/rgtest-nsfiles-%d", (int)getpid());
	if (mkdir(dir, 0700) < 0) {
		CHECK(0, "mkdir %s: %s", dir, strerror(errno));
		return;
	}
	if (ns_start(write_own_files) < 0) {
		rmdir(dir);
		rgt_skip_case("cannot make a PID and mount namespace here (needs root)");
		return;
	}
	CHECK(nsh->nspid == 1, "the namespaced process is pid 1 there (%d)", (int)nsh->nspid);
	CHECK(rgt_exists(nsh->files[0]) && rgt_exists(nsh->files[1]), "it wrote %s and %s",
	      nsh->files[0], nsh->files[1]);
	removed = sweep_files(dir);
	CHECK(removed == 0 && rgt_exists(nsh->files[0]) && rgt_exists(nsh->files[1]),
	      "the host's collector left the live process's files (%d removed)", removed);
	if (find_tool(tool, sizeof(tool)) == 0) {
		int rc = run_tool(tool, dir, NULL, out, sizeof(out));

		CHECK(rc == 0 && rgt_exists(nsh->files[0]) && rgt_exists(nsh->files[1]),
		      "rgroup gc %s left them too (exit %d):\n%s", dir, rc, out);
	}
	kill(nsh->pid, SIGKILL);
	ns_stop();
	for (double t0 = scn_now(); scn_now() - t0 < 3.0 && gone < 2; scn_sleep(0.02)) {
		sweep_files(dir);
		gone = !rgt_exists(nsh->files[0]) + !rgt_exists(nsh->files[1]);
	}
	CHECK(gone == 2, "once it was dead both went (%d of 2)", gone);
	unlink(nsh->files[0]);
	unlink(nsh->files[1]);
	rmdir(dir);
}

static const struct rgt_case cases[] = {
	{ "setup", setup },
	{ "not-cgroupfs", not_cgroupfs },
	{ "kill-at-start", kill_at_start },
	{ "kill-while-creating", kill_while_creating },
	{ "kill-while-weighting", kill_while_weighting },
	{ "gc-library", collect_lib },
	{ "gc-command", collect_command },
	{ "teardown", teardown },
	{ "own-leftover", own_leftover },
	{ "ns-host-gc", ns_host_gc },
	{ "ns-inner-gc", ns_inner_gc },
	{ "ns-files", ns_files },
};

int main(int argc, char **argv)
{
	/* The cases build on each other: no filter. */
	(void)argc;
	(void)argv;
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), 1, argv);
}
