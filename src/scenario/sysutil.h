/* SPDX-License-Identifier: MIT */
/*
 * sysutil.h - the small system helpers of the scenario engine, which the
 * demo and the tests use too (sysutil.c): clocks, waits, CPU times, a
 * one-write file. None of them needs the library, so that a program that
 * runs before any rgroup code (the VM's environment canary) can use them.
 */
#ifndef RGROUP_SCENARIO_SYSUTIL_H
#define RGROUP_SCENARIO_SYSUTIL_H

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC in seconds. */
double scn_now(void);
/* Sleep s seconds, also through signals. */
void scn_sleep(double s);
pid_t scn_gettid(void);

/* Sleep until *word may no longer be `expected` (a futex of this process):
 * returns at once if it is not, else when scn_word_wake(word) is called,
 * after `timeout` seconds (0: none), or on a signal; also spuriously, so
 * the caller checks its condition again. For threads that wait for a
 * change: a thread that polls instead takes CPU from the threads it waits
 * for, which on a small or emulated machine is enough to starve them. */
void scn_word_wait(int *word, int expected, double timeout);
/* Wake every thread in scn_word_wait(word, ...); call it after changing
 * *word (or what the waiters check with it). */
void scn_word_wake(int *word);

/* One write() of val, as cgroupfs wants: 0 or -errno. */
int scn_write(const char *path, const char *val);

/* CPU seconds used by thread tid of this process, and by process pid. */
double scn_thread_cpu(pid_t tid);
double scn_proc_cpu(pid_t pid);

/* Pin the calling thread, and so every thread and child it makes from now
 * on, to the first CPU it may use; the mask it had goes to saved (may be
 * NULL). 0 or -1 and errno. */
int scn_pin_one_cpu(cpu_set_t *saved);

#endif /* RGROUP_SCENARIO_SYSUTIL_H */
