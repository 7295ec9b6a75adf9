/* SPDX-License-Identifier: MIT */
/*
 * test-churn.c - the shortened soak: many short thread lifetimes in
 * rgroups, from 8 creator threads at once, with nested creation, PRIO_RGRP
 * changes and a few fork+exit children. Checks that every creation
 * succeeds, that at the end no rgroup directory is left, that the open
 * descriptor count is back to its start value and that the resident set
 * stays flat after the warm-up (within RSS_BOUND_KB).
 *
 *   test-churn             20,000 lifetimes (the system suite; < 60 s)
 *   test-churn N           N lifetimes (scripts/soak.sh: 1,000,000)
 *
 * Env RGROUP_CHURN_LIFETIMES=N does the same as the argument.
 */
#include <dirent.h>
#include <sys/wait.h>

#include "sgroup.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer) || \
    defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
/* The sanitizers keep freed memory (ASan's quarantine, 256 MB) and their
 * own shadow: the RSS says nothing about the library there. */
#define RGT_RSS_CHECK 0
#else
#define RGT_RSS_CHECK 1
#endif

#define CREATORS      8
#define RSS_BOUND_KB  4096   /* growth allowed after the warm-up (10%) */

static char sg[PATH_MAX], sgdir[PATH_MAX];
static long total = 20000;

static long taken;                  /* tickets handed out (atomic) */
static long lifetimes;              /* threads that ran (atomic) */
static long groups_made;            /* RGROUP_NEW creations (atomic) */
static long prio_ok, prio_err;      /* PRIO_RGRP sets (atomic) */
static long forks, fork_bad;        /* fork+exit children (atomic) */
static long errs[134];              /* creation errors by errno (atomic) */
static long err_other;

static void count_err(int e)
{
	if (e > 0 && e < (int)(sizeof(errs) / sizeof(errs[0])))
		__atomic_add_fetch(&errs[e], 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&err_other, 1, __ATOMIC_RELAXED);
}

static long rss_kb(void)
{
	char buf[256];
	long size, res;

	if (rgt_read("/proc/self/statm", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%ld %ld", &size, &res) != 2)
		return -1;
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* One lifetime. arg: its ticket, plus NESTED for a lifetime that another
 * lifetime started. A third set their group's weight; a quarter of the
 * top ones start a nested group and join it. */
#define NESTED (1L << 48)

static void *life(void *p)
{
	long t = (long)p & (NESTED - 1);
	rgroup_id_t id = 0;

	__atomic_add_fetch(&lifetimes, 1, __ATOMIC_RELAXED);
	rgroup_of(0, &id);
	if (id && t % 3 == 0) {
		/* Within -20..19 so that every nested set is allowed (rule 6);
		 * top-level ones here run as root. */
		if (rgroup_setpriority(PRIO_RGRP, 0, (int)(t % 40) - 20) == 0)
			__atomic_add_fetch(&prio_ok, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&prio_err, 1, __ATOMIC_RELAXED);
	}
	if (!((long)p & NESTED) && t % 4 == 1) {
		/* The nested lifetime takes a ticket of its own. */
		long mine = __atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED);
		pthread_t k;

		if (mine < total) {
			int r = rgroup_thread_create(&k, NULL, RGROUP_NEW, life, (void *)(mine | NESTED));
			if (r) {
				count_err(r);
			} else {
				__atomic_add_fetch(&groups_made, 1, __ATOMIC_RELAXED);
				pthread_join(k, NULL);
			}
		}
	}
	return NULL;
}

static void *creator(void *p)
{
	long me = (long)p;

	for (;;) {
		long t = __atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED);
		pthread_t th;
		unsigned flags;
		int r;

		if (t >= total)
			break;
		/* Mostly new groups; every fifth joins the creator's group. */
		flags = t % 5 == 4 ? 0 : RGROUP_NEW;
		r = rgroup_thread_create(&th, NULL, flags, life, (void *)t);
		if (r) {
			count_err(r);
			continue;
		}
		if (flags)
			__atomic_add_fetch(&groups_made, 1, __ATOMIC_RELAXED);
		pthread_join(th, NULL);
		if (t % 997 == (me * 101) % 997) {
			/* fork+exit from inside an rgroup (rule 7). */
			pid_t c = fork();
			if (c == 0) {
				rgroup_id_t id = 1;
				rgroup_of(0, &id);
				_exit(id == 0 ? 0 : 3);
			}
			int st = 0;
			if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				__atomic_add_fetch(&fork_bad, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&forks, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void churn(void)
{
	pthread_t ct[CREATORS];
	pthread_t warm;
	int fdpre, fd0, fd1, fdmax = 0, dirs, nerr = 0, left = -1;
	long rss_warm = -1, rss_end, rss_max = 0;
	double t0, t1;

	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	scn_cg_dir(sg, sgdir, sizeof(sgdir));

	/* The descriptors before the library's first use; the library opens
	 * its own at first use and closes them when it has no group left. */
	fdpre = rgt_fd_count();
	CHECK(rgroup_thread_create(&warm, NULL, RGROUP_NEW, life, (void *)NESTED) == 0, "warm-up");
	pthread_join(warm, NULL);
	/* ... and its spare group (kept a moment for the next creation)
	 * goes: then the count is the library's steady state. */
	for (int i = 0; i < 300 && scn_count_groups(sgdir, getpid()) > 0; i++)
		scn_sleep(0.01);
	fd0 = rgt_fd_steady();

	t0 = scn_now();
	for (long i = 0; i < CREATORS; i++) {
		/* Half the creators live in rgroups of their own, so their
		 * children's groups are nested (depth 2-3). */
		int r = rgroup_thread_create(&ct[i], NULL, i % 2 ? RGROUP_NEW : 0, creator, (void *)i);
		CHECK(r == 0, "creator %ld: %s", i, strerror(r));
		if (r)
			ct[i] = 0;
	}
	/* Sample the RSS: the warm-up is the first 10% of the lifetimes. */
	while (__atomic_load_n(&taken, __ATOMIC_RELAXED) < total) {
		long done = __atomic_load_n(&taken, __ATOMIC_RELAXED);
		long r = rss_kb();
		int nfd = rgt_fd_count();
		if (nfd > fdmax)
			fdmax = nfd;
		if (rss_warm < 0 && done >= total / 10)
			rss_warm = r;
		if (rss_warm >= 0 && r > rss_max)
			rss_max = r;
		scn_sleep(0.05);
	}
	for (int i = 0; i < CREATORS; i++)
		if (ct[i])
			pthread_join(ct[i], NULL);
	t1 = scn_now();
	rss_end = rss_kb();
	if (rss_warm < 0)
		rss_warm = rss_end;
	if (rss_end > rss_max)
		rss_max = rss_end;

	/* Spare groups vanish a moment after the last creation (rule 3). */
	CHECK(scn_wait_no_groups(3.0) == 0, "the library still lists %d rgroups", rgroup_list(NULL, 0));
	for (int i = 0; i < 300 && (left = scn_count_groups(sgdir, getpid())) > 0; i++)
		scn_sleep(0.01);
	dirs = left;
	fd1 = rgt_fd_steady();

	for (size_t e = 0; e < sizeof(errs) / sizeof(errs[0]); e++)
		if (errs[e]) {
			fprintf(stderr, "  creation error %s: %ld times\n", strerror((int)e), errs[e]);
			nerr += (int)errs[e];
		}
	nerr += (int)err_other;
	fprintf(stderr, "  %ld lifetimes (%ld new rgroups) from %d creators in %.1f s (%.0f/s)\n",
		lifetimes, groups_made, CREATORS, t1 - t0, lifetimes / (t1 - t0));
	fprintf(stderr, "  PRIO_RGRP sets: %ld ok, %ld failed; fork+exit children: %ld (%ld bad)\n",
		prio_ok, prio_err, forks, fork_bad);
	fprintf(stderr, "  fds: %d before first use, %d after warm-up (idle), max %d, %d at end; rgroup directories left: %d\n",
		fdpre, fd0, fdmax, fd1, dirs);
	fprintf(stderr, "  RSS: %ld kB after warm-up, max %ld kB, %ld kB at end (bound +%d kB)\n",
		rss_warm, rss_max, rss_end, RSS_BOUND_KB);

	CHECK(nerr == 0, "%d creations failed", nerr);
	CHECK(lifetimes >= total, "%ld of %ld lifetimes ran", lifetimes, total);
	CHECK(prio_err == 0, "%ld PRIO_RGRP sets failed", prio_err);
	CHECK(fork_bad == 0, "%ld fork children were in an rgroup or failed", fork_bad);
	CHECK(dirs == 0, "%d rgroup directories left", dirs);
	CHECK(fd1 == fd0, "descriptors: %d after warm-up, %d at end", fd0, fd1);
	if (RGT_RSS_CHECK)
		CHECK(rss_max - rss_warm <= RSS_BOUND_KB, "RSS grew %ld kB after the warm-up",
		      rss_max - rss_warm);
	else
		fprintf(stderr, "  RSS not checked: built with a sanitizer\n");
}

static const struct rgt_case cases[] = {
	{ "churn", churn },
};

int main(int argc, char **argv)
{
	const char *env = getenv("RGROUP_CHURN_LIFETIMES");

	if (argc > 1)
		total = atol(argv[1]);
	else if (env && *env)
		total = atol(env);
	if (total < CREATORS) {
		fprintf(stderr, "usage: %s [LIFETIMES]  (at least %d)\n", argv[0], CREATORS);
		return 1;
	}
	(void)argv;
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), 1, argv);
}
