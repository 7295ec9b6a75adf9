/* SPDX-License-Identifier: MIT */
/*
 * tool.h - what the parts of the `rgroup` command share. The command uses
 * the public <rgroup.h> like any other program would, plus the project's
 * helpers that the library, the tests and the fuzzers share: the parsers
 * (src/kernel-text/parse.h), the locator and /proc readers (src/kernel-text/locate.h), the
 * governor's state file (src/governor/governor-state.h), the reference model
 * (src/model/model.h) and, for the demo, the scenario engine
 * (src/scenario/scenario.h). Never the library's insides (tree.h, backend.h,
 * cgroupfs.h).
 */
#ifndef RGROUP_TOOL_H
#define RGROUP_TOOL_H

#include <stddef.h>

/* Exit codes of every subcommand. */
#define EXIT_OK    0
#define EXIT_FAIL  1
#define EXIT_USAGE 2

extern const char *tool_name;   /* argv[0]'s base name, for messages */

/* Subcommands: argv[0] is the subcommand's name; getopt state is fresh. */
int cmd_doctor(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_tree(int argc, char **argv);   /* tree.c */
int cmd_top(int argc, char **argv);    /* top.c */
int cmd_gc(int argc, char **argv);     /* gc.c */
int cmd_run(int argc, char **argv);    /* run.c */
int cmd_set(int argc, char **argv);    /* set.c */

/* One-line "bad usage" message plus the hint; returns EXIT_USAGE. */
int tool_usage_error(const char *sub, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print the lines of /proc/self/cgroup, each prefixed by `indent`. */
void tool_print_cgroups(const char *indent);
/* `rgroup doctor`'s "where this process runs" and its fix (where.c). */
void tool_print_where(void);

#endif /* RGROUP_TOOL_H */
