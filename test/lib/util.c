/* SPDX-License-Identifier: MIT */
/* util.c - clocks, waits, files, CPU times and child processes for the
 * tests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "locate.h"
#include "util.h"

double rgt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void rgt_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

pid_t rgt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

void rgt_word_wait(int *word, int expected, double timeout)
{
	struct timespec ts = { (time_t)timeout, (long)((timeout - (time_t)timeout) * 1e9) };

	/* Relative timeout; EAGAIN (*word changed), EINTR and ETIMEDOUT all
	 * mean: look again. */
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout > 0 ? &ts : NULL, NULL, 0);
}

void rgt_word_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

int rgt_read(const char *path, char *buf, size_t len)
{
	return rgroup__read_path(path, buf, len);
}

int rgt_write(const char *path, const char *val)
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

int rgt_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

int rgt_capture(char *out, size_t len, void (*child)(void *), void *arg)
{
	size_t off = 0;
	ssize_t n;
	int p[2], st;
	pid_t pid;

	out[0] = '\0';
	if (pipe(p) < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 1);
		child(arg);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && off < len - 1 && (n = read(p[0], out + off, len - 1 - off)) > 0)
		off += (size_t)n;
	out[off] = '\0';
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

double rgt_thread_cpu(pid_t tid)
{
	/* The kernel's CPU clock of one thread (CPUCLOCK_SCHED, per thread). */
	clockid_t cid = (clockid_t)((~(unsigned int)tid << 3) | 6);
	struct timespec ts;

	if (clock_gettime(cid, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double rgt_proc_cpu(pid_t pid)
{
	clockid_t cid;
	struct timespec ts;

	if (clock_getcpuclockid(pid, &cid) != 0 || clock_gettime(cid, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int rgt_pin_one_cpu(cpu_set_t *saved)
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

int rgt_wait_child(pid_t pid, double secs, int *status)
{
	double until = rgt_now() + secs;
	pid_t w;

	while ((w = waitpid(pid, status, WNOHANG)) == 0 && rgt_now() < until)
		rgt_sleep(0.001);
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, status, 0);
		return -ETIMEDOUT;
	}
	return w < 0 ? -errno : 0;
}

int rgt_dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int rgt_fd_count(void)
{
	int n = rgt_dir_entries("/proc/self/fd");

	return n < 0 ? -1 : n - 1; /* the directory's own descriptor */
}

int rgt_fd_steady(void)
{
	int best = rgt_fd_count();

	for (int i = 0; i < 10; i++) {
		int n;

		rgt_sleep(0.02);
		n = rgt_fd_count();
		if (n < best)
			best = n;
	}
	return best;
}

int rgt_drop_cap_sys_nice(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	d[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
	return (int)syscall(SYS_capset, &h, d);
}
