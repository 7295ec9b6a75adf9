/* SPDX-License-Identifier: MIT */
/*
 * test-admin.c - what the administrator, or an attacker, may do around a
 * process that uses rgroups: the library never widens permissions, never
 * lets the environment steer a setuid program, and survives its groups
 * being emptied, removed or re-weighted by hand (a clear error, no crash,
 * no hang, and the next call works).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "sgroup.h"

static char sg[PATH_MAX];
static const char *self_exe;

static void group_dir(rgroup_id_t id, char *out, size_t len)
{
	struct rgroup_info in = { .sz = sizeof(in) };
	rgroup_info(id, &in);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", sg, in.name);
	rgt_cg_dir(path, out, len);
}

/* A group's directory gets its parent's permission bits, never wider. */
static void permissions_never_wider(void)
{
	char sgdir[PATH_MAX], dir[PATH_MAX];
	struct stat a, b;
	struct rgt_worker t = { 0 };
	rgroup_id_t id;

	rgt_cg_dir(sg, sgdir, sizeof(sgdir));
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
	CHECK(rgt_wait_no_groups(3.0) == 0, "groups removed");
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

	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0, "create");
	rgroup_of(t.tid, &id);
	group_dir(id, dir, sizeof(dir));
	/* Move the thread back to the sgroup, as an admin would, then rmdir. */
	rgt_cg_dir(sg, file, sizeof(file));
	strcat(file, rgt_sg.v2 ? "/cgroup.threads" : "/tasks");
	snprintf(tid, sizeof(tid), "%d", (int)t.tid);
	CHECK(rgt_write(file, tid) == 0, "move the thread out by hand");
	CHECK(rmdir(dir) == 0, "rmdir %s by hand: %s", dir, strerror(errno));
	errno = 0;
	int r = rgroup_setpriority(PRIO_RGRP, t.tid, 4);
	CHECK(r == -1 && (errno == ENOENT || errno == ENODEV),
	      "PRIO_RGRP on a removed group: %d (%s), expected ENOENT or ENODEV", r, strerror(errno));
	rgt_worker_stop(&t);
	CHECK(rgt_wait_no_groups(3.0) == 0, "the library forgot the group (%d listed)", rgroup_list(NULL, 0));
	struct rgt_worker n = { 0 };
	CHECK(rgt_worker_start(&n, RGROUP_NEW) == 0, "the next creation works");
	rgt_worker_stop(&n);
	CHECK(rgt_wait_no_groups(3.0) == 0, "groups removed");
}

/* The administrator changes a group's weight by hand: the library keeps
 * its own value and sets its own again at the next PRIO_RGRP. */
static void weight_changed_by_hand(void)
{
	char dir[PATH_MAX], file[PATH_MAX + 32];
	struct rgt_worker t = { .set_nice = 1, .nice = 3 };
	rgroup_id_t id;

	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0 && t.err == 0, "create");
	rgroup_of(t.tid, &id);
	group_dir(id, dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s/%s", dir, rgt_sg.v2 ? "cpu.weight.nice" : "cpu.shares");
	CHECK(rgt_write(file, rgt_sg.v2 ? "10" : "110") == 0, "write the weight by hand");
	CHECK(rgroup_getpriority(PRIO_RGRP, t.tid) == 3, "PRIO_RGRP still reads the library's 3");
	CHECK(rgroup_setpriority(PRIO_RGRP, t.tid, 2) == 0, "set again");
	char buf[32] = "";
	rgt_read(file, buf, sizeof(buf));
	long want = rgt_sg.v2 ? 2 : (long)rgroup_nice_to_weight(2);
	CHECK(atol(buf) == want, "kernel weight %s, expected %ld", buf, want);
	rgt_worker_stop(&t);
	CHECK(rgt_wait_no_groups(3.0) == 0, "groups removed");
}

/* Run a copy of this program (mode `mode`) as nobody with
 * RGROUP_BACKEND=governor; the backend it reports goes to out. */
static int run_copy_as_nobody(mode_t mode, char *out, size_t len)
{
	char copy[] = "/tmp/rgroup-setuid-XXXXXX";
	char buf[65536];
	ssize_t n;
	int fd = mkstemp(copy), in, p[2], st;

	if (fd < 0)
		return -1;
	in = open(self_exe, O_RDONLY);
	while (in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		(void)!write(fd, buf, n);
	if (in >= 0)
		close(in);
	fchmod(fd, mode);
	close(fd);
	if (pipe(p) < 0) {
		unlink(copy);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		setenv("RGROUP_BACKEND", "governor", 1);
		execl(copy, copy, "--print-backend", (char *)NULL);
		_exit(3);
	}
	close(p[1]);
	n = read(p[0], out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	unlink(copy);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Secure execution (setuid): RGROUP_BACKEND is ignored. A setuid-root copy
 * of this program, run by nobody with RGROUP_BACKEND=governor, must not get
 * the governor; the same copy without the setuid bit must (the control
 * that shows the test can fail). */
static void setuid_ignores_environment(void)
{
	char plain[64], suid[64];

	CHECK(run_copy_as_nobody(0755, plain, sizeof(plain)) == 0, "plain copy ran");
	CHECK(run_copy_as_nobody(04755, suid, sizeof(suid)) == 0, "setuid copy ran");
	fprintf(stderr, "  RGROUP_BACKEND=governor: plain copy got %.*s, setuid copy got %.*s\n",
		(int)strcspn(plain, "\n"), plain, (int)strcspn(suid, "\n"), suid);
	CHECK(strncmp(plain, "governor", 8) == 0, "the control: a plain program follows RGROUP_BACKEND");
	CHECK(suid[0] && strncmp(suid, "governor", 8) != 0, "a setuid program followed RGROUP_BACKEND");
}

static const struct rgt_case cases[] = {
	{ "permissions_never_wider", permissions_never_wider },
	{ "directory_removed_by_hand", directory_removed_by_hand },
	{ "weight_changed_by_hand", weight_changed_by_hand },
	{ "setuid_ignores_environment", setuid_ignores_environment },
};

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--print-backend") == 0) {
		printf("%s\n", rgroup_backend());
		return 0;
	}
	self_exe = "/proc/self/exe";
	rgt_sg_init();
	if (rgt_sg.gov)
		rgt_skip_all("these cases are about kernel groups");
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
