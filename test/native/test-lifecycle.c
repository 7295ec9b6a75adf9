/* SPDX-License-Identifier: MIT */
/*
 * test-lifecycle.c - rules 2, 3, 7 and 9 on the native kernel, and what
 * people see: fork() and exec() start outside every rgroup, an rgroup's
 * kernel objects go with its last thread and last child (counted in
 * /proc/slabinfo), nothing appears or changes in cgroupfs, the
 * /proc/PID/task/TID/rgroup line, and the scheduler's debug file naming
 * rgroups by path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *self_exe = "/proc/self/exe";

/* --- helpers -------------------------------------------------------------- */

/* Active objects of a slab cache, after flushing the per-CPU slabs so that
 * the count is exact (SLUB counts a CPU slab as fully in use). -1 if the
 * cache is not there. */
static long slab_active(const char *cache)
{
	char path[128], buf[1 << 16];
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	nt_write_file(path, "1");
	if (nt_read_file("/proc/slabinfo", buf, sizeof(buf)) < 0)
		return -1;
	size_t n = strlen(cache);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		if (!strncmp(l, cache, n) && l[n] == ' ')
			return strtol(l + n, NULL, 10);
	return -1;
}

/* The count once the frees still queued behind RCU grace periods are done:
 * the first value that holds for half a second (10 s at most). */
static long slab_stable(const char *cache)
{
	long v = slab_active(cache), prev = -2;
	for (int i = 0; i < 100 && v != prev; i++) {
		nt_sleep(0.5);
		prev = v;
		v = slab_active(cache);
	}
	return v;
}

/* Wait (up to 10 s: RCU grace periods) for a cache to get back to `want`. */
static long slab_settle(const char *cache, long want)
{
	long v = -1;
	for (int i = 0; i < 200; i++) {
		v = slab_active(cache);
		if (v <= want)
			break;
		nt_sleep(0.05);
	}
	return v;
}

/* The line of rgroup id in /proc/self/rgroups, and how many lines. */
struct rgs_line {
	uint64_t id, parent;
	unsigned int depth, threads;
	int nice;
	uint64_t usage;
};

static int rgroups_find(uint64_t id, struct rgs_line *out)
{
	char buf[8192];
	int lines = 0;
	if (nt_read_file("/proc/self/rgroups", buf, sizeof(buf)) < 0)
		return -1;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		struct rgs_line r;
		lines++;
		if (sscanf(l, "%" SCNu64 " %" SCNu64 " %u %d %" SCNu64 " %u", &r.id, &r.parent,
			   &r.depth, &r.nice, &r.usage, &r.threads) == 6 && r.id == id && out)
			*out = r;
	}
	return lines;
}

/* --- rule 7 --------------------------------------------------------------- */

struct fork_result {
	struct nt_rg main_line, thread_line, new_line;
};

static int fork_job(void *p)
{
	struct fork_result *r = p;
	int fds[2];

	if (pipe(fds))
		return -1;
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		struct fork_result c;
		struct nt_agent a, b;
		memset(&c, 0, sizeof(c));
		nt_rg_read(0, nt_gettid(), &c.main_line);
		if (!nt_agent_start(&a, 0)) {
			nt_rg_read(0, a.tid, &c.thread_line);
			nt_agent_stop(&a);
		}
		if (!nt_agent_start(&b, 1)) {
			nt_rg_read(0, b.tid, &c.new_line);
			nt_agent_stop(&b);
		}
		_exit(write(fds[1], &c, sizeof(c)) == sizeof(c) ? 0 : 1);
	}
	close(fds[1]);
	int ok = read(fds[0], r, sizeof(*r)) == sizeof(*r);
	close(fds[0]);
	return nt_wait(pid) == 0 && ok ? 0 : -1;
}

static void rule7_fork(void)
{
	struct nt_agent a;
	struct fork_result r;

	CHECK(nt_agent_start(&a, 1) == 0, "a thread in a new rgroup");
	uint64_t id = nt_rg_id(a.tid);
	CHECK(nt_agent_run(&a, fork_job, &r) == 0, "fork from inside the rgroup");
	CHECK(r.main_line.id == 0 && r.main_line.depth == 0,
	      "the child process starts in no rgroup (id %" PRIu64 ")", r.main_line.id);
	CHECK(r.thread_line.id == 0, "its threads too (id %" PRIu64 ")", r.thread_line.id);
	/* ids are per process: the child numbers its own from 1 */
	CHECK(r.new_line.id == 1 && r.new_line.parent == 0 && r.new_line.depth == 1,
	      "its new rgroups are top-level, its own, numbered from 1 (id %" PRIu64
	      " parent %" PRIu64 ")", r.new_line.id, r.new_line.parent);
	CHECK(nt_rg_id(a.tid) == id, "the forking thread stays where it was");
	nt_agent_stop(&a);
}

/* exec probe mode: report our rgroup line and the pending request. */
static int exec_probe(int fd)
{
	struct nt_rg rg;
	char line[160];
	int n = nt_read_file("/proc/thread-self/rgroup", line, sizeof(line));
	if (n < 0 || nt_rg_read(0, nt_gettid(), &rg))
		return 2;
	dprintf(fd, "%d %s", nt_get_next_new(), line);
	return 0;
}

struct exec_job {
	int fd;
	int set_next_new;
};

static int exec_job(void *p)
{
	struct exec_job *j = p;
	char fdarg[16];
	snprintf(fdarg, sizeof(fdarg), "%d", j->fd);
	if (j->set_next_new)
		nt_set_next_new(1);
	execl(self_exe, self_exe, "--exec-probe", fdarg, (char *)NULL);
	return -1;
}

/* In a child process: a thread in an rgroup (not the main thread) execs. */
static int exec_child(void *arg)
{
	struct exec_job *j = arg;
	struct nt_agent a, b;
	if (nt_agent_start(&a, 1) || nt_agent_start(&b, 0))
		return 1;
	/* b and the main thread are killed by the exec; a execs */
	nt_agent_run(&a, exec_job, j);
	return 3;
}

/* In a child process: the main thread enters an rgroup, then execs. */
static int exec_main_child(void *arg)
{
	struct exec_job *j = arg;
	if (nt_enter(0, PR_RGROUP_ENTER_NEW))
		return 1;
	if (nt_rg_id(nt_gettid()) == 0)
		return 1;
	exec_job(j);
	return 3;
}

static void check_exec(const char *what, int (*fn)(void *))
{
	int fds[2];
	char buf[200] = "";

	CHECK(pipe(fds) == 0, "pipe");
	struct exec_job j = { fds[1], 1 };
	pid_t pid = nt_fork(fn, &j);
	close(fds[1]);
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	int rc = nt_wait(pid);
	buf[n > 0 ? n : 0] = 0;
	fprintf(stderr, "  %s: after exec: pending %c, line \"%.*s\"\n", what, buf[0],
		(int)strcspn(buf + 2, "\n"), n > 2 ? buf + 2 : "");
	CHECK(rc == 0, "%s: the exec'ed program exited %d", what, rc);
	CHECK(!strcmp(buf, "0 0 0 0 0 0 0 0 0 0 0\n"),
	      "%s: the new program starts in no rgroup, nothing pending", what);
}

static void rule7_exec(void)
{
	check_exec("a thread in an rgroup execs", exec_child);
	check_exec("the main thread, entered, execs", exec_main_child);
}

/* --- rule 3 --------------------------------------------------------------- */

struct groups_child {
	int n;
	int fd[2];
};

static int make_groups_child(void *arg)
{
	struct groups_child *g = arg;
	struct nt_agent *a = calloc((size_t)g->n, sizeof(*a));
	char ok = 1;
	for (int i = 0; i < g->n; i++)
		if (nt_agent_start(&a[i], 1))
			ok = 0;
	if (write(g->fd[1], &ok, 1) != 1)
		return 1;
	/* killed by the parent */
	pause();
	return 0;
}

static void rule3_destruction(void)
{
	long base = slab_stable("task_group");
	struct nt_agent top, mid, leaf;

	if (base < 0) {
		rgt_skip_case("no task_group line in /proc/slabinfo (boot with slab_nomerge)");
		return;
	}
	fprintf(stderr, "  task_group objects at the start: %ld\n", base);

	/* a chain top > mid > leaf, then the threads of top and mid exit */
	CHECK(nt_agent_start(&top, 1) == 0, "top");
	int sm_err = nt_agent_start_in(&top, &mid, 1);
	int sl_err = nt_agent_start_in(&mid, &leaf, 1);
	CHECK(sm_err == 0 && sl_err == 0, "mid and leaf");
	long three = slab_active("task_group");
	CHECK(three == base + 3, "three rgroups, three task groups: %ld (want %ld)", three, base + 3);
	uint64_t leaf_id = nt_rg_id(leaf.tid), mid_id = nt_rg_id(mid.tid), top_id = nt_rg_id(top.tid);
	struct nt_rg l;
	nt_agent_stop(&mid);
	nt_agent_stop(&top);
	/*
	 * top and mid have no thread now: only /proc/PID/rgroups shows them.
	 * A joined thread wakes its joiner (exit_mm()) before it leaves its
	 * rgroup, as it leaves its cgroup after that too: wait for the
	 * counts, at most 5 s.
	 */
	struct rgs_line rt = { 0 }, rm = { 0 }, rl = { 0 };
	int lines = 0;
	for (double t0 = nt_now(); nt_now() - t0 < 5.0; nt_sleep(0.01)) {
		lines = rgroups_find(top_id, &rt);
		rgroups_find(mid_id, &rm);
		rgroups_find(leaf_id, &rl);
		if (rt.threads == 0 && rm.threads == 0)
			break;
	}
	fprintf(stderr, "  /proc/self/rgroups: %d lines; top %" PRIu64 " (%u threads), "
		"mid %" PRIu64 " parent %" PRIu64 " (%u threads), leaf parent %" PRIu64 " (%u)\n",
		lines, rt.id, rt.threads, rm.id, rm.parent, rm.threads, rl.parent, rl.threads);
	CHECK(lines == 3, "three rgroups listed: %d", lines);
	CHECK(rt.id == top_id && rt.parent == 0 && rt.depth == 1 && rt.threads == 0,
	      "top: listed, no thread of its own");
	CHECK(rm.id == mid_id && rm.parent == top_id && rm.depth == 2 && rm.threads == 0,
	      "mid: listed under top, no thread of its own");
	CHECK(rl.id == leaf_id && rl.parent == mid_id && rl.depth == 3 && rl.threads == 1,
	      "leaf: under mid, one thread");
	long still = slab_settle("task_group", base + 2);
	CHECK(still == base + 3, "with their threads gone, top and mid stay for leaf: %ld (want %ld)",
	      still, base + 3);
	CHECK(nt_rg_read(0, leaf.tid, &l) == 0 && l.id == leaf_id && l.depth == 3,
	      "leaf still at depth 3");
	nt_agent_stop(&leaf);
	long after = slab_settle("task_group", base);
	CHECK(after == base, "all gone with leaf's last thread: %ld (want %ld)", after, base);

	/* a killed process: 20 rgroups go with it */
	struct groups_child g = { 20, { -1, -1 } };
	int n = g.n;
	char ok = 0;
	CHECK(pipe(g.fd) == 0, "pipe");
	pid_t pid = nt_fork(make_groups_child, &g);
	CHECK(read(g.fd[0], &ok, 1) == 1 && ok, "the child made its rgroups");
	close(g.fd[0]);
	close(g.fd[1]);
	long with = slab_active("task_group");
	CHECK(with == base + n, "20 rgroups in a child process: %ld (want %ld)", with, base + n);
	kill(pid, SIGKILL);
	CHECK(nt_wait(pid) == 128 + SIGKILL, "killed");
	after = slab_settle("task_group", base);
	CHECK(after == base, "SIGKILL: all gone: %ld (want %ld)", after, base);
}

/* --- the /proc file ------------------------------------------------------ */

static void proc_file(void)
{
	char line[200];
	struct nt_agent a, b;

	CHECK(nt_read_file("/proc/thread-self/rgroup", line, sizeof(line)) > 0 &&
	      !strcmp(line, "0 0 0 0 0 0 0 0 0 0\n"),
	      "a thread in no rgroup reads ten zeroes: \"%s\"", line);
	CHECK(nt_write_file("/proc/thread-self/rgroup", "1") < 0, "read-only");
	CHECK(rgroups_find(0, NULL) == 0, "/proc/self/rgroups of a process without rgroups is empty");

	CHECK(nt_agent_start(&a, 1) == 0, "agent in a new rgroup");
	CHECK(nt_agent_start_in(&a, &b, 1) == 0, "nested");
	CHECK(nt_setprio(a.tid, 3) == 0 && nt_setprio(b.tid, -4) == 0, "nice 3 and -4");
	struct nt_rg ra, rb;
	CHECK(nt_rg_read(0, a.tid, &ra) == 0 && nt_rg_read(0, b.tid, &rb) == 0, "read both");
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/rgroup", b.tid);
	nt_read_file(path, line, sizeof(line));
	fprintf(stderr, "  nested thread's line: %s", line);
	unsigned fields = 0;
	for (char *s = line; *s; s++)
		fields += (s == line || s[-1] == ' ') && *s != ' ';
	CHECK(fields == 10 && line[strlen(line) - 1] == '\n', "ten fields and a newline");
	CHECK(ra.depth == 1 && ra.parent == 0 && ra.nice == 3 && ra.attached == 1, "a's line");
	CHECK(rb.depth == 2 && rb.parent == ra.id && rb.nice == -4 && rb.attached == 1, "b's line");
	struct rgs_line la = { 0 }, lb = { 0 };
	CHECK(rgroups_find(ra.id, &la) == 2 && rgroups_find(rb.id, &lb) == 2,
	      "/proc/self/rgroups lists a and b");
	CHECK(la.parent == 0 && la.depth == 1 && la.nice == 3 && la.threads == 1 &&
	      lb.parent == ra.id && lb.depth == 2 && lb.nice == -4 && lb.threads == 1,
	      "their lines: a %" PRIu64 "/%u/%d/%u, b %" PRIu64 "/%u/%d/%u", la.parent, la.depth,
	      la.nice, la.threads, lb.parent, lb.depth, lb.nice, lb.threads);

	/* usage: two spinners in b for a second; b's and a's usage grow by
	 * their CPU time (a's includes its nested rgroups). */
	struct nt_spinners sp = { .n = 2 };
	CHECK(nt_agent_run(&b, nt_spinners_job, &sp) == 0, "spinners in b");
	double c0 = nt_spinners_cpu(&sp);
	struct nt_rg a0, b0, a1, b1;
	nt_rg_read(0, a.tid, &a0);
	nt_rg_read(0, b.tid, &b0);
	nt_sleep(1.0);
	nt_rg_read(0, a.tid, &a1);
	nt_rg_read(0, b.tid, &b1);
	double c1 = nt_spinners_cpu(&sp);
	nt_spinners_stop(&sp);
	double cpu = c1 - c0, ub = (b1.usage_ns - b0.usage_ns) / 1e9,
	       ua = (a1.usage_ns - a0.usage_ns) / 1e9;
	fprintf(stderr, "  1 s: threads' CPU %.3f s, b's usage %.3f s, a's usage %.3f s\n",
		cpu, ub, ua);
	/* the group entities are charged at ticks and switches: a tick (4 ms)
	 * per CPU behind at most, each end */
	CHECK(cpu > 0.5, "the spinners ran");
	CHECK(fabs(ub - cpu) <= 0.02 * cpu + 0.02, "b's usage follows its threads");
	CHECK(fabs(ua - cpu) <= 0.02 * cpu + 0.02, "a's usage includes b's");
	nt_agent_stop(&b);
	nt_agent_stop(&a);
}

/* --- rule 9: nothing in cgroupfs --------------------------------------------- */

static void rule9_cgroupfs(void)
{
	static const char *const files[] = {
		"cgroup.subtree_control", "cgroup.type", "cgroup.max.depth",
		"cgroup.max.descendants", "cpu.weight", "cpu.weight.nice", "cpu.max",
		"cpu.idle", "cpuset.cpus", "cgroup.controllers",
	};
	char before[10][256], after[256], cg[256], path[512], mine[300];
	char *list0 = nt_cg_listing();

	CHECK(nt_read_file("/proc/self/cgroup", cg, sizeof(cg)) > 0, "/proc/self/cgroup");
	cg[strcspn(cg, "\n")] = 0;
	/* "0::/sg-test" */
	const char *rel = strchr(cg, '/');
	snprintf(mine, sizeof(mine), "/sys/fs/cgroup%s", rel ? rel : "");
	for (int i = 0; i < 10; i++) {
		snprintf(path, sizeof(path), "%s/%s", mine, files[i]);
		if (nt_read_file(path, before[i], sizeof(before[i])) < 0)
			before[i][0] = 0;
	}

	struct nt_agent a, b, c;
	CHECK(nt_agent_start(&a, 1) == 0, "rgroup a");
	int sb_err = nt_agent_start_in(&a, &b, 1);
	int sc_err = nt_agent_start_in(&b, &c, 0);
	CHECK(sb_err == 0 && sc_err == 0, "b nested in a, c joins b");
	CHECK(nt_setprio(a.tid, 7) == 0 && nt_setprio(b.tid, -7) == 0, "nice values");

	char *list1 = nt_cg_listing();
	CHECK(!strcmp(list0, list1), "no new directory in cgroupfs");
	for (int i = 0; i < 10; i++) {
		snprintf(path, sizeof(path), "%s/%s", mine, files[i]);
		if (nt_read_file(path, after, sizeof(after)) < 0)
			after[0] = 0;
		CHECK(!strcmp(before[i], after), "%s unchanged: \"%s\" -> \"%s\"", files[i],
		      before[i], after);
	}
	/* every member is a thread of the process's own cgroup */
	pid_t tids[3] = { a.tid, b.tid, c.tid };
	char threads[4096];
	snprintf(path, sizeof(path), "%s/cgroup.threads", mine);
	CHECK(nt_read_file(path, threads, sizeof(threads)) > 0, "cgroup.threads");
	for (int i = 0; i < 3; i++) {
		char want[32], tcg[256];
		snprintf(want, sizeof(want), "\n%d\n", tids[i]);
		char *p = malloc(strlen(threads) + 2);
		sprintf(p, "\n%s", threads);
		CHECK(strstr(p, want), "thread %d listed in %s/cgroup.threads", tids[i], rel);
		free(p);
		snprintf(path, sizeof(path), "/proc/self/task/%d/cgroup", tids[i]);
		CHECK(nt_read_file(path, tcg, sizeof(tcg)) > 0 && !strncmp(tcg, cg, strlen(cg)),
		      "thread %d: %s shows the sgroup", tids[i], path);
	}
	nt_agent_stop(&c);
	nt_agent_stop(&b);
	nt_agent_stop(&a);
	free(list0);
	free(list1);
}

/* --- the scheduler's debug file ----------------------------------------------- */

static void sched_debug_path(void)
{
	static char buf[1 << 20];
	struct nt_agent a, b;

	if (nt_sched_debug(buf, sizeof(buf)) < 0) {
		rgt_skip_case("no /sys/kernel/debug/sched/debug (CONFIG_SCHED_DEBUG)");
		return;
	}
	CHECK(nt_agent_start(&a, 1) == 0, "rgroup a");
	CHECK(nt_agent_start_in(&a, &b, 1) == 0, "b nested in a");
	struct nt_spinners sp = { .n = 2 };
	CHECK(nt_agent_run(&b, nt_spinners_job, &sp) == 0, "spinners in b");
	nt_sleep(0.3);

	char cg[256], want[300];
	nt_read_file("/proc/self/cgroup", cg, sizeof(cg));
	cg[strcspn(cg, "\n")] = 0;
	/* the cgroup's path, then rgroup-TGID.ID per level */
	snprintf(want, sizeof(want), "%s/rgroup-%d.%" PRIu64 "/rgroup-%d.%" PRIu64,
		 strchr(cg, '/'), (int)getpid(), nt_rg_id(a.tid), (int)getpid(), nt_rg_id(b.tid));
	int n = nt_sched_debug(buf, sizeof(buf));
	CHECK(n > 0, "read the debug file");
	char *hit = n > 0 ? strstr(buf, want) : NULL;
	fprintf(stderr, "  looking for %s: %s\n", want, hit ? "found" : "missing");
	if (hit) {
		char *l = hit;
		while (l > buf && l[-1] != '\n')
			l--;
		fprintf(stderr, "  %.*s\n", (int)strcspn(l, "\n"), l);
	}
	CHECK(hit, "the nested rgroup's runqueues are named by their path");
	nt_spinners_stop(&sp);
	nt_agent_stop(&b);
	nt_agent_stop(&a);
}

static const struct rgt_case cases[] = {
	{ "rule7_fork", rule7_fork },
	{ "rule7_exec", rule7_exec },
	{ "rule3_destruction", rule3_destruction },
	{ "proc_file", proc_file },
	{ "rule9_cgroupfs", rule9_cgroupfs },
	{ "sched_debug_path", sched_debug_path },
};

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--exec-probe"))
		return exec_probe(atoi(argv[2]));
	return nt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv, 0);
}
