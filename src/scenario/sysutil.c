/* SPDX-License-Identifier: MIT */
/*
 * sysutil.c - clocks, waits, CPU times and one-write files for the
 * scenario engine, the demo and the tests (sysutil.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sysutil.h"

double scn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void scn_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

pid_t scn_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

void scn_word_wait(int *word, int expected, double timeout)
{
	struct timespec ts = { (time_t)timeout, (long)((timeout - (time_t)timeout) * 1e9) };

	/* Relative timeout; EAGAIN (*word changed), EINTR and ETIMEDOUT all
	 * mean: look again. */
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout > 0 ? &ts : NULL, NULL, 0);
}

void scn_word_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

int scn_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), e;
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, val, strlen(val));
	e = errno;
	close(fd);
	return r < 0 ? -e : 0;
}

double scn_thread_cpu(pid_t tid)
{
	/* The kernel's CPU clock of one thread (CPUCLOCK_SCHED, per thread). */
	clockid_t cid = (clockid_t)((~(unsigned int)tid << 3) | 6);
	struct timespec ts;

	if (clock_gettime(cid, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double scn_proc_cpu(pid_t pid)
{
	clockid_t cid;
	struct timespec ts;

	if (clock_getcpuclockid(pid, &cid) != 0 || clock_gettime(cid, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int scn_pin_one_cpu(cpu_set_t *saved)
{
	cpu_set_t all, one;

	if (sched_getaffinity(0, sizeof(all), &all) < 0)
		return -1;
	if (saved)
		*saved = all;
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	}
	return sched_setaffinity(0, sizeof(one), &one);
}
