/* SPDX-License-Identifier: MIT */
/*
 * test-migrate.c - rule 8: when the administrator moves the process to
 * another system group, its rgroup tree, memberships and priorities come
 * along, rebuilt there within 1 second, and nothing is left in the old one.
 */
#include <dirent.h>
#include <string.h>
#include <unistd.h>
#include "sgroup.h"

static char sga[PATH_MAX], sgb[PATH_MAX];

/* rgroup directories (any owner) at and below a system group. */
static int rgroup_dirs_in(const char *cgpath)
{
	char dir[PATH_MAX];

	scn_cg_dir(cgpath, dir, sizeof(dir));
	return scn_count_groups(dir, 0);
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

	__atomic_store_n(&k->tid, scn_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE))
		scn_sleep(0.01);
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
		scn_sleep(0.001);
	CHECK(rgroup_of(pk.tid, &pg) == 0 && pg != 0 && rgroup_info(pg, &pi) == 0,
	      "the plain thread is in its creator's rgroup");
	/* The keeper's census (every 250 ms) has seen it. */
	scn_sleep(0.6);

	CHECK(scn_sg_move(sgb) == 0, "the administrator moves the process to B");
	double t0 = scn_now(), took = -1;
	while (scn_now() - t0 < 3.0) {
		if (tree_in_place(sgb, &t, &kid, g1, g2) && rgroup_dirs_in(sga) == 0) {
			took = scn_now() - t0;
			break;
		}
		scn_sleep(0.01);
	}
	fprintf(stderr, "  tree rebuilt in B after %.3f s\n", took);
	CHECK(took >= 0 && took <= 1.0, "rebuilt within 1 s (%.3f s)", took);
	CHECK(rgroup_dirs_in(sga) == 0, "nothing left in A (%d)", rgroup_dirs_in(sga));
	int along = 0;
	for (double t1 = scn_now(); !along && scn_now() - t1 < 1.0; scn_sleep(0.01))
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
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
	CHECK(rgroup_dirs_in(sgb) == 0 && rgroup_dirs_in(sga) == 0, "nothing left anywhere");
}

/* What a member made at once after its parent started does: it makes
 * one plain thread, reports where that thread is the moment
 * pthread_create() returns, and keeps it alive until told. */
struct born { pid_t parent, kid; char kid_cg[PATH_MAX]; double created; int err, stop; };

static void *born_kid_main(void *p)
{
	struct born *b = p;

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE))
		scn_sleep(0.01);
	return NULL;
}

static void *born_parent_main(void *p)
{
	struct born *b = p;
	clockid_t cid;
	pthread_t t;

	b->parent = scn_gettid();
	b->err = pthread_create(&t, NULL, born_kid_main, b);
	b->created = scn_now();
	if (b->err) {
		__atomic_store_n(&b->kid, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	/* The new thread's id as pthread_create() returns, whether or not it
	 * has run yet: glibc's CPU clock id of a thread encodes it. */
	if (pthread_getcpuclockid(t, &cid) == 0 && (cid & 7) == 6 &&
	    scn_thread_cgroup((pid_t)~(cid >> 3), b->kid_cg, sizeof(b->kid_cg)) == 0)
		__atomic_store_n(&b->kid, (pid_t)~(cid >> 3), __ATOMIC_RELEASE);
	else
		__atomic_store_n(&b->kid, -1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	return NULL;
}

/*
 * Rule 1 and rule 8 with no window: a thread made with plain
 * pthread_create() inside an rgroup is in the group's cgroup the moment
 * pthread_create() returns, and a move of the process right then (well
 * within the keeper's census period) carries it along with its group.
 */
static void rule8_plain_thread_from_birth(void)
{
	struct born b = { 0 };
	char gpath[PATH_MAX] = "", where[2 * PATH_MAX + 128] = "";
	rgroup_id_t g = 0;
	pthread_t pt;

	/* Start in A, wherever an earlier case left the process. */
	CHECK(scn_sg_move(sga) == 0, "the process is in A");
	CHECK(rgroup_thread_create(&pt, NULL, RGROUP_NEW, born_parent_main, &b) == 0, "the parent");
	while (!__atomic_load_n(&b.kid, __ATOMIC_ACQUIRE))
		; /* no sleep: the move follows the creation as closely as it can */
	CHECK(scn_sg_move(sgb) == 0, "the administrator moves the process to B");
	double t0 = scn_now();
	CHECK(b.err == 0 && b.kid > 0, "pthread_create in the rgroup: %d", b.err);
	if (b.kid <= 0) {
		pthread_join(pt, NULL);
		return;
	}
	CHECK(rgroup_of(b.parent, &g) == 0 && g != 0, "the parent is in an rgroup");
	CHECK(!rgt_dirs() || (rgt_group_path(sga, g, gpath, sizeof(gpath)) == 0 && strcmp(b.kid_cg, gpath) == 0),
	      "as pthread_create returned, the new thread was in its creator's group in A: %s, not %s",
	      b.kid_cg, gpath);
	int along = 0;
	while (!along && scn_now() - t0 < 2.0) {
		along = rgt_kernel_agrees(sgb, b.kid, g, where, sizeof(where)) &&
			rgt_kernel_agrees(sgb, b.parent, g, where, sizeof(where));
		if (!along)
			scn_sleep(0.01);
	}
	fprintf(stderr, "  moved %.4f s after pthread_create returned; in place in B after %.3f s\n",
		t0 - b.created, scn_now() - t0);
	CHECK(along, "the new thread came along with its group: %s", where);
	/* And it stays (the census that follows agrees). */
	scn_sleep(0.6);
	CHECK(rgt_kernel_agrees(sgb, b.kid, g, where, sizeof(where)), "still in its group: %s", where);
	rgroup_id_t kg = 0;
	CHECK(rgroup_of(b.kid, &kg) == 0 && kg == g, "rgroup_of(the new thread) = %llu, not %llu",
	      (unsigned long long)kg, (unsigned long long)g);
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
	pthread_join(pt, NULL);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
	CHECK(rgroup_dirs_in(sgb) == 0 && rgroup_dirs_in(sga) == 0, "nothing left anywhere");
}

/* ---- Moves while a thread makes groups ------------------------------- */

/* A thread of an rgroup of its own that makes child rgroups, a few at a
 * time, each ending a moment later, until told to stop. */
struct creator { pid_t tid; int stop; unsigned long made, failed; int err; };

static void *brief_main(void *p)
{
	scn_sleep(0.002);
	return p;
}

static void *creator_main(void *p)
{
	struct creator *c = p;

	__atomic_store_n(&c->tid, scn_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		pthread_t t[3];
		int started = 0;

		for (int i = 0; i < 3; i++) {
			int r = rgroup_thread_create(&t[started], NULL, RGROUP_NEW, brief_main, NULL);

			if (r == 0) {
				started++;
				c->made++;
			} else {
				c->failed++;
				c->err = r;
			}
		}
		for (int i = 0; i < started; i++)
			pthread_join(t[i], NULL);
	}
	return NULL;
}

/* Does every group the library lists have a directory name? The number
 * of those that have none. */
static int groups_unnamed(void)
{
	rgroup_id_t ids[256];
	int n = rgroup_list(ids, 256), bad = 0;

	for (int i = 0; i < n && i < 256; i++) {
		struct rgroup_info info = { .sz = sizeof(info) };

		if (rgroup_info(ids[i], &info) == 0 && !info.name[0])
			bad++;
	}
	return bad;
}

/* Rule 8 while groups are being made: twenty moves between A and B, a
 * thread making rgroups all along. Afterwards the creating thread is in
 * its own group in the last system group, every group is named, nothing
 * is in the other system group, and nothing anywhere once it ends. */
static void rule8_moves_under_creation(void)
{
	struct creator c = { 0 };
	pthread_t ct;
	rgroup_id_t g = 0;
	const char *last = sga, *other = sgb;
	char where[2 * PATH_MAX + 128] = "";
	int in_place = 0, unnamed = 0, left_other = -1, moves = 0;

	CHECK(scn_sg_move(sga) == 0, "start in A");
	CHECK(rgroup_thread_create(&ct, NULL, RGROUP_NEW, creator_main, &c) == 0, "the creating thread");
	while (!__atomic_load_n(&c.tid, __ATOMIC_ACQUIRE))
		scn_sleep(0.001);
	CHECK(rgroup_of(c.tid, &g) == 0 && g != 0, "the creating thread has its group");
	for (int i = 0; i < 20; i++) {
		last = i % 2 ? sga : sgb;
		other = i % 2 ? sgb : sga;
		moves += scn_sg_move(last) == 0;
		/* Some moves come before the keeper's next look, some after. */
		scn_sleep(0.03 + 0.12 * (i % 4));
	}
	CHECK(moves == 20, "the administrator moved the process 20 times (%d)", moves);
	/* Rule 8: rebuilt within a second; the creations go on. */
	for (double t0 = scn_now(); scn_now() - t0 < 2.0; scn_sleep(0.01)) {
		in_place = rgt_kernel_agrees(last, c.tid, g, where, sizeof(where));
		left_other = rgroup_dirs_in(other);
		unnamed = groups_unnamed();
		if (in_place && left_other == 0 && unnamed == 0)
			break;
	}
	CHECK(in_place, "the creating thread is in its group in the last system group: %s", where);
	CHECK(unnamed == 0, "every group is named (%d are not)", unnamed);
	CHECK(left_other == 0, "nothing in the other system group (%d)", left_other);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(ct, NULL);
	fprintf(stderr, "  %lu groups made under 20 moves, %lu creations failed (last: %s)\n",
		c.made, c.failed, c.failed ? strerror(c.err) : "none");
	CHECK(c.made > 0, "groups were made during the moves");
	CHECK(scn_wait_no_groups(3.0) == 0, "groups removed (%d listed)", rgroup_list(NULL, 0));
	int na = rgroup_dirs_in(sga), nb = rgroup_dirs_in(sgb);
	/* What a failure leaves the harness removes with the system groups. */
	CHECK(na == 0 && nb == 0, "nothing left anywhere (A %d, B %d)", na, nb);
}

static const struct rgt_case cases[] = {
	{ "rule8_migration", rule8_migration },
	{ "rule8_plain_thread_from_birth", rule8_plain_thread_from_birth },
	{ "rule8_moves_under_creation", rule8_moves_under_creation },
};

int main(int argc, char **argv)
{
	rgt_sg_init();
	rgt_sg_make("b", sgb, sizeof(sgb));
	rgt_sg_enter(sga, sizeof(sga));
	fprintf(stderr, "backend %s, system groups A %s, B %s\n", rgroup_backend(), sga, sgb);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
