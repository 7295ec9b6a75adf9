/* SPDX-License-Identifier: MIT */
/*
 * run-util.h - what the tests of `rgroup run` share (run-util.c, compiled
 * once): start a program with its stdin and stdout piped, read its
 * report, see where each of its threads went, and measure their CPU.
 */
#ifndef RGROUP_TEST_RUN_UTIL_H
#define RGROUP_TEST_RUN_UTIL_H

#include <stddef.h>
#include <sys/types.h>

struct rt_proc {
	pid_t pid;
	int in;                 /* its stdin (write end), -1 closed */
	int out;                /* its stdout (read end) */
	int err;                /* its stderr (read end) */
	char buf[8192];         /* stdout not yet returned as lines */
	size_t nbuf;
};

/* Start argv[0] (a path) with `env` entries ("K=V"; NULL-terminated, may
 * be NULL) added to ours; entries "K=" remove K. 0 or -errno. */
int rt_spawn(struct rt_proc *p, char *const argv[], char *const env[]);
/* The next line of its stdout (without "\n") within `timeout` seconds: 0,
 * or -1 at the end or on timeout. */
int rt_line(struct rt_proc *p, char *line, size_t len, double timeout);
/* Read its stdout until a line starting with `prefix`, keeping every line
 * in `all` (if not NULL); 0 or -1. */
int rt_until(struct rt_proc *p, const char *prefix, char *all, size_t len, double timeout);
/* Its stderr so far (non-blocking), appended to out. */
void rt_stderr(struct rt_proc *p, char *out, size_t len);
/* Close its stdin (the namer then exits) and wait: its exit status, 128 +
 * signal, or -1; killed with SIGKILL after `timeout` seconds. */
int rt_finish(struct rt_proc *p, double timeout);

/* Where thread tid of process pid is. Cgroup backends: its group's path
 * on the hierarchy of controller `ctrl` ("cpu" for v1, NULL for v2),
 * relative to `sgroup` ("" for the sgroup itself). governor: "" or
 * "g<id>/g<id>..." from the process's state file (the governor publishes
 * it every 250 ms; no file: in no group, ""). A thread in a native
 * kernel rgroup: "k<id>/k<id>..." (/proc/PID/rgroups). 0, or -1 (gone). */
int rt_where(pid_t pid, pid_t tid, int governor, const char *ctrl, const char *sgroup,
	     char *out, size_t len);
/* Threads of pid whose name matches the glob: their tids, how many. */
int rt_threads(pid_t pid, const char *glob, pid_t *tids, int max);
/* CPU seconds (user + system) thread tid of process pid has used. */
double rt_cpu(pid_t pid, pid_t tid);
/* Measured shares mean something only if the machine's other load cannot
 * hold the program back: as root, a session of its own with its
 * autogroup raised to nice -15 (the kernel weighs sessions against each
 * other, whatever a thread's nice); children inherit it. Says what it did. */
void rt_boost_session(void);
double rt_now(void);
void rt_sleep(double s);

#endif /* RGROUP_TEST_RUN_UTIL_H */
