/* SPDX-License-Identifier: MIT */
/*
 * enter.c - the one way into an rgroup besides birth: a thread that is in
 * no rgroup enters a chain of groups, once. `rgroup run`'s preload calls
 * it when an unmodified program names a thread (src/run/preload.c); nothing
 * in the public API does.
 *
 * Why this does not break rule 2: membership is forever once a thread is
 * in a group, and here the thread was in none. The program never chose a
 * group for it; the user did, by its name, before the program ran. After
 * the entry the thread is tracked like one born in the group (rule 1 for
 * its children: the preload starts them through rgroup_thread_create()).
 *
 * Groups are found again by the ids the caller keeps per level: all the
 * threads whose names match one rule share one group while it lives.
 * Rule 3 still holds: a group whose last thread has gone and that has no
 * child is removed by the keeper, and the next matching thread makes a
 * new one. Everything happens under the core lock, so the keeper never
 * sees a group made here before its first thread is in it.
 *
 * The entry may be made by another thread on the target's behalf (the
 * program names a thread it created: pthread_setname_np(t, ...)); the
 * backend places threads by tid, and the core tracks a record the caller
 * keeps for the target (the preload's, with its tid), found by tid from
 * then on also by the target itself.
 */
#include <errno.h>
#include <sys/resource.h>

#include "backend.h"
#include "weight.h"

static struct rgroup__core *const st = &rgroup__core;

static int nice_of(pid_t tid)
{
	int saved = errno, nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)tid);
	if (nice == -1 && errno)
		nice = 0;
	errno = saved;
	return nice;
}

/* Remove a group made here that got no thread (lock held): at once if
 * the backend can, else the keeper does it. */
static void drop(struct rgroup__node *n)
{
	if (n->nthreads || n->children || n->pending)
		return;
	if (rgroup__be_destroy(st->be, n) == 0) {
		rgroup__node_unlink(n);
		rgroup__node_free(n);
	} else {
		st->reap_wanted = 1;
	}
}

/*
 * A new group below parent with the level's settings. Rule 6: a top-level
 * group starts at the entering thread's nice and may go lower only as
 * PRIO_PROCESS allows; a nested one starts at 0 and takes any value.
 * Where a group comes into being with its first thread (no create op: the
 * kernel's own), its nice and its cap can only be set once the thread is
 * in it: *later is then that nice (checked here), else NO_NICE, and
 * *cap_later 1 for a cap (checked when it is set).
 */
#define NO_NICE (-100)

static int make_level(struct rgroup__node *parent, const struct rgroup__level *l, pid_t tid,
		      struct rgroup__node **out, int *later, int *cap_later)
{
	int base = parent ? 0 : nice_of(tid), r;
	struct rgroup__node *n;

	*later = NO_NICE;
	*cap_later = 0;
	r = rgroup__make_group(parent, base, &n);
	if (r < 0)
		return r;
	if (l->has_nice) {
		int nice = rgroup__clamp_nice(l->nice);

		if (!parent && nice < base && !rgroup__can_nice(nice))
			r = -EACCES;
		else if (nice != n->nice && !st->be->create)
			*later = nice;
		else if (nice != n->nice)
			r = st->be->set_nice(st->be->priv, n, nice);
		if (r == 0 && *later == NO_NICE)
			n->nice = nice;
	}
	if (r == 0 && l->cpus)
		r = rgroup__set_cpus_locked(n, l->cpus);
	if (r == 0 && l->quota_us && !st->be->create)
		*cap_later = 1;
	else if (r == 0 && l->quota_us)
		r = rgroup__set_cap_locked(n, l->quota_us, l->period_us);
	if (r < 0) {
		drop(n);
		return r;
	}
	*out = n;
	return 0;
}

RGROUP__EXPORT int rgroup__enter(struct rgroup__level *chain, unsigned int depth, void *who)
{
	struct rgroup__thread *t = who ? who : &rgroup__self;
	struct rgroup__node *nodes[RGROUP_MAX_DEPTH], *parent = NULL, *n;
	int made[RGROUP_MAX_DEPTH] = { 0 }, later[RGROUP_MAX_DEPTH], cap_later[RGROUP_MAX_DEPTH];
	int r = 0, err;
	unsigned int i;
	pid_t tid;

	if (!depth || depth > RGROUP_MAX_DEPTH)
		return -EINVAL;
	rgroup__init();
	if (!who)
		rgroup__self_tid();
	tid = t->tid;
	rgroup__lock();
	if (!st->be || st->shutdown) {
		r = -ENOTSUP;
		goto out;
	}
	if (st->dismantled) {
		r = -EBUSY;     /* an exec is under way */
		goto out;
	}
	if (t->node || rgroup__node_of(tid, &err)) {
		r = -EEXIST;    /* rule 2: it stays where it is */
		goto out;
	}
	if (err) {
		r = err;
		goto out;
	}
	for (i = 0; i < depth; i++) {
		n = chain[i].id ? rgroup__node_by_id(chain[i].id) : NULL;
		if (n && n->parent != parent)
			n = NULL;
		if (!n) {
			r = make_level(parent, &chain[i], tid, &n, &later[i], &cap_later[i]);
			if (r < 0)
				goto undo;
			made[i] = 1;
		}
		nodes[i] = parent = n;
	}
	r = st->be->place(st->be->priv, n, tid);
	if (r < 0)
		goto undo;
	r = rgroup__start_keeper();
	if (r < 0) {
		st->be->place(st->be->priv, NULL, tid);
		goto undo;
	}
	if (who)
		rgroup__track_thread(n, t);
	else
		rgroup__track(n);
	for (i = 0; i < depth; i++)
		chain[i].id = nodes[i]->id;
	/* The nice values and caps that had to wait for a member, rule 6
	 * checked above as the kernel checks it. The thread is in for good
	 * now: an unforeseen refusal leaves the group at its starting nice,
	 * or without a cap, which is what the node (rgroup_info, rgroup
	 * tree) says then. */
	for (i = 0; i < depth; i++) {
		if (made[i] && later[i] != NO_NICE &&
		    st->be->set_nice(st->be->priv, nodes[i], later[i]) == 0)
			nodes[i]->nice = later[i];
		if (made[i] && cap_later[i])
			rgroup__set_cap_locked(nodes[i], chain[i].quota_us, chain[i].period_us);
	}
	goto out;
undo:
	while (i-- > 0)
		if (made[i])
			drop(nodes[i]);
out:
	rgroup__unlock();
	return r;
}

RGROUP__EXPORT int rgroup__enter_change(rgroup_id_t id, const struct rgroup__level *l,
					unsigned int what)
{
	struct rgroup__node *n;
	cpu_set_t old_cpus;
	uint64_t old_quota, old_period;
	int had_cpus, r = 0;
	unsigned int done = 0;

	rgroup__init();
	rgroup__lock();
	n = st->be && !st->dismantled ? rgroup__node_by_id(id) : NULL;
	if (!n || !n->bound) {
		rgroup__unlock();
		return -ESRCH;
	}
	had_cpus = n->cpus != NULL;
	if (had_cpus)
		old_cpus = *n->cpus;
	old_quota = n->quota_us;
	old_period = n->period_us;
	/* Narrowing: the CPUs and the cap first, so that a child's own set
	 * or cap is checked against what the group will have. */
	if (what & RGROUP__CHANGE_CPUS) {
		r = rgroup__set_cpus_locked(n, l->cpus);
		done |= r == 0 ? RGROUP__CHANGE_CPUS : 0;
	}
	if (r == 0 && (what & RGROUP__CHANGE_CAP)) {
		r = rgroup__set_cap_locked(n, l->quota_us, l->period_us);
		done |= r == 0 ? RGROUP__CHANGE_CAP : 0;
	}
	if (r == 0 && (what & RGROUP__CHANGE_NICE) && l->has_nice)
		r = rgroup__set_nice_locked(n, rgroup__clamp_nice(l->nice));
	if (r < 0 && n->bound) {
		/* All or nothing: what was set goes back (best effort: these
		 * are values the group had a moment ago). */
		if (done & RGROUP__CHANGE_CAP)
			rgroup__set_cap_locked(n, old_quota, old_period);
		if (done & RGROUP__CHANGE_CPUS)
			rgroup__set_cpus_locked(n, had_cpus ? &old_cpus : NULL);
	}
	rgroup__unlock();
	return r;
}

RGROUP__EXPORT void rgroup__enter_gone(void *who)
{
	/* Idempotent: nothing happens for a record already untracked. */
	rgroup__thread_exit(who);
}

RGROUP__EXPORT int rgroup__enter_signal(void)
{
	/* Inside the library (it installs the governor's own handler with
	 * the core lock held), the answer is 0: nothing to keep from it. */
	if (rgroup__in_lib)
		return 0;
	rgroup__init();
	return st->be && st->be->signal ? st->be->signal(st->be->priv) : 0;
}
