/* SPDX-License-Identifier: MIT */
/*
 * gc.c - `rgroup gc [--dry-run] [DIR...]`: remove the rgroup directories
 * and governor state files that killed rgroup processes left behind.
 *
 * The library removes its own groups when threads exit, and a process's
 * first use of the library collects what dead processes left in its own
 * sgroup (rgroup_gc()). What stays is leftovers in sgroups where no rgroup
 * process starts again; this command finds them. With DIRs it calls
 * rgroup_gc() on each; without, it walks every hierarchy that can carry
 * rgroups (the cgroup v1 mount with the "cpu" super option and the cgroup2
 * mount: rgroup__cg_mounts()), and the v1 cpuset hierarchy, where the
 * cgroup1 backend mirrors each group with CPUs, and calls rgroup_gc() on
 * each directory that holds a leftover.
 *
 * Safety is the library's: rgroup_gc() removes only names that
 * "rgroup-<pid>-<starttime>-<id>[-ns<pidns>]" could have produced whose
 * owner (pid plus start time, so pid reuse is harmless, in its PID
 * namespace: rgroup__owner_alive_ns()) no longer exists, and keeps what it
 * cannot judge. The walk
 * here only decides where to call it and what to print: it uses the same
 * strict name form, never descends into an rgroup directory (a live
 * process's tree is its own; a dead one goes as a whole) and never removes
 * a directory itself.
 *
 * It also removes the governor's state files of dead processes
 * (src/governor/governor-state.h; a killed process cannot remove its own) in /dev/shm, or
 * with DIRs in those: only regular files named exactly as
 * rgroup__parse_statename() accepts, whose owner (pid plus start time) is
 * gone, and, unless run by root, only the caller's own; and so `rgroup
 * run`'s names files (src/run/run-spec.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <rgroup.h>

#include "governor-state.h"
#include "locate.h"
#include "parse.h"
#include "run-spec.h"
#include "tool.h"

static const char gc_usage[] =
	"Usage: rgroup gc [--dry-run] [DIR...]\n"
	"\n"
	"Remove the rgroup directories (rgroup-<pid>-<starttime>-<id>[-ns<pidns>]),\n"
	"the governor's state files (rgroup-<pid>-<starttime>.state) and rgroup run's\n"
	"names files (rgroup-<pid>-<starttime>.names) that processes killed before\n"
	"they could clean up left behind. With DIRs, look in those\n"
	"directories; without, walk the cgroup v1 'cpu' and 'cpuset' hierarchies,\n"
	"the cgroup2 hierarchy, and " RGROUP__STATE_DIR ". A live process's groups and files,\n"
	"and anything rgroup did not make, are never touched.\n"
	"\n"
	"  -n, --dry-run   only list what would be removed\n"
	"  -h, --help      show this help and exit\n"
	"\n"
	"Exit status: 0 success, 1 failure, 2 bad usage.\n";

#define GC_MAX_DEPTH 64

struct gc_state {
	int dry_run;
	int failed;
	unsigned long found;
	unsigned long removed;
	unsigned long kept;
	int mounts;             /* hierarchies walked */
	int files_walked;       /* the state files were looked at */
	unsigned long files;    /* state files removed (or, dry run, found) */
};

/* The library's name forms, exactly (rgroup__parse_dirname_ns()). */
static int parse_name(const char *name, pid_t *pid, uint64_t *start, uint64_t *pidns)
{
	uint64_t id;

	return rgroup__parse_dirname_ns(name, pid, start, pidns, &id);
}

static int is_dir_at(int dirfd, struct dirent *e)
{
	struct stat sb;

	if (e->d_type == DT_DIR)
		return 1;
	if (e->d_type != DT_UNKNOWN)
		return 0;
	return fstatat(dirfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode);
}

/* After rgroup_gc(): print each listed directory that is gone. */
static void report_tree(struct gc_state *st, char **subs, size_t nsubs)
{
	for (size_t i = 0; i < nsubs; i++) {
		if (access(subs[i], F_OK) < 0 && errno == ENOENT) {
			printf("removed %s\n", subs[i]);
			st->removed++;
		} else {
			fprintf(stderr, "%s gc: kept %s (still busy)\n", tool_name, subs[i]);
			st->kept++;
		}
	}
}

/* Collect path and the rgroup directories below it into *v (children
 * first, the order of removal): listed by --dry-run, else reported on
 * after removal. */
static void collect_tree(const char *path, int depth, char ***v, size_t *n, size_t *cap)
{
	DIR *d;
	struct dirent *e;

	if (depth <= GC_MAX_DEPTH && (d = opendir(path))) {
		while ((e = readdir(d))) {
			pid_t pid;
			uint64_t start, pidns;
			char sub[PATH_MAX];

			if (!is_dir_at(dirfd(d), e) || parse_name(e->d_name, &pid, &start, &pidns) < 0)
				continue;
			if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub))
				continue;
			collect_tree(sub, depth + 1, v, n, cap);
		}
		closedir(d);
	}
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, ncap * sizeof(*nv));
		if (!nv)
			return;
		*v = nv;
		*cap = ncap;
	}
	if (((*v)[*n] = strdup(path)))
		(*n)++;
}

/*
 * One cgroup directory: find its leftovers (rgroup names whose owner is
 * gone), then, unless dry-run, have the library remove them. `recurse`:
 * also visit the non-rgroup subdirectories (the walk of a hierarchy).
 * `must_exist`: a DIR the user named; its absence is an error.
 */
static void gc_dir(struct gc_state *st, const char *path, int depth, int recurse, int must_exist)
{
	char **subs = NULL;
	size_t nsubs = 0, cap = 0;
	unsigned long dead = 0;
	DIR *d;
	struct dirent *e;

	d = opendir(path);
	if (!d) {
		/* A group that vanished during the walk is not an error. */
		if (must_exist || (errno != ENOENT && errno != ENOTDIR)) {
			fprintf(stderr, "%s gc: %s: %s\n", tool_name, path, strerror(errno));
			st->failed = 1;
		}
		return;
	}
	while ((e = readdir(d))) {
		pid_t pid;
		uint64_t start, pidns;
		char sub[PATH_MAX];

		if (e->d_name[0] == '.' || !is_dir_at(dirfd(d), e))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub))
			continue;
		if (parse_name(e->d_name, &pid, &start, &pidns) == 0) {
			if (rgroup__owner_alive_ns(pid, start, pidns))
				continue;
			dead++;
			collect_tree(sub, 1, &subs, &nsubs, &cap);
		} else if (recurse && depth < GC_MAX_DEPTH) {
			gc_dir(st, sub, depth + 1, 1, 0);
		}
	}
	closedir(d);

	if (st->dry_run) {
		for (size_t i = 0; i < nsubs; i++)
			printf("would remove %s\n", subs[i]);
		st->found += nsubs;
	} else if (dead) {
		int r = rgroup_gc(path);
		if (r < 0) {
			fprintf(stderr, "%s gc: %s: %s\n", tool_name, path, strerror(-r));
			st->failed = 1;
		} else {
			report_tree(st, subs, nsubs);
		}
	}
	for (size_t i = 0; i < nsubs; i++)
		free(subs[i]);
	free(subs);
}

/* One state file rgroup__state_gc() found. */
static void state_seen(void *arg, const char *path, int err)
{
	struct gc_state *st = arg;

	if (err) {
		fprintf(stderr, "%s gc: %s: %s\n", tool_name, path, strerror(err));
		st->failed = 1;
		return;
	}
	printf("%s %s\n", st->dry_run ? "would remove" : "removed", path);
	st->files++;
}

/* The state files of dead processes in dir (and the .tmp a writer killed
 * mid-write leaves): listed by --dry-run, else removed; root's gc takes
 * every user's. `quiet`: a DIR that gc_dir() has reported on already if
 * it cannot be read. */
static void gc_state_files(struct gc_state *st, const char *dir, int quiet)
{
	int r = rgroup__state_gc(dir, st->dry_run, geteuid() == 0, state_seen, st);

	if (r < 0) {
		if (!quiet && r != -ENOENT) {
			fprintf(stderr, "%s gc: %s: %s\n", tool_name, dir, strerror(-r));
			st->failed = 1;
		}
		return;
	}
	st->files_walked = 1;
}

/* The rules' names files that `rgroup run`'s preload left when its
 * process was killed (run-spec.h), taken as rgroup__state_gc() takes
 * state files. */
static void gc_names_files(struct gc_state *st, const char *dir)
{
	/* An unreadable dir is said by gc_state_files() */
	rgroup__sweep_dead_owners(dir, rgroup__run_parse_names_name, st->dry_run,
				  geteuid() == 0, state_seen, st);
}

/* One hierarchy of rgroup__cg_mounts(): walk it from its mount point. */
static int gc_mount(void *arg, const struct rgroup__mount *m, int v2)
{
	struct gc_state *st = arg;

	st->mounts++;
	gc_dir(st, m->point, 0, 1, 1);
	return 0;
}

/* Devices of the hierarchies gc_mount() walked (gc_cpusets() skips them). */
struct walked {
	int n;
	char dev[64][32];
};

static int note_mount(void *arg, const struct rgroup__mount *m, int v2)
{
	struct walked *w = arg;

	if (w->n < 64)
		snprintf(w->dev[w->n++], sizeof(w->dev[0]), "%s", m->dev);
	return 0;
}

/*
 * The v1 cpuset hierarchy, where the cgroup1 backend makes a directory
 * beside each rgroup with CPUs (src/backends/cgroup1-cpuset.h: flat, in
 * the process's cpuset group, named as the cpu directory). Not a
 * hierarchy rgroups live in, so rgroup__cg_mounts() does not list it;
 * the same strict name form and dead-owner test decide here. A cpuset
 * mounted with cpu was walked already.
 */
static int gc_cpusets(struct gc_state *st)
{
	static char text[1 << 16];
	struct rgroup__mount m;
	struct walked w = { 0 }, cs = { 0 };
	const char *pos = text;
	int r = rgroup__cg_mounts(note_mount, &w);

	if (r < 0 || (r = rgroup__read_path("/proc/self/mountinfo", text, sizeof(text))) < 0)
		return r;
	while (rgroup__parse_mountinfo_next(&pos, "cpuset", &m) == 0) {
		int seen = 0;

		for (int i = 0; i < w.n; i++)
			seen |= strcmp(w.dev[i], m.dev) == 0;
		for (int i = 0; i < cs.n; i++)
			seen |= strcmp(cs.dev[i], m.dev) == 0;
		if (seen)
			continue;
		note_mount(&cs, &m, 0);
		gc_dir(st, m.point, 0, 1, 1);
	}
	return 0;
}

/* Walk every hierarchy that can hold rgroups, and the v1 cpuset one,
 * once per hierarchy (a hierarchy mounted twice is one device). */
static int gc_all(struct gc_state *st)
{
	int r = rgroup__cg_mounts(gc_mount, st);

	if (r >= 0)
		r = gc_cpusets(st);
	if (r < 0) {
		fprintf(stderr, "%s gc: cannot read /proc/self/mountinfo: %s\n", tool_name, strerror(-r));
		return EXIT_FAIL;
	}
	if (!st->mounts) {
		fprintf(stderr, "%s gc: no cgroup v1 'cpu' or cgroup2 hierarchy is mounted\n", tool_name);
		return EXIT_FAIL;
	}
	return st->failed ? EXIT_FAIL : EXIT_OK;
}

/* Is DIR, one the user named, a cgroup directory (v1 or v2)? 1, 0, or
 * -1 and errno. Elsewhere only the governor's state files are collected:
 * the names of groups mean nothing outside cgroupfs. */
static int on_cgroupfs(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf) < 0)
		return -1;
	return sf.f_type == CGROUP_SUPER_MAGIC || sf.f_type == CGROUP2_SUPER_MAGIC;
}

int cmd_gc(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gc_state st = { 0 };
	int c, r;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+nh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			st.dry_run = 1;
			break;
		case 'h':
			fputs(gc_usage, stdout);
			return EXIT_OK;
		default:
			if (optopt)
				return tool_usage_error("gc", "unknown option '-%c'", optopt);
			return tool_usage_error("gc", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		gc_state_files(&st, RGROUP__STATE_DIR, 0);
		static const char *const dirs[] = RGROUP__RUN_NAMES_DIRS;

		for (int i = 0; i < RGROUP__RUN_NAMES_NDIRS; i++)
			gc_names_files(&st, dirs[i]);
		r = gc_all(&st);
	} else {
		for (int i = optind; i < argc; i++) {
			char path[PATH_MAX];
			size_t len = strlen(argv[i]);

			/* "dir/" and "dir" name the same group. */
			snprintf(path, sizeof(path), "%s", argv[i]);
			while (len > 1 && path[len - 1] == '/')
				path[--len] = '\0';
			switch (on_cgroupfs(path)) {
			case 1:
				gc_dir(&st, path, 0, 0, 1);
				gc_state_files(&st, path, 1);
				break;
			case 0:
				fprintf(stderr, "%s gc: %s is not a cgroup directory: only the governor's state files and rgroup run's names files of dead processes are collected there\n",
					tool_name, path);
				gc_state_files(&st, path, 0);
				gc_names_files(&st, path);
				break;
			default:
				fprintf(stderr, "%s gc: %s: %s\n", tool_name, path, strerror(errno));
				st.failed = 1;
			}
		}
		r = st.failed ? EXIT_FAIL : EXIT_OK;
	}
	if (r != EXIT_OK && !st.found && !st.removed && !st.files)
		return r;  /* the error said it all */
	if (st.dry_run)
		printf("%lu director%s would be removed\n", st.found, st.found == 1 ? "y" : "ies");
	else
		printf("%lu director%s removed%s\n", st.removed, st.removed == 1 ? "y" : "ies",
		       st.kept ? " (some were still busy; run again)" : "");
	if (st.files_walked)
		printf("%lu state file%s %s\n", st.files, st.files == 1 ? "" : "s",
		       st.dry_run ? "would be removed" : "removed");
	return r;
}
