/* SPDX-License-Identifier: MIT */
/*
 * util.h - the small helpers every test program and the demo use
 * (util.c): clocks, waits, files, CPU times, child processes. None of them needs
 * the library, so that the VM's environment canary (test/vm/smoke.c) can
 * use them before any rgroup code runs. Files are read with the project's
 * one reader, rgroup__read_path() (src/kernel-text/locate.h).
 */
#ifndef RGROUP_TEST_UTIL_H
#define RGROUP_TEST_UTIL_H

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC in seconds. */
double rgt_now(void);
/* Sleep s seconds, also through signals. */
void rgt_sleep(double s);
pid_t rgt_gettid(void);

/* Sleep until *word may no longer be `expected` (a futex of this process):
 * returns at once if it is not, else when rgt_word_wake(word) is called,
 * after `timeout` seconds (0: none), or on a signal; also spuriously, so
 * the caller checks its condition again. For threads that wait for a
 * change: a thread that polls instead takes CPU from the threads it waits
 * for, which on a small or emulated machine is enough to starve them. */
void rgt_word_wait(int *word, int expected, double timeout);
/* Wake every thread in rgt_word_wait(word, ...); call it after changing
 * *word (or what the waiters check with it). */
void rgt_word_wake(int *word);

/* A whole file into buf, NUL-terminated: its length, or -errno (-EFBIG
 * when it does not fit): rgroup__read_path(). */
int rgt_read(const char *path, char *buf, size_t len);
/* One write() of val, as cgroupfs wants: 0 or -errno. */
int rgt_write(const char *path, const char *val);
int rgt_exists(const char *path);

/* Run child(arg) in a new process with its stdout into out (NUL-ended, at
 * most len - 1 bytes); child execs another program or exits. Returns the
 * process's exit status, or -1 (killed by a signal, or no process). */
int rgt_capture(char *out, size_t len, void (*child)(void *), void *arg);
/* Drop CAP_SYS_NICE from the calling thread's effective set (rule 6's
 * unprivileged cases): 0 or -1. */
int rgt_drop_cap_sys_nice(void);

/* CPU seconds used by thread tid of this process, and by process pid. */
double rgt_thread_cpu(pid_t tid);
double rgt_proc_cpu(pid_t pid);

/* Pin the calling thread, and so every thread and child it makes from now
 * on, to the first CPU it may use; the mask it had goes to saved (may be
 * NULL). 0 or -1 and errno. */
int rgt_pin_one_cpu(cpu_set_t *saved);

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
