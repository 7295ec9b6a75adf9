/* SPDX-License-Identifier: MIT */
/*
 * test-share.c - rules 4 and 5 on the native kernel, on two vCPUs: an
 * rgroup competes under its parent as one entity with the weight of a
 * thread of its nice value; measured CPU time against the reference model
 * (src/model/model.c), as the kernel's cgroup selftests measure cpu.weight.
 *
 * Each scenario runs in a fresh process C in a cgroup of its own below the
 * test's system group: C forks the single-threaded busy processes, builds
 * its rgroups (an agent thread per rgroup, asleep, plus busy threads),
 * sets their nice values with PRIO_RGRP, and measures with CPU clocks
 * (its own threads' and the other processes') after a warm-up. C's main
 * thread sleeps.
 *
 * Judged by the one rule of test/lib/judge.h (median of five windows,
 * 2 points + 5%). On two CPUs a group's weight is split between the
 * CPUs by its runnable load there (PELT averages) and the load balancer
 * evens loads out in steps, so the kernel's split is exact only on
 * average. The scenarios are built so that it is: every group runs
 * threads on both CPUs, and a single-threaded process never has to win a
 * whole CPU from a group (where the scheduler leaves it short: a busy
 * process beside a nested rgroup tree got 0.47 of the time instead of 0.5
 * here, as it would beside a cgroup). The emulator runs with one TCG
 * thread on clocks that count instructions (run-native.sh --single-tcg),
 * so a loaded host does not hand the guest's CPU time to whichever task
 * was running when it stopped the emulator. A real error is far larger:
 * a group competing as its four threads instead of as one entity is off
 * by 50-100%, one nice step by 25%.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"
#include "judge.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>

#include "model.h"

#define WARMUP_S 1.0

struct scenario {
	const char *name;
	struct nt_scenario sc;
	const char *cpu_max;   /* cpu.max of the scenario's cgroup, or NULL */
	int one_cpu;           /* pin the scenario to CPU 0 */
	/* change a group's nice after the first measurement and measure again */
	int renice_group, renice_to;
	/* first stop the group's threads and let its load decay away */
	int renice_idle;
};

/* rule9_cpu_weight's channel to the scenario: [0] the scenario waits on
 * (until closed), [1] it reports on; -1: no one measures beside it. */
static int hold_fds[4] = { -1, -1, -1, -1 }; /* [2], [3]: the other ends */

/* The one rule (test/lib/judge.h); what is off counts as a failure there. */
static void measure(const struct scenario *s, struct nt_run *r)
{
	nt_scn_judge(&s->sc, r, WARMUP_S);
}

/*
 * Whether the scheduler lists a runqueue of the rgroup of thread TID on
 * its leaf list of any CPU: 1, 0, or -errno (no debug file).
 */
static int group_listed(pid_t tid)
{
	long long w[NT_MAX_CPUS];
	int n = nt_group_weights(tid, w, NT_MAX_CPUS);

	return n < 0 ? n : n > 0;
}

/*
 * Stop group G's busy threads and wait until its runqueues have left the
 * scheduler's leaf lists on every CPU: no task, no load left to decay
 * (PELT halves a load every 32 ms; the last of it takes about a second).
 * A renice then finds the group idle everywhere, and its next enqueue on
 * each CPU must pick the new weight up.
 */
#define IDLE_WAIT_S 20.0
static void idle_group(const struct scenario *s, struct nt_run *r, int g)
{
	double t0 = nt_now();
	int listed;

	nt_spinners_stop(&r->spin[g]);
	while ((listed = group_listed(r->agent[g].tid)) == 1 && nt_now() - t0 < IDLE_WAIT_S)
		nt_sleep(0.2);
	if (listed < 0) {
		fprintf(stderr, "  no scheduler debug file (%s): waiting 3 s instead\n",
			strerror(-listed));
		nt_sleep(3.0);
	} else {
		CHECK(listed == 0, "%s: its runqueues left the leaf lists within %.0f s",
		      s->sc.g[g].label, IDLE_WAIT_S);
		fprintf(stderr, "  %s idle, its load decayed on every CPU after %.1f s\n",
			s->sc.g[g].label, nt_now() - t0);
	}
}

static int scenario_child(void *p)
{
	const struct scenario *s = p;
	struct nt_run *r = calloc(1, sizeof(*r));
	int err;
	rgt_failures = 0; /* this child's own count */

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (hold_fds[1] >= 0) {
		close(hold_fds[2]);
		close(hold_fds[3]);
	}
	if (s->one_cpu) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "pin to CPU 0");
	}
	err = nt_scn_start(&s->sc, r);
	CHECK(!err, "set up the scenario: %s", strerror(err));
	if (!err) {
		measure(s, r);
		if (s->renice_group >= 0) {
			int g = s->renice_group;
			if (s->renice_idle)
				idle_group(s, r, g);
			CHECK(nt_setprio(r->agent[g].tid, s->renice_to) == 0, "renice");
			r->nice[g] = s->renice_to;
			fprintf(stderr, "  setpriority(PRIO_RGRP, %s, %d)%s:\n", s->sc.g[g].label,
				s->renice_to, s->renice_idle ? ", then its threads again" : "");
			if (s->renice_idle)
				CHECK(nt_agent_run(&r->agent[g], nt_spinners_job, &r->spin[g]) == 0,
				      "restart %s's threads", s->sc.g[g].label);
			measure(s, r);
		}
	}
	/* rule9_cpu_weight measures beside us: report, and keep running
	 * until it is done */
	if (hold_fds[1] >= 0) {
		int fails = rgt_failures;
		char c;
		if (write(hold_fds[1], &fails, sizeof(fails)) != sizeof(fails))
			rgt_failures++;
		while (read(hold_fds[0], &c, 1) > 0)
			;
	}
	nt_scn_stop(&s->sc, r);
	return rgt_failures ? 1 : 0;
}

static void run_scenario(const struct scenario *s)
{
	char cg[256], path[300], self[300];
	static int seq;
	char name[32];

	snprintf(name, sizeof(name), "share%d", seq++);
	CHECK(nt_cg_make(name, cg, sizeof(cg)) == 0, "mkdir %s", cg);
	if (s->cpu_max) {
		snprintf(path, sizeof(path), "%s/cpu.max", cg);
		CHECK(nt_write_file(path, s->cpu_max) == 0, "cpu.max %s", s->cpu_max);
	}
	/* C and its processes start in the scenario's cgroup */
	snprintf(self, sizeof(self), NT_SG "/self");
	CHECK(nt_cg_move(cg, getpid()) == 0, "into %s", cg);
	int rc = nt_child_run(scenario_child, (void *)s);
	CHECK(nt_cg_move(self, getpid()) == 0, "back");
	CHECK(rc == 0, "%s: the scenario exited %d", s->name, rc);
}

/* Rule 4, the article: two single-threaded processes and an rgroup of four
 * busy threads split their cgroup's CPU time in three. */
static void rule4_article_split(void)
{
	struct scenario sc = {
		.name = "article", .renice_group = -1,
		.sc = { .nprocs = 2, .ngroups = 1, .capacity = 2,
			.g = { { -1, 0, 4, "rgroup of 4 threads" } } },
	};
	run_scenario(&sc);
}

/* Rules 4 and 5 nested: a top-level rgroup A (asleep itself) holds two
 * nested rgroups of two busy threads at nice 0 and 5, beside a top-level
 * rgroup B of two busy threads: A and B get a CPU each, A's is split
 * 1024:335 (the test-share scenario of the cgroup backends, on 2 CPUs). */
static void rule4_nested_nice(void)
{
	struct scenario sc = {
		.name = "nested", .renice_group = -1,
		.sc = { .nprocs = 0, .ngroups = 4, .capacity = 2,
			.g = { { -1, 0, 0, "A (top-level)" },
			       { 0, 0, 2, "A/A1" },
			       { 0, 5, 2, "A/A2" },
			       { -1, 0, 2, "B (top-level)" } } },
	};
	run_scenario(&sc);
}

/* Rule 5: PRIO_RGRP changes a running rgroup's weight: two top-level
 * rgroups of two busy threads, from 1:1 to 1024:335. */
static void rule5_renice(void)
{
	struct scenario sc = {
		.name = "renice", .renice_group = 1, .renice_to = 5,
		.sc = { .nprocs = 0, .ngroups = 2, .capacity = 2,
			.g = { { -1, 0, 2, "A (2 threads)" },
			       { -1, 0, 2, "B (2 threads)" } } },
	};
	run_scenario(&sc);
}

/*
 * Rule 5 for an idle group: the kernel reweights a group only on the CPUs
 * where it has had queued threads since its load there decayed; elsewhere
 * the next enqueue reads the new weight. So renice a group whose load has decayed on every
 * CPU, wake its threads, and judge: 1:1, then idle, then 1024:335.
 */
static void rule5_renice_idle(void)
{
	struct scenario sc = {
		.name = "renice idle", .renice_group = 1, .renice_to = 5, .renice_idle = 1,
		.sc = { .nprocs = 0, .ngroups = 2, .capacity = 2,
			.g = { { -1, 0, 2, "A (2 threads)" },
			       { -1, 0, 2, "B (2 threads)" } } },
	};
	run_scenario(&sc);
}

/*
 * Rule 5 nested, on every CPU: a top-level rgroup A beside a top-level P
 * (asleep itself) holding P/B and P/C, each with a busy thread pinned to
 * each online CPU; then P/C goes to nice 5: 1:1 with P split 1:1, then P
 * split 1024:335. The kernel reweights a group only on the CPUs where it
 * may hold load, so the split is judged where those are many: the suite
 * runs this case on 2 vCPUs and again on 8 (native-share-smp8). Pinned,
 * because CFS divides a group's weight among CPUs by its load on each:
 * left to the load balancer, the light threads of P/C gather where P/B
 * has none, and there P/C has all of P's share (on 8 vCPUs P/C got 0.16
 * to 0.18 of the CPU time instead of 0.12, with the kernel reweighting
 * every CPU as much as with it reweighting only where there is load).
 * One thread of each group per CPU makes every CPU's split the model's.
 */
static void rule5_renice_nested_all_cpus(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int n = online < 1 ? 1 : online > NT_MAX_SPIN ? NT_MAX_SPIN : (int)online;
	struct scenario sc = {
		.name = "nested renice, all CPUs", .renice_group = 2, .renice_to = 5,
		.sc = { .nprocs = 0, .ngroups = 4, .capacity = n, .spread = 1,
			.g = { { -1, 0, n, "A (a thread per CPU)" },
			       { -1, 0, 0, "P (top-level)" },
			       { 1, 0, n, "P/C (a thread per CPU)" },
			       { 1, 0, n, "P/B (a thread per CPU)" } } },
	};
	fprintf(stderr, "  %d CPUs online\n", n);
	run_scenario(&sc);
}

/*
 * Rule 9: the cgroup's cpu.max still caps everything below it, and the
 * article's split inside stays. On one CPU: CFS bandwidth control on two
 * CPUs skews a split by itself (plain sibling cgroups a and b with one busy
 * process each and c with four, under cpu.max of 1 CPU, got 0.24, 0.24 and
 * 0.52 of the time in this VM, not thirds), and what is tested here is
 * that the cap applies to the rgroups and the split below it is theirs.
 */
static void rule9_cpu_max(void)
{
	struct scenario sc = {
		.name = "cpu.max", .cpu_max = "50000 100000", .one_cpu = 1, .renice_group = -1,
		.sc = { .nprocs = 2, .ngroups = 2, .capacity = 0.5, .cpu_max = 1,
			.g = { { -1, 0, 4, "rgroup of 4 threads" },
			       { 0, 3, 2, "nested, nice 3" } } },
	};
	run_scenario(&sc);
}

/* A process with four busy threads, in no rgroup: the competitor. */
static int plain_busy_child(void *arg)
{
	struct nt_spinners sp = { .n = 4 };
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (nt_spinners_job(&sp))
		return 1;
	pause();
	return 0;
}

static long usage_usec(const char *cg)
{
	char path[300], buf[1024];
	snprintf(path, sizeof(path), "%s/cpu.stat", cg);
	if (nt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	char *p = strstr(buf, "usage_usec ");
	return p ? atol(p + 11) : -1;
}

/*
 * Rule 9: the cgroup's cpu.weight still applies to everything below it.
 * Siblings x (weight 100, a process with two rgroups of two busy threads,
 * nice 0 and 5) and y (weight 300, a process with four busy threads): x
 * gets a quarter of the two CPUs, measured with the cgroups' own cpu.stat,
 * and inside x the rgroups split that half CPU 1024:335.
 */
/* cgroups x and y: x's CPU time, and both's */
struct cg_pair {
	const char *x, *y;
};

static int cg_pair_read(void *ctx, double *cpu, double *base)
{
	struct cg_pair *p = ctx;
	long x = usage_usec(p->x), y = usage_usec(p->y);

	if (x < 0 || y < 0)
		return -1;
	cpu[0] = x / 1e6;
	*base = (x + y) / 1e6;
	return 0;
}

static void rule9_cpu_weight(void)
{
	static const struct scenario in_x = {
		.name = "cpu.weight", .renice_group = -1,
		.sc = { .nprocs = 0, .ngroups = 2, .capacity = 0.5,
			.g = { { -1, 0, 2, "A (2 threads)" },
			       { -1, 5, 2, "B (2 threads)" } } },
	};
	char w[256], x[256], y[256], path[300];

	CHECK(nt_cg_make("wtop", w, sizeof(w)) == 0, "wtop");
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", w);
	CHECK(nt_write_file(path, "+cpu") == 0, "+cpu in wtop");
	CHECK(nt_cg_make("wtop/x", x, sizeof(x)) == 0 && nt_cg_make("wtop/y", y, sizeof(y)) == 0,
	      "x, y");
	snprintf(path, sizeof(path), "%s/cpu.weight", x);
	CHECK(nt_write_file(path, "100") == 0, "x: cpu.weight 100");
	snprintf(path, sizeof(path), "%s/cpu.weight", y);
	CHECK(nt_write_file(path, "300") == 0, "y: cpu.weight 300");

	CHECK(nt_cg_move(y, getpid()) == 0, "into y");
	pid_t comp = nt_fork(plain_busy_child, NULL);
	int to_scen[2], from_scen[2];
	CHECK(pipe(to_scen) == 0 && pipe(from_scen) == 0, "pipes");
	hold_fds[0] = to_scen[0];
	hold_fds[1] = from_scen[1];
	hold_fds[2] = to_scen[1];
	hold_fds[3] = from_scen[0];
	CHECK(nt_cg_move(x, getpid()) == 0, "into x");
	pid_t scen = nt_fork(scenario_child, (void *)&in_x);
	CHECK(nt_cg_move(NT_SG "/self", getpid()) == 0, "back");
	hold_fds[0] = hold_fds[1] = hold_fds[2] = hold_fds[3] = -1;
	close(to_scen[0]);
	close(from_scen[1]);

	/* the cgroups' split, judged while the scenario measures inside x */
	struct cg_pair xy = { x, y };
	struct rgt_judge j = {
		.what = "cgroups x and y", .n = 1, .label = { "cgroup x (weight 100)" },
		.fixed = { 0.25 }, .read = cg_pair_read, .ctx = &xy, .min_cpus = 0.05,
	};
	nt_sleep(WARMUP_S + 0.5);
	rgt_judge(&j, NULL);
	int fails = -1;
	CHECK(read(from_scen[0], &fails, sizeof(fails)) == sizeof(fails) && fails == 0,
	      "the split inside x (%d off)", fails);
	close(to_scen[1]);
	close(from_scen[0]);
	int rc = nt_wait(scen);
	CHECK(rc == 0, "the scenario in x exited %d", rc);
	nt_kill(comp);
}

static const struct rgt_case cases[] = {
	{ "rule4_article_split", rule4_article_split },
	{ "rule4_nested_nice", rule4_nested_nice },
	{ "rule5_renice", rule5_renice },
	{ "rule5_renice_idle", rule5_renice_idle },
	{ "rule5_renice_nested_all_cpus", rule5_renice_nested_all_cpus },
	{ "rule9_cpu_max", rule9_cpu_max },
	{ "rule9_cpu_weight", rule9_cpu_weight },
};

int main(int argc, char **argv)
{
	return nt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv, 1);
}
