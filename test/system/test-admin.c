/* SPDX-License-Identifier: MIT */
/*
 * test-admin.c - what the administrator, or an attacker, may do around a
 * process that uses rgroups: the library never widens permissions, never
 * opens anything through a symlink or a mount planted below its groups,
 * never lets the environment steer a setuid program, and survives its
 * groups being emptied, removed or re-weighted by hand (a clear error, no
 * crash, no hang, and the next call works).
 */
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "backend.h"
#include "sgroup.h"

static char sg[PATH_MAX];

static void group_dir(rgroup_id_t id, char *out, size_t len)
{
	struct rgroup_info in = { .sz = sizeof(in) };
	rgroup_info(id, &in);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", sg, in.name);
	scn_cg_dir(path, out, len);
}

/* The native kernel's rgroups have no directory, nothing an administrator
 * could reach in cgroupfs: the directory cases do not apply there. */
static int no_dirs(const char *what)
{
	if (rgt_dirs())
		return 0;
	fprintf(stderr, "  %s: no directory of an rgroup exists to %s\n", rgroup_backend(), what);
	return 1;
}

/* A group's directory gets its parent's permission bits, never wider. */
static void permissions_never_wider(void)
{
	char sgdir[PATH_MAX], dir[PATH_MAX];
	struct stat a, b;
	struct rgt_worker t = { 0 };
	rgroup_id_t id;

	if (no_dirs("have permissions"))
		return;
	scn_cg_dir(sg, sgdir, sizeof(sgdir));
	/* A narrower sgroup than mkdir's default shows the difference. */
	CHECK(chmod(sgdir, 0750) == 0, "chmod the test's sgroup");
	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0, "create");
	rgroup_of(t.tid, &id);
	group_dir(id, dir, sizeof(dir));
	CHECK(stat(sgdir, &a) == 0 && stat(dir, &b) == 0, "stat");
	CHECK((b.st_mode & 0777) == (a.st_mode & 0777), "group mode %o, sgroup mode %o",
	      b.st_mode & 0777, a.st_mode & 0777);
	CHECK(b.st_uid == a.st_uid, "owner %d, sgroup's %d", (int)b.st_uid, (int)a.st_uid);
	rgt_worker_stop(&t);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
	chmod(sgdir, 0755);
}

/* The administrator empties a group and removes its directory while the
 * process still has it: PRIO_RGRP says so clearly, the thread's exit and
 * the library's clean-up do not crash or hang, the next creation works. */
static void directory_removed_by_hand(void)
{
	char dir[PATH_MAX], file[PATH_MAX + 16], tid[16];
	struct rgt_worker t = { 0 };
	rgroup_id_t id;

	if (no_dirs("remove by hand"))
		return;
	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0, "create");
	rgroup_of(t.tid, &id);
	group_dir(id, dir, sizeof(dir));
	/* Move the thread back to the sgroup, as an admin would, then rmdir. */
	scn_cg_dir(sg, file, sizeof(file));
	strcat(file, scn_sg.v2 ? "/cgroup.threads" : "/tasks");
	snprintf(tid, sizeof(tid), "%d", (int)t.tid);
	CHECK(scn_write(file, tid) == 0, "move the thread out by hand");
	CHECK(rmdir(dir) == 0, "rmdir %s by hand: %s", dir, strerror(errno));
	errno = 0;
	int r = rgroup_setpriority(PRIO_RGRP, t.tid, 4);
	CHECK(r == -1 && (errno == ENOENT || errno == ENODEV),
	      "PRIO_RGRP on a removed group: %d (%s), expected ENOENT or ENODEV", r, strerror(errno));
	rgt_worker_stop(&t);
	CHECK(scn_wait_no_groups(3.0) == 0, "the library forgot the group (%d listed)", rgroup_list(NULL, 0));
	struct rgt_worker n = { 0 };
	CHECK(rgt_worker_start(&n, RGROUP_NEW) == 0, "the next creation works");
	rgt_worker_stop(&n);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
}

/* The administrator changes a group's weight by hand: the library keeps
 * its own value and sets its own again at the next PRIO_RGRP. */
static void weight_changed_by_hand(void)
{
	char dir[PATH_MAX], file[PATH_MAX + 32];
	struct rgt_worker t = { .set_nice = 1, .nice = 3 };
	rgroup_id_t id;

	if (no_dirs("re-weight by hand"))
		return;
	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0 && t.err == 0, "create");
	rgroup_of(t.tid, &id);
	group_dir(id, dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s/%s", dir, scn_sg.v2 ? "cpu.weight.nice" : "cpu.shares");
	CHECK(scn_write(file, scn_sg.v2 ? "10" : "110") == 0, "write the weight by hand");
	CHECK(rgroup_getpriority(PRIO_RGRP, t.tid) == 3, "PRIO_RGRP still reads the library's 3");
	CHECK(rgroup_setpriority(PRIO_RGRP, t.tid, 2) == 0, "set again");
	char buf[32] = "";
	rgt_read(file, buf, sizeof(buf));
	long want = scn_sg.v2 ? 2 : (long)rgroup_nice_to_weight(2);
	CHECK(atol(buf) == want, "kernel weight %s, expected %ld", buf, want);
	rgt_worker_stop(&t);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
}

/* ---- Nothing is opened out of the process's own subtree -------------- */

/* A thread that runs jobs inside its group, one at a time, on request. */
struct agent {
	pthread_t thread;
	pid_t tid;
	int (*job)(long arg);
	long arg;
	int result;
	int ready, quit;
};

static void *agent_main(void *p)
{
	struct agent *a = p;

	a->tid = scn_gettid();
	__atomic_store_n(&a->ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		int (*job)(long) = __atomic_load_n(&a->job, __ATOMIC_ACQUIRE);
		if (job) {
			a->result = job(a->arg);
			__atomic_store_n(&a->job, NULL, __ATOMIC_RELEASE);
		} else if (__atomic_load_n(&a->quit, __ATOMIC_ACQUIRE)) {
			return NULL;
		} else {
			scn_sleep(0.001);
		}
	}
}

static int agent_start(struct agent *a, unsigned flags)
{
	int r = rgroup_thread_create(&a->thread, NULL, flags, agent_main, a);
	while (!r && !__atomic_load_n(&a->ready, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	return r;
}

/* Run job(arg) in a's thread; its result. */
static int agent_run(struct agent *a, int (*job)(long), long arg)
{
	a->arg = arg;
	__atomic_store_n(&a->job, job, __ATOMIC_RELEASE);
	while (__atomic_load_n(&a->job, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	return a->result;
}

static void agent_stop(struct agent *a)
{
	__atomic_store_n(&a->quit, 1, __ATOMIC_RELEASE);
	pthread_join(a->thread, NULL);
}

/* Jobs: 0 or an error number. */
static int job_nice(long nice)
{
	return rgroup_setpriority(PRIO_RGRP, 0, (int)nice) < 0 ? errno : 0;
}

static void *no_work(void *p)
{
	return p;
}

static int job_new_group(long unused)
{
	pthread_t t;
	int r = rgroup_thread_create(&t, NULL, RGROUP_NEW, no_work, NULL);

	if (!r)
		pthread_join(t, NULL);
	return r;
}

static int job_start_nested(long agent)
{
	return agent_start((struct agent *)agent, RGROUP_NEW);
}

static int job_read_tree(long unused)
{
	rgroup_id_t ids[8];
	struct rgroup_info in = { .sz = sizeof(in) };
	int n = rgroup_list(ids, 8);

	for (int i = 0; i < n && i < 8; i++)
		rgroup_info(ids[i], &in);
	return 0;
}

/* Every open, read, write, creation or removal in the watched directory
 * since the last call, printed (when is not NULL); how many. */
static int outside_events(int ino, const char *when)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;
	int n = 0;

	while ((len = read(ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len; n++) {
			struct inotify_event *e = (struct inotify_event *)p;
			if (when)
				fprintf(stderr, "  %s: event %#x on outside/%s\n", when,
					e->mask, e->len ? e->name : ".");
			p += sizeof(*e) + e->len;
		}
	}
	return n;
}

static int make_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

/*
 * The child of planted_links_not_followed, in a mount namespace of its own
 * (the mounts vanish with it, also when it crashes). outside is an empty
 * directory in /tmp. Returns the number of failed checks, -1 when it
 * cannot have a namespace.
 */
static int plant_and_poke(const char *outside)
{
	char apath[PATH_MAX], bpath[PATH_MAX], adir[PATH_MAX];
	char bdir[PATH_MAX], file[PATH_MAX * 2], target[PATH_MAX * 2], buf[64];
	const char *weight = scn_sg.v2 ? "cpu.weight.nice" : "cpu.shares";
	struct agent a = { 0 }, b = { 0 };
	struct dirent *e;
	int ino, nfiles = 0;
	DIR *d;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "  cannot have a mount namespace of its own: %s\n", strerror(errno));
		return -1;
	}
	/* Group a, and b nested in it: what the library reaches as
	 * "rgroup-a/cpu.shares" and "rgroup-a/rgroup-b/cpu.shares". */
	if (agent_start(&a, RGROUP_NEW) || agent_run(&a, job_start_nested, (long)&b)) {
		fprintf(stderr, "  FAIL: cannot make the groups\n");
		return 1;
	}
	scn_thread_cgroup(a.tid, apath, sizeof(apath));
	scn_thread_cgroup(b.tid, bpath, sizeof(bpath));
	scn_cg_dir(apath, adir, sizeof(adir));
	scn_cg_dir(bpath, bdir, sizeof(bdir));

	/* cgroupfs has no symlinks: the kernel refuses to make one. */
	snprintf(file, sizeof(file), "%s/rgtest-link", adir);
	errno = 0;
	CHECK(symlink(outside, file) < 0 && errno == EPERM,
	      "symlink in a cgroup directory: %s (expected EPERM; if cgroupfs allows symlinks now, plant them there)",
	      strerror(errno));
	unlink(file);

	/* A file outside for every file of a group, and a watch on them. */
	d = opendir(adir);
	while (d && (e = readdir(d))) {
		if (e->d_type != DT_REG)
			continue;
		snprintf(target, sizeof(target), "%s/%s", outside, e->d_name);
		CHECK(make_file(target, "untouched\n") == 0, "make %s", target);
		nfiles++;
	}
	if (d)
		closedir(d);
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	CHECK(ino >= 0 && inotify_add_watch(ino, outside, IN_ALL_EVENTS) >= 0, "inotify on %s", outside);

	/* Over group a, a tmpfs where each of its files is a symlink to the
	 * file outside, and b's name a symlink to the directory outside. */
	CHECK(mount("rgtest", adir, "tmpfs", 0, "mode=0755") == 0, "mount a tmpfs over %s: %s", adir, strerror(errno));
	d = opendir(outside);
	while (d && (e = readdir(d))) {
		if (e->d_type != DT_REG)
			continue;
		snprintf(file, sizeof(file), "%s/%s", adir, e->d_name);
		snprintf(target, sizeof(target), "%s/%s", outside, e->d_name);
		CHECK(symlink(target, file) == 0, "plant %s", file);
	}
	if (d)
		closedir(d);
	snprintf(file, sizeof(file), "%s/%s", adir, strrchr(bpath, '/') + 1);
	CHECK(symlink(outside, file) == 0, "plant %s", file);
	outside_events(ino, NULL); /* the test's own */

	/* What the library opens, makes or removes below its groups: a's
	 * weight (a symlink as the last name), b's weight (through a
	 * symlinked directory), a new group in a (on the tmpfs) and in b
	 * (mkdir through the symlink), the usage of both. */
	int r1 = agent_run(&a, job_nice, 5);
	int r2 = agent_run(&b, job_nice, 7);
	int r3 = agent_run(&a, job_new_group, 0);
	int r4 = agent_run(&b, job_new_group, 0);
	agent_run(&a, job_read_tree, 0);
	fprintf(stderr, "  with symlinks planted: PRIO_RGRP on a: %s, on b: %s; new group in a: %s, in b: %s\n",
		strerror(r1), strerror(r2), strerror(r3), strerror(r4));
	CHECK(outside_events(ino, "symlinks planted") == 0, "the library opened or made something outside through a symlink");
	CHECK(umount2(adir, MNT_DETACH) == 0, "umount %s: %s", adir, strerror(errno));

	/* A bind mount is no symlink: a file outside mounted over b's weight
	 * file (which the library has not opened yet, nested groups start at
	 * nice 0 without a write). */
	snprintf(file, sizeof(file), "%s/%s", bdir, weight);
	snprintf(target, sizeof(target), "%s/%s", outside, weight);
	CHECK(mount(target, file, NULL, MS_BIND, NULL) == 0, "bind %s over %s: %s", target, file, strerror(errno));
	outside_events(ino, NULL);
	int r5 = agent_run(&b, job_nice, 6);
	fprintf(stderr, "  with a file bound over b's %s: PRIO_RGRP on b: %s\n", weight, strerror(r5));
	CHECK(outside_events(ino, "file bound over a group's") == 0, "the library opened a file bound over its group's");
	CHECK(umount2(file, MNT_DETACH) == 0, "umount %s: %s", file, strerror(errno));
	close(ino);

	/* The files outside are as they were, nothing was added. */
	int seen = 0;
	d = opendir(outside);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", outside, e->d_name);
		CHECK(e->d_type == DT_REG && rgt_read(file, buf, sizeof(buf)) >= 0 &&
		      strcmp(buf, "untouched\n") == 0, "%s was changed or made", file);
		seen++;
	}
	if (d)
		closedir(d);
	CHECK(seen == nfiles, "%d entries outside, %d made", seen, nfiles);

	/* With the mounts gone the library works on: weights, a new group,
	 * and at the end nothing left. */
	CHECK(agent_run(&b, job_nice, 4) == 0 && rgt_cg_weight(bpath) == rgroup_nice_to_weight(4),
	      "PRIO_RGRP on b after the mounts are gone");
	CHECK(agent_run(&a, job_new_group, 0) == 0, "a new group after the mounts are gone");
	agent_stop(&b);
	agent_stop(&a);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed (%d listed, %d directories)",
	      rgroup_list(NULL, 0), scn_own_dirs());
	return rgt_failures;
}

/*
 * Nothing is opened through a symlink out of the process's own subtree.
 * cgroupfs refuses symlinks and (v1) renames only within a parent, so
 * only someone who may mount can put a symlink below a group: this case
 * does, as root, with a tmpfs mounted over a group's directory (a symlink
 * as the last name, and one as a directory on the way), and binds a file
 * over a group's weight file. The files outside are watched (inotify):
 * not one is opened, made or removed.
 */
static void planted_links_not_followed(void)
{
	char outside[] = "/tmp/rgroup-outside-XXXXXX";
	int st;

	if (no_dirs("plant links in"))
		return;
	if (!mkdtemp(outside)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int r = plant_and_poke(outside);
		_exit(r < 0 ? 77 : r ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	nftw(outside, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		rgt_skip_case("no mount namespace of its own");
	else
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's status %#x", st);
}

/* ---- Secure execution ------------------------------------------------- */

/* Every RGROUP_* variable the library reads (grep getenv src/), a value
 * that changes what a program does, and what the program then reports
 * (`--report WHAT`). An unknown backend name shows whether RGROUP_BACKEND
 * is read whatever the automatic choice is. */
static const struct {
	const char *var, *value, *report;
} env_vars[] = {
	{ "RGROUP_BACKEND", "rgtest-unknown", "backend" },
	{ "RGROUP_GOVERNOR_SIGNAL", "3", "governor-signal" },
};

/* What a copy run with `--report what` prints. */
static int report(const char *what)
{
	if (strcmp(what, "backend") == 0) {
		char why[512] = "";
		if (rgroup_probe(NULL, why, sizeof(why)) == 0)
			why[0] = '\0';
		printf("%s%s%s\n", rgroup_backend(), why[0] ? ": " : "", why);
		return 0;
	}
	if (strcmp(what, "governor-signal") == 0) {
		/* The governor is never chosen automatically and a setuid
		 * program cannot be steered to it (RGROUP_BACKEND, above), so
		 * it is attached through the backend interface. */
		const struct rgroup__backend *gov = &rgroup__backend_governor;
		int r = gov->attach(gov->priv);
		if (r < 0) {
			printf("attach: %s\n", strerror(-r));
			return 0;
		}
		for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
			struct sigaction sa;
			if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
			    sa.sa_handler != SIG_IGN) {
				printf("SIGRTMIN+%d\n", s - SIGRTMIN);
				return 0;
			}
		}
		printf("no signal\n");
		return 0;
	}
	return 2;
}

/* A copy of this program with the given mode, at path (a mkstemp
 * template); 0 or -1. */
static int copy_self(char *path, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int fd = mkstemp(path), in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), r = -1;

	while (fd >= 0 && in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, n) != n)
			goto out;
	r = fd >= 0 && in >= 0 && n == 0 && fchmod(fd, mode) == 0 ? 0 : -1;
out:
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
	return r;
}

struct copy_run {
	const char *copy, *var, *value, *what;
};

static void exec_as_nobody(void *arg)
{
	const struct copy_run *c = arg;

	if (setgid(65534) < 0 || setuid(65534) < 0)
		_exit(2);
	clearenv();
	if (c->var)
		setenv(c->var, c->value, 1);
	execl(c->copy, c->copy, "--report", c->what, (char *)NULL);
}

/* Run copy as nobody with only var=value (var NULL: nothing) in its
 * environment; the first line it reports goes to out, its exit status
 * back. */
static int run_as_nobody(const char *copy, const char *var, const char *value,
			 const char *what, char *out, size_t len)
{
	struct copy_run c = { copy, var, value, what };
	int r = rgt_capture(out, len, exec_as_nobody, &c);

	out[strcspn(out, "\n")] = '\0';
	return r;
}

/* Secure execution (setuid): every RGROUP_* variable is ignored. A
 * setuid-root copy of this program, run by nobody, reports the same with
 * the variable as without it; a plain copy reports something else with it
 * (the control: each variable works, and the test can fail). */
static void setuid_ignores_environment(void)
{
	char plain[] = "/tmp/rgroup-plain-XXXXXX", suid[] = "/tmp/rgroup-setuid-XXXXXX";

	CHECK(copy_self(plain, 0755) == 0 && copy_self(suid, 04755) == 0,
	      "copies of this program: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++) {
		const char *var = env_vars[i].var, *val = env_vars[i].value, *what = env_vars[i].report;
		char p0[600], p1[600], s0[600], s1[600];

		CHECK(run_as_nobody(plain, NULL, NULL, what, p0, sizeof(p0)) == 0 &&
		      run_as_nobody(plain, var, val, what, p1, sizeof(p1)) == 0 &&
		      run_as_nobody(suid, NULL, NULL, what, s0, sizeof(s0)) == 0 &&
		      run_as_nobody(suid, var, val, what, s1, sizeof(s1)) == 0,
		      "the copies ran (%s)", var);
		fprintf(stderr, "  %s=%s\n    plain:  without: %s\n            with:    %s\n"
			"    setuid: without: %s\n            with:    %s\n", var, val, p0, p1, s0, s1);
		CHECK(p1[0] && strcmp(p0, p1) != 0, "the control: a plain program follows %s", var);
		CHECK(s1[0] && strcmp(s0, s1) == 0, "a setuid program followed %s", var);
	}
	unlink(plain);
	unlink(suid);
}

static const struct rgt_case cases[] = {
	{ "permissions_never_wider", permissions_never_wider },
	{ "directory_removed_by_hand", directory_removed_by_hand },
	{ "weight_changed_by_hand", weight_changed_by_hand },
	{ "planted_links_not_followed", planted_links_not_followed },
	{ "setuid_ignores_environment", setuid_ignores_environment },
};

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--report") == 0)
		return report(argv[2]);
	rgt_sg_init();
	if (scn_sg.gov)
		rgt_skip_all("these cases are about kernel groups");
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
