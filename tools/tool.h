/* SPDX-License-Identifier: MIT */
/*
 * tool.h - what the parts of the `rgroup` command share. The command uses
 * only the public <rgroup.h> (plus the internal reference model for the
 * demo's ideal shares), like any other program would.
 */
#ifndef RGROUP_TOOL_H
#define RGROUP_TOOL_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

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

/* One-line "bad usage" message plus the hint; returns EXIT_USAGE. */
int tool_usage_error(const char *sub, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print the lines of /proc/self/cgroup, each prefixed by `indent`. */
void tool_print_cgroups(const char *indent);

/*
 * The demo's own system group (cgroup) on the hierarchy that carries the
 * cpu controller: made as a child of the process's current cgroup there,
 * entered before the library's first use, left and removed at the end.
 */
struct demo_sgroup {
	int made;               /* 1: `dir` exists because we made it */
	int entered;            /* 1: the process was moved into `dir` */
	int at_root;            /* the process's cpu group is its hierarchy's root */
	char kind[16];          /* "cgroup v1" or "cgroup v2" */
	char dir[PATH_MAX];     /* the group we made */
	char orig[PATH_MAX];    /* the process's group before (its parent) */
};

/* Make and enter the group. 0 on success; else a negative errno, `why`
 * says why in one line, and nothing is left behind (sg->made == 0). */
int demo_sgroup_enter(struct demo_sgroup *sg, char *why, size_t len);

/* Is the process in the root cgroup of the cpu hierarchy? 1, 0, or -errno. */
int demo_cpu_group_is_root(void);

/* Move the process back to sg->orig and remove sg->dir. Call only when the
 * process is single-threaded again and has no children. 0 or -errno with
 * `why`; a group that cannot be removed is named in `why`. */
int demo_sgroup_leave(struct demo_sgroup *sg, char *why, size_t len);

#endif /* RGROUP_TOOL_H */
