/* SPDX-License-Identifier: MIT */
/*
 * backend-governor.c - the governor backend's operations (backend.h):
 * rgroups for a process that can write no cgroup, enforced by a thread of
 * the process (governor.h). Here: attaching, starting and stopping the
 * governor thread, the tree's changes, fork, and rule 10's CPUs.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "affinity.h"
#include "backend.h"
#include "governor-faults.h"
#include "governor.h"
#include "governor-cap.h"
#include "governor-signal.h"
#include "governor-state.h"

/* ---- The backend ------------------------------------------------------- */

static int gov_probe(void *priv, char *why, size_t len)
{
	int sig = rgroup__gov_choose_signal(why, len);
	return sig < 0 ? sig : 0;
}

/* Like the cgroup backends, which remove the directories of dead rgroup
 * processes when they attach, the governor removes the state files its
 * user's dead processes left (killed, or ended by _exit() in a fork child
 * before the file's destructor could run). */
static int gov_attach(void *priv)
{
	rgroup__state_gc(RGROUP__STATE_DIR, 0, 0, NULL, NULL);
	return rgroup__gov_install_handler();
}

/* Core lock held. The governor does not need the lock to end: it sees
 * G_STOPPING within a poll, opens every gate and deletes its timers. */
static void gov_stop(void)
{
	if (__atomic_load_n(&rgroup__gov.state, __ATOMIC_ACQUIRE) == G_RUNNING) {
		__atomic_store_n(&rgroup__gov.state, G_STOPPING, __ATOMIC_RELEASE);
		rgroup__gov_wake();
	}
}

/* Wait until a stopping governor has ended. */
static void gov_wait_stopped(void)
{
	int s;

	while ((s = __atomic_load_n(&rgroup__gov.state, __ATOMIC_ACQUIRE)) == G_STOPPING)
		syscall(SYS_futex, &rgroup__gov.state, FUTEX_WAIT_PRIVATE, s, NULL, NULL, 0);
}

/* Before exec (core lock held): after this no signal of the governor's is
 * sent, so none is left pending for the new program, whose disposition of
 * it is the default (terminate). */
static void gov_quiesce(void *priv)
{
	gov_stop();
	gov_wait_stopped();
}

static void gov_detach(void *priv)
{
	gov_stop();
}

/* The tree changed: a new round, from the next poll, takes it in (the
 * core tracks members and weights; the governor reads the tree). */
static void tree_changed(void)
{
	/* Thread creation passes here: one wake per change noticed, not per
	 * creation. */
	if (!__atomic_exchange_n(&rgroup__gov.changed, 1, __ATOMIC_ACQ_REL))
		rgroup__gov_wake();
}

static int start_governor(void)
{
	int r;

	gov_wait_stopped();
	if (rgroup__gov.state == G_RUNNING)
		return 0;
	rgroup__gov.state = G_RUNNING; /* before it runs: it loops while this holds */
	r = rgroup__fault_site(RGROUP__FAULT_GOV_THREAD);
	if (r == 0)
		r = rgroup__start_helper(rgroup__gov_main);
	if (r)
		rgroup__gov.state = G_NONE;
	return r;
}

static int gov_create(void *priv, struct rgroup__node *n)
{
	int r = start_governor();

	if (r < 0)
		return r;
	rgroup__gov.ngroups++;
	tree_changed();
	return 0;
}

static int gov_place(void *priv, struct rgroup__node *n, pid_t tid)
{
	tree_changed();
	return rgroup__aff_place(n, tid);    /* rule 10 */
}

/* ---- Rule 10: CPUs as per-thread affinity; the cap is governor-cap.c's - */

static int gov_set_cpus(void *priv, struct rgroup__node *n)
{
	tree_changed();
	return rgroup__aff_spread(n, rgroup__aff_tracked, NULL);
}

static int gov_set_cap(void *priv, struct rgroup__node *n)
{
	tree_changed();
	rgroup__gov_cap_changed();
	return 0;
}

/* Exit and exec: the threads leave their groups; the CPUs a group gave
 * them go with it. */
static int gov_evacuate(void *priv, const struct rgroup__node *n)
{
	return rgroup__aff_release(n, rgroup__aff_tracked, NULL);
}

static int gov_set_nice(void *priv, struct rgroup__node *n, int nice)
{
	tree_changed();
	return 0;
}

static int gov_destroy(void *priv, struct rgroup__node *n)
{
	if (--rgroup__gov.ngroups == 0)
		gov_stop();
	return 0;
}

static int gov_usage(void *priv, const struct rgroup__node *n, uint64_t *ns)
{
	return -ENOTSUP; /* the core adds up the threads' CPU clocks */
}

static int gov_group_of(void *priv, pid_t tid, struct rgroup__node **n)
{
	return 0; /* no kernel view: only tracked threads are in rgroups */
}

static void gov_info(void *priv, const struct rgroup__node *n, struct rgroup_info *info)
{
	const struct rgroup__gov_node *g = rgroup__node_priv(n);

	info->throttled_ns = g->throttled_ns;
	info->unthrottled = g->unthrottled;
	if (__atomic_load_n(&rgroup__gov_taken, __ATOMIC_ACQUIRE))
		info->flags |= RGROUP_INFO_UNENFORCED;
}

static void gov_fork_child(void *priv)
{
	/* Pairs with the governor's release of G_NONE as it ends: its last
	 * plain writes (rgroup__gov_cap_stop()) come before the resets
	 * below. Found by TSan in a fork after the governor had ended. */
	(void)__atomic_load_n(&rgroup__gov.state, __ATOMIC_ACQUIRE);
	rgroup__aff_leave_self();
	rgroup__gov_cap_fork_child();
	/* The child has no governor thread and no timers; pending signals
	 * are not inherited. Its state starts afresh; the arrays are kept
	 * for reuse (no allocator in a fork child). Atomic stores: the
	 * parent's governor may have been writing these at the fork. */
	for (int i = 0; i < MAX_SLOTS; i++) {
		__atomic_store_n(&rgroup__gov_slots[i].word, WORD(0, S_FREE), __ATOMIC_RELAXED);
		__atomic_store_n(&rgroup__gov_slots[i].until, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&rgroup__gov_slots[i].tid, 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&rgroup__gov_round_word, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rgroup__gov_running, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rgroup__gov.state, G_NONE, __ATOMIC_RELAXED);
	__atomic_store_n(&rgroup__gov.changed, 0, __ATOMIC_RELAXED);
	/* Whose handler the signal has is seen again at the child's first
	 * poll. */
	__atomic_store_n(&rgroup__gov_taken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rgroup__gov_tid, 0, __ATOMIC_RELAXED);
	rgroup__gov.ngroups = 0; /* written under the core lock, held across fork */
	/* The thread list stays: a governor started in the child finds none
	 * of those threads in /proc and forgets them (their timers were not
	 * inherited), and it rebuilds the tree's shape from the core's. */
}

static int gov_signal_op(void *priv)
{
	return rgroup__gov_signal();
}

const struct rgroup__backend rgroup__backend_governor = {
	.name = "governor",
	.priv = &rgroup__gov,
	.node_size = sizeof(struct rgroup__gov_node),
	.probe = gov_probe,
	.attach = gov_attach,
	.detach = gov_detach,
	.create = gov_create,
	.place = gov_place,
	.set_nice = gov_set_nice,
	.destroy = gov_destroy,
	.usage = gov_usage,
	.group_of = gov_group_of,
	.info = gov_info,
	.deferred = rgroup__gov_deferred,
	.fork_child = gov_fork_child,
	.quiesce = gov_quiesce,
	.evacuate = gov_evacuate,
	.set_cpus = gov_set_cpus,
	.set_cap = gov_set_cap,
	.signal = gov_signal_op,
};
