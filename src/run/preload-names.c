/* SPDX-License-Identifier: MIT */
/*
 * preload-names.c - the names file of `rgroup run`'s preload (preload.h).
 * The rules' names of the live groups, for `rgroup tree` and `rgroup top`
 * (run-spec.h: DIR/rgroup-<pid>-<starttime>.names, in /dev/shm or /tmp),
 * replaced whole when a group is made (preload_mu held), removed at exit. A fork
 * child has a name of its own. Best effort: a file that cannot be written
 * costs only the names in those tools.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "locate.h"
#include "parse.h"
#include "preload.h"

static char names_path[96], names_tmp[96];
static const char *names_dir;
static pid_t names_pid;

int preload_self_start(uint64_t *start)
{
	char stat[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, stat, sizeof(stat) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	stat[n] = '\0';
	return rgroup__parse_stat_starttime(stat, start) < 0 ? -1 : 0;
}

static int names_file(void)
{
	char name[64];
	uint64_t start;

	if (names_pid == getpid())
		return names_path[0] ? 0 : -1;
	names_pid = getpid();
	names_path[0] = '\0';
	static const char *const dirs[] = RGROUP__RUN_NAMES_DIRS;

	names_dir = NULL;
	for (int i = 0; i < RGROUP__RUN_NAMES_NDIRS && !names_dir; i++)
		if (access(dirs[i], W_OK | X_OK) == 0)
			names_dir = dirs[i];
	if (!names_dir || preload_self_start(&start) < 0 ||
	    rgroup__run_names_name(name, sizeof(name), names_pid, start, 1) < 0)
		return -1;
	snprintf(names_tmp, sizeof(names_tmp), "%s/%s", names_dir, name);
	snprintf(names_path, sizeof(names_path), "%.*s", (int)(strlen(names_tmp) - 4), names_tmp);
	return 0;
}

/*
 * The pid namespace, as the file's first line names it for a collector
 * elsewhere (locate.h): the inode of /proc/self/ns/pid, 0 for the
 * initial one or when it cannot be read.
 */
static uint64_t names_pidns(void)
{
	static uint64_t ns;
	static pid_t of;

	if (of != names_pid) {
		ns = rgroup__pidns_self();
		of = names_pid;
	}
	return ns;
}

void names_publish(void)
{
	char text[RGROUP__RUN_MAX_GROUPS * (RGROUP__RUN_PATH_LEN + 24 + 256)];
	size_t off = 0;
	int fd;

	static pid_t collected;

	if (names_file() < 0)
		return;
	if (collected != names_pid) {
		/* Once per process: the files of this user's processes that
		 * were killed go (as the library collects dead processes'
		 * groups when it starts). */
		collected = names_pid;
		rgroup__sweep_dead_owners(names_dir, rgroup__run_parse_names_name, 0, 0, NULL, NULL);
	}
	off = (size_t)snprintf(text, sizeof(text), "# rgroup-names pidns=%llu\n",
			       (unsigned long long)names_pidns());
	for (unsigned int g = 0; g < preload_rules.ngroups; g++) {
		char set[256];

		if (!preload_levels[g].id || rgroup__run_format_settings(&preload_rules.groups[g], set, sizeof(set)) < 0)
			continue;
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%llu %s%s%s\n",
					 (unsigned long long)preload_levels[g].id, preload_rules.groups[g].path,
					 set[0] ? " " : "", set);
	}
	fd = open(names_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, text, off) != (ssize_t)off || close(fd) < 0 || rename(names_tmp, names_path) < 0)
		unlink(names_tmp);
}

int names_written(void)
{
	return names_pid == getpid() && names_path[0];
}

void names_remove(void)
{
	if (names_written())
		unlink(names_path);
}
