/* SPDX-License-Identifier: MIT */
/*
 * tree-helper.c - a process with a known rgroup tree, for the tests of
 * `rgroup tree` and `rgroup top` (test-tree-top.sh).
 *
 * In a system group of its own (test/lib/sgroup.h; none on the governor)
 * it builds:
 *
 *   sgroup:  the main thread and one plain thread (sleeping)
 *     A      nice 5, two sleeping threads
 *     B      nice -2 (root may go below its own nice), one spinning thread
 *       C    nice 3, one spinning thread
 *
 * and writes to the file argv[1], then renames it into place (so the
 * reader never sees half of it), one line per fact:
 *
 *   pid PID
 *   plain N          (threads in no rgroup, the library's own too)
 *   group NAME EXPECTED-JSON-PREFIX
 *   state PATH       (governor: where its state file must be)
 *
 * where the prefix is exactly how `rgroup tree --json` starts that group's
 * line. It runs until SIGTERM or SIGINT, then stops its threads, waits for
 * the library to remove the groups and removes its system group. Exit 77
 * (with the reason) when it cannot run here.
 */
#include <dirent.h>
#include <signal.h>

#include "sgroup.h"

static struct rgt_worker plain = { .spin = 0 };
static struct rgt_worker a_kid = { .spin = 0 };
static struct rgt_worker a = { .spin = 0, .set_nice = 1, .nice = 5, .nkids = 1, .kids = &a_kid };
static struct rgt_worker c = { .spin = 1, .new_group = 1, .set_nice = 1, .nice = 3 };
static struct rgt_worker b = { .spin = 1, .set_nice = 1, .nice = -2, .nkids = 1, .kids = &c };

/* One "group" fact; returns the group's thread count. */
static unsigned int describe(FILE *f, pid_t tid)
{
	struct rgroup_info info = { .sz = sizeof(info) }, pinfo = { .sz = sizeof(pinfo) };
	rgroup_id_t id;

	if (rgroup_of(tid, &id) < 0 || !id || rgroup_info(id, &info) < 0) {
		fprintf(stderr, "tree-helper: cannot describe the group of thread %d\n", (int)tid);
		exit(1);
	}
	if (info.parent && rgroup_info(info.parent, &pinfo) < 0)
		exit(1);
	/* A backend without directories (the governor) names no group; the
	 * tool shows the name such a directory would have. The native
	 * kernel's groups are shown by the kernel's ids (the library's
	 * rgroup_info names them "kernel rgroup ID"). */
	if (scn_sg.native) {
		unsigned long long kid = 0, pkid = 0;

		if (sscanf(info.name, "kernel rgroup %llu", &kid) != 1 ||
		    (info.parent && sscanf(pinfo.name, "kernel rgroup %llu", &pkid) != 1)) {
			fprintf(stderr, "tree-helper: no kernel id for group %llu ('%s')\n",
				(unsigned long long)info.id, info.name);
			exit(1);
		}
		snprintf(info.name, sizeof(info.name), "rgroup#%llu", kid);
		info.id = kid;
		info.parent = pkid;
	} else if (!info.name[0])
		rgroup__format_dirname(info.name, sizeof(info.name), getpid(),
				       rgroup__starttime(0), info.id);
	fprintf(f, "group %s {\"name\":\"%s\",\"id\":%llu,\"parent\":%llu,\"depth\":%u,"
		"\"nice\":%d,\"weight\":%u,\"threads\":%u,\n",
		info.name, info.name, (unsigned long long)info.id,
		(unsigned long long)info.parent, info.depth, info.nice, info.weight,
		info.nthreads);
	return info.nthreads;
}

/* Threads in the sgroup's thread list (cgroup backends). */
static int sgroup_threads(const char *sg)
{
	char dir[PATH_MAX + 16], tids[4096];
	int n = 0;

	scn_cg_dir(sg, dir, sizeof(dir));
	strcat(dir, scn_sg.v2 ? "/cgroup.threads" : "/tasks");
	if (rgt_read(dir, tids, sizeof(tids)) < 0) {
		perror(dir);
		exit(1);
	}
	for (char *p = tids; *p; p++)
		n += *p == '\n';
	return n;
}

/* All the process's threads (the governor: a thread in no rgroup is
 * plain, its own and the keeper included). */
static int all_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d) {
		perror("/proc/self/task");
		exit(1);
	}
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The governor's state file name for this process (src/governor/governor-state.h). */
static void state_fact(FILE *f)
{
	char name[64];

	if (rgroup__format_statename(name, sizeof(name), getpid(), rgroup__starttime(0), 0) < 0) {
		fprintf(stderr, "tree-helper: cannot name the state file\n");
		exit(1);
	}
	fprintf(f, "state %s/%s\n", RGROUP__STATE_DIR, name);
}

int main(int argc, char **argv)
{
	char sg[PATH_MAX], tmp[PATH_MAX + 8];
	sigset_t set;
	int sig;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: tree-helper FILE\n");
		return 2;
	}
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));

	/* Block the stop signals in every thread; main waits for them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (rgt_worker_start(&plain, 0) || rgt_worker_start(&a, RGROUP_NEW) ||
	    rgt_worker_start(&b, RGROUP_NEW) || a.err || b.err || c.err) {
		fprintf(stderr, "tree-helper: cannot build the tree (%s)\n",
			strerror(a.err ? a.err : b.err ? b.err : c.err ? c.err : EAGAIN));
		return 1;
	}

	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	if (!(f = fopen(tmp, "w"))) {
		perror(tmp);
		return 1;
	}
	/* Plain threads: main, `plain`, and any thread the library keeps. */
	{
		int grouped = (int)(describe(f, a.tid) + describe(f, b.tid) + describe(f, c.tid));

		fprintf(f, "pid %d\nplain %d\n", (int)getpid(),
			rgt_dirs() ? sgroup_threads(sg) : all_threads() - grouped);
		if (scn_sg.gov)
			state_fact(f);
	}
	fclose(f);
	if (rename(tmp, argv[1]) < 0) {
		perror(argv[1]);
		return 1;
	}

	sigwait(&set, &sig);
	rgt_worker_stop(&b);
	rgt_worker_stop(&a);
	rgt_worker_stop(&plain);
	return 0;   /* atexit: scn_sg_cleanup() */
}
