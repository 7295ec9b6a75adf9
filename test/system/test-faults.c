/* SPDX-License-Identifier: MIT */
/*
 * test-faults.c - every cgroupfs call, allocation and thread creation the
 * library makes fails in turn (the fault-injection variant of the library,
 * src/core/fault.c), with each of EACCES, EPERM, EBUSY, ENOSPC, ENOMEM, ENODEV,
 * EINTR and EAGAIN in rotation. For each failure point k:
 *
 *   a thread is made in a new rgroup; inside, it makes a nested rgroup and
 *   sets PRIO_RGRP on both; everything is joined.
 *
 * Whatever fails must fail cleanly: the call returns an error (never a
 * crash or hang), no thread runs whose creation failed, and afterwards the
 * tree is empty, no directory and no descriptor is left, and the next call
 * works. The loop ends at the first k whose scenario runs without reaching
 * the armed fault: every point has been tried.
 *
 *   every_call_fails_in_turn  the errors above in rotation
 *   gone_is_checked           every point fails with ENODEV, then every
 *                             point with ENOENT: the errors that could be
 *                             read as "someone removed it already"
 */
#include <dirent.h>

#include "fault.h"
#include "sgroup.h"

static char sg[PATH_MAX];

static const int rotation[] = { EACCES, EPERM, EBUSY, ENOSPC, ENOMEM, ENODEV, EINTR, EAGAIN };

/* The errors injected in the current pass, in turn. */
static const int *errs;
static int nerrs;

struct inner {
	int started;      /* the nested thread ran */
	int create_err;   /* of the nested RGROUP_NEW */
	int prio_err;     /* of PRIO_RGRP in the nested group */
};

struct outer {
	int ran;
	int prio_err;
	struct inner in;
};

static void *inner_main(void *p)
{
	struct inner *in = p;
	in->started = 1;
	if (rgroup_setpriority(PRIO_RGRP, 0, -5) < 0)
		in->prio_err = errno;
	return NULL;
}

static void *outer_main(void *p)
{
	struct outer *o = p;
	pthread_t t;

	o->ran = 1;
	if (rgroup_setpriority(PRIO_RGRP, 0, 3) < 0)
		o->prio_err = errno;
	o->in.create_err = rgroup_thread_create(&t, NULL, RGROUP_NEW, inner_main, &o->in);
	if (!o->in.create_err)
		pthread_join(t, NULL);
	return NULL;
}

static int known_error(int e)
{
	for (int i = 0; i < nerrs; i++)
		if (e == errs[i])
			return 1;
	return 0;
}

/* Fail each point in turn with the errors of list; check after each. */
static void each_point_fails(const int *list, int n)
{
	int fds0, k, covered = 0;
	long fired = 0;

	/* The steady state: one full scenario without faults first (the
	 * library attaches and opens its sgroup descriptors once). */
	struct outer warm = { 0 };
	pthread_t t;
	CHECK(rgroup_thread_create(&t, NULL, RGROUP_NEW, outer_main, &warm) == 0, "warm-up");
	pthread_join(t, NULL);
	CHECK(scn_wait_no_groups(3.0) == 0, "warm-up groups removed");
	fds0 = rgt_fd_steady();

	errs = list;
	nerrs = n;
	for (k = 1; k < 200; k++) {
		int err = errs[k % nerrs];
		struct outer o = { 0 };

		rgroup__fault_arm(k, err);
		int r = rgroup_thread_create(&t, NULL, RGROUP_NEW, outer_main, &o);
		if (r == 0)
			pthread_join(t, NULL);
		long left = rgroup__fault_left();
		rgroup__fault_arm(-1, 0);
		if (left > 0) {
			covered = 1; /* the scenario never reached call k */
			break;
		}
		fired++;
		/* Errors come back as what was injected (or, for the
		 * creator, pthread_create's own word for the same). */
		CHECK(r == 0 || known_error(r), "k=%d (%s): create returned %d", k, strerror(err), r);
		CHECK(r != 0 || o.ran, "k=%d: create said 0 but the thread did not run", k);
		CHECK(r == 0 || !o.ran, "k=%d: create failed (%s) but the thread ran", k, strerror(r));
		CHECK(!o.prio_err || known_error(o.prio_err), "k=%d: PRIO_RGRP error %d", k, o.prio_err);
		CHECK(o.in.create_err == 0 || known_error(o.in.create_err),
		      "k=%d: nested create returned %d", k, o.in.create_err);
		CHECK(o.in.create_err || !o.ran || o.in.started, "k=%d: nested create said 0 but did not run", k);
		CHECK(!o.in.create_err || !o.in.started, "k=%d: nested create failed but its thread ran", k);
		/* Consistent and clean afterwards; the next call works. */
		CHECK(scn_wait_no_groups(3.0) == 0, "k=%d (%s): %d groups still listed, %d directories",
		      k, strerror(err), rgroup_list(NULL, 0), scn_own_dirs());
		int fds = rgt_fd_steady();
		CHECK(fds == fds0, "k=%d (%s): %d descriptors, %d before", k, strerror(err), fds, fds0);
		struct outer next = { 0 };
		r = rgroup_thread_create(&t, NULL, RGROUP_NEW, outer_main, &next);
		CHECK(r == 0, "k=%d: the next call failed: %s", k, strerror(r));
		if (r == 0)
			pthread_join(t, NULL);
		CHECK(!next.prio_err && !next.in.create_err && !next.in.prio_err,
		      "k=%d: the next scenario saw errors %d/%d/%d", k, next.prio_err,
		      next.in.create_err, next.in.prio_err);
		if (rgt_failures)
			break;
	}
	fprintf(stderr, "  %ld failure points tried (errors rotating over %d errnos); all covered: %s\n",
		fired, nerrs, covered ? "yes" : "no");
	CHECK(covered, "the scenario still reached a fault at k=%d", k);
	/* The cgroup backends make many cgroupfs calls; the native kernel's
	 * points are the two groups, their births and weights. */
	CHECK(fired >= (rgt_dirs() ? 10 : 6), "only %ld failure points: the hooks are not reached", fired);
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed at the end");
}

static void every_call_fails_in_turn(void)
{
	each_point_fails(rotation, (int)(sizeof(rotation) / sizeof(rotation[0])));
}

/* A removal that fails with ENODEV or ENOENT must not be taken for one
 * that someone else made: the directory may still be there. */
static void gone_is_checked(void)
{
	static const int nodev[] = { ENODEV }, noent[] = { ENOENT };

	each_point_fails(nodev, 1);
	if (!rgt_failures)
		each_point_fails(noent, 1);
}

static const struct rgt_case cases[] = {
	{ "every_call_fails_in_turn", every_call_fails_in_turn },
	{ "gone_is_checked", gone_is_checked },
};

int main(int argc, char **argv)
{
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s\n", rgroup_backend(), sg);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
