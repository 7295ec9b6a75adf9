/* SPDX-License-Identifier: MIT */
/*
 * stale.c - what processes that no longer exist left behind: is a named
 * owner (pid and start time) still alive, and the governor's state files
 * of dead processes. Shared by the library (the cgroup backends' clean-up
 * of dead processes' directories, the governor's of state files) and the
 * `rgroup gc` command, so both judge an owner the same way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int rgroup__owner_alive(pid_t pid, uint64_t start)
{
	char path[64], buf[1024];
	uint64_t now;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH; /* e.g. hidepid: cannot tell */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0; /* it went away between open and read */
	buf[n] = '\0';
	if (rgroup__parse_stat_starttime(buf, &now) < 0)
		return 1; /* cannot tell: keep what is its */
	return now == start;
}

int rgroup__state_gc(const char *dir, int dry_run, int any_owner,
		     void (*seen)(void *arg, const char *path, int err), void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid_t pid;
		uint64_t start;
		int tmp, err = 0;
		struct stat sb;
		char p[PATH_MAX];

		if (rgroup__parse_statename(e->d_name, &pid, &start, &tmp) < 0 ||
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(sb.st_mode) || rgroup__owner_alive(pid, start))
			continue;
		/* Another user's: the sticky /dev/shm would refuse anyway. */
		if (!any_owner && sb.st_uid != geteuid())
			continue;
		if (!dry_run && unlinkat(dirfd(d), e->d_name, 0) < 0) {
			if (errno == ENOENT)
				continue; /* another collector was first */
			err = errno;
		}
		n += !err;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (seen)
			seen(arg, p, err);
	}
	closedir(d);
	return n;
}
