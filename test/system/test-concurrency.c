/* SPDX-License-Identifier: MIT */
/*
 * test-concurrency.c - 64 threads at once, for a few seconds, creating
 * nested rgroups, changing priorities, reading the tree, forking and
 * exiting. Several times the run is paused at a quiet point (every slot
 * thread idle in its own group, no nested thread alive) and checked:
 * rgroup_list() and rgroup_info() agree with each other, with the slots'
 * own view (rgroup_of, the PRIO_RGRP each last set) and with the kernel
 * (each listed group has its directory, each slot thread sits in it). At
 * the end no rgroup and no directory is left.
 *
 * Allowed errors (documented ones): rgroup_info() -ENOENT for an id read
 * from rgroup_list() whose group went meanwhile. Any other error fails.
 *
 * A second case repeats the run for 2 s under RLIMIT_NOFILE 1024.
 *
 *   test-concurrency [CASE]   RGROUP_CONC_SECONDS=N (default 4)
 */
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sgroup.h"

#define QUIET_WAIT_S 60
#define SLOTS  64
#define MAXIDS 4096

static char sg[PATH_MAX], sgdir[PATH_MAX];

struct slot {
	pthread_t thread;
	pid_t tid;
	int index;
	unsigned int seed;
	int nice;              /* what it last set on its own group */
	int has_nice;
	rgroup_id_t group;
	unsigned long actions;
	int doing;             /* atomic: the action under way (enum act) */
};

enum act { ACT_IDLE, ACT_CREATE, ACT_PRIO, ACT_READ, ACT_FORK };
static const char *const act_name[] = { "idle", "create+join", "PRIO_RGRP", "read", "fork" };

static struct slot slots[SLOTS];
static int stop;             /* atomic */
/* Futex words (scn_word_wait): a paused slot sleeps on pause_req until it
 * is cleared, the main thread on paused until all slots are there. */
static int pause_req, paused;  /* atomic */
/* Answers the slots' threads got from the library (atomic): each one is
 * progress towards a quiet point, however slow. */
static unsigned long answers;
static long n_create, n_prio, n_fork, n_list, n_info_enoent;  /* atomic */
static long bad_create, bad_prio, bad_fork, bad_list, bad_info;  /* atomic */
static int first_err[5];
static double max_settle;

static void answered(void)
{
	__atomic_add_fetch(&answers, 1, __ATOMIC_RELAXED);
}

static void note_bad(long *ctr, int which, int e)
{
	__atomic_add_fetch(ctr, 1, __ATOMIC_RELAXED);
	int z = 0;
	__atomic_compare_exchange_n(&first_err[which], &z, e, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* A nested lifetime: arg = depth. Maybe nests again, sets its weight,
 * reads the tree, and exits. */
#define OWN 0x100   /* in a nested rgroup, not the slot's own group */

static void *nested(void *p)
{
	long depth = (long)p & 0xff, own = (long)p & OWN;
	unsigned int seed = (unsigned int)scn_gettid();

	/* Only in a nested group: a thread that joined its slot's group
	 * would change the slot's weight (correctly, but then the slot's
	 * own record of it is wrong), one in no group gets EINVAL. */
	if (own && rand_r(&seed) % 2) {
		if (rgroup_setpriority(PRIO_RGRP, 0, rand_r(&seed) % 40 - 20) < 0)
			note_bad(&bad_prio, 1, errno);
		__atomic_add_fetch(&n_prio, 1, __ATOMIC_RELAXED);
		answered();
	}
	if (depth < 4 && rand_r(&seed) % 2) {
		pthread_t t;
		unsigned int flags = rand_r(&seed) % 4 ? RGROUP_NEW : 0;
		int r = rgroup_thread_create(&t, NULL, flags, nested,
					     (void *)((depth + 1) | (flags ? OWN : own)));
		__atomic_add_fetch(&n_create, 1, __ATOMIC_RELAXED);
		answered();
		if (r)
			note_bad(&bad_create, 0, r);
		else
			pthread_join(t, NULL);
	}
	return NULL;
}

/* Read the whole tree while others change it. */
static void read_tree(void)
{
	rgroup_id_t ids[MAXIDS];
	int n = rgroup_list(ids, MAXIDS);

	__atomic_add_fetch(&n_list, 1, __ATOMIC_RELAXED);
	answered();
	if (n < 0) {
		note_bad(&bad_list, 2, -n);
		return;
	}
	for (int i = 0; i < n && i < MAXIDS; i++) {
		struct rgroup_info in = { .sz = sizeof(in) };
		int r = rgroup_info(ids[i], &in);
		answered();
		if (r == -ENOENT)
			__atomic_add_fetch(&n_info_enoent, 1, __ATOMIC_RELAXED);
		else if (r < 0 || in.id != ids[i] || in.depth < 1 || in.weight != rgroup_nice_to_weight(in.nice))
			note_bad(&bad_info, 3, r < 0 ? -r : EINVAL);
	}
}

/* Where the slots that did not get to the quiet point are: their action,
 * and each thread of the process that is not running, with its kernel
 * stack where /proc shows it (root). */
static void report_stuck(void)
{
	char path[64], buf[2048];
	DIR *d;
	struct dirent *e;

	for (int i = 0; i < SLOTS; i++) {
		int what = __atomic_load_n(&slots[i].doing, __ATOMIC_RELAXED);
		if (what != ACT_IDLE)
			fprintf(stderr, "  slot %d (tid %d) busy in %s\n", i, (int)slots[i].tid,
				act_name[what]);
	}
	if (!(d = opendir("/proc/self/task")))
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stack", e->d_name);
		if (rgt_read(path, buf, sizeof(buf)) <= 0 || !strstr(buf, "+0x"))
			continue;
		if (strstr(buf, "hrtimer_nanosleep") || strstr(buf, "futex_wait"))
			continue; /* sleeping on purpose, or joining */
		fprintf(stderr, "  thread %s in the kernel:\n%s", e->d_name, buf);
	}
	closedir(d);
}

static void *slot_main(void *p)
{
	struct slot *s = p;

	s->tid = scn_gettid();
	rgroup_of(0, &s->group);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&s->doing, ACT_IDLE, __ATOMIC_RELAXED);
		if (__atomic_load_n(&pause_req, __ATOMIC_ACQUIRE)) {
			/* Asleep, not polling: the slots still on their way
			 * (some in nice-19 groups) need the CPUs. stop is set
			 * only with pause_req clear. */
			__atomic_add_fetch(&paused, 1, __ATOMIC_SEQ_CST);
			scn_word_wake(&paused);
			while (__atomic_load_n(&pause_req, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
				scn_word_wait(&pause_req, 1, 0);
			__atomic_sub_fetch(&paused, 1, __ATOMIC_SEQ_CST);
			scn_word_wake(&paused);
			continue;
		}
		unsigned int a = rand_r(&s->seed) % 100;
		s->actions++;
		__atomic_store_n(&s->doing, a < 55 ? ACT_CREATE : a < 80 ? ACT_PRIO :
				 a < 97 ? ACT_READ : ACT_FORK, __ATOMIC_RELAXED);
		if (a < 55) {
			pthread_t t;
			unsigned int flags = a % 5 ? RGROUP_NEW : 0;
			int r = rgroup_thread_create(&t, NULL, flags, nested, (void *)(1L | (flags ? OWN : 0)));
			__atomic_add_fetch(&n_create, 1, __ATOMIC_RELAXED);
			answered();
			if (r)
				note_bad(&bad_create, 0, r);
			else
				pthread_join(t, NULL);
		} else if (a < 80) {
			if (s->group) {
				/* Top-level groups: at or above our nice (root could go
				 * lower, but keep it the unprivileged way). */
				int nice = rand_r(&s->seed) % 20;
				if (rgroup_setpriority(PRIO_RGRP, 0, nice) < 0) {
					note_bad(&bad_prio, 1, errno);
				} else {
					s->nice = nice;
					s->has_nice = 1;
				}
				__atomic_add_fetch(&n_prio, 1, __ATOMIC_RELAXED);
				answered();
			}
		} else if (a < 97) {
			read_tree();
		} else {
			pid_t c = fork();
			int st = 0;
			if (c == 0) {
				rgroup_id_t id = 1;
				rgroup_of(0, &id);
				_exit(id == 0 ? 0 : 3);
			}
			__atomic_add_fetch(&n_fork, 1, __ATOMIC_RELAXED);
			if (c < 0) {
				note_bad(&bad_fork, 4, errno);
			} else {
				/* A child that hangs (seen under TSan: a lock held
				 * across fork) is a failure, not a hung test. */
				int w = rgt_wait_child(c, 10, &st);
				if (w == -ETIMEDOUT) {
					note_bad(&bad_fork, 4, ETIMEDOUT);
				} else if (w < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
					note_bad(&bad_fork, 4, ECHILD);
				}
				answered();
			}
		}
	}
	return NULL;
}

/* The directory of rgroup id. */
static int group_dir(rgroup_id_t id, char *out, size_t len)
{
	char path[PATH_MAX];

	if (rgt_group_path(sg, id, path, sizeof(path)) < 0)
		return -1;
	scn_cg_dir(path, out, len);
	return 0;
}

/* At a quiet point: the library, the slots and the kernel agree. */
static int check_quiet(void)
{
	static rgroup_id_t ids[MAXIDS];
	int n = rgroup_list(ids, MAXIDS), bad = 0, slot_groups = 0;

	/* A group whose last thread has gone is removed (or kept as a spare,
	 * unlisted) by the exiting thread itself, or, when it had spares of
	 * its own, by the keeper thread a moment later: allow it 1 s. */
	double t0 = scn_now();
	int want = 0;
	for (int i = 0; i < SLOTS; i++)
		want += slots[i].group != 0;
	while (n != want && scn_now() < t0 + 1.0) {
		scn_sleep(0.002);
		n = rgroup_list(ids, MAXIDS);
	}
	double settle = scn_now() - t0;
	if (settle > max_settle)
		max_settle = settle;
	CHECK(n >= 0 && n <= MAXIDS, "rgroup_list = %d", n);
	if (n < 0 || n > MAXIDS)
		return 1;
	/* Every slot's group is listed, holds it, and has its weight. */
	for (int i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[i];
		rgroup_id_t g = ~0ull;
		int listed = 0;

		if (rgroup_of(s->tid, &g) < 0 || g != s->group) {
			CHECK(0, "slot %d: rgroup_of says %llu, it started in %llu", i,
			      (unsigned long long)g, (unsigned long long)s->group);
			bad++;
			continue;
		}
		if (!g)
			continue;
		slot_groups++;
		for (int j = 0; j < n; j++)
			listed |= ids[j] == g;
		CHECK(listed, "slot %d: its group %llu is not listed", i, (unsigned long long)g);
		if (s->has_nice) {
			int got = rgroup_getpriority(PRIO_RGRP, (id_t)s->tid);
			CHECK(got == s->nice, "slot %d: PRIO_RGRP %d, it set %d", i, got, s->nice);
			bad += got != s->nice;
		}
		char why[2 * PATH_MAX + 128];
		int agrees = rgt_kernel_agrees(sg, s->tid, g, why, sizeof(why));

		CHECK(agrees, "slot %d: %s", i, why);
		bad += !agrees;
		bad += !listed;
	}
	/* Quiet: only the slots' groups exist (no nested thread is alive). */
	CHECK(n == slot_groups, "%d rgroups listed, the slots are in %d", n, slot_groups);
	bad += n != slot_groups;
	for (int j = 0; j < n; j++) {
		struct rgroup_info in = { .sz = sizeof(in) };
		char dir[PATH_MAX];
		int r = rgroup_info(ids[j], &in);
		CHECK(r == 0, "rgroup_info(%llu) = %d at a quiet point", (unsigned long long)ids[j], r);
		if (r == 0) {
			CHECK(in.nthreads == 1 && in.nchildren == 0 && in.depth == 1,
			      "group %llu: %u threads, %u children, depth %u", (unsigned long long)ids[j],
			      in.nthreads, in.nchildren, in.depth);
			CHECK(!rgt_dirs() || (group_dir(ids[j], dir, sizeof(dir)) == 0 && rgt_exists(dir)),
			      "group %llu has no directory", (unsigned long long)ids[j]);
		}
	}
	/* Directories: the listed groups plus at most the spares. */
	int dirs = scn_count_groups(sgdir, getpid());
	CHECK(rgt_dirs() ? dirs >= n : dirs == 0, "%d directories for %d rgroups", dirs, n);
	fprintf(stderr, "  quiet point: %d rgroups listed (settled in %.0f ms), %d directories (spares included), %d fds\n",
		n, settle * 1000, dirs, rgt_fd_count());
	return bad;
}

static void workload(double secs)
{
	int started = 0, checks = 0;
	double t0, end;

	memset(slots, 0, sizeof(slots));
	__atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&pause_req, 0, __ATOMIC_RELEASE);
	paused = 0;
	answers = 0;
	n_create = n_prio = n_fork = n_list = n_info_enoent = 0;
	bad_create = bad_prio = bad_fork = bad_list = bad_info = 0;
	memset(first_err, 0, sizeof(first_err));
	if (!sg[0]) {
		rgt_sg_init();
		rgt_sg_enter(sg, sizeof(sg));
		scn_cg_dir(sg, sgdir, sizeof(sgdir));
	}

	for (int i = 0; i < SLOTS; i++) {
		slots[i].index = i;
		slots[i].seed = 1000 + (unsigned)i;
		/* Three quarters in top-level groups of their own. */
		int r = rgroup_thread_create(&slots[i].thread, NULL, i % 4 ? RGROUP_NEW : 0,
					     slot_main, &slots[i]);
		CHECK(r == 0, "slot %d: %s", i, strerror(r));
		if (r)
			break;
		started++;
	}
	t0 = scn_now();
	end = t0 + secs;
	while (started == SLOTS && scn_now() < end) {
		scn_sleep(secs / 5);
		__atomic_store_n(&pause_req, 1, __ATOMIC_RELEASE);
		/* A liveness bound, not a speed one: while slots keep getting
		 * there, or the ones on their way keep getting answers from
		 * the library, however slowly (a debug kernel under emulation,
		 * a loaded machine, nice-19 slots), the wait goes on;
		 * QUIET_WAIT_S with neither means one is stuck. Woken by each
		 * slot that pauses, and every 0.1 s to look at the answers. */
		double last = scn_now();
		unsigned long heard = __atomic_load_n(&answers, __ATOMIC_RELAXED), a;
		int np, seen = 0;
		while ((np = __atomic_load_n(&paused, __ATOMIC_SEQ_CST)) < SLOTS) {
			a = __atomic_load_n(&answers, __ATOMIC_RELAXED);
			if (np > seen || a != heard) {
				seen = np > seen ? np : seen;
				heard = a;
				last = scn_now();
			}
			if (scn_now() - last > QUIET_WAIT_S)
				break;
			scn_word_wait(&paused, np, 0.1);
		}
		CHECK(np == SLOTS, "only %d of %d slots reached a quiet point, none more and no answer in %d s",
		      np, SLOTS, QUIET_WAIT_S);
		if (np < SLOTS)
			report_stuck();
		if (np == SLOTS)
			check_quiet();
		checks++;
		__atomic_store_n(&pause_req, 0, __ATOMIC_RELEASE);
		scn_word_wake(&pause_req);
		while ((np = __atomic_load_n(&paused, __ATOMIC_SEQ_CST)) > 0)
			scn_word_wait(&paused, np, 0.1);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < started; i++)
		pthread_join(slots[i].thread, NULL);

	unsigned long actions = 0;
	for (int i = 0; i < started; i++)
		actions += slots[i].actions;
	fprintf(stderr, "  %d threads, %.1f s, %lu actions: %ld creations, %ld PRIO_RGRP sets, %ld tree reads, %ld forks; %d quiet-point checks\n",
		started, scn_now() - t0, actions, n_create, n_prio, n_list, n_fork, checks);
	fprintf(stderr, "  allowed: rgroup_info -ENOENT (group went between list and info): %ld\n",
		n_info_enoent);
	CHECK(bad_create == 0, "%ld creations failed (first: %s)", bad_create, strerror(first_err[0]));
	CHECK(bad_prio == 0, "%ld PRIO_RGRP sets failed (first: %s)", bad_prio, strerror(first_err[1]));
	CHECK(bad_list == 0, "%ld rgroup_list calls failed (first: %s)", bad_list, strerror(first_err[2]));
	CHECK(bad_info == 0, "%ld rgroup_info answers were wrong (first: %s)", bad_info, strerror(first_err[3]));
	CHECK(bad_fork == 0, "%ld fork children failed or were in an rgroup (first: %s)", bad_fork,
	      strerror(first_err[4]));

	CHECK(scn_wait_no_groups(3.0) == 0, "%d rgroups still listed", rgroup_list(NULL, 0));
	int left = 0;
	for (int i = 0; i < 300 && (left = scn_count_groups(sgdir, getpid())) > 0; i++)
		scn_sleep(0.01);
	CHECK(left == 0, "%d rgroup directories left", left);
}

static void concurrency(void)
{
	workload(getenv("RGROUP_CONC_SECONDS") ? atof(getenv("RGROUP_CONC_SECONDS")) : 4);
}

/*
 * The same under RLIMIT_NOFILE 1024, the usual soft default (this
 * machine's is 20000). Every group, spare groups included, holds three
 * descriptors and up to SPARE_MAX spares are kept per parent with no
 * limit overall, so 64 busy threads with nested groups reach ~1300
 * descriptors and creations fail with EMFILE (not even a documented
 * error of rgroup_thread_create). Fails until the library bounds that.
 */
static void concurrency_nofile_1024(void)
{
	struct rlimit old, lim;

	if (getrlimit(RLIMIT_NOFILE, &old) < 0) {
		rgt_skip_case("getrlimit: %s", strerror(errno));
		return;
	}
	lim = old;
	lim.rlim_cur = old.rlim_max < 1024 ? old.rlim_max : 1024;
	CHECK(setrlimit(RLIMIT_NOFILE, &lim) == 0, "setrlimit: %s", strerror(errno));
	fprintf(stderr, "  RLIMIT_NOFILE soft limit %llu\n", (unsigned long long)lim.rlim_cur);
	workload(2);
	setrlimit(RLIMIT_NOFILE, &old);
}

static const struct rgt_case cases[] = {
	{ "concurrency", concurrency },
	{ "nofile-1024", concurrency_nofile_1024 },
};

RGT_MAIN(cases)
