/* SPDX-License-Identifier: MIT */
/*
 * run-spec.h - the rules of `rgroup run` (run-spec.c): which thread names
 * go into which rgroup, and each group's settings. Pure: no I/O, no
 * allocation, no global state (the preload parses them in a constructor,
 * the rgroup command for --dry-run and its checks, the fuzzer anywhere).
 *
 * One rule (a SPEC, given with --group or as a line of a config file):
 *
 *   GROUP[=PATTERN[,PATTERN]...][:SETTING[,SETTING]...]
 *
 *   GROUP     a path of names, parents first: "bg", "bg/compaction".
 *             Names are [A-Za-z0-9_.-]; a parent named only as a path
 *             component exists as long as a child does.
 *   PATTERN   a shell glob (fnmatch(3)) on the thread's kernel name, at
 *             most 15 characters ("CPU [0-9]/TCG", "rocksdb:low*",
 *             "GC Thread#[0-9]"). A backslash takes the next character
 *             literally: "\," and "\:" for a comma or a colon that would
 *             otherwise end the pattern, "\*" for a star.
 *   SETTING   nice=N (-20..19), cpus=LIST (CPU numbers and ranges,
 *             "0,2-3"), max=P% (a cap of P% of one CPU, period 100 ms)
 *             or max=QUOTA/PERIOD (microseconds, as cgroup v2's cpu.max).
 *
 * The settings start at the first ':' (outside a bracket expression)
 * followed by a setting's name and '=': a colon in a thread name, as in
 * "rocksdb:low", needs no escape. A config file holds one SPEC per line;
 * blank lines and lines whose first non-blank character is '#' are
 * ignored ('#' elsewhere belongs to the pattern: "GC Thread#0").
 *
 * A thread name is matched against the patterns in the order they were
 * given; the first match decides. A child group only narrows its parent:
 * its cpus a subset of the parent's, its cap at most the parent's
 * (rgroup__run_check()).
 */
#ifndef RGROUP_RUN_SPEC_H
#define RGROUP_RUN_SPEC_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RGROUP__RUN_MAX_GROUPS   64
#define RGROUP__RUN_MAX_PATTERNS 256
#define RGROUP__RUN_MAX_DEPTH    8
#define RGROUP__RUN_PATH_LEN     128   /* a group path, NUL included */
#define RGROUP__RUN_PATTERN_LEN  128   /* a pattern as fnmatch sees it */
#define RGROUP__RUN_NAME_LEN     15    /* the kernel's thread name (comm) */
#define RGROUP__RUN_PERIOD_US    100000 /* the period of max=P% */
#define RGROUP__RUN_MAX_CPUS     1024  /* CPU numbers 0..1023 (CPU_SETSIZE) */

struct rgroup__run_group {
	char path[RGROUP__RUN_PATH_LEN];
	int parent;                  /* index, -1: top-level */
	unsigned int depth;          /* 1: top-level */
	unsigned int origin;         /* rule number (1, 2, ...) that defined
	                              * it, 0: only implied as a parent */
	unsigned int npatterns;
	int has_nice;
	int nice;
	int has_cpus;
	cpu_set_t cpus;
	uint64_t quota_us;           /* 0: no cap */
	uint64_t period_us;
};

struct rgroup__run_pattern {
	char glob[RGROUP__RUN_PATTERN_LEN];
	int group;
};

struct rgroup__run_rules {
	unsigned int ngroups, npatterns, nrules;
	struct rgroup__run_group groups[RGROUP__RUN_MAX_GROUPS]; /* parents first */
	struct rgroup__run_pattern patterns[RGROUP__RUN_MAX_PATTERNS]; /* in order */
};

void rgroup__run_init(struct rgroup__run_rules *r);

/*
 * Add one SPEC. 0, or -EINVAL (malformed; one line in err saying what and
 * where), -EEXIST (the group was already defined by another rule), -ENOSPC
 * (a limit above). On failure *r is unchanged.
 */
int rgroup__run_add(struct rgroup__run_rules *r, const char *spec, char *err, size_t len);

/*
 * Add the rules of a config file's text, one per line; '#' at the start
 * of a line or after a blank starts a comment. `name` prefixes
 * messages ("FILE:LINE: ..."). 0 or the first rule's error; the rules
 * before it stay added (the caller stops anyway).
 */
int rgroup__run_add_text(struct rgroup__run_rules *r, const char *text, const char *name,
			 char *err, size_t len);

/*
 * Check the whole set: every group can get threads (patterns, or a child
 * that has them), a child's cpus are within its parent's (nearest
 * ancestor with cpus) and its cap at most the parent's. 0, or -EINVAL and
 * the first problem in err.
 */
int rgroup__run_check(const struct rgroup__run_rules *r, char *err, size_t len);

/* The group whose pattern matches thread name `name` first, or -1. */
int rgroup__run_match(const struct rgroup__run_rules *r, const char *name);

/*
 * The rules as text that rgroup__run_add_text() reads back to the same
 * rules: one SPEC per line, for the environment (RGROUP_RUN_RULES). Length
 * written (NUL not counted), or -ENAMETOOLONG when it does not fit.
 */
int rgroup__run_format(const struct rgroup__run_rules *r, char *out, size_t len);

/* One group's settings as a SPEC writes them ("nice=5,cpus=0-1,max=50%"),
 * empty when it has none; -ENAMETOOLONG when it does not fit. */
int rgroup__run_format_settings(const struct rgroup__run_group *g, char *out, size_t len);

/* A CPU set as a list ("0,2-3"); -ENAMETOOLONG when it does not fit. And
 * the reverse: 0 or -EINVAL (with the reason in err). */
int rgroup__run_format_cpus(const cpu_set_t *set, char *out, size_t len);
int rgroup__run_parse_cpus(const char *s, const char *end, cpu_set_t *set, char *err,
			   size_t len);

/* Is `pat` a glob that can match a thread name? 0, or -EINVAL with why:
 * an unclosed '[', a trailing '\', a control character, or more than 15
 * characters that every match must have. */
int rgroup__run_check_glob(const char *pat, char *err, size_t len);

/*
 * A change of one group's settings while the program runs (`rgroup set`):
 * `settings` as a SPEC gives them ("nice=5", "cpus=0-1,max=50%"), where
 * cpus=none and max=none lift the group's own set or cap. *out is *r
 * with the change, checked as a whole (rgroup__run_check()); *what says
 * which settings were given (RGROUP__RUN_NICE | _CPUS | _MAX). The
 * group's index, or -ENOENT (no such group) or -EINVAL, with why in err.
 */
#define RGROUP__RUN_NICE 1u
#define RGROUP__RUN_CPUS 2u
#define RGROUP__RUN_MAX  4u
int rgroup__run_change(const struct rgroup__run_rules *r, struct rgroup__run_rules *out,
		       const char *path, const char *settings, unsigned int *what, char *err,
		       size_t len);

/*
 * The rules' names of a process's groups, as its preload publishes them
 * for `rgroup tree` and `rgroup top` (which see only group ids): the file
 * DIR/rgroup-<pid>-<starttime>.names, mode 0600: a first line "# rgroup-names
 * pidns=N" (its PID namespace, for a collector in another: locate.h), then
 * one line "ID PATH[ SETTINGS]" per group it made, replaced whole (rename) when a group is
 * made, removed at exit; a killed process's is collected by `rgroup gc`.
 * A group with settings has them after its path, as a SPEC writes them:
 * "ID PATH nice=5,cpus=0-1,max=50%".
 * The name, and back (tmp: the ".names.tmp" a writer renames): 0 or
 * -EINVAL / -ENAMETOOLONG.
 */
/* DIR: the first of these that the writer may write in (a minimal system
 * has no /dev/shm); readers and `rgroup gc` look in each. */
#define RGROUP__RUN_NAMES_DIRS  { "/dev/shm", "/tmp" }
#define RGROUP__RUN_NAMES_NDIRS 2
int rgroup__run_names_name(char *out, size_t len, pid_t pid, uint64_t start, int tmp);
int rgroup__run_parse_names_name(const char *name, pid_t *pid, uint64_t *start, int *tmp);

#endif /* RGROUP_RUN_SPEC_H */
