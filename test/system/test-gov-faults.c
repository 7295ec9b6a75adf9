/* SPDX-License-Identifier: MIT */
/*
 * test-gov-faults.c - the governor's own failure points fail (the fault
 * variant of the library, src/core/fault.c's sites), and the process goes on:
 * governed where the governor can still govern, ungoverned where it cannot,
 * never hung; a call that cannot be served returns an error; once the
 * fault is gone the governor governs again.
 *
 *   signal      installing the handler fails: RGROUP_NEW returns the
 *               error, no thread runs, plain threads work (first case:
 *               the handler is installed once per process);
 *   thread      starting the governor's thread fails: the same;
 *   timers      timer_create fails for every thread: the polls pause them
 *               (few threads: every poll reads their clocks): governed;
 *   sigqueue    sending a pause fails: nothing can pause a thread (the
 *               timers signal the governor, which sends the pause):
 *               ungoverned, the rounds go on (they end by their time
 *               limit), nothing hangs;
 *   no_pause    timers and sigqueue both fail: the same;
 *   mmap        growing an array fails from its kth call on, for every k
 *               the scenario reaches (at k = 1 the governor has no array at
 *               all): ungoverned or governed, never hung.
 *
 * Each case runs in a fresh process (the program execs itself with the
 * case's name): the handler is installed, and the governor's arrays are
 * grown, once per process. The mmap case runs once per k, with k in
 * RGT_MMAP_FROM, until the scenario no longer reaches the kth call.
 *
 * The scenario, pinned to one CPU so that the groups contend: top-level
 * groups A (nice 0) and B (nice 10), one busy thread each; while it runs,
 * A makes a thread in its own group and one in a nested group, and B's
 * nice goes to 10 again (a PRIO_RGRP call). Over 1 s: B's part of the two
 * busy threads' CPU time, and every thread's progress.
 *
 * What "governed" means here: B's part is below 0.30. The model says 0.097
 * (weight 110 against 1024); ungoverned, the kernel gives two nice-0
 * threads 0.50. The bound is loose on purpose: with its timers or its
 * signal gone the governor pauses later than it should (at a poll, or at
 * the next tick), and on a shared machine it may wait for a CPU
 * itself; what the test checks is that it still governs, not how well
 * (test-gov-share.c does that). "Progress": each busy thread ran at least
 * 1 ms of CPU, watched for up to 10 s: a thread paused for ever runs none,
 * while a busy thread that is not paused gets a slice within a few hundred
 * ms even under a load of a hundred runnable tasks per CPU.
 *
 * A watchdog (alarm) ends the program with a message if a case hangs.
 * Registered for the governor; links the fault variant of the library.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "governor-faults.h"
#include "scenario.h"
#include "sgroup.h"

#define MEASURE_S    1.0
#define GOVERNED     0.30         /* B's part at most this: governed */
#define PROGRESS_S   0.001        /* CPU each busy thread ran at least ... */
#define PROGRESS_MAX 10.0         /* ... within this long */
#define WATCHDOG_S   60

static int stop;                  /* atomic: the threads end */

struct busy {
	pthread_t thread;
	pid_t tid;                /* atomic: set once it runs */
	int nice;
	int made;
};

static void *spin(void *p)
{
	struct busy *b = p;

	if (b && b->nice && rgroup_setpriority(PRIO_RGRP, 0, b->nice) < 0)
		b->nice = -errno;
	if (b)
		__atomic_store_n(&b->tid, scn_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* A thread that only ran: made in A's group and in a group nested in A. */
static void *brief(void *p)
{
	return p;
}

struct result {
	int create_a, create_b;   /* rgroup_thread_create() results */
	int inner_same, inner_nested; /* ... of A's own creations */
	int prio;                 /* errno of the PRIO_RGRP call, or 0 */
	double a_cpu, b_cpu;      /* s in the measured second */
	double a_more, b_more;    /* s by the end of the progress watch */
	double b_part;
	uint64_t b_paused_ns;     /* rgroup_info's throttled_ns of B */
};

struct a_arg {
	struct busy busy;
	int same, nested;
};

static void *a_main(void *p)
{
	struct a_arg *a = p;
	pthread_t t;

	a->same = rgroup_thread_create(&t, NULL, 0, brief, NULL);
	if (!a->same)
		pthread_join(t, NULL);
	a->nested = rgroup_thread_create(&t, NULL, RGROUP_NEW, brief, NULL);
	if (!a->nested)
		pthread_join(t, NULL);
	return spin(&a->busy);
}

static int wait_tid(struct busy *b)
{
	double t0 = scn_now();
	while (!__atomic_load_n(&b->tid, __ATOMIC_ACQUIRE) && scn_now() - t0 < 10)
		scn_sleep(0.001);
	return __atomic_load_n(&b->tid, __ATOMIC_ACQUIRE) ? 0 : -1;
}

/* Run the scenario once; what could not start is left out of *r. */
static void run_scenario(struct result *r)
{
	struct a_arg a = { 0 };
	struct busy b = { .nice = 10 };
	rgroup_id_t bid = 0;
	struct rgroup_info in = { .sz = sizeof(in) };

	memset(r, 0, sizeof(*r));
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	r->create_a = rgroup_thread_create(&a.busy.thread, NULL, RGROUP_NEW, a_main, &a);
	r->create_b = rgroup_thread_create(&b.thread, NULL, RGROUP_NEW, spin, &b);
	if (!r->create_a && wait_tid(&a.busy) < 0)
		r->create_a = ETIMEDOUT;
	if (!r->create_b && wait_tid(&b) < 0)
		r->create_b = ETIMEDOUT;
	r->inner_same = a.same;
	r->inner_nested = a.nested;
	if (!r->create_b) {
		if (b.nice < 0)
			r->prio = -b.nice;
		else if (rgroup_setpriority(PRIO_RGRP, b.tid, 10) < 0)
			r->prio = errno;
		rgroup_of(b.tid, &bid);
	}
	scn_sleep(0.3);
	double a0 = r->create_a ? 0 : scn_thread_cpu(a.busy.tid);
	double b0 = r->create_b ? 0 : scn_thread_cpu(b.tid);
	if (bid && rgroup_info(bid, &in) == 0)
		r->b_paused_ns = in.throttled_ns;
	scn_sleep(MEASURE_S);
	r->a_cpu = r->create_a ? 0 : scn_thread_cpu(a.busy.tid) - a0;
	r->b_cpu = r->create_b ? 0 : scn_thread_cpu(b.tid) - b0;
	if (bid && rgroup_info(bid, &in) == 0)
		r->b_paused_ns = in.throttled_ns - r->b_paused_ns;
	r->b_part = r->a_cpu + r->b_cpu > 0 ? r->b_cpu / (r->a_cpu + r->b_cpu) : 0;
	/* A slow thread on a crowded machine, or a stuck one? Watch on. */
	for (double t0 = scn_now(); scn_now() - t0 < PROGRESS_MAX; scn_sleep(0.05)) {
		r->a_more = r->create_a ? 0 : scn_thread_cpu(a.busy.tid) - a0;
		r->b_more = r->create_b ? 0 : scn_thread_cpu(b.tid) - b0;
		if (r->a_more >= PROGRESS_S && r->b_more >= PROGRESS_S)
			break;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	if (!r->create_a)
		pthread_join(a.busy.thread, NULL);
	if (!r->create_b)
		pthread_join(b.thread, NULL);
	fprintf(stderr, "    A %.3f s, B %.3f s of CPU: B's part %.3f (model 0.097, ungoverned 0.5),"
		" B paused %.3f s\n", r->a_cpu, r->b_cpu, r->b_part, r->b_paused_ns / 1e9);
}

/* Both busy threads ran, every call worked, the groups are gone after. */
static void check_ran(const struct result *r, const char *what)
{
	CHECK(r->create_a == 0 && r->create_b == 0, "%s: creation failed: %s / %s", what,
	      strerror(r->create_a), strerror(r->create_b));
	CHECK(r->inner_same == 0 && r->inner_nested == 0, "%s: A's creations failed: %s / %s",
	      what, strerror(r->inner_same), strerror(r->inner_nested));
	CHECK(r->prio == 0, "%s: PRIO_RGRP failed: %s", what, strerror(r->prio));
	CHECK(r->a_more >= PROGRESS_S && r->b_more >= PROGRESS_S,
	      "%s: a thread made no progress in %.0f s (A %.4f s, B %.4f s)", what,
	      MEASURE_S + PROGRESS_MAX, r->a_more, r->b_more);
	CHECK(scn_wait_no_groups(5.0) == 0, "%s: groups removed", what);
}

static void check_governed(const struct result *r, const char *what)
{
	check_ran(r, what);
	CHECK(r->b_part <= GOVERNED, "%s: B's part %.3f, not governed (bound %.2f)", what,
	      r->b_part, GOVERNED);
}

/* After the fault is gone: the governor governs again. */
static void check_recovers(const char *what)
{
	struct result r;

	fprintf(stderr, "  after %s, disarmed:\n", what);
	run_scenario(&r);
	check_governed(&r, what);
}

static void disarm_all(void)
{
	for (int s = 0; s < RGROUP__FAULT_GOV_NSITES; s++)
		rgroup__fault_arm_site(s, -1, 0, 0);
}

/* A site that makes RGROUP_NEW fail: the call says so and nothing runs. */
static void refused(int site, int err, const char *what)
{
	pthread_t t;
	struct busy b = { 0 };
	int r;

	rgroup__fault_arm_site(site, 1, -1, err);
	r = rgroup_thread_create(&t, NULL, RGROUP_NEW, spin, &b);
	CHECK(r == err, "%s: RGROUP_NEW returned %d (%s), want %s", what, r, strerror(r), strerror(err));
	if (r == 0) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		pthread_join(t, NULL);
	}
	scn_sleep(0.05);
	CHECK(!__atomic_load_n(&b.tid, __ATOMIC_ACQUIRE), "%s: the thread ran", what);
	CHECK(rgroup__fault_site_fired(site) > 0, "%s: the site was not reached", what);
	/* A plain thread, and the process, go on. */
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	r = pthread_create(&t, NULL, spin, NULL);
	CHECK(r == 0, "%s: pthread_create: %s", what, strerror(r));
	if (r == 0)
		pthread_join(t, NULL);
	CHECK(rgroup_list(NULL, 0) == 0, "%s: %d groups left", what, rgroup_list(NULL, 0));
	disarm_all();
	check_recovers(what);
}

static void signal_install(void)
{
	refused(RGROUP__FAULT_GOV_SIGNAL, EPERM, "signal");
}

static void thread_start(void)
{
	refused(RGROUP__FAULT_GOV_THREAD, EAGAIN, "thread");
}

/* A site whose failure the governor works around: still governed. */
static void governed_without(int site, const char *what)
{
	struct result r;

	rgroup__fault_arm_site(site, 1, -1, EAGAIN);
	run_scenario(&r);
	CHECK(rgroup__fault_site_fired(site) > 0, "%s: the site was not reached", what);
	check_governed(&r, what);
	disarm_all();
	check_recovers(what);
}

static void timers(void)
{
	governed_without(RGROUP__FAULT_GOV_TIMER, "no timers");
}

/* Sending a pause fails (and `also`, if not -1): nothing pauses B, which
 * runs ungoverned; nothing hangs. */
static void ungoverned_without(int also, const char *what)
{
	struct result r;

	if (also >= 0)
		rgroup__fault_arm_site(also, 1, -1, EAGAIN);
	rgroup__fault_arm_site(RGROUP__FAULT_GOV_SIGQUEUE, 1, -1, EAGAIN);
	run_scenario(&r);
	check_ran(&r, what);
	CHECK(r.b_paused_ns == 0, "%s: B was paused %.3f s", what, r.b_paused_ns / 1e9);
	CHECK(rgroup__fault_site_fired(RGROUP__FAULT_GOV_SIGQUEUE) > 0,
	      "%s: the governor never tried to pause B", what);
	disarm_all();
	check_recovers(what);
}

static void no_sigqueue(void)
{
	ungoverned_without(-1, "no sigqueue");
}

static void no_pause(void)
{
	ungoverned_without(RGROUP__FAULT_GOV_TIMER, "no pauses");
}

#define MMAP_NOT_REACHED 3        /* exit status: the kth call never came */
#define MMAP_MAX 32

static void mmap_fails(void)
{
	const char *env = getenv("RGT_MMAP_FROM");
	int k = env ? atoi(env) : 1;
	struct result r;
	char what[32];

	snprintf(what, sizeof(what), "mmap from call %d", k);
	rgroup__fault_arm_site(RGROUP__FAULT_GOV_MMAP, k, -1, ENOMEM);
	run_scenario(&r);
	long fired = rgroup__fault_site_fired(RGROUP__FAULT_GOV_MMAP);
	check_ran(&r, what);
	disarm_all();
	check_recovers(what);
	if (!fired && !rgt_failures) {
		fprintf(stderr, "  the scenario made fewer than %d mmap calls\n", k);
		exit(MMAP_NOT_REACHED);
	}
}

static void on_alarm(int sig)
{
	static const char msg[] = "  FAIL: a case hung (watchdog)\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static const struct rgt_case cases[] = {
	{ "signal", signal_install },
	{ "thread", thread_start },
	{ "timers", timers },
	{ "sigqueue", no_sigqueue },
	{ "no_pause", no_pause },
	{ "mmap", mmap_fails },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* Run case `name` in a fresh process (this program, exec'd); its status. */
static int run_child(const char *name, int mmap_from)
{
	char from[16];
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		snprintf(from, sizeof(from), "%d", mmap_from);
		setenv("RGT_MMAP_FROM", from, 1);
		execl("/proc/self/exe", "test-gov-faults", name, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	char sg[PATH_MAX];
	int failed = 0;

	if (argc > 1) {
		/* One case, in this fresh process. */
		rgt_sg_init();
		if (scn_pin_one_cpu(NULL) < 0)
			rgt_skip_all("cannot pin to one CPU: %s", strerror(errno));
		rgt_sg_enter(sg, sizeof(sg));
		if (strcmp(rgroup_backend(), "governor"))
			rgt_skip_all("the governor's failure points: run with RGROUP_BACKEND=governor"
				     " (backend %s)", rgroup_backend());
		signal(SIGALRM, on_alarm);
		alarm(WATCHDOG_S);
		return rgt_main(cases, NCASES, argc, argv);
	}
	for (size_t i = 0; i < NCASES; i++) {
		int k = 1, st;

		do {
			st = run_child(cases[i].name, k);
			if (st == 77)
				return 77; /* the child said why */
			if (st != 0 && st != MMAP_NOT_REACHED) {
				fprintf(stderr, "case %s%s: exit status %d\n", cases[i].name,
					cases[i].fn == mmap_fails ? " (that k)" : "", st);
				failed = 1;
			}
		} while (cases[i].fn == mmap_fails && st == 0 && ++k <= MMAP_MAX);
		if (cases[i].fn == mmap_fails) {
			fprintf(stderr, "mmap failed from each of its first %d calls in turn\n", k - 1);
			if (k == 1 || k > MMAP_MAX) {
				fprintf(stderr, "FAIL: the sweep %s\n", k == 1 ?
					"never reached the governor's mmap" : "did not end");
				failed = 1;
			}
		}
	}
	return failed;
}
