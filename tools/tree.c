/* SPDX-License-Identifier: MIT */
/*
 * tree.c - rgroup tree PID [--json]: a process's rgroup tree as cgroupfs
 * (or, on the governor backend, its state file) shows it, with each
 * group's nice, weight, threads, CPU time and the share of the process's
 * CPU the reference model entitles it to; on the governor also the time
 * its threads were kept paused.
 *
 * The share here assumes every thread is busy (demand 1): a snapshot has
 * no interval to tell busy from idle threads; `rgroup top` measures that.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"
#include "view.h"

static const char tree_usage[] =
	"Usage: rgroup tree [PID] [--json]\n"
	"\n"
	"Without PID: the processes that use rgroups, one line each (PID, command,\n"
	"backend, groups, threads in them, the rules' names of its groups).\n"
	"\n"
	"Print the rgroup tree of process PID: each group's directory name, id,\n"
	"nice value, weight, threads (directly inside; their names and ids on the\n"
	"line below), CPU time used (seconds, the group and below) and the share\n"
	"of the process's CPU the reference model gives it when every thread of\n"
	"the process is busy. On the\n"
	"governor backend also PAUSED(s), the time the governor kept the\n"
	"group's threads paused, elsewhere THROTTLED(s), the time the kernel held\n"
	"it back at its cap; CPUS, where its threads may run, and CAP, its own cap.\n"
	"A group that rgroup run made is named by its rule.\n"
	"\n"
	"  --json        the same as JSON, one group per line\n"
	"  -h, --help    show this help\n";

/* JSON string: names here are [A-Za-z0-9-] but escape anyway. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* A share or time for JSON: null when unknown (< 0). One static buffer
 * per call site would be needed for two in one printf: callers use one at
 * a time. */
static const char *num(double x)
{
	static char buf[32];

	if (x < 0)
		return "null";
	snprintf(buf, sizeof(buf), "%.4f", x);
	return buf;
}

/* A share for the text table: "-" when unknown. */
static const char *pct(double x)
{
	static char buf[16];

	if (x < 0)
		return "-";
	snprintf(buf, sizeof(buf), "%.1f%%", 100 * x);
	return buf;
}

/* A JSON string, or null for an empty one (what the backend has not). */
static void json_str_or_null(int have, const char *s)
{
	if (have)
		json_str(s);
	else
		fputs("null", stdout);
}

/* A count or time for JSON: null when unknown (< 0). */
static void json_ll(long long x)
{
	if (x < 0)
		fputs("null", stdout);
	else
		printf("%lld", x);
}

/* The threads of group g (-1: the plain ones): [{"tid":N,"name":"..."}]. */
static void json_members(const struct view *v, int g)
{
	int n = 0;

	putchar('[');
	for (int i = 0; i < v->nthreads; i++) {
		if (v->threads[i].group != g)
			continue;
		printf("%s{\"tid\":%d,\"name\":", n++ ? "," : "", (int)v->threads[i].tid);
		json_str(v->threads[i].name);
		putchar('}');
	}
	putchar(']');
}

static void print_json(const struct view *v)
{
	printf("{\"pid\":%d,\"backend\":\"%s\",\"cgroup\":", (int)v->pid, v->backend);
	json_str_or_null(!v->gov, v->v2 ? "v2" : "v1");
	fputs(",\"sgroup\":", stdout);
	json_str_or_null(!v->gov, v->sgroup);
	fputs(",\"state\":", stdout);
	json_str_or_null(v->gov, v->state);
	if (v->gov)
		printf(",\"state_age_s\":%.3f,\"truncated\":%s", v->state_age_s,
		       v->truncated ? "true" : "false");
	printf(",\"cpus\":%d,\"demand\":\"1 per thread\",\n\"groups\":[\n", v->ncpus);
	for (int i = 0; i < v->ngroups; i++) {
		const struct view_group *g = &v->groups[i];

		printf("{\"name\":");
		json_str(g->name);
		printf(",\"id\":%llu,\"parent\":%llu,\"depth\":%d,\"nice\":%d,"
		       "\"weight\":%u,\"threads\":%d,\"threads_total\":%d,"
		       "\"usage_s\":%.3f,\"ideal\":%s,",
		       (unsigned long long)g->id,
		       g->parent < 0 ? 0ull : (unsigned long long)v->groups[g->parent].id,
		       g->depth, g->nice, g->weight, g->nthreads, g->nthreads_total,
		       g->usage_s, num(g->ideal));
		/* num() has one buffer: a second call in one printf would
		 * overwrite the first. */
		printf("\"throttled_s\":%s,\"rule\":", num(g->throttled_s));
		json_str_or_null(g->label[0], g->label);
		fputs(",\"cpus\":", stdout);
		json_str_or_null(g->cpus[0], g->cpus);
		fputs(",\"cap_quota_us\":", stdout);
		json_ll(g->quota_us < 0 ? -1 : g->quota_us ? g->quota_us : -1);
		fputs(",\"cap_period_us\":", stdout);
		json_ll(g->quota_us > 0 ? g->period_us : -1);
		fputs(",\"nr_throttled\":", stdout);
		json_ll(g->nr_throttled);
		fputs(",\"members\":", stdout);
		json_members(v, i);
		printf("}%s\n", i + 1 < v->ngroups ? "," : "");
	}
	printf("],\n\"plain\":{\"threads\":%d,\"usage_s\":%.3f,\"ideal\":%s,\"members\":",
	       v->plain_threads, v->plain_usage_s, num(v->plain_ideal));
	json_members(v, -1);
	printf("},\n");
	printf("\"total\":{\"groups\":%d,\"threads\":%d,\"usage_s\":%.3f}}\n",
	       v->ngroups, v->nthreads, v->total_usage_s);
}

/* Where each thread went (`rgroup run` places threads by name): the
 * names of group g's own threads (-1: the plain ones), under its line. */
static void print_names(const struct view *v, int g, int indent)
{
	int n = 0;

	for (int i = 0; i < v->nthreads; i++) {
		if (v->threads[i].group != g)
			continue;
		if (n == 8) {
			printf(", ...");
			break;
		}
		if (!n)
			printf("%*s", indent + 4, "");
		printf("%s'%s' %d", n++ ? ", " : "", v->threads[i].name, (int)v->threads[i].tid);
	}
	if (n)
		putchar('\n');
}

static void print_text(const struct view *v)
{
	const char *thr = v->gov ? "PAUSED(s)" : "THROTTLED(s)";
	char cap[32];
	int width = (int)strlen("(plain threads)");
	for (int i = 0; i < v->ngroups; i++) {
		int w = 2 * (v->groups[i].depth - 1) + (int)strlen(view_group_name(&v->groups[i]));
		if (w > width)
			width = w;
	}
	if (v->gov)
		printf("process %d (%s), backend governor, state %s (%.1f s old), %d CPUs\n",
		       (int)v->pid, v->comm, v->state, v->state_age_s, v->ncpus);
	else
		printf("process %d (%s), backend %s, cgroup %s, sgroup %s, %d CPUs\n",
		       (int)v->pid, v->comm, v->backend, v->v2 ? "v2" : "v1 cpu", v->sgroup,
		       v->ncpus);
	printf("%-*s %6s %5s %6s %7s %9s %6s %-9s %5s %12s\n", width, "GROUP", "ID", "NICE",
	       "WEIGHT", "THREADS", "CPU(s)", "SHARE", "CPUS", "CAP", thr);
	printf("%-*s %6s %5s %6s %7d %9.2f %6s %-9s %5s %12s\n", width, "(plain threads)",
	       "-", "-", "-", v->plain_threads, v->plain_usage_s, pct(v->plain_ideal), "-", "-",
	       "-");
	print_names(v, -1, 0);
	for (int i = 0; i < v->ngroups; i++) {
		const struct view_group *g = &v->groups[i];
		int indent = 2 * (g->depth - 1);

		printf("%*s%-*s %6llu %5d %6u %7d %9.2f %6s %-9s %5s ", indent, "",
		       width - indent, view_group_name(g), (unsigned long long)g->id, g->nice,
		       g->weight, g->nthreads, g->usage_s, pct(g->ideal),
		       g->cpus[0] ? g->cpus : "-", view_cap_text(g, cap, sizeof(cap)));
		if (g->throttled_s < 0)
			printf("%12s\n", "-");
		else
			printf("%12.2f\n", g->throttled_s);
		print_names(v, i, indent);
	}
	printf("%-*s %6s %5s %6s %7d %9.2f %6s\n", width, "total", "", "", "",
	       v->nthreads, v->total_usage_s, "100.0%");
	if (v->truncated)
		printf("(the state file was cut short: some groups are missing)\n");
	printf("SHARE: the reference model's fraction of this process's CPU, every thread\n"
	       "counted busy; a group's CPU and share include its child groups. Under each\n"
	       "line: the names and ids of the group's own threads. GROUP: the name the\n"
	       "rules of rgroup run give it, else its directory's. CPUS: where its own\n"
	       "threads may run. CAP: its own cap, in percent of one CPU (- none).\n");
	if (v->gov)
		printf("PAUSED: the time the governor kept the group's threads paused.\n");
	else
		printf("THROTTLED: the time the kernel held the group back at its cap.\n");
}

/*
 * No PID: every process that has rgroups (that the caller may look at),
 * one line each, or one JSON object with a "processes" array. Processes
 * come and go during the walk: one that is gone or has no rgroups is
 * left out, as is another user's (unless root).
 */
struct list { int json, n; };

static int list_one(struct view *v, void *arg)
{
	struct list *l = arg;
	int in = 0;

	for (int i = 0; i < v->ngroups; i++)
		in += v->groups[i].nthreads;
	if (l->json) {
		printf("%s{\"pid\":%d,\"comm\":", l->n ? ",\n" : "", (int)v->pid);
		json_str(v->comm);
		printf(",\"backend\":\"%s\",\"groups\":%d,\"threads\":%d,\"rules\":[",
		       v->backend, v->ngroups, in);
	} else {
		printf("%7d %-16s %-9s %6d %7d ", (int)v->pid, v->comm, v->backend, v->ngroups, in);
	}
	for (int i = 0, k = 0; i < v->ngroups; i++) {
		if (!v->groups[i].label[0])
			continue;
		if (l->json) {
			printf("%s", k++ ? "," : "");
			json_str(v->groups[i].label);
		} else {
			printf("%s%s", k++ ? "," : "", v->groups[i].label);
		}
	}
	if (l->json)
		printf("]}");
	else
		putchar('\n');
	l->n++;
	return 0;
}

static int print_list(int json)
{
	static struct view v;
	struct list l = { json, 0 };

	if (json)
		printf("{\"processes\":[\n");
	else
		printf("%7s %-16s %-9s %6s %7s %s\n", "PID", "COMMAND", "BACKEND", "GROUPS",
		       "THREADS", "RULES");
	if (view_each(&v, list_one, &l) < 0) {
		fprintf(stderr, "%s tree: cannot read /proc: %s\n", tool_name, strerror(errno));
		return EXIT_FAIL;
	}
	if (json)
		printf("%s]}\n", l.n ? "\n" : "");
	else if (!l.n)
		printf("(no process that you may inspect uses rgroups)\n");
	return EXIT_OK;
}

int cmd_tree(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct view v;
	char why[512];
	int c, json = 0;
	pid_t pid;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(tree_usage, stdout);
			return EXIT_OK;
		default:
			if (optopt)
				return tool_usage_error("tree", "unknown option '-%c'", optopt);
			return tool_usage_error("tree", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return print_list(json);
	if (optind + 1 < argc)
		return tool_usage_error("tree", "too many arguments");
	if (view_parse_pid(argv[optind], &pid) < 0) {
		fprintf(stderr, "%s tree: '%s' is not a process ID\n", tool_name, argv[optind]);
		return EXIT_FAIL;
	}
	if (view_read(&v, pid, why, sizeof(why)) != 0) {
		fprintf(stderr, "%s tree: %s\n", tool_name, why);
		return EXIT_FAIL;
	}
	if (json)
		print_json(&v);
	else
		print_text(&v);
	return EXIT_OK;
}
