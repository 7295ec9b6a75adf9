/* SPDX-License-Identifier: MIT */
/*
 * rgroup.c - the `rgroup` command: what works here and why (doctor), and
 * the article's scenarios measured on the real kernel (demo).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rgroup.h>

#include "locate.h"
#include "tool.h"

#ifndef RGROUP_TOOL_VERSION
#define RGROUP_TOOL_VERSION "unknown"
#endif

const char *tool_name = "rgroup";

static const char usage_text[] =
	"Usage: rgroup [--help] [--version] COMMAND [OPTIONS]\n"
	"\n"
	"Resource groups: thread-level CPU weight control inside one process.\n"
	"\n"
	"Commands:\n"
	"  doctor                      which backend this process would get, and\n"
	"                              for each backend why it can or cannot work\n"
	"  demo [--seconds N] [--no-sgroup]\n"
	"                              run the article's scenarios with busy threads\n"
	"                              and compare measured CPU shares with the\n"
	"                              ideal ones (N seconds each, default 4)\n"
	"  tree [PID] [--json]         the rgroup tree of process PID: nice, weight,\n"
	"                              threads, CPU time and the model's share;\n"
	"                              without PID the processes that use rgroups\n"
	"  top PID [-d SECONDS] [-s weight|share|used|name]\n"
	"                              live view of that tree: ideal and used shares\n"
	"                              (keys: q quit, s sort, +/- interval)\n"
	"  gc [--dry-run] [DIR...]     remove the rgroup directories that killed\n"
	"                              processes left (in DIRs, else in the cpu\n"
	"                              hierarchies); --dry-run only lists them\n"
	"  run [-g SPEC]... [-c FILE] [--dry-run] -- PROGRAM [ARGS...]\n"
	"                              start a program nobody changed with its\n"
	"                              threads put into rgroups by their names\n"
	"  set PID GROUP SETTING...    change a group of a program under rgroup run\n"
	"                              while it runs (nice=N, cpus=LIST, max=P%)\n"
	"\n"
	"Options:\n"
	"  -h, --help                  show this help and exit\n"
	"  -V, --version               show the version and exit\n"
	"\n"
	"Environment: RGROUP_BACKEND=cgroup2|cgroup1|... forces a backend.\n"
	"Exit status: 0 success, 1 failure (see each command), 2 bad usage.\n";

int tool_usage_error(const char *sub, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool_name);
	if (sub)
		fprintf(stderr, "%s: ", sub);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s%s%s --help' for more information.\n",
		tool_name, sub ? " " : "", sub ? sub : "");
	return EXIT_USAGE;
}

void tool_print_cgroups(const char *indent)
{
	char text[8192];
	int r = rgroup__read_path("/proc/self/cgroup", text, sizeof(text));

	if (r < 0) {
		printf("%s(cannot read /proc/self/cgroup: %s)\n", indent, strerror(-r));
		return;
	}
	for (char *line = text, *nl; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		printf("%s%.*s\n", indent, (int)(nl - line), line);
		if (!*nl)
			break;
	}
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "doctor", cmd_doctor },
	{ "demo", cmd_demo },
	{ "tree", cmd_tree },
	{ "top", cmd_top },
	{ "gc", cmd_gc },
	{ "run", cmd_run },
	{ "set", cmd_set },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;  /* our own one-line messages */
	/* '+': stop at the first non-option, the subcommand's name. */
	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		case 'V':
			printf("rgroup %s\n", RGROUP_TOOL_VERSION);
			return EXIT_OK;
		default:
			if (optopt)
				return tool_usage_error(NULL, "unknown option '-%c'", optopt);
			return tool_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return tool_usage_error(NULL, "no command given");

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			int sub_argc = argc - optind;
			char **sub_argv = argv + optind;

			optind = 0;  /* glibc: a full re-initialisation of getopt */
			return commands[i].run(sub_argc, sub_argv);
		}
	}
	if (strcmp(argv[optind], "help") == 0) {
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	return tool_usage_error(NULL, "unknown command '%s'", argv[optind]);
}
