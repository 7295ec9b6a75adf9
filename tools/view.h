/* SPDX-License-Identifier: MIT */
/*
 * view.h - another process's rgroup tree as cgroupfs (or the governor's
 * state file) and /proc show it, for `rgroup tree` and `rgroup top`.
 *
 * The tool reads what any observer can read: the rgroup directories below
 * the process's sgroup on the hierarchy that carries the cpu controller
 * (cgroup v1 `cpu`, else cgroup v2), named rgroup-<pid>-<starttime>-<id>,
 * their weight files and thread lists, and the threads' CPU times in
 * /proc/PID/task/TID/stat. It never writes anything.
 *
 * A process on the governor backend has no rgroup directories: its
 * governor publishes the tree in /dev/shm/rgroup-<pid>-<starttime>.state
 * (src/governor/governor-state.h, rgroup(7)), which is read instead when it is there, is
 * owned by the process's user and names this very process (a file of an
 * earlier process with the same pid has another start time in its name).
 * Its groups' CPU time is, as on cgroup v1, the live members' CPU times
 * from /proc, plus what the file says exited members used.
 *
 * On a kernel with native rgroups nothing is in cgroupfs either: each
 * thread's /proc/PID/task/TID/rgroup names its group, its parent, depth,
 * nice and the group's CPU time, which is read first.
 *
 * Each thread's name, and each group's CPUs as its own threads'
 * Cpus_allowed_list shows them (a cpuset, or the affinity the backend
 * set: the same on every backend), come from /proc. On the cgroup
 * backends the group's cap (v1 cpu.cfs_quota_us and cpu.cfs_period_us,
 * v2 cpu.max) and throttling (cpu.stat: nr_throttled and throttled_time
 * on v1, throttled_usec on v2) come from its directory.
 *
 * Ideal shares come from the reference model (src/model/model.h): one pool node
 * for the sgroup holding, as the process sees it, its plain threads (those
 * in no rgroup, at their own nice weight) and its top-level rgroups (at
 * the group's weight), recursively. Other processes in the sgroup are left
 * out: the share is the fraction of *this process's* CPU time a group is
 * entitled to. A thread's demand is what the caller says (1 busy, 0 idle).
 */
#ifndef RGROUP_VIEW_H
#define RGROUP_VIEW_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#define VIEW_MAX_GROUPS 200
#define VIEW_MAX_THREADS 1024

struct view_thread {
	pid_t tid;
	int group;              /* index into view.groups, -1: plain (sgroup) */
	int nice;
	uint64_t ticks;         /* utime + stime, clock ticks */
	double demand;          /* set by the caller before view_model() */
	char name[16];          /* the kernel's name (comm), "?" if gone */
};

struct view_group {
	char name[64];          /* directory name */
	uint64_t id;            /* from the name */
	int parent;             /* index, -1: top-level (parent is the sgroup) */
	int depth;              /* 1 for a top-level rgroup */
	int nice;               /* v1: nearest nice of cpu.shares */
	unsigned int weight;    /* kernel weight (v1 cpu.shares) */
	int nthreads;           /* threads directly inside */
	int nthreads_total;     /* ... and in its descendants */
	double usage_s;         /* CPU seconds of the group and below */
	double throttled_s;     /* seconds its cap held it back (cgroupfs
	                         * cpu.stat, the native kernel's /proc, the
	                         * governor's pauses); -1 unknown */
	double ideal;           /* fraction of the process's CPU (model); -1:
	                         * unknown (more groups + threads than the
	                         * model's MODEL_MAX_NODES) */
	char label[128];        /* the group's name in the rules of `rgroup
	                         * run` (its preload publishes them), "" none */
	char cpus[256];         /* the CPUs its own threads may run on (their
	                         * Cpus_allowed_list, joined), "" no thread */
	long long quota_us;     /* its own cap (cgroupfs, native /proc): */
	long long period_us;    /* quota 0: none, -1: unknown */
	long long nr_throttled; /* periods the kernel throttled it (cgroupfs
	                         * cpu.stat, native /proc), -1 unknown */
};

struct view {
	pid_t pid;
	uint64_t starttime;
	char comm[64];          /* its command name ("?" if unreadable) */
	int v2;                 /* 1: cgroup v2, 0: cgroup v1 cpu */
	int gov;                /* 1: the governor's state file, not cgroupfs */
	const char *backend;    /* "cgroup1", "cgroup2", "governor" or "native" */
	char sgroup[PATH_MAX];  /* the sgroup's directory (cgroup backends) */
	char state[PATH_MAX];   /* the state file (governor) */
	double state_age_s;     /* how long ago the governor wrote it */
	char labels[PATH_MAX];  /* the rule names' file, "" none */
	int truncated;          /* the file was cut: groups are missing */
	int ncpus;              /* online CPUs */
	double capacity;        /* CPUs the model divides; 0: ncpus */
	int ngroups;
	struct view_group groups[VIEW_MAX_GROUPS];  /* pre-order */
	int nthreads;
	struct view_thread threads[VIEW_MAX_THREADS];
	int plain_threads;      /* threads in the sgroup itself */
	double plain_usage_s;
	double plain_ideal;
	double total_usage_s;   /* all live threads of the process */
	uint64_t total_ticks;
};

/* Errors of view_read(); view_strerror() gives the one-line message. */
enum {
	VIEW_ENOPROC = 1,       /* no such process */
	VIEW_EPERM,             /* another user's process (not root) */
	VIEW_ENORGROUP,         /* no rgroup directories and no state file */
	VIEW_EIO,               /* cgroupfs or /proc could not be read */
};

/* Parse a PID argument: 0 and *pid, or -1 (not a positive number). */
int view_parse_pid(const char *s, pid_t *pid);

/*
 * Read process pid's tree into *v (groups in pre-order, threads with their
 * CPU ticks, usage). Demands are left at 1. Returns 0 or a VIEW_E* code,
 * with a one-line reason in why.
 */
int view_read(struct view *v, pid_t pid, char *why, size_t len);

/*
 * For each process (but this one) that uses rgroups and may be read,
 * view_read() it into *v and call fn(v, arg); a non-zero return stops the
 * walk and is returned. -1 if /proc cannot be read (errno set), else 0.
 */
int view_each(struct view *v, int (*fn)(struct view *v, void *arg), void *arg);

/* Is pid still the live process whose start time is starttime (not a
 * zombie, not a later process with the same PID)? 1 or 0. A read that
 * fails while the process exits fails for that reason: callers ask this
 * before they report the failure. */
int view_alive(pid_t pid, uint64_t starttime);

/* Fill ideal/plain_ideal from the threads' demands and v->capacity (0:
 * all online CPUs). 0 or -errno (then every ideal is -1). */
int view_model(struct view *v);

/* What a table shows of group g: its name (the rule's, else the
 * directory's); its own cap in percent of one CPU ("50%"; "-" none, "?"
 * unknown), in buf. */
const char *view_group_name(const struct view_group *g);
const char *view_cap_text(const struct view_group *g, char *buf, size_t len);

/* Seconds per clock tick. */
double view_tick(void);

#endif /* RGROUP_VIEW_H */
