/* SPDX-License-Identifier: MIT */
/*
 * test-migrate.c - rule 8: when the administrator moves the process to
 * another system group, its rgroup tree, memberships and priorities come
 * along, rebuilt there within 1 second, and nothing is left in the old one.
 */
#include <dirent.h>
#include "sgroup.h"

static char sga[PATH_MAX], sgb[PATH_MAX];

/* rgroup directories (any owner) at and below a system group. */
static int rgroup_dirs_in(const char *cgpath)
{
	char dir[PATH_MAX];

	rgt_cg_dir(cgpath, dir, sizeof(dir));
	return rgt_count_groups(dir, 0);
}

/* Is the tree where the kernel should hold it below system group base:
 * t in g1, kid in g2 (directories <base>/<g1>/<g2> on the cgroup
 * backends; the same kernel rgroups, and base in cgroupfs, natively)? */
static int tree_in_place(const char *base, const struct rgt_worker *t, const struct rgt_worker *kid,
			 rgroup_id_t g1, rgroup_id_t g2)
{
	char why[2 * PATH_MAX + 128];

	return rgt_kernel_agrees(base, t->tid, g1, why, sizeof(why)) &&
	       rgt_kernel_agrees(base, kid->tid, g2, why, sizeof(why));
}

/* A member made with plain pthread_create() by a thread of g1. */
struct plain_kid { pid_t tid; int stop; };

static void *plain_kid_main(void *p)
{
	struct plain_kid *k = p;

	__atomic_store_n(&k->tid, rgt_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE))
		rgt_sleep(0.01);
	return NULL;
}

static void *plain_parent_main(void *p)
{
	pthread_t t;

	if (pthread_create(&t, NULL, plain_kid_main, p) != 0)
		return NULL;
	pthread_join(t, NULL);
	return p;
}

static void rule8_migration(void)
{
	struct rgt_worker kid = { .new_group = 1, .set_nice = 1, .nice = -3 };
	struct rgt_worker t = { .nkids = 1, .kids = &kid, .set_nice = 1, .nice = 4 };
	struct rgroup_info i1 = { .sz = sizeof(i1) }, i2 = { .sz = sizeof(i2) };
	rgroup_id_t g1, g2;

	CHECK(rgt_worker_start(&t, RGROUP_NEW) == 0 && t.err == 0 && kid.err == 0, "create the tree");
	rgroup_of(t.tid, &g1);
	rgroup_of(kid.tid, &g2);
	CHECK(rgroup_info(g1, &i1) == 0 && rgroup_info(g2, &i2) == 0, "info");
	CHECK(tree_in_place(sga, &t, &kid, g1, g2), "the tree is in A");
	/* A plain thread inside an rgroup of its own: a member too (rule 1). */
	struct plain_kid pk = { 0 };
	pthread_t pt;
	rgroup_id_t pg = 0;
	char where[2 * PATH_MAX + 128] = "";
	struct rgroup_info pi = { .sz = sizeof(pi) };
	CHECK(rgroup_thread_create(&pt, NULL, RGROUP_NEW, plain_parent_main, &pk) == 0, "plain member's parent");
	while (!__atomic_load_n(&pk.tid, __ATOMIC_ACQUIRE))
		rgt_sleep(0.001);
	CHECK(rgroup_of(pk.tid, &pg) == 0 && pg != 0 && rgroup_info(pg, &pi) == 0,
	      "the plain thread is in its creator's rgroup");
	/* The keeper's census (every 250 ms) has seen it. */
	rgt_sleep(0.6);

	CHECK(rgt_sg_move(sgb) == 0, "the administrator moves the process to B");
	double t0 = rgt_now(), took = -1;
	while (rgt_now() - t0 < 3.0) {
		if (tree_in_place(sgb, &t, &kid, g1, g2) && rgroup_dirs_in(sga) == 0) {
			took = rgt_now() - t0;
			break;
		}
		rgt_sleep(0.01);
	}
	fprintf(stderr, "  tree rebuilt in B after %.3f s\n", took);
	CHECK(took >= 0 && took <= 1.0, "rebuilt within 1 s (%.3f s)", took);
	CHECK(rgroup_dirs_in(sga) == 0, "nothing left in A (%d)", rgroup_dirs_in(sga));
	int along = 0;
	for (double t1 = rgt_now(); !along && rgt_now() - t1 < 1.0; rgt_sleep(0.01))
		along = rgt_kernel_agrees(sgb, pk.tid, pg, where, sizeof(where));
	CHECK(along, "the plain member came along: %s", where);
	__atomic_store_n(&pk.stop, 1, __ATOMIC_RELEASE);
	pthread_join(pt, NULL);

	long long w1 = rgt_kernel_weight(sgb, t.tid, g1), w2 = rgt_kernel_weight(sgb, kid.tid, g2);
	CHECK(w1 == rgroup_nice_to_weight(4), "B's copy of g1 has nice 4's weight (%lld)", w1);
	CHECK(w2 == rgroup_nice_to_weight(-3), "B's copy of g2 has nice -3's weight (%lld)", w2);
	CHECK(rgroup_getpriority(PRIO_RGRP, t.tid) == 4 && rgroup_getpriority(PRIO_RGRP, kid.tid) == -3,
	      "PRIO_RGRP values kept");
	/* The library goes on working in B. */
	CHECK(rgroup_setpriority(PRIO_RGRP, kid.tid, 2) == 0 &&
	      rgt_kernel_weight(sgb, kid.tid, g2) == rgroup_nice_to_weight(2), "PRIO_RGRP after migration");
	struct rgt_worker late = { 0 };
	CHECK(rgt_worker_start(&late, RGROUP_NEW) == 0, "a new rgroup after migration");
	rgroup_id_t gl = 0;
	char got[2 * PATH_MAX + 128] = "";
	CHECK(rgroup_of(late.tid, &gl) == 0 && gl && rgt_kernel_agrees(sgb, late.tid, gl, got, sizeof(got)),
	      "new rgroup made in B: %s", got);
	rgt_worker_stop(&late);
	rgt_worker_stop(&t);
	CHECK(rgt_wait_no_groups(2.0) == 0, "groups removed");
	CHECK(rgroup_dirs_in(sgb) == 0 && rgroup_dirs_in(sga) == 0, "nothing left anywhere");
}

static const struct rgt_case cases[] = {
	{ "rule8_migration", rule8_migration },
};

int main(int argc, char **argv)
{
	rgt_sg_init();
	rgt_sg_make("b", sgb, sizeof(sgb));
	rgt_sg_enter(sga, sizeof(sga));
	fprintf(stderr, "backend %s, system groups A %s, B %s\n", rgroup_backend(), sga, sgb);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
