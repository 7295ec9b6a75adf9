/* SPDX-License-Identifier: MIT */
/*
 * view.c - read another process's rgroup tree from cgroupfs (or the
 * governor's state file) and /proc, and compute the ideal shares with the
 * reference model. See view.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rgroup.h>

#include "governor-state.h"
#include "locate.h"
#include "parse.h"
#include "model.h"
#include "run-spec.h"
#include "view.h"

int view_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > INT_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

double view_tick(void)
{
	static double tick;

	if (!tick) {
		long hz = sysconf(_SC_CLK_TCK);
		tick = 1.0 / (hz > 0 ? (double)hz : 100.0);
	}
	return tick;
}

/* The nice value whose kernel weight is nearest to `weight`. */
static int weight_to_nice(unsigned long long weight)
{
	int best = 0;
	unsigned long long bestd = ~0ull;

	for (int n = -20; n <= 19; n++) {
		unsigned long long w = rgroup_nice_to_weight(n);
		unsigned long long d = w > weight ? w - weight : weight - w;

		if (d < bestd) {
			bestd = d;
			best = n;
		}
	}
	return best;
}

/* Is `name` an rgroup directory of this process? */
static int is_ours(const struct view *v, const char *name, uint64_t *id)
{
	pid_t pid;
	uint64_t start;

	return rgroup__parse_dirname(name, &pid, &start, id) == 0 &&
	       pid == v->pid && start == v->starttime;
}

static int cmp_group_id(const void *a, const void *b)
{
	const struct { uint64_t id; char name[64]; } *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* A number in file `name` of directory dir: 0 and *val, or -1. */
static int read_ll(const char *dir, const char *name, long long *val)
{
	char file[PATH_MAX + 32], buf[64], *end;

	snprintf(file, sizeof(file), "%s/%s", dir, name);
	if (rgroup__read_path(file, buf, sizeof(buf)) <= 0)
		return -1;
	errno = 0;
	*val = strtoll(buf, &end, 10);
	return errno || end == buf ? -1 : 0;
}

/* Group g's own cap and its throttling, from its directory dir. */
static void read_cap(const struct view *v, const char *dir, struct view_group *g)
{
	char file[PATH_MAX + 32], buf[1024];
	uint64_t n;

	g->quota_us = g->period_us = -1;
	g->nr_throttled = -1;
	g->throttled_s = -1;
	if (v->v2) {
		snprintf(file, sizeof(file), "%s/cpu.max", dir);
		if (rgroup__read_path(file, buf, sizeof(buf)) > 0) {
			g->period_us = 0;
			if (strncmp(buf, "max", 3) == 0)
				g->quota_us = 0;
			else if (sscanf(buf, "%lld %lld", &g->quota_us, &g->period_us) != 2)
				g->quota_us = g->period_us = -1;
			if (g->quota_us == 0 && sscanf(buf, "max %lld", &g->period_us) != 1)
				g->period_us = 0;
		}
	} else if (read_ll(dir, "cpu.cfs_quota_us", &g->quota_us) == 0) {
		if (g->quota_us < 0)
			g->quota_us = 0;     /* -1: no cap */
		if (read_ll(dir, "cpu.cfs_period_us", &g->period_us) < 0)
			g->quota_us = g->period_us = -1;
	}
	snprintf(file, sizeof(file), "%s/cpu.stat", dir);
	if (rgroup__read_path(file, buf, sizeof(buf)) <= 0)
		return;
	if (rgroup__parse_keyed(buf, "nr_throttled", &n) == 0)
		g->nr_throttled = (long long)n;
	if (!v->v2 && rgroup__parse_keyed(buf, "throttled_time", &n) == 0)
		g->throttled_s = (double)n / 1e9;     /* nanoseconds */
	else if (v->v2 && rgroup__parse_keyed(buf, "throttled_usec", &n) == 0)
		g->throttled_s = (double)n / 1e6;
}

/* Add the rgroup directories of v->pid in `dir`, in pre-order, children
 * sorted by id. -errno only when the directory itself cannot be read. */
static int scan(struct view *v, const char *dir, int parent, int depth)
{
	struct { uint64_t id; char name[64]; } found[VIEW_MAX_GROUPS];
	int nfound = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d)) && nfound < VIEW_MAX_GROUPS) {
		uint64_t id;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (!is_ours(v, de->d_name, &id))
			continue;
		found[nfound].id = id;
		snprintf(found[nfound].name, sizeof(found[nfound].name), "%s", de->d_name);
		nfound++;
	}
	closedir(d);
	qsort(found, (size_t)nfound, sizeof(found[0]), cmp_group_id);

	for (int i = 0; i < nfound && v->ngroups < VIEW_MAX_GROUPS; i++) {
		struct view_group *g = &v->groups[v->ngroups];
		char sub[PATH_MAX], file[PATH_MAX + 32], buf[1024];
		int idx = v->ngroups++;

		memset(g, 0, sizeof(*g));
		snprintf(g->name, sizeof(g->name), "%s", found[i].name);
		g->id = found[i].id;
		g->parent = parent;
		g->depth = depth;
		g->weight = rgroup_nice_to_weight(0);
		snprintf(sub, sizeof(sub), "%s/%s", dir, found[i].name);
		read_cap(v, sub, g);
		if (v->v2) {
			snprintf(file, sizeof(file), "%s/cpu.weight.nice", sub);
			if (rgroup__read_path(file, buf, sizeof(buf)) > 0) {
				g->nice = atoi(buf);
				g->weight = rgroup_nice_to_weight(g->nice);
			}
		} else {
			snprintf(file, sizeof(file), "%s/cpu.shares", sub);
			if (rgroup__read_path(file, buf, sizeof(buf)) > 0) {
				g->weight = (unsigned int)strtoul(buf, NULL, 10);
				g->nice = weight_to_nice(g->weight);
			}
		}
		/* Its threads: only tids of this process count. */
		snprintf(file, sizeof(file), "%s/%s", sub, v->v2 ? "cgroup.threads" : "tasks");
		{
			static char text[1 << 18];
			static pid_t tids[VIEW_MAX_THREADS];
			int n = 0;

			if (rgroup__read_path(file, text, sizeof(text)) >= 0)
				n = rgroup__parse_tids(text, tids, VIEW_MAX_THREADS);
			for (int i = 0; i < n && i < VIEW_MAX_THREADS; i++) {
				for (int t = 0; t < v->nthreads; t++) {
					if (v->threads[t].tid == tids[i]) {
						v->threads[t].group = idx;
						g->nthreads++;
					}
				}
			}
		}
		if (v->v2) {
			snprintf(file, sizeof(file), "%s/cpu.stat", sub);
			if (rgroup__read_path(file, buf, sizeof(buf)) > 0) {
				uint64_t usec;

				if (rgroup__parse_keyed(buf, "usage_usec", &usec) == 0)
					g->usage_s = (double)usec / 1e6;
			}
		}
		scan(v, sub, idx, depth + 1);
	}
	return 0;
}

/* The process's threads with their nice values and CPU ticks. */
static int read_threads(struct view *v)
{
	char path[64], stat[2048];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)v->pid);
	d = opendir(path);
	if (!d)
		return -errno;
	v->nthreads = 0;
	while ((de = readdir(d)) && v->nthreads < VIEW_MAX_THREADS) {
		struct view_thread *t = &v->threads[v->nthreads];
		pid_t tid;

		if (view_parse_pid(de->d_name, &tid) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)v->pid, (int)tid);
		if (rgroup__read_path(path, stat, sizeof(stat)) <= 0)
			continue;       /* exited meanwhile */
		if (rgroup__parse_stat_cpu(stat, &t->ticks, &t->nice) < 0)
			continue;
		t->tid = tid;
		t->group = -1;
		t->demand = 1;
		/* 15 characters, a newline and the NUL: more than t->name. */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)v->pid, (int)tid);
		if (rgroup__read_path(path, stat, sizeof(stat)) <= 0)
			snprintf(stat, sizeof(stat), "?");
		snprintf(t->name, sizeof(t->name), "%.*s", (int)strcspn(stat, "\n"), stat);
		v->nthreads++;
	}
	closedir(d);
	return 0;
}

/* ---- The governor's state file ------------------------------------------ */

#define STATE_TIDS 8192        /* members of one group we look at */

/* The file's groups as listed, before they are put in display order. */
static struct state_read {
	struct view *v;
	int n;
	struct rgroup__state_group g[VIEW_MAX_GROUPS];
	pid_t tids[STATE_TIDS];
} sr;

/* One group line: kept, and its listed threads marked with its index in
 * sr.g (remapped by state_order()). */
static int state_group(void *arg, const struct rgroup__state_group *g)
{
	struct state_read *st = arg;
	struct view *v = st->v;
	unsigned int n = g->ntids < STATE_TIDS ? g->ntids : STATE_TIDS;

	if (st->n == VIEW_MAX_GROUPS)
		return 0;   /* like the cgroupfs scan: the first ones */
	for (unsigned int i = 0; i < n; i++)
		for (int t = 0; t < v->nthreads; t++)
			if (v->threads[t].tid == st->tids[i])
				v->threads[t].group = st->n;
	st->g[st->n++] = *g;
	return 0;
}

/* Add the children of the group with id `parent` (0: top-level) to
 * v->groups in pre-order, siblings by id as the cgroupfs scan has them;
 * map[i]: where sr.g[i] went. */
static void state_order(struct view *v, uint64_t parent, int pidx, int depth, int *map)
{
	for (uint64_t last = 0;;) {
		int best = -1;

		/* map[i] >= 0: placed already (a file that lists an id twice
		 * or makes a group its own parent ends here, not in a loop). */
		for (int i = 0; i < sr.n; i++)
			if (map[i] < 0 && sr.g[i].parent == parent && sr.g[i].id > last &&
			    (best < 0 || sr.g[i].id < sr.g[best].id))
				best = i;
		if (best < 0 || v->ngroups == VIEW_MAX_GROUPS)
			return;
		last = sr.g[best].id;

		struct view_group *g = &v->groups[v->ngroups];
		map[best] = v->ngroups++;
		memset(g, 0, sizeof(*g));
		rgroup__format_dirname(g->name, sizeof(g->name), v->pid, v->starttime, last);
		g->id = last;
		g->parent = pidx;
		g->depth = depth;
		g->nice = sr.g[best].nice;
		g->weight = sr.g[best].weight;
		/* What exited members used; the live ones are added from /proc. */
		g->usage_s = (double)sr.g[best].dead_ns / 1e9;
		g->throttled_s = (double)sr.g[best].throttled_ns / 1e9;
		g->quota_us = g->period_us = g->nr_throttled = -1;   /* no cgroupfs */
		state_order(v, last, map[best], depth + 1, map);
	}
}

/* sr's groups into v->groups in display order, and each thread's index
 * remapped; threads of groups left out count as plain. */
static void place_groups(struct view *v)
{
	int map[VIEW_MAX_GROUPS];

	for (int i = 0; i < sr.n; i++)
		map[i] = -1;
	v->ngroups = 0;
	state_order(v, 0, -1, 1, map);
	for (int t = 0; t < v->nthreads; t++) {
		struct view_thread *th = &v->threads[t];

		th->group = th->group >= 0 ? map[th->group] : -1;
		if (th->group >= 0)
			v->groups[th->group].nthreads++;
	}
}

/*
 * The governor's state file of v->pid: 1 and the groups when the process
 * has a valid one, 0 when not (none, not its owner's, another process's,
 * unreadable or malformed: then cgroupfs is looked at as usual).
 */
static int read_state(struct view *v, uid_t uid)
{
	static char text[RGROUP__STATE_MAX + 2];   /* the file, its NUL, and one
	                                            * byte to tell it is whole */
	struct rgroup__state h;
	struct timespec now;
	struct stat sb;
	char name[64], path[sizeof(name) + sizeof(RGROUP__STATE_DIR)];
	int fd, r;

	if (rgroup__format_statename(name, sizeof(name), v->pid, v->starttime, 0) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", RGROUP__STATE_DIR, name);
	/* O_NONBLOCK: a fifo planted under the name must not hang us. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	/* Anyone may make files in /dev/shm: only the owner's counts. */
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != uid) {
		close(fd);
		return 0;
	}
	r = rgroup__read_fd(fd, text, sizeof(text));
	close(fd);
	if (r <= 0)
		return 0;
	sr.v = v;
	sr.n = 0;
	r = rgroup__parse_state(text, &h, sr.tids, STATE_TIDS, state_group, &sr);
	if (r < 0 || h.pid != v->pid || h.starttime != v->starttime || sr.n == 0) {
		for (int t = 0; t < v->nthreads; t++)
			v->threads[t].group = -1;
		return 0;
	}
	/* Members of groups that were left out (a cut file) count as plain. */
	place_groups(v);
	clock_gettime(CLOCK_MONOTONIC, &now);
	v->state_age_s = (double)now.tv_sec + (double)now.tv_nsec / 1e9 -
			 (double)h.monotonic_ns / 1e9;
	v->truncated = h.truncated;
	snprintf(v->state, sizeof(v->state), "%s", path);
	v->gov = 1;
	v->backend = "governor";
	return 1;
}

/* ---- The native kernel's rgroups -------------------------------------------- */

/* Group kg into the native snapshot (kgs[], sr.g): its index, or -1 when
 * the snapshot is full. */
static int native_group(struct rgroup__kgroup *kgs, const struct rgroup__kgroup *kg)
{
	int i;

	for (i = 0; i < sr.n && sr.g[i].id != kg->id; i++)
		;
	if (i < sr.n)
		return i;
	if (sr.n == VIEW_MAX_GROUPS)
		return -1;
	kgs[sr.n] = *kg;
	sr.g[sr.n] = (struct rgroup__state_group){
		.id = kg->id, .parent = kg->parent, .depth = kg->depth,
		.nice = kg->nice, .weight = rgroup_nice_to_weight(kg->nice),
		.dead_ns = kg->usage_ns, .throttled_ns = 0,
	};
	return sr.n++;
}

/*
 * On a kernel with native rgroups, the kernel's own account: every group
 * of the process from /proc/PID/rgroups (id, parent, depth, nice, usage of
 * the group and below, the cap), also those no thread is in (a nested
 * rule's parent under `rgroup run`, a group whose threads have gone while
 * its children live), then each thread's group from its own file
 * /proc/PID/task/TID/rgroup. 1 and the groups when the process has any, 0
 * when not (no such file: not that kernel; or no thread in an rgroup).
 */
static int read_native(struct view *v)
{
	static struct rgroup__kgroup kgs[VIEW_MAX_GROUPS];   /* by sr.g's index */
	enum { LIST_MAX = 1 << 20 };
	char path[64], *list = malloc(LIST_MAX);
	int found = 0;

	sr.v = v;
	sr.n = 0;
	snprintf(path, sizeof(path), "/proc/%d/rgroups", (int)v->pid);
	if (list && rgroup__read_path(path, list, LIST_MAX) >= 0) {
		const char *pos = list;
		struct rgroup__kgroup kg;

		while (rgroup__parse_kgroup_list_next(&pos, &kg) == 0)
			if (kg.id)
				native_group(kgs, &kg);
	}
	free(list);
	for (int t = 0; t < v->nthreads; t++) {
		struct rgroup__kgroup kg;
		char text[256];
		int i;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/rgroup", (int)v->pid,
			 (int)v->threads[t].tid);
		if (rgroup__read_path(path, text, sizeof(text)) <= 0 ||
		    rgroup__parse_kgroup(text, &kg) < 0)
			continue;
		found = 1;
		if (!kg.id || (i = native_group(kgs, &kg)) < 0)
			continue;
		v->threads[t].group = i;
	}
	if (!found || !sr.n)
		return 0;
	/* A parent the list did not have (made after it was read). */
	for (int i = 0; i < sr.n && sr.n < VIEW_MAX_GROUPS; i++) {
		int known = sr.g[i].parent == 0;

		for (int k = 0; k < sr.n && !known; k++)
			known = sr.g[k].id == sr.g[i].parent;
		if (!known) {
			kgs[sr.n] = (struct rgroup__kgroup){ 0 };
			sr.g[sr.n++] = (struct rgroup__state_group){
				.id = sr.g[i].parent, .depth = sr.g[i].depth - 1,
				.weight = rgroup_nice_to_weight(0),
				/* its parent: unknown here, shown at the top */
			};
		}
	}
	place_groups(v);
	for (int i = 0; i < v->ngroups; i++) {
		struct view_group *g = &v->groups[i];
		const struct rgroup__kgroup *kg = NULL;

		for (int k = 0; k < sr.n && !kg; k++)
			if (sr.g[k].id == g->id && kgs[k].has_cap)
				kg = &kgs[k];
		/* The cap and what it held back, where the kernel says */
		g->quota_us = kg ? (long long)kg->cap_quota_us : -1;
		g->period_us = kg ? (long long)kg->cap_period_us : -1;
		g->nr_throttled = kg ? (long long)kg->nr_throttled : -1;
		g->throttled_s = kg ? (double)kg->throttled_us / 1e6 : -1;
		snprintf(g->name, sizeof(g->name), "rgroup#%llu", (unsigned long long)g->id);
	}
	v->v2 = 1;     /* the kernel's usage covers the nested groups */
	v->backend = "native";
	{
		struct rgroup__cgloc loc;

		if (rgroup__cg_locate(v->pid, NULL, &loc, NULL, 0) == 0)
			snprintf(v->sgroup, sizeof(v->sgroup), "%s", loc.dir);
	}
	return 1;
}

/* ---- cgroupfs ------------------------------------------------------------ */

/* The process's sgroup directory on one hierarchy (rgroup path components
 * stripped, in case the leader sits in an rgroup): 0, -ENOENT (no such
 * hierarchy or group, or read-only: no rgroups there), or another -errno
 * from reading /proc. */
static int locate(struct view *v, int v2)
{
	struct rgroup__cgloc loc;
	int r = rgroup__cg_locate(v->pid, v2 ? NULL : "cpu", &loc, NULL, 0);

	if (r == -ENOTSUP || r == -EROFS)
		return -ENOENT;
	if (r < 0)
		return r;
	for (;;) {
		char *slash = strrchr(loc.path, '/');
		uint64_t id;

		if (!slash || !is_ours(v, slash + 1, &id))
			break;
		if (slash == loc.path)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (rgroup__cgroup_dir(&loc.mount, loc.path, v->sgroup, sizeof(v->sgroup)) < 0)
		return -ENOENT;
	v->v2 = v2;
	return 0;
}

/* The rgroup directories of v->pid below its sgroup: 0, or a VIEW_E*
 * code and the reason in why. */
static int read_cgroups(struct view *v, char *why, size_t len)
{
	/* The cpu hierarchy: cgroup v1 `cpu` if mounted, else cgroup v2. The
	 * one where the process has rgroup directories wins. */
	for (int v2 = 0; v2 <= 1; v2++) {
		int r = locate(v, v2);

		if (r == -ESRCH)
			return rgroup__why(why, len, VIEW_ENOPROC, "process %d has exited", (int)v->pid);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return rgroup__why(why, len, VIEW_EIO, "cannot find the cgroup of process %d: %s",
					   (int)v->pid, strerror(-r));
		for (int t = 0; t < v->nthreads; t++)
			v->threads[t].group = -1;
		v->ngroups = 0;
		if (scan(v, v->sgroup, -1, 1) == 0 && v->ngroups > 0) {
			v->backend = v2 ? "cgroup2" : "cgroup1";
			return 0;
		}
	}
	return rgroup__why(why, len, VIEW_ENORGROUP,
		      "process %d does not use rgroup (no rgroup directories below its cgroup, no governor state file)",
		      (int)v->pid);
}

/* Is pid a live process the caller may look at? 0 and v->starttime,
 * v->comm, *uid (its owner), or a VIEW_E* code and the reason in why. */
static int identify(struct view *v, pid_t pid, uid_t *uid, char *why, size_t len)
{
	char path[64], stext[2048], status[16384];
	const char *cl, *tgid;
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &sb) < 0)
		return rgroup__why(why, len, VIEW_ENOPROC, "no process with PID %d", (int)pid);
	if (geteuid() != 0 && sb.st_uid != geteuid())
		return rgroup__why(why, len, VIEW_EPERM,
			      "process %d belongs to another user (uid %u); only root may inspect it",
			      (int)pid, (unsigned int)sb.st_uid);
	*uid = sb.st_uid;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (rgroup__read_path(path, stext, sizeof(stext)) <= 0 ||
	    rgroup__parse_stat_starttime(stext, &v->starttime) < 0)
		return rgroup__why(why, len, VIEW_ENOPROC, "no process with PID %d", (int)pid);
	/* A zombie has exited; only its parent has not reaped it yet. */
	cl = strrchr(stext, ')');
	if (cl && (cl[2] == 'Z' || cl[2] == 'X'))
		return rgroup__why(why, len, VIEW_ENOPROC, "process %d has exited", (int)pid);
	/* A thread id that is not a process id also has /proc/TID: refuse it. */
	if (strtol(stext, NULL, 10) != pid)
		return rgroup__why(why, len, VIEW_ENOPROC, "no process with PID %d", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (rgroup__read_path(path, status, sizeof(status)) > 0 &&
	    (tgid = strstr(status, "\nTgid:")) && atoi(tgid + 6) != pid)
		return rgroup__why(why, len, VIEW_ENOPROC,
			      "%d is a thread of process %d, not a process",
			      (int)pid, atoi(tgid + 6));
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (rgroup__read_path(path, v->comm, sizeof(v->comm)) <= 0)
		snprintf(v->comm, sizeof(v->comm), "?");
	v->comm[strcspn(v->comm, "\n")] = '\0';
	return 0;
}

int view_each(struct view *v, int (*fn)(struct view *v, void *arg), void *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char why[512];
	int r = 0;

	if (!d)
		return -1;
	while (!r && (e = readdir(d))) {
		pid_t pid;

		if (view_parse_pid(e->d_name, &pid) == 0 && pid != getpid() &&
		    view_read(v, pid, why, sizeof(why)) == 0)
			r = fn(v, arg);
	}
	closedir(d);
	return r;
}

int view_alive(pid_t pid, uint64_t starttime)
{
	char path[64], stext[2048];
	uint64_t st;
	const char *cl;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (rgroup__read_path(path, stext, sizeof(stext)) <= 0 ||
	    rgroup__parse_stat_starttime(stext, &st) < 0 || st != starttime)
		return 0;
	cl = strrchr(stext, ')');
	return !(cl && (cl[2] == 'Z' || cl[2] == 'X'));
}

/* Each group's CPUs: the Cpus_allowed_list of its own threads, joined. */
static void read_cpus(struct view *v)
{
	static cpu_set_t sets[VIEW_MAX_GROUPS];
	unsigned char have[VIEW_MAX_GROUPS] = { 0 };

	for (int t = 0; t < v->nthreads; t++) {
		const struct view_thread *th = &v->threads[t];
		char path[64], text[4096], *p;
		cpu_set_t one;
		char err[128];

		if (th->group < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)v->pid, (int)th->tid);
		if (rgroup__read_path(path, text, sizeof(text)) <= 0 ||
		    !(p = strstr(text, "\nCpus_allowed_list:")))
			continue;
		p += strlen("\nCpus_allowed_list:");
		p += strspn(p, " \t");
		if (rgroup__run_parse_cpus(p, p + strcspn(p, "\n"), &one, err, sizeof(err)) < 0)
			continue;
		if (!have[th->group]++)
			CPU_ZERO(&sets[th->group]);
		CPU_OR(&sets[th->group], &sets[th->group], &one);
	}
	for (int i = 0; i < v->ngroups; i++)
		if (!have[i] || rgroup__run_format_cpus(&sets[i], v->groups[i].cpus,
							sizeof(v->groups[i].cpus)) < 0)
			v->groups[i].cpus[0] = '\0';
}

/* The rules' names of the groups, where `rgroup run`'s preload publishes
 * them (run-spec.h): only a regular file of the process's owner. */
static void read_labels(struct view *v, uid_t uid)
{
	static const char *const dirs[] = RGROUP__RUN_NAMES_DIRS;
	char name[96], text[RGROUP__RUN_MAX_GROUPS * (RGROUP__RUN_PATH_LEN + 24 + 256) + 1];
	struct stat sb;
	int fd, n = -1;

	v->labels[0] = '\0';
	if (rgroup__run_names_name(name, sizeof(name), v->pid, v->starttime, 0) < 0)
		return;
	for (int i = 0; i < RGROUP__RUN_NAMES_NDIRS && n < 0; i++) {
		snprintf(v->labels, sizeof(v->labels), "%s/%s", dirs[i], name);
		fd = open(v->labels, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == uid)
			n = rgroup__read_fd(fd, text, sizeof(text));
		if (fd >= 0)
			close(fd);
	}
	if (n <= 0) {
		v->labels[0] = '\0';
		return;
	}
	for (char *line = text, *end; *line; line = *end ? end + 1 : end) {
		static struct rgroup__run_rules one;
		unsigned long long id;
		char path[RGROUP__RUN_PATH_LEN], set[300] = "", spec[sizeof(set) + 4], err[256];
		int has_set;

		end = strchrnul(line, '\n');
		if (end - line >= (long)(sizeof(path) + sizeof(set) + 24))
			continue;
		has_set = sscanf(line, "%llu %127[A-Za-z0-9_./-] %299[^\n]", &id, path, set);
		if (has_set < 2)
			continue;
		/* The rule's cap, where cgroupfs shows none (the governor,
		 * the native kernel). */
		snprintf(spec, sizeof(spec), "g:%s", set);
		rgroup__run_init(&one);
		has_set = has_set == 3 && rgroup__run_add(&one, spec, err, sizeof(err)) == 0;
		for (int i = 0; i < v->ngroups; i++) {
			struct view_group *g = &v->groups[i];

			if (g->id != id)
				continue;
			snprintf(g->label, sizeof(g->label), "%s", path);
			if (g->quota_us < 0 && has_set) {
				g->quota_us = (long long)one.groups[0].quota_us;
				g->period_us = (long long)one.groups[0].period_us;
			}
		}
	}
}

/* Thread counts and usage up the tree, and the plain threads' and the
 * process's totals. */
static void add_up(struct view *v)
{
	for (int i = 0; i < v->ngroups; i++)
		v->groups[i].nthreads_total = v->groups[i].nthreads;
	if (!v->v2) {
		/* No cpuacct on the v1 cpu hierarchy: the live members' CPU
		 * times (threads that exited take theirs with them; the
		 * governor's file has said what they used). */
		for (int t = 0; t < v->nthreads; t++)
			if (v->threads[t].group >= 0)
				v->groups[v->threads[t].group].usage_s +=
					(double)v->threads[t].ticks * view_tick();
	}
	/* Reverse pre-order visits every child before its parent. */
	for (int i = v->ngroups - 1; i >= 0; i--) {
		struct view_group *g = &v->groups[i];

		if (g->parent < 0)
			continue;
		v->groups[g->parent].nthreads_total += g->nthreads_total;
		if (!v->v2)
			v->groups[g->parent].usage_s += g->usage_s;
	}
	v->plain_threads = 0;
	v->plain_usage_s = 0;
	v->total_ticks = 0;
	for (int t = 0; t < v->nthreads; t++) {
		v->total_ticks += v->threads[t].ticks;
		if (v->threads[t].group < 0) {
			v->plain_threads++;
			v->plain_usage_s += (double)v->threads[t].ticks * view_tick();
		}
	}
	v->total_usage_s = (double)v->total_ticks * view_tick();
}

int view_read(struct view *v, pid_t pid, char *why, size_t len)
{
	uid_t uid = 0;
	int r;

	memset(v, 0, offsetof(struct view, groups));
	v->ngroups = 0;
	v->nthreads = 0;
	v->pid = pid;
	v->backend = "no rgroup";
	v->ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (v->ncpus < 1)
		v->ncpus = 1;
	if ((r = identify(v, pid, &uid, why, len)) != 0)
		return r;
	if (read_threads(v) < 0)
		return rgroup__why(why, len, VIEW_ENOPROC, "no process with PID %d", (int)pid);
	if (!read_native(v) && !read_state(v, uid) && (r = read_cgroups(v, why, len)) != 0)
		return r;
	add_up(v);
	read_cpus(v);
	read_labels(v, uid);
	/* More nodes than the model holds: shares unknown (-1), the rest stands. */
	view_model(v);
	return 0;
}

int view_model(struct view *v)
{
	static struct model m;
	int node[VIEW_MAX_GROUPS];
	int pool, r;

	/* Until the model has run: unknown. */
	for (int i = 0; i < v->ngroups; i++)
		v->groups[i].ideal = -1;
	v->plain_ideal = -1;
	model_init(&m);
	pool = model_add(&m, -1, rgroup_nice_to_weight(0), 0);
	for (int i = 0; i < v->ngroups; i++) {
		const struct view_group *g = &v->groups[i];

		node[i] = model_add(&m, g->parent < 0 ? pool : node[g->parent],
				    g->weight ? g->weight : 1, 0);
		if (node[i] < 0)
			return -ENOSPC;
	}
	/* Threads after all groups: parent < child holds. */
	int tnode[VIEW_MAX_THREADS];
	for (int t = 0; t < v->nthreads; t++) {
		const struct view_thread *th = &v->threads[t];

		tnode[t] = model_add(&m, th->group < 0 ? pool : node[th->group],
				     rgroup_nice_to_weight(th->nice), th->demand);
		if (tnode[t] < 0)
			return -ENOSPC;  /* more than MODEL_MAX_NODES: no shares */
	}
	if ((r = model_run(&m, v->capacity > 0 ? v->capacity : v->ncpus)) < 0)
		return r;
	for (int i = 0; i < v->ngroups; i++)
		v->groups[i].ideal = model_fraction(&m, node[i]);
	v->plain_ideal = 0;
	for (int t = 0; t < v->nthreads; t++)
		if (v->threads[t].group < 0)
			v->plain_ideal += model_fraction(&m, tnode[t]);
	return 0;
}

const char *view_group_name(const struct view_group *g)
{
	return g->label[0] ? g->label : g->name;
}

const char *view_cap_text(const struct view_group *g, char *buf, size_t len)
{
	if (g->quota_us < 0)
		return "?";
	if (!g->quota_us || g->period_us <= 0)
		return "-";
	snprintf(buf, len, "%.0f%%", 100.0 * (double)g->quota_us / (double)g->period_us);
	return buf;
}
