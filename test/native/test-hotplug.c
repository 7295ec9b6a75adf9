/* SPDX-License-Identifier: MIT */
/*
 * test-hotplug.c - rgroups across CPU hotplug on the native kernel. A
 * group has a runqueue and an entity only on the CPUs that have been up:
 * those brought up later get theirs when they come up. The VM boots with
 * maxcpus=1, so CPU 1 is present but down until a case brings it up.
 *
 * Checked: rgroups made (and one already gone) while CPU 1 was down run
 * there once it is up, nested, with the split of the reference model;
 * a thread asleep in an rgroup wakes on it; the split holds with CPU 1
 * taken down and brought up again while busy; an rgroup made after runs
 * there. The kernel log is checked last (KASAN, lockdep) by nt_main().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>

#define CPU1 "/sys/devices/system/cpu/cpu1/online"
#define WARMUP_S 1.0

static int cpu1_up(void)
{
	char buf[8];

	if (nt_read_file(CPU1, buf, sizeof(buf)) < 1)
		return -1;
	return buf[0] == '1';
}

static int set_cpu1(int up)
{
	int err = nt_write_file(CPU1, up ? "1" : "0");

	if (err)
		fprintf(stderr, "  echo %d > %s: %s\n", up, CPU1, strerror(-err));
	return err;
}

static void *just_return(void *arg)
{
	return arg;
}

/* An agent's job: spin 0.2 s on CPU 1, then run anywhere again */
static int spin_on_cpu1(void *arg)
{
	cpu_set_t all;
	int on1 = 0, err = 0;
	double t0;

	(void)arg;
	if (sched_getaffinity(0, sizeof(all), &all) || nt_pin_cpu(1))
		return errno;
	t0 = nt_now();
	while (nt_now() - t0 < 0.2)
		on1 += sched_getcpu() == 1;
	if (!on1)
		err = EXDEV;
	if (sched_setaffinity(0, sizeof(all), &all) && !err)
		err = errno;
	return err;
}

static int judge(const char *when, double capacity, struct nt_run *r)
{
	struct nt_scenario sc = nt_nested_two_cpus;

	sc.capacity = capacity;
	fprintf(stderr, "  %s (%.0f CPU%s):\n", when, capacity, capacity > 1 ? "s" : "");
	return nt_scn_judge(&sc, r, WARMUP_S);
}

static int before_cpu_up_child(void *unused)
{
	struct nt_run *r = calloc(1, sizeof(*r));
	struct nt_agent sleeper = { 0 }, late = { 0 };
	long long w[2];
	cpu_set_t only1, before;
	pthread_t gone;
	pid_t an;
	int err;

	(void)unused;
	rgt_failures = 0; /* this child's own count */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CHECK(r, "memory");
	if (!r)
		return 1;

	/* While CPU 1 is down: an rgroup made and gone, one asleep, a busy tree */
	CHECK(nt_pthread(&gone, 1, just_return, NULL) == 0 && pthread_join(gone, NULL) == 0,
	      "a thread in an rgroup of its own, joined");
	CHECK(nt_agent_start(&sleeper, 1) == 0, "a sleeping thread in an rgroup of its own");
	err = nt_scn_start(&nt_nested_two_cpus, r);
	CHECK(!err, "set up the scenario: %s", strerror(err));
	if (err)
		goto out;

	CHECK(set_cpu1(1) == 0 && cpu1_up() == 1, "bring CPU 1 up below existing rgroups");
	CHECK(judge("rgroups made before CPU 1 came up", 2, r) == 0, "the split on both CPUs");
	/*
	 * Read A/N's entity weights with one of its threads moved to CPU 1:
	 * its runqueue there, made when CPU 1 came up and attached below A's
	 * at its first use, is then in use. Left alone, the load balancer may
	 * keep both of A/N's threads on CPU 0 for seconds, and a runqueue
	 * whose load has decayed leaves the leaf list that the debug file
	 * shows. sched_setaffinity() returns once the thread has moved.
	 */
	an = r->spin[1].s[0].tid;
	CPU_ZERO(&only1);
	CPU_SET(1, &only1);
	CHECK(sched_getaffinity(an, sizeof(before), &before) == 0 &&
	      sched_setaffinity(an, sizeof(only1), &only1) == 0,
	      "move one of A/N's threads to CPU 1: %s", strerror(errno));
	err = nt_group_weights(r->agent[1].tid, w, 2);
	CHECK(sched_setaffinity(an, sizeof(before), &before) == 0,
	      "let A/N's thread run anywhere again: %s", strerror(errno));
	if (err >= 0) {
		fprintf(stderr, "  A/N's entity weights: CPU 0 %lld, CPU 1 %lld\n", w[0], w[1]);
		CHECK(w[1] > 0, "A/N has a runqueue on CPU 1's leaf list");
	} else {
		fprintf(stderr, "  no scheduler debug file (%s): weights not read\n",
			strerror(-err));
	}
	err = nt_agent_run(&sleeper, spin_on_cpu1, NULL);
	CHECK(err == 0, "the sleeping rgroup's thread woke and ran on CPU 1: %s", strerror(err));

	/* Down and up again, busy: the memory of CPU 1 stays, nothing doubles */
	CHECK(set_cpu1(0) == 0 && cpu1_up() == 0, "take CPU 1 down, busy");
	CHECK(judge("CPU 1 down again", 1, r) == 0, "the split on CPU 0 alone");
	CHECK(set_cpu1(1) == 0 && cpu1_up() == 1, "bring CPU 1 up again, busy");
	CHECK(judge("CPU 1 up again", 2, r) == 0, "the split on both CPUs again");

	CHECK(nt_agent_start(&late, 1) == 0, "an rgroup made with CPU 1 up");
	err = nt_agent_run(&late, spin_on_cpu1, NULL);
	CHECK(err == 0, "its thread ran on CPU 1: %s", strerror(err));
out:
	nt_scn_stop(&nt_nested_two_cpus, r);
	nt_agent_stop(&late);
	nt_agent_stop(&sleeper);
	free(r);
	return rgt_failures ? 1 : 0;
}

static void groups_made_before_cpu_up(void)
{
	int up = cpu1_up();

	CHECK(up == 0, "CPU 1 is down at the start (the VM boots with maxcpus=1): %d", up);
	if (up != 0)
		return;
	nt_in_child("rgroups across CPU 1's hotplug", before_cpu_up_child, NULL);
	/* leave CPU 1 up: nothing else of the VM's run depends on it */
}

static const struct rgt_case cases[] = {
	{ "groups_made_before_cpu_up", groups_made_before_cpu_up },
};

NT_MAIN(cases)
