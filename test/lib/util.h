/* SPDX-License-Identifier: MIT */
/*
 * util.h - the small helpers every test program uses (util.c): files,
 * child processes, descriptors, capabilities; with the scenario engine's
 * clocks, waits and CPU times (src/scenario/sysutil.h). None of them
 * needs the library, so that the VM's environment canary
 * (test/vm/smoke.c) can use them before any rgroup code runs. Files are
 * read with the project's one reader, rgroup__read_path()
 * (src/kernel-text/locate.h).
 */
#ifndef RGROUP_TEST_UTIL_H
#define RGROUP_TEST_UTIL_H

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

#include "sysutil.h"

/* A whole file into buf, NUL-terminated: its length, or -errno (-EFBIG
 * when it does not fit): rgroup__read_path(). */
int rgt_read(const char *path, char *buf, size_t len);
int rgt_exists(const char *path);

/* Run child(arg) in a new process with its stdout into out (NUL-ended, at
 * most len - 1 bytes); child execs another program or exits. Returns the
 * process's exit status, or -1 (killed by a signal, or no process). */
int rgt_capture(char *out, size_t len, void (*child)(void *), void *arg);
/* Drop CAP_SYS_NICE from the calling thread's effective set (rule 6's
 * unprivileged cases): 0 or -1. */
int rgt_drop_cap_sys_nice(void);

/* Wait for child pid at most `secs` (polling, so that a hung child is a
 * failure, not a hung test): 0 and its status in *status; -ETIMEDOUT
 * after killing and reaping it; -errno if waitpid fails. */
int rgt_wait_child(pid_t pid, double secs, int *status);
/* The entries of directory path but "." and "..", -1 if it cannot be
 * read (/proc/self/task: the process's threads). */
int rgt_dir_entries(const char *path);
/* Open descriptors of this process; and the smallest of a few counts, as
 * the library's keeper opens a file now and then (/proc reads, the v2
 * clean-up's directory scan), which a single count can catch in flight. */
int rgt_fd_count(void);
int rgt_fd_steady(void);

#endif /* RGROUP_TEST_UTIL_H */
