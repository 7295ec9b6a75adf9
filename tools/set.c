/* SPDX-License-Identifier: MIT */
/*
 * set.c - rgroup set: change a group of a program running under
 * `rgroup run`, while it runs. The program's preload makes the change,
 * with the program's own rights and the library's rules; this command
 * only asks (src/run/control.h says how, and who may).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "locate.h"
#include "parse.h"
#include "run-spec.h"
#include "tool.h"

static const char set_usage[] =
	"Usage: rgroup set PID GROUP SETTING[,SETTING]... [SETTING]...\n"
	"\n"
	"Change group GROUP of process PID, a program started with `rgroup run`,\n"
	"while it runs, as if its rule had said so from the start. SETTING is\n"
	"nice=N (-20..19), cpus=LIST or cpus=none, max=P% or max=QUOTA/PERIOD or\n"
	"max=none (none: the group's own set or cap is lifted). The program makes\n"
	"the change itself, with its own rights: a top-level group's nice can go\n"
	"below the program's own only with RLIMIT_NICE or CAP_SYS_NICE there\n"
	"(rule 6); a child group only narrows its parent. Only the program's user,\n"
	"or root, may ask. A group that has no thread now gets the settings when\n"
	"it is made again. `rgroup tree PID` shows the result.\n"
	"\n"
	"Options:\n"
	"  -h, --help   show this help and exit\n"
	"\n"
	"Exit status: 0 changed, 1 not changed (the reason is printed), 2 bad usage.\n";

/* pid's start time and its pid in its own PID namespace: 0 or -errno. */
static int identify(pid_t pid, uint64_t *start, pid_t *ns_pid)
{
	char path[64], text[4096];
	const char *p;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = rgroup__read_path(path, text, sizeof(text));
	if (r < 0)
		return r;
	if (rgroup__parse_stat_starttime(text, start) < 0)
		return -EINVAL;
	*ns_pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (rgroup__read_path(path, text, sizeof(text)) >= 0 && (p = strstr(text, "\nNSpid:"))) {
		const char *end = strchrnul(p + 1, '\n'), *last = NULL;

		/* The last number of the line: the innermost namespace's. */
		for (p += 7; p < end; p++)
			if ((*p >= '0' && *p <= '9') && (p[-1] == ' ' || p[-1] == '\t'))
				last = p;
		if (last)
			*ns_pid = (pid_t)atoi(last);
	}
	return 0;
}

int cmd_set(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct rgroup__run_rules probe, out;
	char settings[RGROUP__CONTROL_LINE - RGROUP__RUN_PATH_LEN - 8], msg[RGROUP__CONTROL_LINE];
	char spec[RGROUP__RUN_PATH_LEN + 8], *end;
	size_t off = 0;
	unsigned int what;
	uint64_t start;
	pid_t ns_pid;
	long pid;
	int c, r;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(set_usage, stdout);
			return EXIT_OK;
		}
		return tool_usage_error("set", "unknown option '%s'", argv[optind - 1]);
	}
	if (argc - optind < 3)
		return tool_usage_error("set", "want PID GROUP SETTING (for example: rgroup set 1234 bg nice=10)");
	errno = 0;
	pid = strtol(argv[optind], &end, 10);
	if (errno || *end || end == argv[optind] || pid <= 0 || pid > INT_MAX)
		return tool_usage_error("set", "'%s' is not a process id", argv[optind]);
	for (int i = optind + 2; i < argc; i++) {
		int n = snprintf(settings + off, sizeof(settings) - off, "%s%s", off ? "," : "", argv[i]);

		if (n < 0 || (size_t)n >= sizeof(settings) - off)
			return tool_usage_error("set", "the settings are too long");
		off += (size_t)n;
	}
	/* The settings' form is checked here, against a stand-in rule; how
	 * they fit the program's other groups, there. */
	const char *group = argv[optind + 1];
	rgroup__run_init(&probe);
	if (snprintf(spec, sizeof(spec), "%s=x", group) >= (int)sizeof(spec) ||
	    rgroup__run_add(&probe, spec, msg, sizeof(msg)) < 0)
		return tool_usage_error("set", "'%s' is not a group name (a path of names of letters, digits, '_', '.', '-')", group);
	r = rgroup__run_change(&probe, &out, group, settings, &what, msg, sizeof(msg));
	if (r < 0)
		return tool_usage_error("set", "%s", msg);

	r = identify((pid_t)pid, &start, &ns_pid);
	if (r < 0) {
		fprintf(stderr, "%s: set: pid %ld: %s\n", tool_name, pid,
			r == -ENOENT ? "no such process" : strerror(-r));
		return EXIT_FAIL;
	}
	r = rgroup__control_call((pid_t)pid, ns_pid, start, group, settings, msg, sizeof(msg));
	if (r != 0) {
		fprintf(stderr, "%s: set: pid %ld: %s\n", tool_name, pid, msg);
		return EXIT_FAIL;
	}
	printf("pid %ld: %s\n", pid, msg);
	return EXIT_OK;
}
