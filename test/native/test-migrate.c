/* SPDX-License-Identifier: MIT */
/*
 * test-migrate.c - rule 8 on the native kernel: when an administrator
 * writes a process with busy rgroups into another cgroup, its rgroup tree
 * follows (ids, nesting, nice values and memberships survive) and the CPU
 * split holds there; moving single threads (cgroup.threads) leaves the
 * tree where it is until all its members are in one cgroup; migrations
 * racing with thread creation and exit.
 *
 * The administrator is this program's main process (root); the process
 * with the rgroups is a child C that reports through a pipe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>


/* All threads of process pid: their rgroup lines, keyed by tid. */
struct snap {
	int n;
	pid_t tid[256];
	struct nt_rg rg[256];
	char cg[256][128];
};

static void take(pid_t pid, struct snap *s)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	struct dirent *e;
	s->n = 0;
	while (d && (e = readdir(d)) && s->n < 256) {
		if (e->d_name[0] == '.')
			continue;
		pid_t tid = atoi(e->d_name);
		char cgp[80];
		if (nt_rg_read(pid, tid, &s->rg[s->n]))
			continue;
		snprintf(cgp, sizeof(cgp), "/proc/%d/task/%d/cgroup", pid, tid);
		if (nt_read_file(cgp, s->cg[s->n], sizeof(s->cg[0])) < 0)
			continue;
		s->cg[s->n][strcspn(s->cg[s->n], "\n")] = 0;
		s->tid[s->n++] = tid;
	}
	if (d)
		closedir(d);
}

static int find(const struct snap *s, pid_t tid)
{
	for (int i = 0; i < s->n; i++)
		if (s->tid[i] == tid)
			return i;
	return -1;
}

/* --- rule 8: the whole process moves while busy ----------------------------- */

struct mig_ctl {
	int to_parent[2], to_child[2];
};

static int mig_child(void *p)
{
	struct mig_ctl *c = p;
	struct nt_run *r = calloc(1, sizeof(*r));
	char b = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int err = nt_scn_start(&nt_nested_two_cpus, r);
	if (write(c->to_parent[1], &err, sizeof(err)) != sizeof(err) || err)
		return 1;
	/* the parent moves us, busy, and has a look */
	if (read(c->to_child[0], &b, 1) != 1)
		return 1;
	/* the split in the new cgroup */
	int fails = nt_scn_judge(&nt_nested_two_cpus, r, 0.5) != 0;
	if (write(c->to_parent[1], &fails, sizeof(fails)) != sizeof(fails))
		return 1;
	if (read(c->to_child[0], &b, 1) != 1)
		return 1;
	nt_scn_stop(&nt_nested_two_cpus, r);
	return 0;
}

static void rule8_migrate_busy(void)
{
	char x[256], y[256], want[300];
	struct mig_ctl c;
	struct snap s0, s1;
	int err = -1, fails = -1;

	CHECK(nt_cg_make("migx", x, sizeof(x)) == 0 && nt_cg_make("migy", y, sizeof(y)) == 0,
	      "cgroups");
	CHECK(pipe(c.to_parent) == 0 && pipe(c.to_child) == 0, "pipes");
	CHECK(nt_cg_move(x, getpid()) == 0, "into x");
	pid_t pid = nt_fork(mig_child, &c);
	CHECK(nt_cg_move(NT_SG "/self", getpid()) == 0, "back");
	CHECK(read(c.to_parent[0], &err, sizeof(err)) == sizeof(err) && err == 0,
	      "C built its rgroups: %s", strerror(err));
	nt_sleep(0.5);
	take(pid, &s0);
	CHECK(s0.n >= 12, "C's threads: %d", s0.n);

	/* the administrator: C into y, busy */
	CHECK(nt_cg_move(y, pid) == 0, "write C's pid to %s/cgroup.procs: %s", y, strerror(errno));
	take(pid, &s1);
	snprintf(want, sizeof(want), "0::%s", y + strlen("/sys/fs/cgroup"));
	int same = 0, in_y = 0, attached = 0, members = 0;
	for (int i = 0; i < s0.n; i++) {
		int k = find(&s1, s0.tid[i]);
		if (k < 0)
			continue;
		struct nt_rg *a = &s0.rg[i], *b = &s1.rg[k];
		same += a->id == b->id && a->parent == b->parent && a->depth == b->depth &&
			a->nice == b->nice;
		in_y += !strcmp(s1.cg[k], want);
		if (b->id) {
			members++;
			attached += b->attached;
		}
	}
	fprintf(stderr, "  after the move: %d of %d threads in %s, %d with the same rgroup, "
		"%d of %d members attached\n", in_y, s0.n, want, same, attached, members);
	CHECK(in_y == s0.n, "every thread is in y");
	CHECK(same == s0.n, "ids, nesting and nice values survive");
	CHECK(members == 11 && attached == members, "every member scheduled in its rgroup");

	/* the old cgroup is empty and can go: nothing of C's is left there */
	CHECK(rmdir(x) == 0, "rmdir %s: %s", x, strerror(errno));

	/* the split in y */
	char b = 1;
	CHECK(write(c.to_child[1], &b, 1) == 1, "go");
	CHECK(read(c.to_parent[0], &fails, sizeof(fails)) == sizeof(fails), "measured");
	CHECK(fails == 0, "the split after the move: %d entities off", fails);
	CHECK(write(c.to_child[1], &b, 1) == 1, "stop");
	CHECK(nt_wait(pid) == 0, "C");
	for (int i = 0; i < 2; i++) {
		close(c.to_parent[i]);
		close(c.to_child[i]);
	}
}

/* --- single threads: cgroup.threads in a threaded subtree ------------------- */

struct thr_ctl {
	int to_parent[2], to_child[2];
	char t1[256];
};

struct thr_info {
	pid_t a, s1, s2, n;   /* agent of R, two spinners in R, agent of R/N */
};

static int self_move_job(void *p)
{
	const char *t1 = p;
	char path[300];
	snprintf(path, sizeof(path), "%s/cgroup.threads", t1);
	return nt_write_file(path, "0");
}

static int thr_child(void *p)
{
	struct thr_ctl *c = p;
	struct nt_agent a, n;
	struct nt_spinners sp = { .n = 2 };
	struct thr_info info;
	char path[300], b;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(path, sizeof(path), "%s/cgroup.threads", c->t1);
	if (nt_write_file(path, "0"))
		return 2;
	if (nt_agent_start(&a, 1) || nt_agent_run(&a, nt_spinners_job, &sp))
		return 3;
	if (nt_agent_start_in(&a, &n, 1) || nt_setprio(a.tid, 4) || nt_setprio(n.tid, -6))
		return 4;
	info = (struct thr_info){ a.tid, sp.s[0].tid, sp.s[1].tid, n.tid };
	if (write(c->to_parent[1], &info, sizeof(info)) != sizeof(info))
		return 5;
	/* step 4: a moves itself back to t1 (the unlocked self-move) */
	if (read(c->to_child[0], &b, 1) != 1)
		return 6;
	int r = nt_agent_run(&a, self_move_job, c->t1);
	if (write(c->to_parent[1], &r, sizeof(r)) != sizeof(r))
		return 7;
	if (read(c->to_child[0], &b, 1) != 1)
		return 8;
	nt_spinners_stop(&sp);
	nt_agent_stop(&n);
	nt_agent_stop(&a);
	return 0;
}

static int move_thread(const char *cg, pid_t tid)
{
	char path[300], buf[32];
	snprintf(path, sizeof(path), "%s/cgroup.threads", cg);
	snprintf(buf, sizeof(buf), "%d", tid);
	return nt_write_file(path, buf);
}

/* attached flags of a, s1, s2, n as a string like "1011" */
static const char *attached(pid_t pid, const struct thr_info *in, uint64_t *ids, int *nices)
{
	static char out[5];
	pid_t t[4] = { in->a, in->s1, in->s2, in->n };
	for (int i = 0; i < 4; i++) {
		struct nt_rg rg;
		if (nt_rg_read(pid, t[i], &rg)) {
			out[i] = '?';
			continue;
		}
		out[i] = (char)('0' + rg.attached);
		if (ids)
			ids[i] = rg.id;
		if (nices)
			nices[i] = rg.nice;
	}
	out[4] = 0;
	return out;
}

static void rule8_single_threads(void)
{
	char d[256], t2[256], path[300];
	struct thr_ctl c;
	struct thr_info in;
	uint64_t id0[4], id1[4];
	int nice0[4], nice1[4], r = -1;
	char b = 1;
	const char *at;

	CHECK(nt_cg_make("dom", d, sizeof(d)) == 0, "dom");
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", d);
	CHECK(nt_write_file(path, "+cpu") == 0, "+cpu in dom");
	CHECK(nt_cg_make("dom/t1", c.t1, sizeof(c.t1)) == 0 &&
	      nt_cg_make("dom/t2", t2, sizeof(t2)) == 0, "dom/t1, dom/t2");
	snprintf(path, sizeof(path), "%s/cgroup.type", c.t1);
	CHECK(nt_write_file(path, "threaded") == 0, "t1 threaded: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/cgroup.type", t2);
	CHECK(nt_write_file(path, "threaded") == 0, "t2 threaded");
	CHECK(pipe(c.to_parent) == 0 && pipe(c.to_child) == 0, "pipes");

	CHECK(nt_cg_move(d, getpid()) == 0, "into dom");
	pid_t pid = nt_fork(thr_child, &c);
	CHECK(nt_cg_move(NT_SG "/self", getpid()) == 0, "back");
	if (read(c.to_parent[0], &in, sizeof(in)) != sizeof(in)) {
		CHECK(0, "C set up its rgroups: exited %d", nt_wait(pid));
		return;
	}

	at = attached(pid, &in, id0, nice0);
	CHECK(!strcmp(at, "1111"), "all in t1, attached: %s", at);
	CHECK(id0[0] == id0[1] && id0[1] == id0[2] && id0[3] != id0[0], "R and R/N");

	CHECK(move_thread(t2, in.s1) == 0, "s1 to t2: %s", strerror(errno));
	at = attached(pid, &in, id1, NULL);
	fprintf(stderr, "  s1 alone in t2: attached a s1 s2 n = %s\n", at);
	CHECK(!strcmp(at, "1011"), "s1 is scheduled as a plain thread of t2, the rest stays");
	CHECK(id1[1] == id0[1], "s1 keeps its rgroup (rule 2)");

	CHECK(move_thread(t2, in.s2) == 0 && move_thread(t2, in.a) == 0, "s2, a to t2");
	at = attached(pid, &in, NULL, NULL);
	fprintf(stderr, "  a, s1, s2 in t2, n in t1: %s\n", at);
	CHECK(!strcmp(at, "0001"), "the tree stays in t1 while n is there");

	CHECK(move_thread(t2, in.n) == 0, "n to t2");
	at = attached(pid, &in, id1, nice1);
	fprintf(stderr, "  all members in t2: %s\n", at);
	CHECK(!strcmp(at, "1111"), "with the last member the tree follows to t2");
	CHECK(!memcmp(id0, id1, sizeof(id0)) && !memcmp(nice0, nice1, sizeof(nice0)),
	      "same ids and nice values");

	CHECK(write(c.to_child[1], &b, 1) == 1 &&
	      read(c.to_parent[0], &r, sizeof(r)) == sizeof(r), "a moves itself");
	CHECK(r == 0, "a writes 0 to t1/cgroup.threads: %s", strerror(-r));
	at = attached(pid, &in, NULL, NULL);
	fprintf(stderr, "  a moved itself back to t1: %s\n", at);
	CHECK(!strcmp(at, "0111"), "a is a plain thread of t1 now, the tree stays in t2");

	CHECK(move_thread(t2, in.a) == 0, "a back to t2");
	at = attached(pid, &in, id1, nice1);
	CHECK(!strcmp(at, "1111"), "a is back in its rgroup: %s", at);
	CHECK(!memcmp(id0, id1, sizeof(id0)), "same ids");

	CHECK(write(c.to_child[1], &b, 1) == 1, "stop");
	CHECK(nt_wait(pid) == 0, "C");
	for (int i = 0; i < 2; i++) {
		close(c.to_parent[i]);
		close(c.to_child[i]);
	}
}

/* --- migrations racing with clone, exit and PRIO_RGRP --------------------------- */

static int churn_stop;
/* Shared with the parent: it has moved the child often enough */
static volatile int *moves_done;

static void *churn_leaf(void *arg)
{
	(void)arg;
	return NULL;
}

/* Make and reap threads: new rgroups, nested ones, joiners; renice. */
static int churn_job(void *arg)
{
	long n = 0;
	(void)arg;
	while (!__atomic_load_n(&churn_stop, __ATOMIC_RELAXED)) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			if (!nt_pthread(&t[i], i & 1, churn_leaf, NULL))
				pthread_join(t[i], NULL);
		nt_setprio(0, (int)(n++ % 7) - 3);
	}
	return (int)n;
}

static void *churn_agent(void *arg)
{
	struct nt_agent *a = arg;
	return (void *)(long)nt_agent_run(a, churn_job, NULL);
}

static int churn_child(void *arg)
{
	struct nt_agent a[3], nested;
	pthread_t drv[4];
	struct nt_spinners sp = { .n = 2 };
	(void)arg;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 0; i < 3; i++)
		if (nt_agent_start(&a[i], i < 2))
			return 2;
	if (nt_agent_start_in(&a[0], &nested, 1) || nt_agent_run(&nested, nt_spinners_job, &sp))
		return 3;
	for (int i = 0; i < 3; i++)
		pthread_create(&drv[i], NULL, churn_agent, &a[i]);
	pthread_create(&drv[3], NULL, churn_agent, &nested);
	for (double end = nt_now() + 90; !*moves_done && nt_now() < end;)
		nt_sleep(0.05);
	__atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
	long total = 0;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(drv[i], &r);
		total += (long)r;
	}
	fprintf(stderr, "  C: %ld rounds of 4 threads and a renice while being moved\n", total);
	/* every member still scheduled in its rgroup, ids as before */
	int bad = 0;
	struct nt_rg rg;
	pid_t t[4] = { a[0].tid, a[1].tid, nested.tid, sp.s[0].tid };
	for (int i = 0; i < 4; i++)
		bad += nt_rg_read(0, t[i], &rg) || !rg.id || !rg.attached;
	nt_spinners_stop(&sp);
	nt_agent_stop(&nested);
	for (int i = 0; i < 3; i++)
		nt_agent_stop(&a[i]);
	return bad ? 4 : 0;
}

#define MOVES 40

static void rule8_migrate_churn(void)
{
	char x[256], y[256];
	int moves = 0;

	CHECK(nt_cg_make("churnx", x, sizeof(x)) == 0 && nt_cg_make("churny", y, sizeof(y)) == 0,
	      "cgroups");
	CHECK(nt_cg_move(x, getpid()) == 0, "into x");
	moves_done = mmap(NULL, sizeof(*moves_done), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(moves_done != MAP_FAILED, "shared memory");
	if (moves_done == MAP_FAILED)
		return;
	*moves_done = 0;
	pid_t pid = nt_fork(churn_child, NULL);
	CHECK(nt_cg_move(NT_SG "/self", getpid()) == 0, "back");
	/* MOVES moves while C churns, however slow a loaded host makes them */
	double t0 = nt_now();
	int err = 0;
	nt_sleep(0.5);
	while (moves < MOVES && nt_now() < t0 + 60) {
		if ((err = nt_cg_move(moves & 1 ? x : y, pid)))
			break;
		moves++;
		nt_sleep(0.02);
	}
	*moves_done = 1;
	fprintf(stderr, "  %d moves between two cgroups in %.1f s\n", moves, nt_now() - t0);
	CHECK(!err, "every move worked: %s after %d", strerror(err < 0 ? -err : err), moves);
	CHECK(moves == MOVES, "%d moves in 60 s", moves);
	CHECK(nt_wait(pid) == 0, "C's rgroups are consistent afterwards");
	munmap((void *)moves_done, sizeof(*moves_done));
}

static const struct rgt_case cases[] = {
	{ "rule8_migrate_busy", rule8_migrate_busy },
	{ "rule8_single_threads", rule8_single_threads },
	{ "rule8_migrate_churn", rule8_migrate_churn },
};

int main(int argc, char **argv)
{
	return nt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv, 1);
}
