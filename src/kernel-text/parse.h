/* SPDX-License-Identifier: MIT */
/*
 * parse.h - pure parsers of the kernel's text files (parse.c): no I/O, no
 * allocation, no global state, outputs written only on success. The
 * library, the rgroup command, the tests and the fuzzers all use these.
 *
 * Errors: -EINVAL malformed text or arguments, -ENOENT not found,
 * -ENAMETOOLONG output buffer too small, -ERANGE a number overflows.
 */
#ifndef RGROUP_PARSE_H
#define RGROUP_PARSE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rgroup__mount {
	char point[PATH_MAX];  /* mount point, octal escapes decoded */
	char root[PATH_MAX];   /* root of the mount within its hierarchy */
	char dev[32];          /* major:minor: one hierarchy, however often mounted */
	int ro;                /* mounted read-only */
};

/* /proc/<pid>/cgroup text: the path of the v1 hierarchy whose controller
 * list holds `ctrl` as an exact token (ctrl NULL: the v2 "0::" line). */
int rgroup__parse_proc_cgroup(const char *text, const char *ctrl,
			      char *path, size_t len);
/* /proc/<pid>/mountinfo text: the first mount of fstype "cgroup" whose
 * super options hold `ctrl` as an exact token (ctrl NULL: fstype
 * "cgroup2"). */
int rgroup__parse_mountinfo(const char *text, const char *ctrl,
			    struct rgroup__mount *m);
/* The same, one mount after another: *pos starts at the text and is moved
 * past each match; -ENOENT after the last. */
int rgroup__parse_mountinfo_next(const char **pos, const char *ctrl,
				 struct rgroup__mount *m);
/* Directory of cgroup path `cgpath` under mount m (strips m->root). */
int rgroup__cgroup_dir(const struct rgroup__mount *m, const char *cgpath,
		       char *out, size_t len);
/* Keyed file ("key value" lines, e.g. cpu.stat): value of exact key. */
int rgroup__parse_keyed(const char *text, const char *key, uint64_t *val);
/* Space-separated token list (cgroup.controllers): 1 if tok is in it. */
int rgroup__has_token(const char *text, const char *tok);
/* cgroup.type text. */
enum rgroup__cgtype {
	RGROUP__CG_DOMAIN = 1,
	RGROUP__CG_DOMAIN_THREADED,
	RGROUP__CG_DOMAIN_INVALID,
	RGROUP__CG_THREADED,
};
int rgroup__parse_cgtype(const char *text);
/* Newline-separated tids (tasks, cgroup.threads): count, may exceed max. */
int rgroup__parse_tids(const char *text, pid_t *tids, size_t max);
/* A CPU set as the kernel's list format (cpuset.cpus: "0,2-3"), CPUs
 * below CPU_SETSIZE: length, or -ENAMETOOLONG. */
int rgroup__format_cpulist(const void *set, size_t setsize, char *out, size_t len);
/* The task's flags (field 9, PF_* of the kernel) from /proc/<pid>/stat text. */
int rgroup__parse_stat_flags(const char *text, uint64_t *flags);
/* Start time (field 22) from /proc/<pid>/stat text. */
int rgroup__parse_stat_starttime(const char *text, uint64_t *start);
/* CPU time (utime + stime, fields 14 and 15, in clock ticks) and nice
 * value (field 19) from /proc/<pid>/task/<tid>/stat text. */
int rgroup__parse_stat_cpu(const char *text, uint64_t *ticks, int *nice);

/* /proc/<pid>/task/<tid>/rgroup of a kernel with native rgroups (the
 * native backend, src/backends/native-uapi.h): "id parent depth nice usage_ns
 * attached", then, where the kernel has caps, "cap_quota_us cap_period_us
 * nr_throttled throttled_us"; more fields may follow; id 0: the thread is
 * in no rgroup. */
struct rgroup__kgroup {
	uint64_t id, parent;
	unsigned int depth;
	int nice;
	uint64_t usage_ns;
	int attached;
	int has_cap;                  /* the four fields below were there */
	uint64_t cap_quota_us, cap_period_us;   /* 0 0: no cap */
	uint64_t nr_throttled, throttled_us;
	uint64_t threads;             /* a /proc/<pid>/rgroups line's */
};
int rgroup__parse_kgroup(const char *text, struct rgroup__kgroup *g);
/* One line of /proc/<pid>/rgroups: the same fields, but the sixth counts
 * the process's threads in the group itself (0 for a group that holds
 * only nested ones), in g->threads; g->attached is 0. */
int rgroup__parse_kgroup_list(const char *text, struct rgroup__kgroup *g);
/* The same, one line after another: *pos starts at the text and is moved
 * past each line that parses (others are skipped); -ENOENT after the
 * last. */
int rgroup__parse_kgroup_list_next(const char **pos, struct rgroup__kgroup *g);
/* The line of group id in /proc/<pid>/rgroups text: 0 and *g, or -ESRCH. */
int rgroup__find_kgroup_list(const char *text, uint64_t id, struct rgroup__kgroup *g);

/* rgroup directory names: "rgroup-<pid>-<starttime>-<id>". */
int rgroup__format_dirname(char *out, size_t len, pid_t pid, uint64_t start,
			   uint64_t id);
int rgroup__parse_dirname(const char *name, pid_t *pid, uint64_t *start,
			  uint64_t *id);
/* The same with the owner's PID namespace: a process outside the initial
 * one names its groups "rgroup-<pid>-<starttime>-<id>-ns<inode>", its pid
 * as its namespace sees it and that namespace's inode (/proc/PID/ns/pid);
 * *pidns is 0 for the short form. rgroup__parse_dirname() accepts both. */
int rgroup__format_dirname_ns(char *out, size_t len, pid_t pid, uint64_t start,
			      uint64_t pidns, uint64_t id);
int rgroup__parse_dirname_ns(const char *name, pid_t *pid, uint64_t *start,
			     uint64_t *pidns, uint64_t *id);
/* /proc/PID/status's "NSpid:" line: the pid in the process's own PID
 * namespace and how many namespaces list it. 0, -ENOENT (no such line),
 * -EINVAL, -ERANGE. */
int rgroup__parse_status_nspid(const char *text, pid_t *inner, int *levels);

/* ---- Building blocks for other parsers of the project's own text ------ */

/* A decimal at s: 0, *end after it; -EINVAL (no digit), -ERANGE. */
int rgroup__parse_u64(const char *s, const char **end, uint64_t *v);
/* Is [s, e) exactly str? */
bool rgroup__range_eq(const char *s, const char *e, const char *str);
/* A name of pid's from fmt into out[len], whole or not at all: 0, -EINVAL
 * (pid not positive), -ENAMETOOLONG. */
int rgroup__format_name(char *out, size_t len, pid_t pid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "rgroup-<pid>-<starttime>", the start of every name that names its
 * owner: 0 and *rest after it; outputs untouched on failure. */
int rgroup__parse_owner(const char *name, const char **rest, pid_t *pid,
			uint64_t *start);

#endif /* RGROUP_PARSE_H */
