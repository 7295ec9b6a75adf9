/* SPDX-License-Identifier: MIT */
/*
 * tree - `rgroup tree` against a process with a known rgroup tree, on the
 * hierarchy RGROUP_BACKEND names. The VM runs it on cgroup v2 and on the
 * native kernel (groups from /proc, the sgroup on cgroup v2); the tools
 * suite covers cgroup1 (test/tools/test-tree-top.sh, with `top`).
 *
 * usage: tree RGROUP TREE-HELPER [CASE]
 *
 * The helper (test/tools/tree-helper.c) builds the tree in a system group
 * of its own and writes how `rgroup tree --json` must begin each group's
 * line. This program starts it, runs the tool on it and checks every
 * group's name, id, parent, depth, nice, weight and threads, the threads of
 * each subtree, the plain threads, CPU time counted up the tree, the text
 * form, and the tool's errors. The helper is stopped (SIGTERM: it removes
 * its groups and system group) also when a check fails.
 */
#include <signal.h>

#include "sgroup.h"

#define MAX_FACTS 8

static const char *tool, *helper;
static char facts[64], pidstr[16];
static pid_t hpid;
static int v2;

/* What the helper says of its tree. */
static struct {
	char name[64];
	char prefix[512];       /* how the group's JSON line starts */
	unsigned long long id, parent;
	unsigned int threads;
} fact[MAX_FACTS];
static int nfacts, plain = -1;

static void exec_tool(void *argv)
{
	execv(tool, argv);
}

/* Run the tool with up to three arguments (NULL ends them); its stdout
 * into out. Returns its exit status, or -1. */
static int run_tool(char *out, size_t len, const char *a1, const char *a2, const char *a3)
{
	const char *argv[] = { tool, a1, a2, a3, NULL };

	return rgt_capture(out, len, exec_tool, argv);
}

/* The number after "key": in a JSON line; -1 if there is none. */
static double json_num(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = line ? strstr(line, pat) : NULL;
	return p ? strtod(p + strlen(pat), NULL) : -1;
}

/* The tool's JSON line for group i, or NULL. */
static const char *group_line(const char *out, int i)
{
	char pat[96];

	snprintf(pat, sizeof(pat), "{\"name\":\"%s\"", fact[i].name);
	return strstr(out, pat);
}

static void stop_helper(void)
{
	int st = 0;

	if (hpid <= 0)
		return;
	kill(hpid, SIGTERM);
	for (int i = 0; i < 100 && waitpid(hpid, &st, WNOHANG) == 0; i++)
		scn_sleep(0.1);
	if (kill(hpid, 0) == 0) {
		kill(hpid, SIGKILL);
		waitpid(hpid, &st, 0);
		CHECK(0, "the helper did not stop within 10 s of SIGTERM (killed; its groups stay)");
	} else {
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the helper's status %#x", st);
	}
	hpid = 0;
	unlink(facts);
}

/* Start the helper and read its facts; exits (skip or fail) when it
 * cannot run. */
static void start_helper(void)
{
	char text[4096], *line, *save;
	int st;

	snprintf(facts, sizeof(facts), "/tmp/rgtest-tree-facts-%d", (int)getpid());
	fflush(stderr);
	hpid = fork();
	if (hpid == 0) {
		execl(helper, helper, facts, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && !rgt_exists(facts); i++) {
		if (waitpid(hpid, &st, WNOHANG) == hpid) {
			hpid = 0;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
				rgt_skip_all("the helper cannot run here (its reason above)");
			fprintf(stderr, "FAIL: the helper exited (status %#x) before describing its tree\n", st);
			exit(1);
		}
		scn_sleep(0.1);
	}
	if (rgt_read(facts, text, sizeof(text)) < 0) {
		stop_helper();
		fprintf(stderr, "FAIL: no facts from the helper in 10 s\n");
		exit(1);
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int n;

		if (sscanf(line, "plain %d", &plain) == 1 || sscanf(line, "pid %15s", pidstr) == 1)
			continue;
		if (strncmp(line, "group ", 6) != 0 || nfacts == MAX_FACTS)
			continue;
		if (sscanf(line, "group %63s %n", fact[nfacts].name, &n) != 1)
			continue;
		snprintf(fact[nfacts].prefix, sizeof(fact[nfacts].prefix), "%s", line + n);
		if (sscanf(line + n, "{\"name\":\"%*[^\"]\",\"id\":%llu,\"parent\":%llu,"
			   "\"depth\":%*u,\"nice\":%*d,\"weight\":%*u,\"threads\":%u",
			   &fact[nfacts].id, &fact[nfacts].parent, &fact[nfacts].threads) == 3)
			nfacts++;
	}
	if (!nfacts || plain < 0 || !pidstr[0]) {
		stop_helper();
		fprintf(stderr, "FAIL: cannot read the helper's facts:\n%s\n", text);
		exit(1);
	}
	fprintf(stderr, "helper %s: %d groups, %d plain threads\n", pidstr, nfacts, plain);
}

/* Threads in group i and the groups below it, from the facts. */
static unsigned int subtree_threads(int i)
{
	unsigned int n = fact[i].threads;

	for (int j = 0; j < nfacts; j++)
		if (fact[j].parent == fact[i].id)
			n += subtree_threads(j);
	return n;
}

static void tree_json(void)
{
	static char out[1 << 16];
	const char *cg = v2 ? "\"cgroup\":\"v2\"" : "\"cgroup\":\"v1\"";
	char want[64];
	int rc, lines = 0;

	/* The spinning groups (see the helper) get some CPU time first. */
	scn_sleep(0.3);
	rc = run_tool(out, sizeof(out), "tree", pidstr, "--json");
	CHECK(rc == 0, "rgroup tree --json exited %d", rc);
	CHECK(strstr(out, cg) != NULL, "no %s", cg);
	snprintf(want, sizeof(want), "\"plain\":{\"threads\":%d,", plain);
	CHECK(strstr(out, want) != NULL, "expected %s", want);
	/* "rgroup-PID-START-ID" directories; the native kernel's "rgroup#ID". */
	for (const char *p = out; (p = strstr(p, "\n{\"name\":\"rgroup")); p++)
		lines++;
	CHECK(lines == nfacts, "%d groups shown, %d made", lines, nfacts);
	for (int i = 0; i < nfacts; i++) {
		const char *line = group_line(out, i);
		double total = json_num(line, "threads_total"), usage = json_num(line, "usage_s");

		CHECK(strstr(out, fact[i].prefix) != NULL, "no line starts %s", fact[i].prefix);
		CHECK(total == subtree_threads(i), "%s: threads_total %.0f, expected %u",
		      fact[i].name, total, subtree_threads(i));
		CHECK(usage >= 0, "%s: usage_s %.3f", fact[i].name, usage);
		/* A group's CPU time includes its children's (cpu.stat on v2,
		 * the tool's sum on v1); read one after the other, a child
		 * may gain a little meanwhile. Spinning threads are below every
		 * group with children (see the helper). */
		for (int j = 0; j < nfacts; j++) {
			if (fact[j].parent != fact[i].id)
				continue;
			double child = json_num(group_line(out, j), "usage_s");
			CHECK(usage + 0.05 >= child && child > 0, "%s: usage_s %.3f, its child %s %.3f",
			      fact[i].name, usage, fact[j].name, child);
		}
	}
	if (rgt_failures || getenv("RGROUP_TEST_VERBOSE"))
		fprintf(stderr, "rgroup tree %s --json said:\n%s", pidstr, out);
}

static void tree_text(void)
{
	static char out[1 << 16];
	const char *cg = v2 ? "cgroup v2" : "cgroup v1 cpu";
	int rc = run_tool(out, sizeof(out), "tree", pidstr, NULL);

	CHECK(rc == 0, "rgroup tree exited %d", rc);
	CHECK(strstr(out, cg) != NULL, "no '%s' in the heading", cg);
	for (int i = 0; i < nfacts; i++)
		CHECK(strstr(out, fact[i].name) != NULL, "%s missing", fact[i].name);
	CHECK(strstr(out, "\ntotal ") != NULL, "no total line");
	fprintf(stderr, "%s", out);
}

/* Bad input: not a number, no such process, a process without rgroups
 * (1, one line on stderr each). No PID: the list of processes that use
 * rgroups (0), the helper in it. */
static void tree_errors(void)
{
	char out[4096], self[16], gone[16], line[32];
	int st;
	pid_t dead = fork();

	if (dead == 0)
		_exit(0);
	waitpid(dead, &st, 0);
	snprintf(gone, sizeof(gone), "%d", (int)dead);
	snprintf(self, sizeof(self), "%d", (int)getpid());
	CHECK(run_tool(out, sizeof(out), "tree", NULL, NULL) == 0, "no PID: exit 0");
	snprintf(line, sizeof(line), "\n%7d ", (int)hpid);
	CHECK(strstr(out, line) != NULL, "no PID: the helper %d is listed: %s", (int)hpid, out);
	CHECK(run_tool(out, sizeof(out), "tree", "abc", NULL) == 1, "not a number: exit 1");
	CHECK(run_tool(out, sizeof(out), "tree", gone, NULL) == 1, "no such process: exit 1");
	CHECK(run_tool(out, sizeof(out), "tree", self, "--json") == 1, "a process without rgroups: exit 1");
}

static const struct rgt_case cases[] = {
	{ "tree_json", tree_json },
	{ "tree_text", tree_text },
	{ "tree_errors", tree_errors },
};

int main(int argc, char **argv)
{
	const char *be = getenv("RGROUP_BACKEND");
	int r;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: tree RGROUP TREE-HELPER [CASE]\n");
		return 2;
	}
	tool = argv[1];
	helper = argv[2];
	if (!be || (strcmp(be, "cgroup2") && strcmp(be, "cgroup1") && strcmp(be, "native")))
		rgt_skip_all("RGROUP_BACKEND is not cgroup2, cgroup1 or native: the harness names the hierarchy");
	if (geteuid() != 0)
		rgt_skip_all("needs root: the helper makes a system group of its own");
	v2 = strcmp(be, "cgroup2") == 0 || strcmp(be, "native") == 0;
	start_helper();
	r = rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc - 2, argv + 2);
	stop_helper();
	return rgt_failures ? 1 : r;
}
