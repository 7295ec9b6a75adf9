/* SPDX-License-Identifier: MIT */
/*
 * test-cap.c - rule 10's CPU cap on the native kernel: PR_RGROUP_SET_CAP
 * and PR_RGROUP_GET_CAP, their error cases and permissions, the CPU time
 * a capped group gets (alone, nested under a capped parent, inside a
 * capped cgroup, nested groups made while their parent is held back), and
 * the cap across a migration and many groups.
 *
 * The CPU time a cap allows is an upper bound the kernel enforces per
 * period (100 ms here), so each measurement spans many periods and is
 * judged against the cap: at most CAP_OVER above it (one period's slack
 * of the bandwidth slices, spread over the window), and at least
 * CAP_UNDER of it (the group was not starved; a loaded host slows the
 * guest's clock and its CPUs alike, so the guest's own ratio holds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define PERIOD_US 100000
#define WINDOW    3.0     /* seconds: 30 periods */
#define CAP_OVER  1.15
#define CAP_UNDER 0.6

static int set_cap(pid_t tid, uint64_t quota, uint64_t period)
{
	struct pr_rgroup_cap c = { quota, period };

	return prctl(PR_RGROUP, PR_RGROUP_SET_CAP, (unsigned long)tid, (unsigned long)&c,
		     sizeof(c));
}

static int get_cap(pid_t tid, struct pr_rgroup_cap *c)
{
	memset(c, 0xa5, sizeof(*c));
	return prctl(PR_RGROUP, PR_RGROUP_GET_CAP, (unsigned long)tid, (unsigned long)c,
		     sizeof(*c));
}

static int cap_is(pid_t tid, uint64_t quota, uint64_t period)
{
	struct pr_rgroup_cap c;

	return get_cap(tid, &c) == 0 && c.quota_us == quota && c.period_us == period;
}

/* The CPUs' worth that s's threads use over WINDOW seconds. */
static double cpus_used(struct nt_spinners *s)
{
	double c0 = nt_spinners_cpu(s), t0 = nt_now();

	nt_sleep(WINDOW);
	return (nt_spinners_cpu(s) - c0) / (nt_now() - t0);
}

static void check_capped(const char *what, double used, double cap)
{
	fprintf(stderr, "  %s: %.3f CPUs, cap %.3f (%.2fx)\n", what, used, cap, used / cap);
	CHECK(used <= cap * CAP_OVER && used >= cap * CAP_UNDER,
	      "%s: %.3f CPUs, cap %.3f (allowed %.3f..%.3f)", what, used, cap,
	      cap * CAP_UNDER, cap * CAP_OVER);
}

static void cap_set_get(void)
{
	struct nt_agent a, b;

	CHECK(nt_agent_start(&a, 1) == 0, "agent in a new rgroup");
	CHECK(nt_agent_start_in(&a, &b, 1) == 0, "agent in a nested rgroup");
	CHECK(cap_is(a.tid, 0, 0), "a new rgroup has no cap");
	CHECK(set_cap(a.tid, 25000, PERIOD_US) == 0, "set 25000/100000: %s", strerror(errno));
	CHECK(cap_is(a.tid, 25000, PERIOD_US), "read back");
	CHECK(cap_is(b.tid, 0, 0), "the nested rgroup keeps its own (none)");
	CHECK(set_cap(b.tid, 300000, 200000) == 0, "a nested cap wider than its parent's: %s",
	      strerror(errno));
	CHECK(cap_is(b.tid, 300000, 200000), "kept as set (it runs under the parent's)");
	CHECK(set_cap(a.tid, 0, 0) == 0 && cap_is(a.tid, 0, 0), "quota 0 lifts the cap");
	CHECK(set_cap(a.tid, 1000, 1000) == 0 && cap_is(a.tid, 1000, 1000), "the smallest cap");
	CHECK(set_cap(a.tid, 8000000, 1000000) == 0 && cap_is(a.tid, 8000000, 1000000),
	      "eight CPUs' worth per second");

	/* a larger struct with zero tail is accepted, as clone3's */
	struct { struct pr_rgroup_cap c; uint64_t more[2]; } big = { { 50000, PERIOD_US }, { 0, 0 } };
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_CAP, (unsigned long)a.tid, (unsigned long)&big,
		    sizeof(big)) == 0, "a larger struct with a zero tail: %s", strerror(errno));
	memset(&big, 0xff, sizeof(big));
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_CAP, (unsigned long)a.tid, (unsigned long)&big,
		    sizeof(big)) == 0 && big.c.quota_us == 50000 && big.c.period_us == PERIOD_US &&
	      big.more[0] == 0 && big.more[1] == 0, "get into a larger struct zeroes the tail");
	nt_agent_stop(&b);
	nt_agent_stop(&a);
}

struct cap_call {
	pid_t tid;
	uint64_t quota, period;
	int ret, err;
};

static int set_cap_job(void *p)
{
	struct cap_call *c = p;

	c->ret = set_cap(c->tid, c->quota, c->period);
	c->err = errno;
	return 0;
}

static int get_cap_job(void *p)
{
	struct cap_call *c = p;
	struct pr_rgroup_cap got;

	c->ret = get_cap(c->tid, &got);
	c->err = errno;
	c->quota = got.quota_us;
	c->period = got.period_us;
	return 0;
}

/* uid 1000: another process's rgroup is ESRCH for both calls */
static int other_unprivileged(void *arg)
{
	pid_t tid = *(pid_t *)arg;
	struct pr_rgroup_cap c;

	rgt_failures = 0;
	CHECK(nt_drop_privileges(1000) == 0, "become uid 1000: %s", strerror(errno));
	CHECK(set_cap(tid, 10000, PERIOD_US) == -1 && errno == ESRCH,
	      "set, another process's thread: ESRCH");
	CHECK(get_cap(tid, &c) == -1 && errno == ESRCH, "get, another process's thread: ESRCH");
	return rgt_failures ? 1 : 0;
}

static void cap_errors(void)
{
	struct pr_rgroup_cap c = { 25000, PERIOD_US };
	struct nt_agent a, b;
	struct cap_call call = { 0 };

	CHECK(set_cap(0, 25000, PERIOD_US) == -1 && errno == EINVAL,
	      "the caller in no rgroup: EINVAL");
	CHECK(get_cap(0, &c) == -1 && errno == EINVAL, "get, the caller in no rgroup: EINVAL");
	CHECK(set_cap(30000, 25000, PERIOD_US) == -1 && errno == ESRCH, "no such thread: ESRCH");
	CHECK(get_cap(30000, &c) == -1 && errno == ESRCH, "get, no such thread: ESRCH");
	CHECK(nt_agent_start(&b, 0) == 0, "agent in no rgroup");
	CHECK(set_cap(b.tid, 25000, PERIOD_US) == -1 && errno == EINVAL,
	      "a thread in no rgroup: EINVAL");
	nt_agent_stop(&b);

	CHECK(nt_agent_start(&a, 1) == 0, "agent in a new rgroup");
	CHECK(set_cap(a.tid, 20000, PERIOD_US) == 0, "a valid cap first");
	static const struct { uint64_t q, p; const char *what; } bad[] = {
		{ 25000, 999, "period below 1000 us" },
		{ 25000, 1000001, "period above 1 s" },
		{ 999, PERIOD_US, "quota below 1000 us" },
		{ 0, PERIOD_US, "no quota with a period" },
		{ 25000, 0, "a quota without a period" },
		{ UINT64_MAX, PERIOD_US, "a quota that overflows" },
		{ 25000, UINT64_MAX, "a period that overflows" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(set_cap(a.tid, bad[i].q, bad[i].p) == -1 && errno == EINVAL, "%s: EINVAL (%s)",
		      bad[i].what, strerror(errno));
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_CAP, (unsigned long)a.tid, (unsigned long)&c, 8) == -1 &&
	      errno == EINVAL, "a size below PR_RGROUP_CAP_SIZE_VER0: EINVAL");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_CAP, (unsigned long)a.tid, (unsigned long)&c, 8) == -1 &&
	      errno == EINVAL, "get, a size below PR_RGROUP_CAP_SIZE_VER0: EINVAL");
	struct { struct pr_rgroup_cap c; uint64_t more; } big = { { 25000, PERIOD_US }, 1 };
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_CAP, (unsigned long)a.tid, (unsigned long)&big,
		    sizeof(big)) == -1 && errno == E2BIG, "a non-zero tail: E2BIG");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_CAP, (unsigned long)a.tid, 8ul, sizeof(c)) == -1 &&
	      errno == EFAULT, "a bad pointer: EFAULT");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_GET_CAP, (unsigned long)a.tid, 8ul, sizeof(c)) == -1 &&
	      errno == EFAULT, "get, a bad pointer: EFAULT");
	CHECK(prctl(PR_RGROUP, PR_RGROUP_SET_CAP, (unsigned long)a.tid, (unsigned long)&c,
		    (unsigned long)sysconf(_SC_PAGESIZE) + 1) == -1 && errno == EINVAL,
	      "a size above a page: EINVAL");
	CHECK(cap_is(a.tid, 20000, PERIOD_US), "no failed call changed the cap");

	/* Any thread of the process may cap any of its groups: from another */
	call = (struct cap_call){ .tid = a.tid, .quota = 30000, .period = PERIOD_US };
	CHECK(nt_agent_start(&b, 1) == 0, "a second agent");
	nt_agent_run(&b, set_cap_job, &call);
	CHECK(call.ret == 0, "another thread of the process caps the group: %s",
	      strerror(call.err));
	call = (struct cap_call){ .tid = 0 };
	nt_agent_run(&a, get_cap_job, &call);
	CHECK(call.ret == 0 && call.quota == 30000 && call.period == PERIOD_US,
	      "the member reads its own (tid 0): %llu/%llu", (unsigned long long)call.quota,
	      (unsigned long long)call.period);
	nt_agent_stop(&b);

	/* another process's rgroup: ESRCH without CAP_SYS_NICE, allowed with */
	struct nt_other o;
	CHECK(nt_other_start(&o) == 0, "another process: %s", strerror(errno));
	nt_in_child("another process's rgroup as uid 1000", other_unprivileged, &o.tid);
	CHECK(set_cap(o.tid, 40000, PERIOD_US) == 0 && cap_is(o.tid, 40000, PERIOD_US),
	      "CAP_SYS_NICE caps another process's rgroup: %s", strerror(errno));
	CHECK(nt_other_end(&o) == 0, "the other process");
	nt_agent_stop(&a);
}

/* Two busy threads in a capped group get the cap, then more without it. */
static void cap_bounds_cpu(void)
{
	struct nt_spinners s = { .n = 2 };
	struct nt_agent a;

	CHECK(nt_agent_start(&a, 1) == 0, "agent in a new rgroup");
	CHECK(set_cap(a.tid, 30000, PERIOD_US) == 0, "cap 0.3 CPU: %s", strerror(errno));
	CHECK(nt_agent_run(&a, nt_spinners_job, &s) == 0, "two busy threads in it");
	nt_sleep(0.3);
	struct nt_rg r0, r1;
	CHECK(nt_rg_read(0, s.s[0].tid, &r0) == 0 && r0.has_cap, "the /proc line has the cap fields");
	check_capped("two busy threads, cap 0.3", cpus_used(&s), 0.3);
	CHECK(nt_rg_read(0, s.s[0].tid, &r1) == 0 && r1.cap_quota_us == 30000 &&
	      r1.cap_period_us == PERIOD_US, "/proc shows the cap: %llu/%llu",
	      (unsigned long long)r1.cap_quota_us, (unsigned long long)r1.cap_period_us);
	/* 3 s at 0.3 of 2 CPUs' demand: held back in nearly every period, for
	 * about 70 ms each (the rest of the period) */
	CHECK(r1.nr_throttled >= r0.nr_throttled + 15 &&
	      r1.throttled_us >= r0.throttled_us + 15 * 30000,
	      "/proc counts the periods held back: %llu more, %.2f s",
	      (unsigned long long)(r1.nr_throttled - r0.nr_throttled),
	      (double)(r1.throttled_us - r0.throttled_us) / 1e6);
	char list[1024];
	int len = nt_read_file("/proc/self/rgroups", list, sizeof(list));
	char want[64];
	snprintf(want, sizeof(want), "%llu 0 1 ", (unsigned long long)r1.id);
	const char *line = len > 0 ? strstr(list, want) : NULL;
	unsigned long long f[10] = { 0 };
	CHECK(line && sscanf(line, "%llu %llu %llu %lld %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
			      &f[2], (long long *)&f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9]) == 10 &&
	      f[6] == 30000 && f[7] == PERIOD_US && f[8] >= r1.nr_throttled,
	      "/proc/self/rgroups shows the cap and the count too: %s", line ? line : "(none)");
	CHECK(set_cap(a.tid, 60000, PERIOD_US) == 0, "cap 0.6");
	nt_sleep(0.3);
	check_capped("cap raised to 0.6", cpus_used(&s), 0.6);
	CHECK(set_cap(a.tid, 5000, 20000) == 0, "cap 0.25 with a 20 ms period");
	nt_sleep(0.3);
	check_capped("cap 5/20 ms", cpus_used(&s), 0.25);
	CHECK(set_cap(a.tid, 0, 0) == 0, "lift the cap");
	nt_sleep(0.3);
	double free_run = cpus_used(&s);
	CHECK(free_run > 1.0, "without a cap two busy threads use more than a CPU: %.3f",
	      free_run);
	nt_spinners_stop(&s);
	nt_agent_stop(&a);
}

/* A nested group runs under the smallest cap of its own and its parents'. */
static void cap_nested_min(void)
{
	struct nt_spinners s = { .n = 2 }, t = { .n = 2 };
	struct nt_agent p, c;

	CHECK(nt_agent_start(&p, 1) == 0 && nt_agent_start_in(&p, &c, 1) == 0,
	      "a parent and a nested rgroup");
	CHECK(nt_agent_run(&c, nt_spinners_job, &s) == 0, "two busy threads in the child");
	CHECK(set_cap(p.tid, 30000, PERIOD_US) == 0, "parent cap 0.3");
	nt_sleep(0.3);
	check_capped("child without a cap of its own", cpus_used(&s), 0.3);
	CHECK(set_cap(c.tid, 80000, PERIOD_US) == 0, "child cap 0.8, wider");
	nt_sleep(0.3);
	check_capped("child cap wider than the parent's", cpus_used(&s), 0.3);
	CHECK(set_cap(c.tid, 10000, PERIOD_US) == 0, "child cap 0.1, narrower");
	nt_sleep(0.3);
	check_capped("child cap narrower", cpus_used(&s), 0.1);

	/* The parent's cap bounds the parent's own threads and the child's together */
	CHECK(set_cap(c.tid, 0, 0) == 0, "child cap lifted");
	CHECK(nt_agent_run(&p, nt_spinners_job, &t) == 0, "two busy threads in the parent");
	nt_sleep(0.3);
	double c0 = nt_spinners_cpu(&s) + nt_spinners_cpu(&t), t0 = nt_now();
	nt_sleep(WINDOW);
	double both = (nt_spinners_cpu(&s) + nt_spinners_cpu(&t) - c0) / (nt_now() - t0);
	check_capped("parent and child threads together", both, 0.3);
	nt_spinners_stop(&t);
	nt_spinners_stop(&s);
	nt_agent_stop(&c);
	nt_agent_stop(&p);
}

/*
 * Rule 9: a cap inside a capped cgroup only narrows the cgroup's, and the
 * administrator's write of the cgroup's cpu.max never fails for it.
 */
static void cap_in_capped_cgroup(void)
{
	struct nt_spinners s = { .n = 2 };
	char cg[256], path[300];
	struct nt_agent a;

	CHECK(nt_cg_make("capcg", cg, sizeof(cg)) == 0, "a cgroup");
	snprintf(path, sizeof(path), "%s/cpu.max", cg);
	CHECK(nt_write_file(path, "50000 100000") == 0, "its cpu.max 0.5");
	CHECK(nt_cg_move(cg, getpid()) == 0, "this process into it");
	CHECK(nt_agent_start(&a, 1) == 0, "agent in a new rgroup");
	CHECK(nt_agent_run(&a, nt_spinners_job, &s) == 0, "two busy threads in it");
	CHECK(set_cap(a.tid, 80000, PERIOD_US) == 0, "rgroup cap 0.8, above the cgroup's");
	nt_sleep(0.3);
	check_capped("under the cgroup's 0.5", cpus_used(&s), 0.5);
	CHECK(nt_write_file(path, "20000 100000") == 0,
	      "the administrator narrows the cgroup below the rgroup's cap");
	nt_sleep(0.3);
	check_capped("under the cgroup's 0.2", cpus_used(&s), 0.2);
	CHECK(set_cap(a.tid, 10000, PERIOD_US) == 0, "rgroup cap 0.1");
	nt_sleep(0.3);
	check_capped("the rgroup's own 0.1", cpus_used(&s), 0.1);
	CHECK(nt_write_file(path, "max 100000") == 0, "the administrator lifts the cgroup's");
	nt_spinners_stop(&s);
	nt_agent_stop(&a);
	CHECK(nt_cg_move(NT_SG "/self", getpid()) == 0, "back");
}

/* Rule 8: the cap comes along when the process moves. */
static void cap_migrate(void)
{
	struct nt_spinners s = { .n = 2 };
	struct nt_agent a, b;
	char x[256], y[256];

	CHECK(nt_cg_make("capx", x, sizeof(x)) == 0 && nt_cg_make("capy", y, sizeof(y)) == 0,
	      "cgroups");
	CHECK(nt_cg_move(x, getpid()) == 0, "into x");
	CHECK(nt_agent_start(&a, 1) == 0 && nt_agent_start_in(&a, &b, 1) == 0,
	      "a group and a nested one");
	CHECK(set_cap(a.tid, 30000, PERIOD_US) == 0 && set_cap(b.tid, 20000, 50000) == 0,
	      "caps 0.3 and 0.4");
	uint64_t id = nt_rg_id(a.tid);
	CHECK(nt_agent_run(&b, nt_spinners_job, &s) == 0, "two busy threads, nested");
	struct nt_rg before, after;
	nt_sleep(1.0);
	CHECK(nt_rg_read(0, a.tid, &before) == 0 && before.nr_throttled > 0,
	      "held back before the move: %llu periods", (unsigned long long)before.nr_throttled);
	CHECK(nt_cg_move(y, getpid()) == 0, "the process into y");
	CHECK(nt_rg_id(a.tid) == id, "the group kept its id");
	/* At once: a count that started over would be near 0 */
	CHECK(nt_rg_read(0, a.tid, &after) == 0 && after.nr_throttled >= before.nr_throttled &&
	      after.throttled_us >= before.throttled_us,
	      "the throttling counts carry over: %llu periods, %llu us before; %llu, %llu after",
	      (unsigned long long)before.nr_throttled, (unsigned long long)before.throttled_us,
	      (unsigned long long)after.nr_throttled, (unsigned long long)after.throttled_us);
	CHECK(cap_is(a.tid, 30000, PERIOD_US) && cap_is(b.tid, 20000, 50000),
	      "both caps came along");
	nt_sleep(0.3);
	check_capped("after the move", cpus_used(&s), 0.3);
	CHECK(set_cap(a.tid, 0, 0) == 0, "lift the outer cap after the move");
	nt_sleep(0.3);
	check_capped("the nested cap alone", cpus_used(&s), 0.4);
	nt_spinners_stop(&s);
	nt_agent_stop(&b);
	nt_agent_stop(&a);
	CHECK(nt_cg_move(NT_SG "/self", getpid()) == 0, "back");
}

/* Spin until this thread has had 2 ms of CPU time, or 10 s have passed */
static int burn_2ms(void *p)
{
	pid_t me = nt_gettid();
	double *got = p, c0 = nt_thread_cpu(me), t0 = nt_now();

	while (nt_thread_cpu(me) - c0 < 0.002 && nt_now() - t0 < 10.0)
		;
	*got = nt_thread_cpu(me) - c0;
	return 0;
}

/*
 * Nested groups made and first run while their parent is held back by its
 * cap most of the time: each runs when the parent does (a group takes its
 * parent's throttle state on a CPU at its first use there), and the
 * parent's cap bounds the parent's threads and the children together.
 */
static void cap_children_of_throttled(void)
{
	struct nt_spinners s = { .n = 2 };
	double least = 1.0, kids = 0;
	struct nt_agent p;
	int made = 0;

	CHECK(nt_agent_start(&p, 1) == 0, "a parent rgroup");
	CHECK(nt_agent_run(&p, nt_spinners_job, &s) == 0, "two busy threads in it");
	CHECK(set_cap(p.tid, 10000, PERIOD_US) == 0, "parent cap 0.1");
	nt_sleep(0.3);
	double c0 = nt_spinners_cpu(&s), t0 = nt_now();
	for (int i = 0; i < 40; i++) {
		struct nt_agent c;
		double got = 0;

		if (nt_agent_start_in(&p, &c, 1))
			break;
		made++;
		nt_agent_run(&c, burn_2ms, &got);
		nt_agent_stop(&c);
		kids += got;
		if (got < least)
			least = got;
	}
	double used = (nt_spinners_cpu(&s) - c0 + kids) / (nt_now() - t0);
	CHECK(made == 40, "40 nested groups made under the capped parent: %d", made);
	CHECK(least >= 0.002, "each child had its 2 ms of CPU time (the least: %.4f s)", least);
	check_capped("the parent's threads and its children together", used, 0.1);
	nt_spinners_stop(&s);
	nt_agent_stop(&p);
}

/* Many capped groups made and gone: no task group stays behind. */
static int capped_thread(void *p)
{
	(void)p;
	return 0;
}

static void cap_many(void)
{
	long before = nt_task_groups(), prev = -2;
	int bad = 0;

	/* the groups of the cases before go after RCU grace periods */
	for (int i = 0; i < 50 && before != prev; i++) {
		nt_sleep(0.2);
		prev = before;
		before = nt_task_groups();
	}

	for (int i = 0; i < 300 && !bad; i++) {
		struct nt_agent a;

		if (nt_agent_start(&a, 1)) {
			bad = 1;
			break;
		}
		if (set_cap(a.tid, 1000 + (uint64_t)i * 100, PERIOD_US) < 0)
			bad = 2;
		nt_agent_run(&a, capped_thread, NULL);
		nt_agent_stop(&a);
	}
	CHECK(!bad, "300 capped groups made and ended (%d)", bad);
	long after = -1;
	for (int i = 0; i < 50 && (after = nt_task_groups()) > before; i++)
		nt_sleep(0.1);   /* the last ones go after RCU grace periods */
	CHECK(before >= 0 && after == before, "task groups in use: %ld before, %ld after", before,
	      after);
}

static const struct rgt_case cases[] = {
	{ "cap_set_get", cap_set_get },
	{ "cap_errors", cap_errors },
	{ "cap_bounds_cpu", cap_bounds_cpu },
	{ "cap_nested_min", cap_nested_min },
	{ "cap_in_capped_cgroup", cap_in_capped_cgroup },
	{ "cap_migrate", cap_migrate },
	{ "cap_children_of_throttled", cap_children_of_throttled },
	{ "cap_many", cap_many },
};

int main(int argc, char **argv)
{
	return nt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv, 1);
}
