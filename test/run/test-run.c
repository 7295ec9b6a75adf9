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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

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
	return rt_where(pid, tid, rgt_sg.gov, rgt_sg.v2 ? NULL : "cpu", sg, out, len);
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
	if (rgt_kernel() && b[0]) {
		char file[PATH_MAX * 2];
		snprintf(file, sizeof(file), "%s/%s", sg, b);
		CHECK(rgt_cg_weight(file) == rgroup_nice_to_weight(5), "bg has nice 5's weight (%lld)",
		      rgt_cg_weight(file));
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
	if (rgt_kernel() && w[0]) {
		char top[PATH_MAX];
		snprintf(file, sizeof(file), "%s/%s", sg, w);
		CHECK(rgt_cg_weight(file) == rgroup_nice_to_weight(10), "bg/low has nice 10's weight");
		snprintf(top, sizeof(top), "%s", w);
		*strchr(top, '/') = '\0';
		snprintf(file, sizeof(file), "%s/%s", sg, top);
		if (rgt_sg.v2) {
			char dir[PATH_MAX * 2 + 16], buf[64] = "";
			rgt_cg_dir(file, dir, sizeof(dir));
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
		CHECK(where(p.pid, named, w, sizeof(w)) == 0 && w[0], "its 'work-x' is placed");
	} else {
		rt_sleep(0.5);
		CHECK(where(p.pid, named, w, sizeof(w)) == 0 && w[0] == '\0',
		      "--no-inherit: its 'work-x' stays outside ('%s')", w);
	}
	finish(&p);
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
	CHECK(where(child, named, w, sizeof(w)) == 0 && w[0], "%s: the child's 'work-x' is placed", how);
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
	if (rgt_sg.gov) {
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
	if (rgt_sg.gov) {
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

/* ---- rgroup tree -------------------------------------------------------------------- */

static void tree_names(void)
{
	static const char *const args[] = { "-g", "work=work-*", NULL };
	static const char *const prog[] = { "names", NULL };
	char out[16384], pidarg[16];
	struct rt_proc p, t;
	struct report r;
	pid_t self;

	if (start_run(&p, &r, args, prog, NULL) < 0) {
		CHECK(0, "no READY");
		rt_finish(&p, 2);
		return;
	}
	self = tid_of(&r, "self");
	settle(p.pid, &self, 1);
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
	char suid[PATH_MAX] = "", conf[PATH_MAX], bad_conf[PATH_MAX];
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
		{ "missing program", { "-g", "x=y", "--", "/nonexistent/prog", NULL }, 1, "cannot run /nonexistent/prog" },
		{ "unknown backend", { "-b", "frob", "-g", "x=y", "--", namer, NULL }, 2, "no backend named 'frob'" },
		{ "static program", { "-g", "x=y", "--", stat_prog ? stat_prog : "/bin/true", NULL }, 1, "statically linked" },
		{ "missing config", { "-c", "/nonexistent.conf", "--", namer, NULL }, 1, "cannot read /nonexistent.conf" },
		{ "bad config", { "-c", bad_conf, "--", namer, NULL }, 2, ":2: rule 1" },
		{ "dry run", { "-n", "-c", conf, "--", namer, "names", NULL }, 0, "RGROUP_RUN_RULES='work=work-*" },
		{ "setuid program", { "-g", "x=y", "--", suid, NULL }, 1, "secure-execution mode" },
	};
	size_t ncases = sizeof(cases) / sizeof(cases[0]);
	FILE *f;

	snprintf(conf, sizeof(conf), "/tmp/rgtest-run-%d.conf", (int)getpid());
	snprintf(bad_conf, sizeof(bad_conf), "/tmp/rgtest-run-%d-bad.conf", (int)getpid());
	if ((f = fopen(conf, "w"))) {
		fputs("# the work threads\nwork=work-*:nice=3\n", f);
		fclose(f);
	}
	if ((f = fopen(bad_conf, "w"))) {
		fputs("# a typo\nwork=work-*:nise=3\n", f);
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
}

static const struct rgt_case cases[] = {
	{ "placement_by_name", placement_by_name },
	{ "nested_settings", nested_settings },
	{ "fork_keeps_rules", fork_keeps_rules },
	{ "fork_no_inherit", fork_no_inherit },
	{ "exec_keeps_rules", exec_keeps_rules },
	{ "exec_no_inherit", exec_no_inherit },
	{ "spawn_outside", spawn_outside },
	{ "governor_signal", governor_signal },
	{ "tree_names", tree_names },
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
