/* SPDX-License-Identifier: MIT */
/*
 * bench.c - raw costs of the native interface, in one VM boot: figures,
 * not assertions (the program fails only when a call fails).
 *
 *   clone3 + join of a thread:      without a flag / with CLONE_NEWRGRP
 *   pthread_create + join:          plain / after PR_RGROUP_SET_NEXT_NEW
 *   setpriority():                  PRIO_PROCESS / PRIO_RGRP (same thread)
 *   setpriority() by tid among NGROUPS sleeping threads, each in an rgroup
 *                                   of its own: PRIO_PROCESS / PRIO_RGRP
 *   getpriority():                  PRIO_PROCESS / PRIO_RGRP
 *
 * The guest's random number generator is seeded first, as a booted
 * machine's is (seed-random.h says why it matters).
 *
 * Each pair prints its median round of each side, the ratio of those
 * medians, and the 25th..75th percentile of the per-round ratios (how
 * noisy the run was). A last line, "possible N ...", gives the three
 * ratios that follow the number of possible CPUs, for tables over several
 * boots: "possible N create R prio_own R prio_tid R" (RGROUP_NEW+join /
 * pthread_create+join, PRIO_RGRP / PRIO_PROCESS on the own group and by
 * tid among the NGROUPS rgroups; -1 when not measured).
 * RGROUP_NATIVE_BENCH_ROUNDS and RGROUP_NATIVE_BENCH_BLOCK override the
 * rounds and their size.
 *
 * RGROUP_NATIVE_BENCH_SPREAD=1 measures instead how PRIO_RGRP on the own
 * group grows with the CPUs where the group has load: for K = 0, 1, 3, 7,
 * ... (below the online CPUs), members of the group on CPUs 1..K run
 * 0.5 ms every 20 ms (enough to keep load there; busy loops would take the
 * emulator's time from the measurement), and a line "spread K prio_own R"
 * gives PRIO_RGRP / PRIO_PROCESS from CPU 0.
 *
 * RGROUP_NATIVE_BENCH_PROBE=1 measures instead how much the rgroup calls
 * disturb another CPU: a plain thread outside every rgroup, on CPU 1,
 * sleeps 1 ms at a time and records how late it wakes, while the
 * measuring thread on CPU 0 hammers, in turn, setpriority(PRIO_PROCESS),
 * PRIO_RGRP on its own group, pthread_create + join and RGROUP_NEW +
 * join; a line "probe OP p50 US p99 US" per phase.
 *
 * RGROUP_NATIVE_BENCH_ONLINE=N first takes every CPU from N on offline
 * (CPU hotplug), so that a VM booted with more vCPUs has that many
 * possible CPUs and N online: on x86 since 6.9, possible_cpus= only
 * lowers the count the firmware lists, and a guest without a known
 * hypervisor (qemu TCG) ignores the firmware's disabled entries.
 *
 * The creating thread is in a top-level rgroup, so that "without a flag"
 * joins an rgroup and CLONE_NEWRGRP nests one. Each pair is measured in
 * alternating blocks (rounds of block operations each), so that drift of
 * the emulator's speed hits both sides alike; the median block is
 * reported. setpriority alternates two values so every call changes
 * something. The measuring thread and its threads are pinned to CPU 0 of
 * the two vCPUs: a cross-CPU wakeup under TCG waits until the host runs the
 * halted vCPU's thread again, milliseconds on a loaded host, which would
 * drown what is measured (task groups are still made for every CPU that
 * has been up).
 * Also run is a scenario the share test avoids (a busy process beside a
 * nested tree), for the record (not when CPUs were taken offline).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"
#include "seed-random.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_ROUNDS 101
#define NGROUPS 1000

static int rounds = 15, block = 200;

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

static double quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[(int)(q * (n - 1) + 0.5)];
}

static int failed;
static volatile int go_now = 1;

typedef void (*op_fn)(int i);

/* One stack for the raw threads, reused as pthread_create reuses its own. */
static char raw_stack[64 * 1024] __attribute__((aligned(16)));

static void op_clone3(int i)
{
	struct nt_raw t = { .stack = raw_stack, .stack_size = sizeof(raw_stack) };
	(void)i;
	if (nt_raw_start(&t, 0, nt_rt_wait, (void *)&go_now) < 0)
		failed++;
	nt_raw_join(&t);
}

static void op_clone3_new(int i)
{
	struct nt_raw t = { .stack = raw_stack, .stack_size = sizeof(raw_stack) };
	(void)i;
	if (nt_raw_start(&t, CLONE_NEWRGRP, nt_rt_wait, (void *)&go_now) < 0)
		failed++;
	nt_raw_join(&t);
}

static void *nothing(void *arg)
{
	return arg;
}

static void op_pthread(int i)
{
	pthread_t t;
	(void)i;
	if (nt_pthread(&t, 0, nothing, NULL))
		failed++;
	else
		pthread_join(t, NULL);
}

/* As the library's native backend makes a thread in a new rgroup: one
 * prctl, undone only when pthread_create() fails. */
static void op_pthread_new(int i)
{
	pthread_t t;
	(void)i;
	if (nt_set_next_new(1) || pthread_create(&t, NULL, nothing, NULL)) {
		nt_set_next_new(0);
		failed++;
		return;
	}
	pthread_join(t, NULL);
}

static pid_t me;

static void op_prio_process(int i)
{
	if (setpriority(PRIO_PROCESS, me, 1 - i % 2))
		failed++;
}

static void op_prio_rgrp(int i)
{
	if (setpriority(PRIO_RGRP, me, 1 - i % 2))
		failed++;
}

/* The NGROUPS sleepers: op k of a side renices sleeper k % NGROUPS, to
 * the other of two values each time it comes round, starting with the
 * one they do not have (nice 0 is what they start with). */
static pid_t sleeper_tid[NGROUPS];
static unsigned int k_process, k_rgrp;

static void op_tid_process(int i)
{
	unsigned int k = k_process++;
	(void)i;
	if (setpriority(PRIO_PROCESS, sleeper_tid[k % NGROUPS], 1 - (k / NGROUPS) % 2))
		failed++;
}

static void op_tid_rgrp(int i)
{
	unsigned int k = k_rgrp++;
	(void)i;
	if (setpriority(PRIO_RGRP, sleeper_tid[k % NGROUPS], 1 - (k / NGROUPS) % 2))
		failed++;
}

static void op_getprio_process(int i)
{
	(void)i;
	errno = 0;
	if (getpriority(PRIO_PROCESS, me) == -1 && errno)
		failed++;
}

static void op_getprio_rgrp(int i)
{
	(void)i;
	errno = 0;
	if (getpriority(PRIO_RGRP, me) == -1 && errno)
		failed++;
}

/* Microseconds per operation of a and of b, alternating blocks; returns
 * the ratio of b's median round to a's. */
static double pair(const char *what, const char *na, op_fn a, const char *nb, op_fn b)
{
	double ta[MAX_ROUNDS], tb[MAX_ROUNDS], q[MAX_ROUNDS];
	for (int r = 0; r < rounds; r++) {
		double t0 = nt_now();
		for (int i = 0; i < block; i++)
			a(i);
		double t1 = nt_now();
		for (int i = 0; i < block; i++)
			b(i);
		double t2 = nt_now();
		ta[r] = (t1 - t0) / block * 1e6;
		tb[r] = (t2 - t1) / block * 1e6;
		q[r] = tb[r] / ta[r];
	}
	double ma = median(ta, rounds), mb = median(tb, rounds);
	double q25 = quantile(q, rounds, 0.25), q75 = quantile(q, rounds, 0.75);
	printf("%-28s %-22s %9.2f us   %-26s %9.2f us   ratio %.2f (rounds p25..p75 %.2f..%.2f)\n",
	       what, na, ma, nb, mb, mb / ma, q25, q75);
	fflush(stdout);
	return mb / ma;
}

/* The number of possible CPUs (/sys/devices/system/cpu/possible: "0-N"). */
static int possible_cpus(void)
{
	char buf[64];
	int lo, hi;
	if (nt_read_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) < 0)
		return -1;
	if (sscanf(buf, "%d-%d", &lo, &hi) == 2)
		return hi - lo + 1;
	return sscanf(buf, "%d", &lo) == 1 ? 1 : -1;
}

static int env_int(const char *name, int def, int max)
{
	const char *v = getenv(name);
	char *end;
	long n;
	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	if (*end || n < 1 || n > max) {
		fprintf(stderr, "%s=%s: want 1..%d\n", name, v, max);
		exit(2);
	}
	return (int)n;
}

/* Members with load on one CPU each, for the spread measurement. */
struct member {
	pthread_t thread;
	int cpu;
	volatile int stop;
};

static void *member_main(void *p)
{
	struct member *m = p;

	if (nt_pin_cpu(m->cpu))
		__atomic_fetch_add(&failed, 1, __ATOMIC_RELAXED);
	while (!m->stop) {
		double t0 = nt_now();
		while (nt_now() - t0 < 0.0005)
			;
		nt_sleep(0.02);
	}
	return NULL;
}

static void spread_job(void)
{
	static struct member m[NT_MAX_CPUS];
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int started = 0;

	printf("# PRIO_RGRP against the CPUs where the group has load: %d rounds of %d, "
	       "%d possible CPUs, %ld online\n",
	       rounds, block, possible_cpus(), online);
	for (int k = 0; k < online && k < NT_MAX_CPUS; k = 2 * k + 1) {
		char what[64];
		double r;

		for (; started < k; started++) {
			m[started].cpu = started + 1;
			if (nt_pthread(&m[started].thread, 0, member_main, &m[started])) {
				fprintf(stderr, "FAIL: cannot start a member on CPU %d\n", started + 1);
				failed++;
				goto out;
			}
		}
		nt_sleep(0.3);
		snprintf(what, sizeof(what), "setpriority, load on %d+1", k);
		r = pair(what, "PRIO_PROCESS", op_prio_process, "PRIO_RGRP", op_prio_rgrp);
		printf("spread %d prio_own %.2f\n", k, r);
		fflush(stdout);
	}
out:
	while (started > 0) {
		m[--started].stop = 1;
		pthread_join(m[started].thread, NULL);
	}
}

/* The interference probe: the victim's wake-up delays, per phase. */
#define PROBE_N 400
static volatile int probe_phase = -1, probe_done;
static double probe_late[PROBE_N];

static void *victim_main(void *p)
{
	(void)p;

	if (nt_pin_cpu(1))
		__atomic_fetch_add(&failed, 1, __ATOMIC_RELAXED);
	for (;;) {
		int phase = probe_phase;
		if (phase == -2)
			return NULL;
		if (phase < 0 || probe_done) {
			nt_sleep(0.001);
			continue;
		}
		for (int i = 0; i < PROBE_N; i++) {
			double t0 = nt_now();
			nt_sleep(0.001);
			probe_late[i] = (nt_now() - t0 - 0.001) * 1e6;
		}
		__atomic_store_n(&probe_done, 1, __ATOMIC_RELEASE);
	}
}

static void probe_job(void)
{
	static const struct {
		const char *name;
		op_fn op;
	} ops[] = {
		{ "PRIO_PROCESS", op_prio_process },
		{ "PRIO_RGRP", op_prio_rgrp },
		{ "pthread_create", op_pthread },
		{ "RGROUP_NEW", op_pthread_new },
	};

	printf("# wake-up delay of a thread on CPU 1 sleeping 1 ms, %d wake-ups while CPU 0 "
	       "hammers each call; %d possible CPUs, %ld online\n",
	       PROBE_N, possible_cpus(), sysconf(_SC_NPROCESSORS_ONLN));
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		long calls = 0;
		probe_done = 0;
		probe_phase = (int)k;
		while (!__atomic_load_n(&probe_done, __ATOMIC_ACQUIRE))
			ops[k].op((int)calls++);
		probe_phase = -1;
		printf("probe %-14s p50 %8.1f us  p99 %8.1f us  (%ld calls meanwhile)\n", ops[k].name,
		       quantile(probe_late, PROBE_N, 0.5), quantile(probe_late, PROBE_N, 0.99),
		       calls);
		fflush(stdout);
	}
}

static int bench_job(void *p)
{
	static struct nt_raw sleeper[NGROUPS];
	static volatile int wake_sleepers;
	double r_new, r_own, r_tid;
	int n = 0;
	(void)p;
	if (nt_pin_cpu(0))
		failed++;
	me = nt_gettid();
	if (getenv("RGROUP_NATIVE_BENCH_SPREAD")) {
		spread_job();
		return 0;
	}
	if (getenv("RGROUP_NATIVE_BENCH_PROBE")) {
		probe_job();
		return 0;
	}
	printf("# native rgroup costs, %d rounds of %d operations, median round; "
	       "the measuring thread is in a top-level rgroup; %d possible CPUs, %ld online\n",
	       rounds, block, possible_cpus(), sysconf(_SC_NPROCESSORS_ONLN));
	pair("clone3 + join", "plain (joins)", op_clone3, "CLONE_NEWRGRP", op_clone3_new);
	r_new = pair("pthread_create + join", "plain (joins)", op_pthread,
		     "PR_RGROUP_SET_NEXT_NEW", op_pthread_new);
	r_own = pair("setpriority", "PRIO_PROCESS", op_prio_process, "PRIO_RGRP", op_prio_rgrp);
	pair("getpriority", "PRIO_PROCESS", op_getprio_process, "PRIO_RGRP", op_getprio_rgrp);

	/* NGROUPS sleeping threads, each in an rgroup of its own (nested
	 * under the measuring thread's), all on CPU 0 by inheritance. */
	for (; n < NGROUPS; n++) {
		if (nt_raw_start(&sleeper[n], CLONE_NEWRGRP, nt_rt_wait,
				 (void *)&wake_sleepers) < 0)
			break;
		sleeper_tid[n] = sleeper[n].tid;
	}
	if (n == NGROUPS) {
		char what[64];
		snprintf(what, sizeof(what), "setpriority, %d rgroups", NGROUPS);
		r_tid = pair(what, "PRIO_PROCESS by tid", op_tid_process, "PRIO_RGRP by tid",
			     op_tid_rgrp);
	} else {
		fprintf(stderr, "FAIL: only %d of %d threads in new rgroups started\n", n,
			NGROUPS);
		failed++;
		r_tid = -1;
	}
	nt_wake(&wake_sleepers);
	while (n > 0)
		nt_raw_join(&sleeper[--n]);
	printf("possible %d create %.2f prio_own %.2f prio_tid %.2f\n", possible_cpus(), r_new,
	       r_own, r_tid);
	fflush(stdout);
	return 0;
}

/* The shares CFS gives where the share test does not look: a busy process
 * beside a nested tree, on two vCPUs. Printed, not judged. */
static void record_shares(void)
{
	static const struct nt_scenario sc = {
		.nprocs = 1, .ngroups = 3, .capacity = 2,
		.g = { { -1, 0, 0, "A (top-level)" },
		       { 0, -2, 2, "A/B" },
		       { 0, 2, 2, "A/D" } },
	};
	struct nt_run *r = calloc(1, sizeof(*r));
	printf("# for the record (not a test): a busy process beside a nested tree\n");
	fflush(stdout);
	if (nt_scn_start(&sc, r) == 0)
		nt_scn_judge(&sc, r, 1.0);
	else
		failed++;
	nt_scn_stop(&sc, r);
}

/* Take CPUs online..possible-1 offline; 0, or -1 with the reason printed. */
static int offline_from(int online)
{
	int n = possible_cpus();
	for (int cpu = online; cpu < n; cpu++) {
		char path[80];
		int rc;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		rc = nt_write_file(path, "0");
		if (rc < 0) {
			fprintf(stderr, "FAIL: cannot take CPU %d offline: %s\n", cpu, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

int main(void)
{
	struct nt_agent a;

	nt_require_rgroups();
	int bits = nt_seed_random();

	if (bits < 0) {
		perror("FAIL: seeding the random number generator");
		return 1;
	}
	printf("# random number generator seeded (%d bits in the pool)\n", bits);
	rounds = env_int("RGROUP_NATIVE_BENCH_ROUNDS", rounds, MAX_ROUNDS);
	block = env_int("RGROUP_NATIVE_BENCH_BLOCK", block, 100000);
	if (getenv("RGROUP_NATIVE_BENCH_ONLINE") &&
	    offline_from(env_int("RGROUP_NATIVE_BENCH_ONLINE", 2, 4096)))
		return 1;
	/* the probe's victim: started here, so in no rgroup */
	pthread_t victim;
	int probe = getenv("RGROUP_NATIVE_BENCH_PROBE") != NULL;
	if (probe && pthread_create(&victim, NULL, victim_main, NULL)) {
		fprintf(stderr, "cannot start the probe's thread\n");
		return 1;
	}
	if (nt_agent_start(&a, 1)) {
		fprintf(stderr, "cannot start a thread in a new rgroup\n");
		return 1;
	}
	nt_agent_run(&a, bench_job, NULL);
	nt_agent_stop(&a);
	if (probe) {
		probe_phase = -2;
		pthread_join(victim, NULL);
	}
	/* The scenario wants both CPUs of the usual VM, not a hotplug run. */
	if (!getenv("RGROUP_NATIVE_BENCH_ONLINE") && !getenv("RGROUP_NATIVE_BENCH_SPREAD") && !probe)
		record_shares();
	if (failed)
		fprintf(stderr, "FAIL: %d operations failed\n", failed);
	if (nt_check_kernel_log())
		failed++;
	return failed ? 1 : 0;
}
