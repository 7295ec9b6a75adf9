/* SPDX-License-Identifier: MIT */
/* util.c - files, child processes, descriptors and capabilities for the
 * tests (util.h). */
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

int rgt_read(const char *path, char *buf, size_t len)
{
	return rgroup__read_path(path, buf, len);
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

int rgt_wait_child(pid_t pid, double secs, int *status)
{
	double until = scn_now() + secs;
	pid_t w;

	while ((w = waitpid(pid, status, WNOHANG)) == 0 && scn_now() < until)
		scn_sleep(0.001);
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

		scn_sleep(0.02);
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
