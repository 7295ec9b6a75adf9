/* SPDX-License-Identifier: MIT */
/*
 * test-run.c - `rgroup run` and its preload against a program that knows
 * nothing of rgroups (namer.c), on the backend RGROUP_BACKEND names:
 * placement by every way of naming a thread (itself, prctl, by another
 * thread before or after it started), rule 2 (a rename moves nothing),
 * rule 1 (a thread made by a thread in a group is born there), threads
 * that match nothing stay, nested groups and their settings, fork and
 * exec (rule 7, and the rules kept or not for children), the governor's
 * signal, `rgroup tree`, and every error the command promises.
 *
 * Environment (the build sets it): RGROUP_TEST_RGROUP the rgroup command,
 * RGROUP_TEST_NAMER namer, RGROUP_TEST_STATIC a statically linked program.
 */
#include <glob.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "control.h"
#include "locate.h"
#include "run-spec.h"
#include "run-util.h"
#include "sgroup.h"

static const char *rgroup_cmd, *namer;
static char sg[PATH_MAX];

#define MAXT 64

/* What namer reported: label and tid of each thread. */
struct report {
	int n;
	char label[MAXT][24];
	pid_t tid[MAXT];
	char text[8192];
};

static void parse_report(struct report *r)
{
	const char *p = r->text;

	r->n = 0;
	while ((p = strstr(p, "T ")) && r->n < MAXT) {
		int tid;
		if ((p == r->text || p[-1] == '\n') &&
		    sscanf(p, "T %23s %d", r->label[r->n], &tid) == 2)
			r->tid[r->n++] = tid;
		p += 2;
	}
}

static pid_t tid_of(const struct report *r, const char *label)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->label[i], label) == 0)
			return r->tid[i];
	return 0;
}

static int where(pid_t pid, pid_t tid, char *out, size_t len)
{
	return rt_where(pid, tid, scn_sg.gov, scn_sg.v2 ? NULL : "cpu", sg, out, len);
}

/* Start `rgroup run ARGS -- namer SCENARIO...` (args NULL-terminated,
 * then the namer's); read up to READY. */
static int failures_at_start;

static int start_run(struct rt_proc *p, struct report *r, const char *const *args,
		     const char *const *prog, char *const *env)
{
	char *argv[40];
	int n = 0;

	argv[n++] = (char *)rgroup_cmd;
	argv[n++] = (char *)"run";
	while (*args)
		argv[n++] = (char *)*args++;
	argv[n++] = (char *)"--";
	argv[n++] = (char *)namer;
	while (*prog)
		argv[n++] = (char *)*prog++;
	argv[n] = NULL;
	memset(r, 0, sizeof(*r));
	failures_at_start = rgt_failures;
	if (rt_spawn(p, argv, env) < 0)
		return -1;
	if (rt_until(p, "READY", r->text, sizeof(r->text), 20.0) < 0)
		return -1;
	parse_report(r);
	return 0;
}

static void finish(struct rt_proc *p)
{
	char err[4096] = "";
	int st = rt_finish(p, 5.0);

	rt_stderr(p, err, sizeof(err));
	CHECK(st == 0, "the program exits 0 (got %d)", st);
	if (rgt_failures > failures_at_start)
		fprintf(stderr, "  the program's stderr: %s\n", err);
	close(p->err);
}

/* What the kernel says of a thread, for a failure's message: its name
 * and its cgroup lines. */
static const char *kernel_says(pid_t pid, pid_t tid)
{
	static char out[1024];
	char file[64], comm[32] = "?", cg[900] = "?";

	snprintf(file, sizeof(file), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	rgt_read(file, comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(file, sizeof(file), "/proc/%d/task/%d/cgroup", (int)pid, (int)tid);
	rgt_read(file, cg, sizeof(cg));
	snprintf(out, sizeof(out), "thread %d '%s', cgroup %s", (int)tid, comm, cg);
	return out;
}

/* On the native kernel, the line of thread tid's group (up 0) or of its
 * parent (up 1, from /proc/PID/rgroups): 0, or -1. */
static int kernel_says_group(pid_t pid, pid_t tid, int up, struct rgroup__kgroup *g)
{
	static char text[1 << 16];
	char file[64];
	uint64_t want;

	snprintf(file, sizeof(file), "/proc/%d/task/%d/rgroup", (int)pid, (int)tid);
	if (rgt_read(file, text, sizeof(text)) < 0 || rgroup__parse_kgroup(text, g) < 0 || !g->id)
		return -1;
	if (!up)
		return 0;
	want = g->parent;
	snprintf(file, sizeof(file), "/proc/%d/rgroups", (int)pid);
	if (!want || rgt_read(file, text, sizeof(text)) < 0)
		return -1;
	return rgroup__find_kgroup_list(text, want, g) == 0 ? 0 : -1;
}

/* Wait until every listed thread is placed (the governor publishes its
 * state every 250 ms) or 3 s pass. */
static void settle(pid_t pid, const pid_t *tids, int n)
{
	char w[PATH_MAX];
	double end = rt_now() + 3.0;

	while (rt_now() < end) {
		int all = 1;
		for (int i = 0; i < n && all; i++)
			all = where(pid, tids[i], w, sizeof(w)) == 0 && w[0];
		if (all)
			return;
		rt_sleep(0.05);
	}
}

/* start_run(), then wait until thread `label` is placed: its tid, or 0
 * (said, and the program ended) when the program did not get ready. */
static pid_t start_placed(struct rt_proc *p, struct report *r, const char *const *args,
			  const char *const *prog, const char *label)
{
	pid_t tid;

	if (start_run(p, r, args, prog, NULL) < 0) {
		CHECK(0, "no READY");
		rt_finish(p, 2);
		return 0;
	}
	tid = tid_of(r, label);
	settle(p->pid, &tid, 1);
	return tid;
}

/* ---- Placement --------------------------------------------------------------- */

static void placement_by_name(void)
{
	static const char *const args[] = { "-g", "work=work-*", "-g", "bg=bg-*:nice=5", NULL };
	static const char *const prog[] = { "names", NULL };
	static const char *const in_work[] = { "self", "prctl", "renamed", "named-after", "maker", "kid" };
	static const char *const outside[] = { "other", "comm", "main" };
	struct rt_proc p;
	struct report r;
	pid_t want[MAXT];
	char w0[PATH_MAX] = "", w[PATH_MAX], b[PATH_MAX] = "";
	int n = 0, quick = 0;

	if (start_run(&p, &r, args, prog, NULL) < 0) {
		CHECK(0, "rgroup run -- namer names did not get READY:\n%s", r.text);
		rt_finish(&p, 2);
		return;
	}
	for (size_t i = 0; i < sizeof(in_work) / sizeof(in_work[0]); i++)
		want[n++] = tid_of(&r, in_work[i]);
	for (int i = 0; i < r.n; i++)
		if (strcmp(r.label[i], "quick") == 0 && n < MAXT)
			want[n++] = r.tid[i], quick++;
	want[n] = tid_of(&r, "bg");
	settle(p.pid, want, n + 1);
	CHECK(quick == 16, "16 threads named by their creator at once (got %d)", quick);
	where(p.pid, want[0], w0, sizeof(w0));
	CHECK(w0[0] != '\0', "'work-1' (named by itself) is in a group");
	for (int i = 0; i < n; i++) {
		CHECK(want[i] && where(p.pid, want[i], w, sizeof(w)) == 0 && strcmp(w, w0) == 0,
		      "thread %d (%s) shares the group of work-* ('%s'), is in '%s'", (int)want[i],
		      i < 6 ? in_work[i] : "quick", w0, w);
	}
	CHECK(where(p.pid, tid_of(&r, "bg"), b, sizeof(b)) == 0 && b[0] && strcmp(b, w0) != 0 &&
	      !strchr(b, '/'), "'bg-8' is in a top-level group of its own ('%s')", b);
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		pid_t t = tid_of(&r, outside[i]);
		CHECK(t && where(p.pid, t, w, sizeof(w)) == 0 && w[0] == '\0',
		      "'%s' (%d) stays in the sgroup (is in '%s')", outside[i], (int)t, w);
	}
	if (rgt_dirs() && b[0]) {
		char file[PATH_MAX * 2];
		snprintf(file, sizeof(file), "%s/%s", sg, b);
		CHECK(rgt_cg_weight(file) == rgroup_nice_to_weight(5), "bg has nice 5's weight (%lld)",
		      rgt_cg_weight(file));
	} else if (scn_sg.native) {
		struct rgroup__kgroup g = { 0 };
		CHECK(kernel_says_group(p.pid, tid_of(&r, "bg"), 0, &g) == 0 && g.nice == 5,
		      "the kernel has bg at nice 5 (%d)", g.nice);
	}
	finish(&p);
}

static void nested_settings(void)
{
	char last[16], spec[64];
	const char *args[] = { "-g", "bg:max=80%", "-g", spec, NULL };
	static const char *const prog[] = { "names", NULL };
	struct rt_proc p;
	struct report r;
	cpu_set_t mine, got;
	pid_t t;
	char w[PATH_MAX] = "", file[PATH_MAX * 2];
	int c = -1;

	sched_getaffinity(0, sizeof(mine), &mine);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &mine))
			c = i;
	snprintf(last, sizeof(last), "%d", c);
	snprintf(spec, sizeof(spec), "bg/low=work-*:nice=10,cpus=%s", last);
	if (start_run(&p, &r, args, prog, NULL) < 0) {
		CHECK(0, "no READY:\n%s", r.text);
		rt_finish(&p, 2);
		return;
	}
	t = tid_of(&r, "self");
	settle(p.pid, &t, 1);
	CHECK(where(p.pid, t, w, sizeof(w)) == 0 && strchr(w, '/') && !strchr(strchr(w, '/') + 1, '/'),
	      "work-1 is in a nested group ('%s')", w);
	CHECK(sched_getaffinity(t, sizeof(got), &got) == 0 && CPU_COUNT(&got) == 1 && CPU_ISSET(c, &got),
	      "work-1 runs on CPU %d only", c);
	t = tid_of(&r, "kid");
	CHECK(sched_getaffinity(t, sizeof(got), &got) == 0 && CPU_COUNT(&got) == 1 && CPU_ISSET(c, &got),
	      "its child thread too (rule 1)");
	if (scn_sg.native) {
		struct rgroup__kgroup g = { 0 }, up = { 0 };
		t = tid_of(&r, "self");
		CHECK(kernel_says_group(p.pid, t, 0, &g) == 0 && g.nice == 10,
		      "the kernel has bg/low at nice 10 (%d)", g.nice);
		CHECK(kernel_says_group(p.pid, t, 1, &up) == 0 && up.threads == 0 &&
		      up.cap_quota_us == 80000 && up.cap_period_us == 100000,
		      "and bg, which no thread is in (%llu), capped at 80 ms per 100 (%llu/%llu)",
		      (unsigned long long)up.threads, (unsigned long long)up.cap_quota_us,
		      (unsigned long long)up.cap_period_us);
	} else if (rgt_kernel() && strchr(w, '/')) {
		char top[PATH_MAX];
		snprintf(file, sizeof(file), "%s/%s", sg, w);
		CHECK(rgt_cg_weight(file) == rgroup_nice_to_weight(10), "bg/low has nice 10's weight");
		snprintf(top, sizeof(top), "%s", w);
		*strchr(top, '/') = '\0';
		snprintf(file, sizeof(file), "%s/%s", sg, top);
		if (scn_sg.v2) {
			char dir[PATH_MAX * 2 + 16], buf[64] = "";
			scn_cg_dir(file, dir, sizeof(dir));
			strcat(dir, "/cpu.max");
			rgt_read(dir, buf, sizeof(buf));
			CHECK(strncmp(buf, "80000 100000", 12) == 0, "bg's cpu.max is '%s'", buf);
		} else {
			CHECK(rgt_cg_value(file, "cpu.cfs_quota_us") == 80000, "bg's quota is 80 ms");
		}
	}
	finish(&p);
}

/* ---- fork and exec -------------------------------------------------------------- */

/* Where the preload writes names files (run-spec.h): the first of the
 * directories that this process may write in, or NULL. */
static const char *names_dir(void)
{
	static const char *const dirs[] = RGROUP__RUN_NAMES_DIRS;

	for (int i = 0; i < RGROUP__RUN_NAMES_NDIRS; i++)
		if (access(dirs[i], W_OK | X_OK) == 0)
			return dirs[i];
	return NULL;
}

static int nice_of_member(pid_t pid, const char *thread, char *out, size_t len);

/* A top-level group's nice from its rule, on every backend: where the
 * group comes into being with its first thread (native), it is set just
 * after the entry. */
static void rule_nice(void)
{
	static const char *const args[] = { "-g", "bg=bg-*:nice=5", NULL };
	static const char *const prog[] = { "names", NULL };
	static char out[1 << 16];
	struct rt_proc p;
	struct report r;
	int nice = -100;

	if (!start_placed(&p, &r, args, prog, "bg"))
		return;
	for (double end = rt_now() + 10; (nice = nice_of_member(p.pid, "bg-8", out, sizeof(out))) != 5 &&
	     rt_now() < end;)
		rt_sleep(0.3);   /* the governor publishes its state every 250 ms */
	CHECK(nice == 5, "rgroup tree shows bg-8's group at nice 5 (got %d)", nice);
	finish(&p);
}

/* The names file (run-spec.h) of process pid, if there is one: 1 and
 * its path in out, else 0. */
static int names_of(pid_t pid, char *out, size_t len)
{
	char pat[64];
	glob_t g;

	out[0] = '\0';
	if (!names_dir())
		return 0;
	snprintf(pat, sizeof(pat), "%s/rgroup-%d-*.names", names_dir(), (int)pid);
	if (glob(pat, 0, NULL, &g) != 0)
		return 0;
	snprintf(out, len, "%s", g.gl_pathv[0]);
	globfree(&g);
	return 1;
}

static void fork_child(int inherit)
{
	const char *args[] = { "-g", "work=work-*", inherit ? NULL : "--no-inherit", NULL };
	static const char *const prog[] = { "fork", NULL };
	struct rt_proc p;
	struct report r;
	char w[PATH_MAX] = "", more[2048] = "";
	int cpid = 0, cmain = 0;
	pid_t named;

	/* READY may come before or after the child's lines. */
	if (start_run(&p, &r, args, prog, NULL) < 0 ||
	    (!strstr(r.text, "T child-named") &&
	     rt_until(&p, "T child-named", more, sizeof(more), 10.0) < 0)) {
		char err[4096] = "";
		int st = rt_finish(&p, 2);
		rt_stderr(&p, err, sizeof(err));
		close(p.err);
		CHECK(0, "no report from the fork child (exit %d):\n%s%s\nstderr: %s", st, r.text, more, err);
		return;
	}
	strncat(r.text, more, sizeof(r.text) - strlen(r.text) - 1);
	parse_report(&r);
	sscanf(strstr(r.text, "CHILD ") ? strstr(r.text, "CHILD ") : "", "CHILD %d %d", &cpid, &cmain);
	named = tid_of(&r, "child-named");
	CHECK(cpid > 0 && named > 0, "the child reported (%d, %d)", cpid, (int)named);
	pid_t forker = tid_of(&r, "forker");
	settle(p.pid, &forker, 1);
	CHECK(where(p.pid, forker, w, sizeof(w)) == 0 && w[0], "the forker is in a group");
	CHECK(where(cpid, cmain, w, sizeof(w)) == 0 && w[0] == '\0',
	      "the child starts outside every group (rule 7), is in '%s'", w);
	if (inherit) {
		settle(cpid, &named, 1);
		CHECK(where(cpid, named, w, sizeof(w)) == 0 && w[0],
		      "the child keeps the rules: its 'work-c' is in a group of its own");
	} else {
		rt_sleep(0.5);
		CHECK(where(cpid, named, w, sizeof(w)) == 0 && w[0] == '\0',
		      "--no-inherit: the child's 'work-c' stays outside ('%s')", w);
	}
	finish(&p);
	/* The child ended with _exit: no code of ours ran to remove its
	 * names file; the next program that writes one collects it. */
	if (inherit && cpid > 0 && names_dir()) {
		static const char *const again[] = { "-g", "work=work-*", NULL };
		static const char *const names[] = { "names", NULL };
		char file[PATH_MAX];
		struct rt_proc q;

		if (names_of(cpid, file, sizeof(file)) && start_placed(&q, &r, again, names, "self")) {
			CHECK(access(file, F_OK) < 0, "the next run collected the _exit'ed child's %s", file);
			finish(&q);
		}
		if (names_of(cpid, file, sizeof(file)))
			unlink(file);
	}
}

static void fork_keeps_rules(void)
{
	fork_child(1);
}

static void fork_no_inherit(void)
{
	fork_child(0);
}

static void exec_program(int inherit)
{
	const char *args[] = { "-g", "work=work-*", inherit ? NULL : "--no-inherit", NULL };
	static const char *const prog[] = { "exec", NULL };
	struct rt_proc p;
	struct report r;
	char w[PATH_MAX] = "";
	pid_t named, main_tid;

	if (start_run(&p, &r, args, prog, NULL) < 0) {
		CHECK(0, "no READY from the exec'd program:\n%s", r.text);
		rt_finish(&p, 2);
		return;
	}
	named = tid_of(&r, "lite-named");
	main_tid = tid_of(&r, "main");
	CHECK(strstr(r.text, inherit ? "EXEC rules=yes preload=yes" : "EXEC rules=no preload=no"),
	      "the exec'd program %s the rules:\n%s", inherit ? "gets" : "does not get", r.text);
	CHECK(where(p.pid, main_tid, w, sizeof(w)) == 0 && w[0] == '\0',
	      "the exec'd program starts outside every group (rule 7), is in '%s'", w);
	if (inherit) {
		settle(p.pid, &named, 1);
		CHECK(where(p.pid, named, w, sizeof(w)) == 0 && w[0], "its 'work-x' is placed (%s)",
		      kernel_says(p.pid, named));
	} else {
		rt_sleep(0.5);
		CHECK(where(p.pid, named, w, sizeof(w)) == 0 && w[0] == '\0',
		      "--no-inherit: its 'work-x' stays outside ('%s')", w);
	}
	finish(&p);
	/* The names file went with the exec; the exec'd program, if it has
	 * the preload, removed its own at exit. */
	CHECK(!names_of(p.pid, w, sizeof(w)), "no names file is left: %s", w);
	if (w[0])
		unlink(w);
}

static void exec_keeps_rules(void)
{
	exec_program(1);
}

static void exec_no_inherit(void)
{
	exec_program(0);
}

/* posix_spawn and system from a thread in a group: the child starts
 * outside every group (rule 7), and with the rules, its named thread
 * placed. */
static void spawn_program(const char *how)
{
	const char *args[] = { "-g", "work=work-*", NULL };
	const char *prog[] = { how, NULL };
	struct rt_proc p;
	struct report r;
	char w[PATH_MAX] = "";
	pid_t spawner, child, named;

	if (start_run(&p, &r, args, prog, NULL) < 0) {
		CHECK(0, "%s: no READY from the child:\n%s", how, r.text);
		rt_finish(&p, 2);
		return;
	}
	spawner = tid_of(&r, "spawner");
	child = tid_of(&r, "main");
	named = tid_of(&r, "lite-named");
	settle(p.pid, &spawner, 1);
	CHECK(where(p.pid, spawner, w, sizeof(w)) == 0 && w[0], "%s: the spawning thread is in a group", how);
	CHECK(child > 0 && child != p.pid, "%s: the child is a process of its own (%d)", how, (int)child);
	CHECK(where(child, child, w, sizeof(w)) == 0 && w[0] == '\0',
	      "%s: the child starts outside every group (rule 7), is in '%s'", how, w);
	settle(child, &named, 1);
	CHECK(where(child, named, w, sizeof(w)) == 0 && w[0], "%s: the child's 'work-x' is placed (%s)",
	      how, kernel_says(child, named));
	finish(&p);
}

static void spawn_outside(void)
{
	spawn_program("spawn");
	spawn_program("system");
}

/* ---- The governor's signal --------------------------------------------------------- */

static void governor_signal(void)
{
	static const char *const args[] = { "-g", "work=work-*", NULL };
	static const char *const handler[] = { "handler", "7", NULL };
	static const char *const reset[] = { "reset", NULL };
	struct rt_proc p;
	struct report r;
	char err[4096] = "";
	int st;

	/* A program that handles the governor's signal. */
	if (scn_sg.gov) {
		start_run(&p, &r, args, handler, NULL);
		st = rt_finish(&p, 5.0);
		rt_stderr(&p, err, sizeof(err));
		close(p.err);
		CHECK(st == 125, "stopped with 125 (got %d)", st);
		CHECK(strstr(err, "installs a handler for signal") && strstr(err, "RGROUP_GOVERNOR_SIGNAL"),
		      "and says why: %s", err);
		/* With another signal for the governor it runs. */
		char *env[] = { (char *)"RGROUP_GOVERNOR_SIGNAL=9", NULL };
		CHECK(start_run(&p, &r, args, handler, env) == 0, "RGROUP_GOVERNOR_SIGNAL=9: it runs");
		finish(&p);
	} else {
		CHECK(start_run(&p, &r, args, handler, NULL) == 0, "no governor: nothing to refuse");
		finish(&p);
	}
	/* A thread that blocks every signal (as qemu's workers do) takes the
	 * governor's all the same once it is in a group. */
	if (scn_sg.gov) {
		static const char *const blocked[] = { "blocked", NULL };
		char path[64], status[4096] = "", *sb;
		unsigned long long mask = ~0ull;
		int sig = SIGRTMIN + 7;
		CHECK(start_run(&p, &r, args, blocked, NULL) == 0, "namer blocked");
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)p.pid, (int)tid_of(&r, "blocked"));
		rgt_read(path, status, sizeof(status));
		if ((sb = strstr(status, "SigBlk:")))
			sscanf(sb + 7, "%llx", &mask);
		CHECK(!(mask & (1ull << (sig - 1))) && (mask & (1ull << (SIGUSR1 - 1))),
		      "the thread blocks every signal but the governor's (SigBlk %llx)", mask);
		finish(&p);
	}
	/* Resetting every signal, as daemons do, is no conflict. */
	CHECK(start_run(&p, &r, args, reset, NULL) == 0, "a program that resets every signal runs");
	finish(&p);
}

/* ---- A thread without TLS of its own ------------------------------------------------ */

/*
 * A thread made by clone(CLONE_THREAD) without CLONE_SETTLS shares its
 * creator's thread-local storage, where the C library and the preload
 * keep a thread's identity. When it names itself into a group, the
 * preload tells it from its creator by the kernel's thread id: the
 * creator (main) is not moved, the raw thread stays outside, and the
 * preload says why.
 */
static void raw_clone(void)
{
	static const char *const args[] = { "-g", "work=work-*", NULL };
	static const char *const prog[] = { "rawclone", NULL };
	struct rt_proc p;
	struct report r;
	char w[PATH_MAX] = "?", err[4096] = "";
	pid_t raw, maint;
	int st;

	if (start_run(&p, &r, args, prog, NULL) < 0) {
		CHECK(0, "rgroup run -- namer rawclone did not get READY:\n%s", r.text);
		rt_finish(&p, 2);
		return;
	}
	raw = tid_of(&r, "raw");
	maint = tid_of(&r, "main");
	CHECK(raw > 0 && maint > 0 && raw != maint, "namer reported both threads (%d, %d)", (int)raw, (int)maint);
	rt_sleep(0.5);   /* the governor publishes every 250 ms */
	CHECK(where(p.pid, maint, w, sizeof(w)) == 0 && w[0] == '\0',
	      "the raw thread's creator (main) stays in the sgroup (is in '%s')", w);
	strcpy(w, "?");
	CHECK(where(p.pid, raw, w, sizeof(w)) == 0 && w[0] == '\0',
	      "the raw thread stays outside the group (is in '%s')", w);
	st = rt_finish(&p, 5.0);
	rt_stderr(&p, err, sizeof(err));
	close(p.err);
	CHECK(st == 0, "the program exits 0 (got %d)", st);
	CHECK(strstr(err, "CLONE_SETTLS") != NULL && strstr(err, "work-raw") != NULL,
	      "and the preload says why: %s", err);
}

/* ---- The report at exit ------------------------------------------------------------- */

/* `rgroup run ARGS -- namer names` to its end: its stderr in err. */
static void run_names(const char *const *args, char *err, size_t len)
{
	static const char *const prog[] = { "names", NULL };
	struct rt_proc p;
	struct report r;
	int st;

	err[0] = '\0';
	if (start_run(&p, &r, args, prog, NULL) < 0) {
		CHECK(0, "no READY");
		rt_finish(&p, 2);
		return;
	}
	st = rt_finish(&p, 5.0);
	rt_stderr(&p, err, len);
	close(p.err);
	CHECK(st == 0, "namer exits 0 (got %d)", st);
	fprintf(stderr, "%s", err);
}

static void report_at_exit(void)
{
	static const char *const idle[] = { "-g", "work=work-*", "-g", "bg=bg-*", "-g",
					     "none=no-such-name", NULL };
	static const char *const all[] = { "-g", "work=work-*", "-g", "bg=bg-*", NULL };
	static const char *const all_v[] = { "-v", "-g", "work=work-*", "-g", "bg=bg-*", NULL };
	char err[16384], *line;

	/* A rule that took no thread: every rule's line. namer names 21
	 * threads work-* as the preload sees them (not "work-9", written to
	 * /proc, and not "kid", born in the group) and one bg-8. */
	fprintf(stderr, "  a rule that took no thread\n");
	run_names(idle, err, sizeof(err));
	CHECK(strstr(err, "rgroup run: rule 1, group 'work': took 21 threads: "),
	      "the report counts the 21 threads rule 1 took");
	line = strstr(err, "rgroup run: rule 2, group 'bg': took 1 thread: ");
	CHECK(line && strstr(line, "'bg-8'") && strchr(line, '\n') > strstr(line, "'bg-8'"),
	      "rule 2's line names its thread bg-8");
	CHECK(strstr(err, "rgroup run: rule 3, group 'none': took no thread\n"),
	      "rule 3 took no thread and the report says so");
	CHECK(!strstr(err, "named no thread"), "namer named threads: no warning that it named none");

	/* Every rule took threads: quiet, unless -v asks. */
	fprintf(stderr, "  every rule took threads\n");
	run_names(all, err, sizeof(err));
	CHECK(!strstr(err, "rgroup run: rule "), "quiet when every rule took threads");
	fprintf(stderr, "  every rule took threads, -v\n");
	run_names(all_v, err, sizeof(err));
	CHECK(strstr(err, "rgroup run: rule 1, group 'work': took 21 threads") &&
	      strstr(err, "rgroup run: rule 2, group 'bg': took 1 thread"),
	      "-v: the report also when every rule took threads");

	/* A program that names no thread. */
	fprintf(stderr, "  a program that names no thread\n");
	{
		char *argv[] = { (char *)rgroup_cmd, (char *)"run", (char *)"-g", (char *)"x=y*",
				 (char *)"--", (char *)namer, (char *)"none", NULL };
		struct rt_proc p;
		int st;

		err[0] = '\0';
		CHECK(rt_spawn(&p, argv, NULL) == 0, "rgroup run -- namer none");
		st = rt_finish(&p, 10.0);
		rt_stderr(&p, err, sizeof(err));
		close(p.err);
		fprintf(stderr, "%s", err);
		CHECK(st == 0, "namer none exits 0 (got %d)", st);
		CHECK(strstr(err, "rgroup run: namer (pid ") && strstr(err, ") named no thread: no rule can match"),
		      "the report says the program named no thread");
		CHECK(strstr(err, "rgroup run: rule 1, group 'x': took no thread"),
		      "and that rule 1 took none");
	}
}

/* ---- rgroup gc: the cpuset directories of a killed run --------------------------------- */

/* `rgroup ARGS...` to its end: its exit status, its stdout in out. */
static int rgroup_out(char *const *args, char *out, size_t len)
{
	char *argv[8] = { (char *)rgroup_cmd };
	char err[4096] = "";
	struct rt_proc p;
	int n = 1, st;

	while (*args && n < 7)
		argv[n++] = *args++;
	argv[n] = NULL;
	out[0] = '\0';
	if (rt_spawn(&p, argv, NULL) < 0)
		return -1;
	rt_until(&p, "\x01", out, len, 20.0);   /* all of it */
	st = rt_finish(&p, 20.0);
	rt_stderr(&p, err, sizeof(err));
	close(p.err);
	if (err[0])
		fprintf(stderr, "  (its stderr: %s)\n", err);
	return st;
}

/* The first path that glob pattern pat matches, or "". */
static void first_match(const char *pat, char *out, size_t len)
{
	glob_t g;

	out[0] = '\0';
	if (glob(pat, 0, NULL, &g) == 0) {
		snprintf(out, len, "%s", g.gl_pathv[0]);
		globfree(&g);
	}
}

/*
 * On cgroup1 a group with CPUs has a directory in the v1 cpuset hierarchy
 * too. A run killed with SIGKILL leaves it; plain `rgroup gc` must find it
 * there. Only its --dry-run walks the whole machine (it removes nothing of
 * others); the test removes the directories it made itself.
 */
static void gc_cpuset(void)
{
	static const char *const args[] = { "-g", "work=work-*:cpus=0", NULL };
	static const char *const prog[] = { "names", NULL };
	char *dry[] = { (char *)"gc", (char *)"--dry-run", NULL };
	static char out[1 << 18];
	char cs[PATH_MAX], cpu[PATH_MAX], want[PATH_MAX + 32];
	struct rgroup__cgloc loc;
	struct rt_proc p;
	struct report r;
	char pat[PATH_MAX + 32];
	pid_t killed[3] = { 0 };
	int found = 0;

	if (scn_sg.gov || scn_sg.v2 || rgroup__cg_locate(0, "cpuset", &loc, NULL, 0) < 0) {
		fprintf(stderr, "  no v1 cpuset directories on this backend: nothing to collect\n");
		return;
	}
	/* Another rgroup process starting in the same cpuset group collects
	 * the leftover as it attaches: then try again. */
	for (int attempt = 0; attempt < 3 && !found; attempt++) {

		if (!start_placed(&p, &r, args, prog, "self"))
			return;
		snprintf(pat, sizeof(pat), "%s/rgroup-%d-*", loc.dir, (int)p.pid);
		first_match(pat, cs, sizeof(cs));
		snprintf(pat, sizeof(pat), "%s%s/rgroup-%d-*", scn_sg.mount.point, sg, (int)p.pid);
		first_match(pat, cpu, sizeof(cpu));
		killed[attempt] = p.pid;
		kill(p.pid, SIGKILL);
		rt_finish(&p, 5.0);
		close(p.err);
		CHECK(cs[0] && cpu[0], "the group with cpus=0 has a cpuset directory (%s) and a cpu one (%s)",
		      cs[0] ? cs : "none", cpu[0] ? cpu : "none");
		if (!cs[0])
			return;
		if (access(cs, F_OK) < 0)
			continue;   /* collected already by another process */
		CHECK(rgroup_out(dry, out, sizeof(out)) == 0, "rgroup gc --dry-run exits 0");
		if (access(cs, F_OK) < 0)
			continue;
		found = 1;
		snprintf(want, sizeof(want), "would remove %s\n", cs);
		CHECK(strstr(out, want), "rgroup gc --dry-run lists the killed run's %s", cs);
		CHECK(!cpu[0] || strstr(out, cpu), "and its cpu directory %s", cpu);
	}
	CHECK(found, "the leftover stayed long enough to be looked for");
	/* Ours, made by the runs the test killed. */
	for (size_t i = 0; i < sizeof(killed) / sizeof(killed[0]); i++)
		if (killed[i] && names_of(killed[i], pat, sizeof(pat)))
			unlink(pat);
	if (cs[0] && rmdir(cs) < 0 && errno != ENOENT)
		CHECK(0, "cannot remove %s: %s", cs, strerror(errno));
	if (cpu[0] && rmdir(cpu) < 0 && errno != ENOENT)
		CHECK(0, "cannot remove %s: %s", cpu, strerror(errno));
}

/*
 * The names file of a run killed with SIGKILL (rgroup tree's rule names):
 * `rgroup gc --dry-run DIR` lists it and `rgroup gc DIR` removes it, in a
 * directory of the test's own (moved there at once: any later run of the
 * same user collects it from /dev/shm), and a live process's file there
 * stays.
 */
static void gc_names(void)
{
	static const char *const args[] = { "-g", "work=work-*", NULL };
	static const char *const prog[] = { "names", NULL };
	char *dry[] = { (char *)"gc", (char *)"--dry-run", NULL, NULL };
	char *mine[] = { (char *)"gc", NULL, NULL };
	static char out[1 << 18];
	char file[PATH_MAX], dir[64], moved[PATH_MAX], live[PATH_MAX], want[PATH_MAX + 32];
	uint64_t start = rgroup__starttime(0);
	struct rt_proc p;
	struct report r;
	int ok;
	FILE *f;

	if (!names_dir()) {
		CHECK(0, "neither /dev/shm nor /tmp is writable: no names file to collect");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/rgtest-names-%d", names_dir(), (int)getpid());
	if (mkdir(dir, 0700) < 0) {
		CHECK(0, "mkdir %s: %s", dir, strerror(errno));
		return;
	}
	if (!start_placed(&p, &r, args, prog, "self")) {
		rmdir(dir);
		return;
	}
	CHECK(names_of(p.pid, file, sizeof(file)), "the run publishes its groups' names");
	kill(p.pid, SIGKILL);
	rt_finish(&p, 5.0);
	close(p.err);
	moved[0] = '\0';
	if (file[0])
		snprintf(moved, sizeof(moved), "%s/%s", dir, strrchr(file, '/') + 1);
	ok = moved[0] && rename(file, moved) == 0;
	CHECK(ok, "a killed run leaves %s (moved to %s: %s)", file, moved, strerror(errno));
	snprintf(live, sizeof(live), "%s/rgroup-%d-%llu.names", dir, (int)getpid(),
		 (unsigned long long)start);
	if ((f = fopen(live, "w"))) {
		fputs("1 work\n", f);
		fclose(f);
	}
	if (ok) {
		dry[2] = mine[1] = dir;
		CHECK(rgroup_out(dry, out, sizeof(out)) == 0, "rgroup gc --dry-run %s exits 0", dir);
		snprintf(want, sizeof(want), "would remove %s\n", moved);
		CHECK(strstr(out, want) && access(moved, F_OK) == 0, "gc --dry-run lists %s and leaves it",
		      moved);
		CHECK(!strstr(out, live), "and not the live process's %s", live);
		CHECK(rgroup_out(mine, out, sizeof(out)) == 0, "rgroup gc %s exits 0", dir);
		CHECK(access(moved, F_OK) < 0 && errno == ENOENT, "rgroup gc %s removed %s: %s", dir,
		      moved, out);
		CHECK(access(live, F_OK) == 0, "and left the live process's %s", live);
	}
	if (moved[0])
		unlink(moved);
	unlink(file);
	unlink(live);
	rmdir(dir);
}

/* ---- rgroup tree -------------------------------------------------------------------- */

static void tree_names(void)
{
	static const char *const args[] = { "-g", "work=work-*", NULL };
	static const char *const prog[] = { "names", NULL };
	char out[16384], pidarg[16];
	struct rt_proc p, t;
	struct report r;
	pid_t self;

	if (!(self = start_placed(&p, &r, args, prog, "self")))
		return;
	rt_sleep(0.3);   /* the governor's state file */
	snprintf(pidarg, sizeof(pidarg), "%d", (int)p.pid);
	char *argv[] = { (char *)rgroup_cmd, (char *)"tree", pidarg, NULL };
	out[0] = '\0';
	CHECK(rt_spawn(&t, argv, NULL) == 0, "rgroup tree");
	rt_until(&t, "SHARE", out, sizeof(out), 10.0);
	rt_finish(&t, 5.0);
	close(t.err);
	fprintf(stderr, "%s", out);
	/* The group's line, then its threads' names. */
	char *g = strstr(out, "'work-1'"), *plain = strstr(out, "(plain threads)");
	CHECK(g && strstr(out, "'other'"), "the tree names the threads");
	CHECK(plain && g && strstr(plain, "'other'") < g, "'other' is listed with the plain threads, before the group");
	finish(&p);
}

/* `rgroup tree [--json] PID` of a run: its output in out. */
static void tree_of(pid_t pid, int json, char *out, size_t len)
{
	char pidarg[16];
	char *args[] = { (char *)"tree", pidarg, json ? (char *)"--json" : NULL, NULL };

	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	CHECK(rgroup_out(args, out, len) == 0, "rgroup tree %s%d exits 0", json ? "--json " : "",
	      (int)pid);
	fprintf(stderr, "%s", out);
}

/* A number after `key` in text at or after `from`, or -1. */
static double number_after(const char *from, const char *key)
{
	const char *p = from ? strstr(from, key) : NULL;

	return p && p[strlen(key)] != 'n' ? strtod(p + strlen(key), NULL) : -1;
}

/*
 * tree and tree --json show the rule's name of a group rgroup run made,
 * its CPUs, its cap and the time it was held back, and (JSON) the names
 * and ids of its threads: two spinning threads under a cap of 20% of one
 * CPU on CPU 0 are throttled within a second.
 */
static void tree_settings(void)
{
	static const char *const args[] = { "-g", "spin=busy-*:cpus=0,max=20%", NULL };
	static const char *const prog[] = { "spin", "2", NULL };
	static char out[1 << 16];
	char want[128], *g;
	struct rt_proc p;
	struct report r;
	pid_t busy0;

	if (!(busy0 = start_placed(&p, &r, args, prog, "busy-0")))
		return;
	/* Throttled within a second or so; the governor publishes its state
	 * every quarter second, later on a loaded machine: wait (at most
	 * 15 s) until the tree shows the group held back. */
	for (double end = rt_now() + 15;;) {
		char *args_t[] = { (char *)"tree", want, (char *)"--json", NULL };

		rt_sleep(0.5);
		snprintf(want, sizeof(want), "%d", (int)p.pid);
		if (rgroup_out(args_t, out, sizeof(out)) == 0 && (g = strstr(out, "\n{\"name\":")) &&
		    number_after(g, "\"throttled_s\":") > 0)
			break;
		if (rt_now() > end)
			break;
	}
	tree_of(p.pid, 1, out, sizeof(out));
	g = strstr(out, "\"rule\":\"spin\"");
	CHECK(g, "tree --json names the group by its rule, spin (names in %s)", names_dir());
	if (g) {
		while (g > out && strncmp(g, "{\"name\":", 8) != 0)
			g--;   /* the start of its line */
		CHECK(strstr(g, "\"cpus\":\"0\""), "its CPUs are 0");
		snprintf(want, sizeof(want), "{\"tid\":%d,\"name\":\"busy-0\"}", (int)busy0);
		CHECK(strstr(g, want) && strstr(g, "\"name\":\"busy-1\""),
		      "its members list busy-0 (%d) and busy-1", (int)busy0);
		CHECK(number_after(g, "\"throttled_s\":") > 0, "it was held back (throttled_s > 0)");
		CHECK(strstr(g, "\"cap_quota_us\":20000,\"cap_period_us\":100000"),
		      "its cap is 20000 us per 100000 us");
		if (!scn_sg.gov)
			CHECK(number_after(g, "\"nr_throttled\":") > 0, "nr_throttled > 0");
	}
	/* Every thread named, also those of 15 characters (the governor's
	 * "rgroup-governor"). */
	CHECK(!strstr(out, "\"name\":\"?\""), "every member has its name");
	snprintf(want, sizeof(want), "{\"tid\":%d,\"name\":\"namer\"}", (int)p.pid);
	CHECK(strstr(out, "\"plain\":{") && strstr(strstr(out, "\"plain\":{"), want),
	      "the plain threads' members list the main thread %d", (int)p.pid);
	tree_of(p.pid, 0, out, sizeof(out));
	g = strstr(out, "\nspin ");
	CHECK(g, "tree's text shows the group by its rule, spin");
	CHECK(g && strstr(g, " 0 ") && strstr(g, " 20% "),
	      "with CPUs 0 and cap 20%%");
	finish(&p);
}

/* ---- rgroup set ------------------------------------------------------------------------ */

struct set_req {
	const char *const *argv;   /* after "set PID" */
	pid_t pid;
};

static void set_child(void *arg)
{
	const struct set_req *q = arg;
	char *argv[12], pidarg[16];
	int n = 0;

	snprintf(pidarg, sizeof(pidarg), "%d", (int)q->pid);
	argv[n++] = (char *)rgroup_cmd;
	argv[n++] = (char *)"set";
	argv[n++] = pidarg;
	for (int i = 0; q->argv[i] && n < 11; i++)
		argv[n++] = (char *)q->argv[i];
	argv[n] = NULL;
	dup2(1, 2);
	execv(rgroup_cmd, argv);
	_exit(126);
}

/* `rgroup set PID ARGS...`: its exit status, its output in out. */
static int set_cmd(pid_t pid, const char *const *argv, char *out, size_t len)
{
	struct set_req q = { argv, pid };
	int st = rgt_capture(out, len, set_child, &q);

	fprintf(stderr, "  rgroup set %d %s%s%s: exit %d: %s", (int)pid, argv[0], argv[1] ? " " : "",
		argv[1] ? argv[1] : "", st, out);
	return st;
}

/* As user nobody, straight to the program's socket: what it answers. */
static void as_nobody(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	char stat[1024], path[64], msg[RGROUP__CONTROL_LINE];
	uint64_t start = 0;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (rgroup__read_path(path, stat, sizeof(stat)) < 0 ||
	    rgroup__parse_stat_starttime(stat, &start) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(3);
	r = rgroup__control_call(pid, pid, start, "b", "nice=7", msg, sizeof(msg));
	printf("%d %s\n", r, msg);
	fflush(stdout);
	_exit(0);
}

/* Group b's nice in `rgroup tree --json PID`, or -100. */
/* The nice value `rgroup tree --json` gives the group of the thread named
 * `thread`; -100 if it shows none. */
static int nice_of_member(pid_t pid, const char *thread, char *out, size_t len)
{
	char pidarg[16], key[64];
	char *args[] = { (char *)"tree", pidarg, (char *)"--json", NULL };
	char *g;

	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	snprintf(key, sizeof(key), "\"name\":\"%s\"", thread);
	if (rgroup_out(args, out, len) != 0 || !(g = strstr(out, key)))
		return -100;
	while (g > out && strncmp(g, "{\"name\":", 8) != 0)
		g--;   /* the start of the group's line */
	return (int)number_after(g, "\"nice\":");
}

/*
 * rgroup set changes a running program's group, and `rgroup tree` shows
 * it; what cannot be done changes nothing and says why: no such group, a
 * setting the rules cannot have, another user, a bad setting, a program
 * run with --no-control. (That the change moves CPU time is measured on
 * qemu, test-run-qemu.c.)
 */
static void set_running(void)
{
	static const char *const args[] = { "-g", "a=busy-0", "-g", "b=busy-1", NULL };
	static const char *const noctl[] = { "--no-control", "-g", "a=busy-0", "-g", "b=busy-1", NULL };
	static const char *const prog[] = { "spin", "2", NULL };
	static char out[1 << 16];
	struct rt_proc p;
	struct report r;
	pid_t pid, ctl;
	int st, nice;

	if (!start_placed(&p, &r, args, prog, "busy-1"))
		return;
	pid = p.pid;
	st = set_cmd(pid, (const char *const[]){ "b", "nice=5", NULL }, out, sizeof(out));
	CHECK(st == 0 && strstr(out, "group 'b' now has nice=5"), "set b nice=5: exit 0, says so");
	for (double end = rt_now() + 10; (nice = nice_of_member(pid, "busy-1", out, sizeof(out))) != 5 && rt_now() < end;)
		rt_sleep(0.3);   /* the governor publishes its state every 250 ms */
	CHECK(nice == 5, "rgroup tree shows group b at nice 5 (got %d)", nice);
	st = set_cmd(pid, (const char *const[]){ "b", "max=30%", NULL }, out, sizeof(out));
	CHECK(st == 0 && strstr(out, "now has nice=5,max=30%"), "set b max=30%%: exit 0, keeps nice=5");
	st = set_cmd(pid, (const char *const[]){ "b", "max=none", NULL }, out, sizeof(out));
	CHECK(st == 0 && strstr(out, "now has nice=5\n"), "set b max=none lifts the cap");
	st = set_cmd(pid, (const char *const[]){ "nosuch", "nice=1", NULL }, out, sizeof(out));
	CHECK(st == 1 && strstr(out, "no group 'nosuch'"), "an unknown group: exit 1, says so");
	st = set_cmd(pid, (const char *const[]){ "b", "cpus=1023", NULL }, out, sizeof(out));
	CHECK(st == 1 && strstr(out, "nothing changed"), "CPUs the process may not use: exit 1, nothing changed");
	st = set_cmd(pid, (const char *const[]){ "b", "nice=x", NULL }, out, sizeof(out));
	CHECK(st == 2 && strstr(out, "a nice value is a whole number"), "a bad setting: exit 2 (usage)");
	st = set_cmd(pid, (const char *const[]){ "b", NULL }, out, sizeof(out));
	CHECK(st == 2, "no setting: exit 2 (usage)");
	if (geteuid() == 0) {
		st = rgt_capture(out, sizeof(out), as_nobody, &pid);
		fprintf(stderr, "  as nobody: %s", out);
		CHECK(st == 0 && atoi(out) == EPERM && strstr(out, "only the process's own user"),
		      "another user is refused");
	} else {
		rgt_skip_case("not root: no other user to be refused");
	}
	nice = nice_of_member(pid, "busy-1", out, sizeof(out));
	CHECK(nice == 5, "after the refusals group b is still at nice 5 (got %d)", nice);
	finish(&p);
	st = set_cmd(pid, (const char *const[]){ "b", "nice=1", NULL }, out, sizeof(out));
	CHECK(st == 1, "a program that has exited: exit 1");

	if (!start_placed(&p, &r, noctl, prog, "busy-1"))
		return;
	st = set_cmd(p.pid, (const char *const[]){ "b", "nice=5", NULL }, out, sizeof(out));
	CHECK(st == 1 && strstr(out, "--no-control") && rt_threads(p.pid, "rgroup-ctl", &ctl, 1) == 0,
	      "with --no-control: no thread rgroup-ctl, and set says it does not listen");
	finish(&p);
}

/* ---- What cannot work gets a clear error -------------------------------------------- */

struct usage_case {
	const char *what;
	const char *argv[12];
	int status;
	const char *words;
};

static void run_case(const struct usage_case *c)
{
	char *argv[16], err[8192] = "", out[8192] = "";
	struct rt_proc p;
	int n = 0, st;

	argv[n++] = (char *)rgroup_cmd;
	argv[n++] = (char *)"run";
	for (int i = 0; c->argv[i]; i++)
		argv[n++] = (char *)c->argv[i];
	argv[n] = NULL;
	if (rt_spawn(&p, argv, NULL) < 0)
		return;
	rt_until(&p, "\x01", out, sizeof(out), 10.0);   /* all of it */
	st = rt_finish(&p, 10.0);
	rt_stderr(&p, err, sizeof(err));
	close(p.err);
	CHECK(st == c->status && (strstr(err, c->words) || strstr(out, c->words)),
	      "%s: exit %d (want %d), output: %s%s", c->what, st, c->status, err, out);
}

static void errors(void)
{
	const char *stat_prog = getenv("RGROUP_TEST_STATIC");
	char suid[PATH_MAX] = "", conf[PATH_MAX], bad_conf[PATH_MAX], nul_conf[PATH_MAX];
	struct usage_case cases[] = {
		{ "unknown option", { "--frobnicate", "--", namer, "names", NULL }, 2, "unknown option '--frobnicate'" },
		{ "missing argument", { "-g", NULL }, 2, "needs an argument" },
		{ "no rules", { "--", namer, NULL }, 2, "no rules" },
		{ "no program", { "-g", "a=b", NULL }, 2, "no PROGRAM" },
		{ "bad pattern", { "-g", "x=[abc", "--", namer, NULL }, 2, "no ']' closes" },
		{ "unknown setting", { "-g", "x=y:nise=3", "--", namer, NULL }, 2, "unknown setting 'nise'" },
		{ "pattern too long", { "-g", "x=abcdefghijklmnopq", "--", namer, NULL }, 2, "can never match" },
		{ "child wider than parent", { "-g", "a:cpus=0", "-g", "a/b=x:cpus=0-1", "--", namer, NULL }, 2, "only narrow" },
		{ "CPUs this process may not use", { "-g", "x=y:cpus=1023", "--", namer, NULL }, 1, "not within the CPUs" },
		{ "missing program", { "-g", "x=y", "--", "/nonexistent/prog", NULL }, 127, "cannot run /nonexistent/prog" },
		{ "unknown backend", { "-b", "frob", "-g", "x=y", "--", namer, NULL }, 2, "no backend named 'frob'" },
		{ "static program", { "-g", "x=y", "--", stat_prog ? stat_prog : "/bin/true", NULL }, 1, "statically linked" },
		{ "missing config", { "-c", "/nonexistent.conf", "--", namer, NULL }, 1, "cannot read /nonexistent.conf" },
		{ "bad config", { "-c", bad_conf, "--", namer, NULL }, 2, ":2: rule 1" },
		{ "config with a NUL byte", { "-c", nul_conf, "--", namer, NULL }, 2, ":2: a NUL byte" },
		{ "dry run", { "-n", "-c", conf, "--", namer, "names", NULL }, 0, "RGROUP_RUN_RULES='work=work-*" },
		{ "a cap that never binds (1024 CPUs)", { "-n", "-g", "x=y:max=102400%", "--", namer, NULL }, 0, "never binds" },
		{ "setuid program", { "-g", "x=y", "--", suid, NULL }, 1, "secure-execution mode" },
	};
	size_t ncases = sizeof(cases) / sizeof(cases[0]);
	FILE *f;

	snprintf(conf, sizeof(conf), "/tmp/rgtest-run-%d.conf", (int)getpid());
	snprintf(bad_conf, sizeof(bad_conf), "/tmp/rgtest-run-%d-bad.conf", (int)getpid());
	if ((f = fopen(conf, "w"))) {
		fputs("# the work threads\nwork=work-*:nice=3   # a comment\n", f);
		fclose(f);
	}
	if ((f = fopen(bad_conf, "w"))) {
		fputs("# a typo\nwork=work-*:nise=3\n", f);
		fclose(f);
	}
	snprintf(nul_conf, sizeof(nul_conf), "/tmp/rgtest-run-%d-nul.conf", (int)getpid());
	if ((f = fopen(nul_conf, "w"))) {
		fwrite("a=b\nwork=work-*\0:nice=3\nc=d\n", 1, 28, f);
		fclose(f);
	}
	if (!stat_prog)
		rgt_skip_case("RGROUP_TEST_STATIC not set: no static program to refuse");
	/* A setuid copy of namer, owned by nobody, beside it (not /tmp, which
	 * may be mounted nosuid, where the bit means nothing). */
	if (geteuid() == 0) {
		char cmd[PATH_MAX * 3];
		snprintf(suid, sizeof(suid), "%s-suid-%d", namer, (int)getpid());
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chown 65534 '%s' && chmod 4755 '%s'", namer,
			 suid, suid, suid);
		if (system(cmd) != 0) {
			rgt_skip_case("cannot make a setuid copy of namer");
			suid[0] = '\0';
		}
	} else {
		rgt_skip_case("not root: cannot make a setuid program to refuse");
	}
	for (size_t i = 0; i < ncases; i++) {
		if ((!stat_prog && strstr(cases[i].what, "static")) ||
		    (!suid[0] && strstr(cases[i].what, "setuid")))
			continue;
		fprintf(stderr, "  %s\n", cases[i].what);
		run_case(&cases[i]);
	}
	if (suid[0])
		unlink(suid);
	unlink(conf);
	unlink(bad_conf);
	unlink(nul_conf);
}

static const struct rgt_case cases[] = {
	{ "placement_by_name", placement_by_name },
	{ "nested_settings", nested_settings },
	{ "rule_nice", rule_nice },
	{ "fork_keeps_rules", fork_keeps_rules },
	{ "fork_no_inherit", fork_no_inherit },
	{ "exec_keeps_rules", exec_keeps_rules },
	{ "exec_no_inherit", exec_no_inherit },
	{ "spawn_outside", spawn_outside },
	{ "governor_signal", governor_signal },
	{ "raw_clone", raw_clone },
	{ "report_at_exit", report_at_exit },
	{ "gc_cpuset", gc_cpuset },
	{ "gc_names", gc_names },
	{ "tree_names", tree_names },
	{ "tree_settings", tree_settings },
	{ "set_running", set_running },
	{ "errors", errors },
};

int main(int argc, char **argv)
{
	rgroup_cmd = getenv("RGROUP_TEST_RGROUP");
	namer = getenv("RGROUP_TEST_NAMER");
	if (!rgroup_cmd || !namer)
		rgt_skip_all("RGROUP_TEST_RGROUP and RGROUP_TEST_NAMER name the programs (the build sets them)");
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
