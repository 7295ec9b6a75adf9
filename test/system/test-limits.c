/* SPDX-License-Identifier: MIT */
/*
 * test-limits.c - rule 10: a group's CPUs and its CPU cap
 * (rgroup_set_cpus, rgroup_set_cap), on the backend RGROUP_BACKEND names:
 * the inheritance rules and errors of the API, threads of a pinned group
 * never seen on another CPU (/proc/self/task/TID/stat field 39, sampled),
 * the measured CPU use of a capped group within 5% of its cap, and what
 * fork, exec and the end of a group leave behind. cgroup1 here (cpuset
 * directories in the v1 cpuset hierarchy), cgroup2 in the VM (threaded
 * cpuset, cpu.max), the governor (affinity, its own periods), the native
 * kernel (affinity; the cap on the group's own task group,
 * PR_RGROUP_SET_CAP).
 */
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "judge.h"
#include "native-uapi.h"
#include "sgroup.h"

static char sg[PATH_MAX];
static int ncpus;
static cpu_set_t proc_set;          /* what the process may use */

static int cpu_of(pid_t tid)
{
	char path[64], buf[1024];
	const char *p;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (rgt_read(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')))
		return -1;
	/* Field 39, "processor": the CPU it last ran on. */
	for (p++; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	return field == 39 ? atoi(p) : -1;
}

static cpu_set_t one_cpu(int c)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(c, &s);
	return s;
}

/* The n-th CPU the process may use. */
static int nth_cpu(int n)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &proc_set) && n-- == 0)
			return c;
	return -1;
}

static int same_set(pid_t tid, const cpu_set_t *want)
{
	cpu_set_t got;

	return sched_getaffinity(tid, sizeof(got), &got) == 0 && CPU_EQUAL(&got, want);
}

/* ---- The cpuset side on cgroup v1 ---------------------------------------- */

static char cs_home[PATH_MAX];      /* this process's cpuset directory, v1 */

static void cs_init(void)
{
	static char text[1 << 16];
	struct rgroup__mount m;
	char path[PATH_MAX];

	if (scn_sg.v2 || scn_sg.gov || rgt_read("/proc/self/mountinfo", text, sizeof(text)) < 0 ||
	    rgroup__parse_mountinfo(text, "cpuset", &m) < 0 ||
	    rgt_read("/proc/self/cgroup", text, sizeof(text)) < 0 ||
	    rgroup__parse_proc_cgroup(text, "cpuset", path, sizeof(path)) < 0)
		return;
	snprintf(cs_home, sizeof(cs_home), "%s%s", m.point, strcmp(path, "/") ? path : "");
}

/* This process's cpuset directories (rgroup-<pid>-...) in cs_home; with
 * remove, rmdir them (the test's own leftovers, on failure). */
static int cs_dirs(int remove)
{
	char sub[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;
	int n = 0;

	if (!*cs_home || !(d = opendir(cs_home)))
		return 0;
	while ((e = readdir(d))) {
		pid_t p;
		uint64_t start, id;

		if (rgroup__parse_dirname(e->d_name, &p, &start, &id) < 0 || p != getpid())
			continue;
		n++;
		snprintf(sub, sizeof(sub), "%s/%s", cs_home, e->d_name);
		if (remove)
			rmdir(sub);
	}
	closedir(d);
	return n;
}

static void cs_cleanup(void)
{
	if (getpid() == scn_sg.owner && cs_dirs(1))
		fprintf(stderr, "  cleanup: removed cpuset directories left behind\n");
}

/* The CPUs the kernel's cpuset gives thread tid: v1 its cpuset
 * directory's cpuset.cpus, v2 its group's cpuset.cpus.effective. */
static int kernel_cpus(pid_t tid, char *out, size_t len)
{
	static char text[8192];
	char file[64], path[PATH_MAX], dir[PATH_MAX * 2];
	int r;

	snprintf(file, sizeof(file), "/proc/self/task/%d/cgroup", (int)tid);
	if (rgt_read(file, text, sizeof(text)) < 0)
		return -1;
	if (scn_sg.v2) {
		/* A group whose parent does not hand cpuset down has no files
		 * of its own: its nearest ancestor's apply. */
		if (rgroup__parse_proc_cgroup(text, NULL, path, sizeof(path)) < 0)
			return -1;
		for (;;) {
			char *slash;
			scn_cg_dir(path, dir, sizeof(dir));
			strncat(dir, "/cpuset.cpus.effective", sizeof(dir) - strlen(dir) - 1);
			if (rgt_exists(dir) || !(slash = strrchr(path, '/')) || slash == path)
				break;
			*slash = '\0';
		}
	} else {
		const char *slash;
		if (rgroup__parse_proc_cgroup(text, "cpuset", path, sizeof(path)) < 0)
			return -1;
		slash = strrchr(path, '/');
		snprintf(dir, sizeof(dir), "%s/%s/cpuset.cpus", cs_home, slash ? slash + 1 : path);
	}
	r = rgt_read(dir, out, len);
	out[strcspn(out, "\n")] = '\0';
	return r;
}

/* ---- The API's rules -------------------------------------------------------- */

static void api_rules(void)
{
	struct rgt_worker a = { 0 }, kids[1] = { { .new_group = 1 } };
	cpu_set_t s, got;
	uint64_t q, p;
	int c0 = nth_cpu(0), c1 = nth_cpu(1);

	CPU_ZERO(&s);
	CHECK(rgroup_set_cpus(0, sizeof(s), &s) == -EINVAL, "caller in no rgroup: EINVAL");
	CHECK(rgroup_set_cap(0, 50000, 100000) == -EINVAL, "caller in no rgroup: EINVAL");
	CHECK(rgroup_get_cap(0, &q, &p) == -EINVAL, "caller in no rgroup: EINVAL");
	CHECK(rgroup_set_cpus(1, sizeof(proc_set), &proc_set) == -ESRCH, "pid 1: ESRCH");
	CHECK(rgroup_set_cpus(-1, sizeof(proc_set), &proc_set) == -EINVAL, "tid -1: EINVAL");

	a.nkids = 1;
	a.kids = kids;
	CHECK(rgt_worker_start(&a, RGROUP_NEW) == 0, "start the group");
	CHECK(rgroup_set_cpus(a.tid, sizeof(s), &s) == -EINVAL, "empty set: EINVAL");
	CHECK(rgroup_set_cpus(a.tid, 0, &proc_set) == -EINVAL, "setsize 0: EINVAL");
	if (!CPU_ISSET(CPU_SETSIZE - 1, &proc_set)) {
		s = one_cpu(CPU_SETSIZE - 1);
		CHECK(rgroup_set_cpus(a.tid, sizeof(s), &s) == -EPERM,
		      "a CPU the process may not use: EPERM");
	}
	CHECK(rgroup_get_cpus(a.tid, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &proc_set),
	      "a group without a set runs on the process's CPUs");
	CHECK(rgroup_set_cpus(a.tid, sizeof(proc_set), &proc_set) == 0, "all of them: ok");
	if (c1 >= 0) {
		cpu_set_t s0 = one_cpu(c0), s1 = one_cpu(c1);
		CHECK(rgroup_set_cpus(kids[0].tid, sizeof(s0), &s0) == 0, "child narrows: ok");
		CHECK(rgroup_set_cpus(a.tid, sizeof(s1), &s1) == -EBUSY,
		      "parent below the child's own set: EBUSY");
		CHECK(rgroup_get_cpus(a.tid, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &proc_set),
		      "the parent is unchanged after EBUSY");
		int r = rgroup_set_cpus(kids[0].tid, 0, NULL);
		CHECK(r == 0, "child lifts its set: %s", strerror(-r));
		r = rgroup_set_cpus(a.tid, sizeof(s1), &s1);
		CHECK(r == 0, "now the parent narrows: %s", strerror(-r));
		CHECK(rgroup_set_cpus(kids[0].tid, sizeof(s0), &s0) == -EPERM,
		      "child outside its parent's set: EPERM");
		CHECK(rgroup_get_cpus(kids[0].tid, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &s1),
		      "the child runs on its parent's set");
		CHECK(rgroup_get_cpus(kids[0].tid, 0, &got) == -EINVAL, "get with setsize 0: EINVAL");
	} else {
		rgt_skip_case("one CPU: the narrowing cases need two");
	}

	CHECK(rgroup_set_cap(a.tid, 500, 100000) == -EINVAL, "quota below 1 ms: EINVAL");
	CHECK(rgroup_set_cap(a.tid, 2000, 500) == -EINVAL, "period below 1 ms: EINVAL");
	CHECK(rgroup_set_cap(a.tid, 2000, 2000000) == -EINVAL, "period above 1 s: EINVAL");
	CHECK(rgroup_set_cap(a.tid, 100000ull * 2000, 100000) == -EINVAL, "more than 1024 CPUs: EINVAL");
	CHECK(rgroup_set_cap(a.tid, 50000, 0) == 0, "50%% (default period): ok");
	CHECK(rgroup_get_cap(a.tid, &q, &p) == 0 && q == 50000 && p == 100000, "read back %llu/%llu",
	      (unsigned long long)q, (unsigned long long)p);
	CHECK(rgroup_set_cap(kids[0].tid, 60000, 100000) == -EPERM, "child above its parent: EPERM");
	CHECK(rgroup_set_cap(kids[0].tid, 20000, 50000) == 0, "child at 40%%: ok");
	CHECK(rgroup_set_cap(a.tid, 30000, 100000) == -EBUSY, "parent below the child: EBUSY");
	CHECK(rgroup_get_cap(a.tid, &q, &p) == 0 && q == 50000 && p == 100000,
	      "the parent is unchanged after EBUSY");
	CHECK(rgroup_set_cap(kids[0].tid, 0, 0) == 0 && rgroup_get_cap(kids[0].tid, &q, &p) == 0 &&
	      q == 0 && p == 0, "the child lifts its cap");
	CHECK(rgroup_set_cap(a.tid, 0, 0) == 0, "the parent lifts its cap");
	rgt_worker_stop(&a);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
	CHECK(cs_dirs(0) == 0, "no cpuset directory left behind");
}

/* ---- A thread that does its job when told ------------------------------------ */

struct gated {
	pthread_t thread;
	pid_t tid;
	volatile int ready, go, stop, done;
	void (*job)(struct gated *);
	int fd;
	struct rgt_worker kids[2];
};

static void *gated_main(void *p)
{
	struct gated *g = p;

	g->tid = scn_gettid();
	__atomic_store_n(&g->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&g->go, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	g->job(g);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&g->stop, __ATOMIC_RELAXED))
		; /* busy, like the others */
	return NULL;
}

static int gated_start(struct gated *g)
{
	int r = rgroup_thread_create(&g->thread, NULL, RGROUP_NEW, gated_main, g);

	while (!r && !__atomic_load_n(&g->ready, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	return r;
}

static void gated_run(struct gated *g)
{
	__atomic_store_n(&g->go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&g->done, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
}

static void gated_stop(struct gated *g)
{
	for (int i = 0; i < 2; i++)
		if (g->kids[i].tid)
			rgt_worker_stop(&g->kids[i]);
	__atomic_store_n(&g->stop, 1, __ATOMIC_RELAXED);
	pthread_join(g->thread, NULL);
}

/* Two busy threads born after the pin: one in the group, one in a nested
 * group of its own that inherits the set. */
static void spawn_two(struct gated *g)
{
	g->kids[0].spin = g->kids[1].spin = 1;
	if (rgt_worker_start(&g->kids[0], 0) != 0 || rgt_worker_start(&g->kids[1], RGROUP_NEW) != 0)
		g->fd = -1;
}

/* ---- Pinned threads stay on their CPUs --------------------------------------- */

static void cpus_pinned(void)
{
	struct gated p = { .job = spawn_two };
	struct rgt_worker q = { .spin = 1 };
	int c0 = nth_cpu(0), c1 = nth_cpu(1), bad = 0, samples = 0;
	cpu_set_t sp, sq;
	char list[256];
	double end;

	if (c1 < 0) {
		rgt_skip_case("one CPU: nothing to pin away from");
		return;
	}
	/* P (itself, a thread born in it and a nested group) on the second
	 * CPU, Q on the first: all busy, so the scheduler would move them. */
	sp = one_cpu(c1);
	sq = one_cpu(c0);
	CHECK(gated_start(&p) == 0, "start P");
	CHECK(rgt_worker_start(&q, RGROUP_NEW) == 0, "start Q");
	CHECK(rgroup_set_cpus(p.tid, sizeof(sp), &sp) == 0, "pin P to CPU %d", c1);
	CHECK(rgroup_set_cpus(q.tid, sizeof(sq), &sq) == 0, "pin Q to CPU %d", c0);
	gated_run(&p);   /* rule 1: born after the pin, pinned all the same */
	CHECK(p.fd == 0, "P's threads started");
	pid_t tids[4] = { p.tid, p.kids[0].tid, p.kids[1].tid, q.tid };
	for (int i = 0; i < 4; i++) {
		char expect[16];

		CHECK(same_set(tids[i], i < 3 ? &sp : &sq), "thread %d: its affinity is its group's",
		      (int)tids[i]);
		if (!rgt_dirs())
			continue;   /* affinity alone: no kernel cpuset to read */
		snprintf(expect, sizeof(expect), "%d", i < 3 ? c1 : c0);
		list[0] = '\0';
		CHECK(kernel_cpus(tids[i], list, sizeof(list)) >= 0 && strcmp(list, expect) == 0,
		      "thread %d: the kernel's cpuset says '%s', want %s", (int)tids[i], list, expect);
	}
	/* At least 2 s and 400 samples; a slow machine (a debug kernel under
	 * TCG beside other load) samples longer, up to 30 s, not less. */
	double start = scn_now();
	end = start + 2.0;
	while (scn_now() < end || (samples <= 400 && scn_now() < start + 30.0)) {
		for (int i = 0; i < 4; i++) {
			if (cpu_of(tids[i]) != (i < 3 ? c1 : c0))
				bad++;
			samples++;
		}
		scn_sleep(0.0005);
	}
	fprintf(stderr, "  %d samples of field 39 in %.1f s, %d on another CPU\n", samples,
		scn_now() - start, bad);
	CHECK(bad == 0, "a pinned thread was seen on another CPU %d times", bad);
	CHECK(samples > 400, "only %d samples", samples);
	/* Lifted: the process's CPUs again, for the nested group too. */
	int r = rgroup_set_cpus(p.tid, 0, NULL);
	CHECK(r == 0, "lift P's set: %s", strerror(-r));
	for (int i = 0; i < 3; i++)
		CHECK(same_set(tids[i], &proc_set), "thread %d: the process's CPUs after the lift",
		      (int)tids[i]);
	gated_stop(&p);
	rgt_worker_stop(&q);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
	CHECK(cs_dirs(0) == 0, "no cpuset directory left behind (rule 3)");
}

/* ---- Rule 7: a child process starts outside every group, CPUs included ---- */

static void fork_job(struct gated *g)
{
	pid_t pid = fork();

	if (pid == 0) {
		cpu_set_t s;
		char path[PATH_MAX] = "-", text[8192];
		int ok = sched_getaffinity(0, sizeof(s), &s) == 0 && CPU_EQUAL(&s, &proc_set);
		if (*cs_home && rgt_read("/proc/self/cgroup", text, sizeof(text)) >= 0)
			rgroup__parse_proc_cgroup(text, "cpuset", path, sizeof(path));
		dprintf(g->fd, "%d %s\n", ok, path);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void rule7_fork_cpus(void)
{
	struct gated f = { .job = fork_job };
	char buf[PATH_MAX + 16] = "", home[PATH_MAX] = "-", path[PATH_MAX] = "", text[8192];
	int fds[2], ok = -1;
	cpu_set_t s;
	ssize_t n;

	if (nth_cpu(1) < 0) {
		rgt_skip_case("one CPU: a pinned child would look like any other");
		return;
	}
	CHECK(pipe(fds) == 0, "pipe");
	f.fd = fds[1];
	CHECK(gated_start(&f) == 0, "start a group");
	s = one_cpu(nth_cpu(1));
	CHECK(rgroup_set_cpus(f.tid, sizeof(s), &s) == 0, "pin it");
	gated_run(&f);   /* its thread forks */
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	buf[n > 0 ? n : 0] = '\0';
	sscanf(buf, "%d %4095s", &ok, path);
	CHECK(ok == 1, "the child's affinity is the process's, not the group's (got '%s')", buf);
	if (*cs_home && rgt_read("/proc/self/cgroup", text, sizeof(text)) >= 0)
		rgroup__parse_proc_cgroup(text, "cpuset", home, sizeof(home));
	CHECK(strcmp(path, home) == 0, "the child is in the process's cpuset group %s (got %s)", home,
	      path);
	gated_stop(&f);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
}

/*
 * Exec from a thread in a group with CPUs: the program starts outside
 * every group, so with the process's CPUs. The test runs itself again in
 * a child (RGT_LIMITS_EXEC=fd), which pins a new group to one CPU and
 * execs itself from that group's thread (RGT_LIMITS_REPORT=fd:list); the
 * program it becomes writes "1" to fd if its affinity is the list.
 */
static void cpu_list(const cpu_set_t *set, char *out, size_t len)
{
	size_t k = 0;

	out[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && k + 8 < len; c++)
		if (CPU_ISSET(c, set))
			k += (size_t)snprintf(out + k, len - k, "%s%d", k ? "," : "", c);
}

static int exec_report(const char *arg)
{
	char *end, list[1024];
	int fd = (int)strtol(arg, &end, 10);
	cpu_set_t s;

	if (*end != ':' || sched_getaffinity(0, sizeof(s), &s) < 0)
		return 3;
	cpu_list(&s, list, sizeof(list));
	dprintf(fd, "%d %s\n", strcmp(list, end + 1) == 0, list);
	return 0;
}

struct exec_arg { int fd; char list[1024]; };

static void *exec_from_group(void *p)
{
	struct exec_arg *a = p;
	cpu_set_t one = one_cpu(nth_cpu(1));
	char env[1100];

	if (rgroup_set_cpus(0, sizeof(one), &one) < 0)
		_exit(4);
	snprintf(env, sizeof(env), "%d:%s", a->fd, a->list);
	setenv("RGT_LIMITS_REPORT", env, 1);
	unsetenv("RGT_LIMITS_EXEC");
	execl("/proc/self/exe", "test-limits", (char *)NULL);
	_exit(5);
}

static int exec_child(const char *arg)
{
	struct exec_arg a = { .fd = atoi(arg) };
	cpu_set_t s;
	pthread_t t;

	if (sched_getaffinity(0, sizeof(s), &s) < 0)
		return 3;
	proc_set = s;   /* nth_cpu()'s */
	cpu_list(&s, a.list, sizeof(a.list));
	if (rgroup_thread_create(&t, NULL, RGROUP_NEW, exec_from_group, &a) != 0)
		return 6;
	pthread_join(t, NULL);   /* never returns: the exec replaces us */
	return 7;
}

static void rule7_exec_cpus(void)
{
	char buf[1200] = "", fdtext[16];
	int fds[2], status = -1, ok = -1;
	ssize_t n;

	if (nth_cpu(1) < 0) {
		rgt_skip_case("one CPU: a pinned program would look like any other");
		return;
	}
	CHECK(pipe(fds) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		snprintf(fdtext, sizeof(fdtext), "%d", fds[1]);
		setenv("RGT_LIMITS_EXEC", fdtext, 1);
		execl("/proc/self/exe", "test-limits", (char *)NULL);
		_exit(5);
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	buf[n > 0 ? n : 0] = '\0';
	waitpid(pid, &status, 0);
	sscanf(buf, "%d", &ok);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's status %#x", status);
	CHECK(ok == 1, "the exec'd program has the process's CPUs, not the group's (got '%s')", buf);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
}

/* ---- Caps measured ------------------------------------------------------------ */

/* Other processes on a shared machine must not keep the capped threads
 * below their cap, or a cap could not be told from a busy machine: the
 * test's own system group gets the most shares (cgroup1, in main()); on
 * the other backends, as root, the test takes a session of its own and
 * raises its autogroup (the kernel weighs sessions against each other
 * with sched_autogroup, whatever a thread's nice). Not the threads' own
 * nice: the governor's thread, at nice 0, must still get to run. */
static void boost_session(void)
{
	int fd;

	if (scn_sg.v2 || !scn_sg.gov || geteuid() != 0)
		return;
	setsid();   /* fails for a group leader: then its session it is */
	fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "-15", 3) < 0)
			fprintf(stderr, "  (cannot raise the autogroup: %s)\n", strerror(errno));
		close(fd);
	}
}

static double used(const pid_t *tids, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += scn_thread_cpu(tids[i]);
	return s;
}

/* The threads' CPU time, for the one rule's rate mode */
struct cap_ctx {
	const pid_t *tids;
	int n;
};

static int cap_read(void *ctx, double *cpu, double *base)
{
	struct cap_ctx *c = ctx;

	*base = 0;
	cpu[0] = used(c->tids, c->n);
	return 0;
}

/* Judge the CPUs the threads use against a cap, by the one rule
 * (test/lib/judge.h), after a warm-up. */
static void judge_cap(const char *what, const pid_t *tids, int n, double cap)
{
	struct cap_ctx c = { tids, n };
	struct rgt_judge j = {
		.what = what, .n = 1, .label = { what }, .fixed = { cap }, .read = cap_read,
		.ctx = &c, .rate = 1, .min_cpus = 0.02,
	};

	scn_sleep(0.5);
	rgt_judge(&j, NULL);
}

/* CPUs used by the threads over `secs`, after a warm-up. */
static double measure(const pid_t *tids, int n, double secs)
{
	double t0, u0;

	scn_sleep(0.5);
	t0 = scn_now();
	u0 = used(tids, n);
	scn_sleep(secs);
	return (used(tids, n) - u0) / (scn_now() - t0);
}

static void cap_measured(void)
{
	struct rgt_worker a = { .spin = 1 }, kids[2] = { { .spin = 1 }, { .spin = 1, .new_group = 1 } };
	pid_t all[3], child[1];
	double got, free_run;

	a.nkids = 2;
	a.kids = kids;
	CHECK(rgt_worker_start(&a, RGROUP_NEW) == 0, "start the group");
	all[0] = a.tid, all[1] = kids[0].tid, all[2] = kids[1].tid;
	child[0] = kids[1].tid;
	/* The caps below mean something only if the group could use more. */
	free_run = measure(all, 3, 1.0);
	fprintf(stderr, "  uncapped: %.2f CPUs\n", free_run);
	if (free_run < 0.75) {
		rgt_skip_case("the machine gives the group only %.2f CPUs uncapped: a cap of 60%% could not be told from that",
			      free_run);
		rgt_worker_stop(&a);
		return;
	}

	/* Three busy threads (two in the group, one in a nested group) under
	 * one cap of half a CPU. */
	CHECK(rgroup_set_cap(a.tid, 50000, 100000) == 0, "cap 50%%");
	judge_cap("group capped at 50%", all, 3, 0.50);
	/* Changed while it runs, nested groups included. */
	CHECK(rgroup_set_cap(a.tid, 30000, 100000) == 0, "cap 30%%");
	judge_cap("group capped at 30%", all, 3, 0.30);
	if (scn_sg.native || scn_sg.gov) {
		/* rgroup_info says how long the cap held the group back: the
		 * kernel's count on native, the governor's pauses */
		struct rgroup_info info = { .sz = sizeof(info) };
		rgroup_id_t id = 0;

		CHECK(rgroup_of(a.tid, &id) == 0 && rgroup_info(id, &info) == 0 &&
		      info.throttled_ns > 100000000ull,
		      "rgroup_info: held back %.3f s at its cap", (double)info.throttled_ns / 1e9);
	}
	/* A nested cap with a shorter period, under a parent cap that does not
	 * bind (a parent throttled in its own period takes the nested group's
	 * time with it: then the nested group gets less than its cap). */
	CHECK(rgroup_set_cap(a.tid, 200000, 100000) == 0, "cap 200%%");
	CHECK(rgroup_set_cap(kids[1].tid, 5000, 50000) == 0, "nested cap 10%%");
	judge_cap("nested group capped at 10%", child, 1, 0.10);
	/* Lifted: more than the cap again (the threads are busy). */
	CHECK(rgroup_set_cap(kids[1].tid, 0, 0) == 0 && rgroup_set_cap(a.tid, 0, 0) == 0, "lift");
	got = measure(all, 3, 1.0);
	fprintf(stderr, "  lifted: %.2f CPUs\n", got);
	CHECK(got > 0.6, "lifting the cap lets the group run (%.2f CPUs)", got);
	rgt_worker_stop(&a);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
}

/* ---- Rule 8: the settings come along when the process is moved ------------- */

/* The native kernel moves the group itself, invisible in cgroupfs: the
 * thread's cgroup is B, and the kernel (asked directly) still has the cap. */
static void follow_native(struct rgt_worker *w, const char *sgb, const cpu_set_t *s)
{
	struct pr_rgroup_cap c = { 0, 0 };
	char got[PATH_MAX] = "";

	CHECK(scn_thread_cgroup(w->tid, got, sizeof(got)) == 0 && strcmp(got, sgb) == 0,
	      "the thread is in B itself (%s)", got);
	CHECK(same_set(w->tid, s), "its affinity is still its group's");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_CAP, (unsigned long)w->tid, (unsigned long)&c,
		    sizeof(c)) == 0 && c.quota_us == 30000 && c.period_us == 100000,
	      "the kernel's cap in B: %llu/%llu (%s)", (unsigned long long)c.quota_us,
	      (unsigned long long)c.period_us, strerror(errno));
	rgt_worker_stop(w);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
}

static void rule8_settings_follow(void)
{
	struct rgt_worker w = { .spin = 1 };
	char sgb[PATH_MAX], got[PATH_MAX] = "", list[256] = "", want[16], cap[PATH_MAX + 64], buf[64] = "";
	int c1 = nth_cpu(nth_cpu(1) >= 0 ? 1 : 0);
	cpu_set_t s = one_cpu(c1);
	double t0;

	if (!rgt_kernel()) {
		/* Nothing to follow: the governor's groups live in the process
		 * wherever the administrator moves it (rule 8 holds trivially). */
		fprintf(stderr, "  the governor has no kernel groups to rebuild\n");
		return;
	}
	if (scn_sg.delegated) {
		rgt_skip_case("a delegated group: the test cannot move the process");
		return;
	}
	CHECK(rgt_worker_start(&w, RGROUP_NEW) == 0, "start a group");
	CHECK(rgroup_set_cpus(w.tid, sizeof(s), &s) == 0, "pin it to CPU %d", c1);
	CHECK(rgroup_set_cap(w.tid, 30000, 100000) == 0, "cap it at 30%%");
	rgt_sg_make("b", sgb, sizeof(sgb));
	CHECK(scn_sg_move(sgb) == 0, "the administrator moves the process to %s", sgb);
	if (scn_sg.native) {
		follow_native(&w, sgb, &s);
		return;
	}
	for (t0 = scn_now(); scn_now() - t0 < 3.0; scn_sleep(0.01))
		if (scn_thread_cgroup(w.tid, got, sizeof(got)) == 0 &&
		    strncmp(got, sgb, strlen(sgb)) == 0 && got[strlen(sgb)] == '/')
			break;
	fprintf(stderr, "  rebuilt in %s after %.2f s\n", got, scn_now() - t0);
	CHECK(strncmp(got, sgb, strlen(sgb)) == 0, "the group is rebuilt in B (%s)", got);
	snprintf(want, sizeof(want), "%d", c1);
	for (t0 = scn_now(); scn_now() - t0 < 1.0; scn_sleep(0.01))
		if (kernel_cpus(w.tid, list, sizeof(list)) >= 0 && strcmp(list, want) == 0)
			break;
	CHECK(strcmp(list, want) == 0, "its cpuset is still CPU %s (got '%s')", want, list);
	CHECK(same_set(w.tid, &s), "its affinity too");
	scn_cg_dir(got, cap, sizeof(cap));
	strcat(cap, scn_sg.v2 ? "/cpu.max" : "/cpu.cfs_quota_us");
	rgt_read(cap, buf, sizeof(buf));
	buf[strcspn(buf, "\n")] = '\0';
	CHECK(strcmp(buf, scn_sg.v2 ? "30000 100000" : "30000") == 0, "its cap in B: '%s'", buf);
	rgt_worker_stop(&w);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed");
	CHECK(cs_dirs(0) == 0, "no cpuset directory left behind");
}

static const struct rgt_case cases[] = {
	{ "api_rules", api_rules },
	{ "cpus_pinned", cpus_pinned },
	{ "rule7_fork_cpus", rule7_fork_cpus },
	{ "rule7_exec_cpus", rule7_exec_cpus },
	{ "cap_measured", cap_measured },
	{ "rule8_settings_follow", rule8_settings_follow },
};

int main(int argc, char **argv)
{
	const char *e;

	if ((e = getenv("RGT_LIMITS_REPORT")))
		return exec_report(e);
	if ((e = getenv("RGT_LIMITS_EXEC")))
		return exec_child(e);
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	if (sched_getaffinity(0, sizeof(proc_set), &proc_set) < 0)
		rgt_skip_all("sched_getaffinity: %s", strerror(errno));
	ncpus = CPU_COUNT(&proc_set);
	boost_session();
	cs_init();
	atexit(cs_cleanup);
	if (!scn_sg.v2 && !scn_sg.gov) {
		char dir[PATH_MAX + 32];
		/* The most CPU the test's system group can get against the
		 * machine's other load (cgroup v1 shares). */
		scn_cg_dir(sg, dir, sizeof(dir));
		strcat(dir, "/cpu.shares");
		scn_write(dir, "262144");
	}
	fprintf(stderr, "backend %s, system group %s, %d CPUs%s%s\n", rgroup_backend(), sg, ncpus,
		*cs_home ? ", cpuset group " : "", cs_home);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
