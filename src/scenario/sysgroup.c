/* SPDX-License-Identifier: MIT */
/*
 * sysgroup.c - a system group of the program's own (the demo's, a
 * test's), found through the project's one locator (rgroup__cg_locate).
 * See sysgroup.h.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rgroup.h"
#include "sysgroup.h"
#include "sysutil.h"

struct scn_sgroup scn_sg;

int scn_sg_open(const char *backend, char *why, size_t len)
{
	static int registered;
	struct rgroup__cgloc loc;
	int r;

	if (!registered) {
		atexit(scn_sg_cleanup);
		registered = 1;
	}
	scn_sg.owner = getpid();
	if (strcmp(backend, "governor") == 0) {
		/* In-process only: no system group to make. */
		scn_sg.gov = 1;
		return 0;
	}
	scn_sg.native = strcmp(backend, "native") == 0;
	scn_sg.v2 = strcmp(backend, "cgroup2") == 0 || scn_sg.native;
	r = rgroup__cg_locate(0, scn_sg.v2 ? NULL : "cpu", &loc, why, len);
	if (r < 0)
		return r;
	scn_sg.mount = loc.mount;
	snprintf(scn_sg.home, sizeof(scn_sg.home), "%s", loc.path);
	snprintf(scn_sg.base, sizeof(scn_sg.base), "%s", scn_sg.home);
	if (scn_sg.v2 && strcmp(scn_sg.home, "/") != 0) {
		char *slash = strrchr(scn_sg.base, '/');

		if (slash == scn_sg.base)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (scn_sg.v2 && !scn_sg.delegated) {
		/* Enabling cpu in a group that is not ours would change what
		 * the administrator configured: only use it if it is on. */
		char file[PATH_MAX + 32], buf[256];

		scn_cg_dir(scn_sg.base, file, sizeof(file));
		strncat(file, "/cgroup.subtree_control", sizeof(file) - strlen(file) - 1);
		if (rgroup__read_path(file, buf, sizeof(buf)) < 0 || !rgroup__has_token(buf, "cpu"))
			return rgroup__why(why, len, -ENOTSUP, "%s does not enable cpu for its "
					   "children, so a group made there gets no CPU share of "
					   "its own", file);
	}
	return 0;
}

int scn_sg_mkdir(const char *name, char *out, size_t len, char *why, size_t wlen)
{
	char dir[PATH_MAX];

	if (scn_sg.nmade == SCN_MAX_SG)
		return rgroup__why(why, wlen, -ENOSPC, "more than %d system groups",
				   SCN_MAX_SG);
	if ((size_t)snprintf(out, len, "%s/%s", strcmp(scn_sg.base, "/") ? scn_sg.base : "",
			     name) >= len)
		return rgroup__why(why, wlen, -ENAMETOOLONG, "cgroup path too long");
	scn_cg_dir(out, dir, sizeof(dir));
	/* The name carries this process's pid: one already there was left by
	 * an earlier process with the same pid that was killed. Empty, it is
	 * removed (rmdir fails while anything is in it) and made again. */
	if (mkdir(dir, 0755) < 0 && (errno != EEXIST || rmdir(dir) < 0 || mkdir(dir, 0755) < 0))
		return rgroup__why(why, wlen, -errno, "cannot make system group %s: %s", dir,
				   strerror(errno));
	snprintf(scn_sg.made[scn_sg.nmade++], PATH_MAX, "%s", out);
	return 0;
}

int scn_sg_move(const char *cgpath)
{
	char dir[PATH_MAX], pid[32];

	scn_cg_dir(cgpath, dir, sizeof(dir));
	strncat(dir, "/cgroup.procs", sizeof(dir) - strlen(dir) - 1);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return scn_write(dir, pid);
}

int scn_sg_join(const char *name, char *out, size_t len, char *why, size_t wlen)
{
	char dir[PATH_MAX];
	int r = scn_sg_mkdir(name, out, len, why, wlen);

	if (r < 0)
		return r;
	r = scn_sg_move(out);
	if (r < 0) {
		scn_cg_dir(out, dir, sizeof(dir));
		rmdir(dir);
		scn_sg.nmade--;
		return rgroup__why(why, wlen, r, "cannot move this process into %s: %s", dir,
				   strerror(-r));
	}
	return 0;
}

static int rmdir_below(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	if (type == FTW_DP && ftw->level > 0)
		rmdir(path);   /* failures show as the top's EBUSY */
	return 0;
}

/* Every directory below dir, innermost first: all of them the program's, as
 * dir is (a group the library failed to remove must not keep dir). */
static void remove_below(const char *dir)
{
	nftw(dir, rmdir_below, 16, FTW_DEPTH | FTW_PHYS);
}

int scn_sg_leave(char *why, size_t len)
{
	char dir[PATH_MAX];
	int r = 0;

	if (scn_sg.gov || scn_sg.delegated || !scn_sg.nmade)
		return 0;   /* nothing made; the delegated group is not ours */
	if ((r = scn_sg_move(scn_sg.home)) < 0) {
		scn_cg_dir(scn_sg.home, dir, sizeof(dir));
		return rgroup__why(why, len, r, "cannot move this process back to %s: %s "
				   "(its groups are left behind)", dir, strerror(-r));
	}
	for (int i = scn_sg.nmade - 1; i >= 0; i--) {
		scn_cg_dir(scn_sg.made[i], dir, sizeof(dir));
		/* A child the program killed may have left groups here. */
		rgroup_gc(dir);
		remove_below(dir);
		/* Exited threads leave a group a moment later: EBUSY from
		 * rmdir means "not yet". */
		for (int tries = 0; rmdir(dir) < 0 && errno != ENOENT; tries++) {
			int e = errno;

			if (e != EBUSY || tries == 100) {
				r = rgroup__why(why, len, -e, "cannot remove %s: %s (left behind)",
						dir, strerror(e));
				break;
			}
			scn_sleep(0.02);
		}
	}
	scn_sg.nmade = 0;
	return r;
}

void scn_sg_cleanup(void)
{
	char why[PATH_MAX + 128];

	if (getpid() != scn_sg.owner)
		return;
	if (!scn_sg.gov && !scn_sg.nmade)
		return;
	if (scn_wait_no_groups(3.0) < 0)
		fprintf(stderr, "  cleanup: the library still has %d rgroups\n", rgroup_list(NULL, 0));
	if (scn_sg_leave(why, sizeof(why)) < 0)
		fprintf(stderr, "  cleanup: %s\n", why);
}

/* ---- Looking at the hierarchy ---------------------------------------- */

int scn_thread_cgroup(pid_t tid, char *out, size_t len)
{
	char file[64], text[8192];

	snprintf(file, sizeof(file), "/proc/self/task/%d/cgroup",
		 (int)(tid ? tid : scn_gettid()));
	if (rgroup__read_path(file, text, sizeof(text)) < 0)
		return -1;
	return rgroup__parse_proc_cgroup(text, scn_sg.v2 ? NULL : "cpu", out, len);
}

void scn_cg_dir(const char *cgpath, char *out, size_t len)
{
	if (rgroup__cgroup_dir(&scn_sg.mount, cgpath, out, len) < 0 && len)
		out[0] = '\0';
}

static int count_groups_at(const char *dir, pid_t pid, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		pid_t p;
		uint64_t start, id;
		char sub[PATH_MAX + 300];

		if (e->d_type != DT_DIR || rgroup__parse_dirname(e->d_name, &p, &start, &id) < 0)
			continue;
		if (depth == 0 && pid && p != pid)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		n += 1 + count_groups_at(sub, pid, depth + 1);
	}
	closedir(d);
	return n;
}

int scn_count_groups(const char *dir, pid_t pid)
{
	return count_groups_at(dir, pid, 0);
}

int scn_own_dirs(void)
{
	int n = 0;

	for (int i = 0; i < scn_sg.nmade; i++) {
		char dir[PATH_MAX];

		scn_cg_dir(scn_sg.made[i], dir, sizeof(dir));
		n += scn_count_groups(dir, getpid());
	}
	return n;
}

/*
 * The directories are counted first, the library's list read second:
 * rgroup_list() takes the library's lock, which its reaper holds from a
 * group's rmdir to what follows it for the same group (the cgroup2
 * backend then takes +cpu back from the sgroup, rule 9). Once the
 * directories are gone, the list read therefore returns only after
 * that, so a caller that then reads the sgroup sees it settled.
 */
int scn_wait_no_groups(double timeout)
{
	double end = scn_now() + timeout;

	while (scn_own_dirs() > 0 || rgroup_list(NULL, 0) > 0) {
		if (scn_now() > end)
			return -1;
		scn_sleep(0.01);
	}
	return 0;
}
