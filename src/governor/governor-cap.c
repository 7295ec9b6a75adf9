/* SPDX-License-Identifier: MIT */
/*
 * governor-cap.c - rule 10's CPU cap on the governor backend; see
 * governor-cap.h.
 *
 * Each capped group gets a slot, kept while the group lives, holding its
 * quota and period, the current period's start, and its members: the
 * threads the core tracks in it and in its descendants, re-read from the
 * tree every 10 ms (and at once after a change of a cap). A member's CPU
 * clock at the start of the period (or when it was first seen) is its
 * base; the group's use is the sum over its members of clock - base.
 * When the use reaches the quota (less what the group overran last
 * period: the signal and the poll come late, and the next period pays
 * for it, as CFS bandwidth control does) the slot's gate closes and each
 * member gets the signal; the handler waits on the gate until the
 * governor opens it at the end of the period. A member whose clock still
 * moves while the gate is closed gets the signal again at the next poll
 * (nested caps, a signal that came while it was in the library).
 *
 * Limits: 64 capped groups, 256 threads counted per group; the handler
 * checks that its thread is a member of the slot, so a stale or forged
 * signal pauses nobody else, and no pause outlasts its period.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "governor-cap.h"

#define CAP_SLOTS    64
#define CAP_MEMBERS  256
#define RESNAP_NS    10000000ull

struct cap_slot {
	rgroup_id_t id;                 /* 0: free */
	uint64_t quota, period;         /* ns */
	uint64_t start;                 /* of the period, CLOCK_MONOTONIC ns */
	uint64_t debt;                  /* overrun owed by this period, ns */
	uint32_t gen;                   /* of the gate */
	int n, seen;
	uint64_t paused_ns;             /* members' time waiting at the gate,
					 * not yet taken (atomic) */
	pid_t tid[CAP_MEMBERS];         /* the handler reads these */
	uint64_t base[CAP_MEMBERS];     /* CPU clock at the period's start */
	uint64_t last[CAP_MEMBERS];     /* CPU clock at the last poll */
};

static struct cap_slot slots[CAP_SLOTS];
/* (gen << 1) | closed; paused members wait on it (futex). */
static uint32_t gate[CAP_SLOTS];
static int changed = 1, nused;
static uint64_t last_snap;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	return clock_gettime(clk, &ts) < 0 ? 0 : (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static clockid_t tid_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid << 3) | 6);
}

static void open_gate(int s)
{
	slots[s].gen++;
	__atomic_store_n(&gate[s], (slots[s].gen & 0x7fffffffu) << 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &gate[s], FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* ---- The members, from the tree ---------------------------------------- */

struct collect {
	pid_t tid[CAP_MEMBERS];
	uint64_t base[CAP_MEMBERS], last[CAP_MEMBERS];
	int n;
};

static void collect(const struct rgroup__node *n, struct collect *c)
{
	for (const struct rgroup__thread *t = n->threads; t && c->n < CAP_MEMBERS; t = t->next)
		c->tid[c->n++] = t->tid;
	for (const struct rgroup__node *k = n->children; k; k = k->next)
		collect(k, c);
}

static int slot_of(rgroup_id_t id)
{
	int free_slot = -1;

	for (int s = 0; s < CAP_SLOTS; s++) {
		if (slots[s].id == id)
			return s;
		if (!slots[s].id && free_slot < 0)
			free_slot = s;
	}
	return free_slot;
}

static void take(const struct rgroup__node *n, uint64_t now)
{
	static struct collect c;   /* the governor thread only */
	struct cap_slot *sl;
	int s = slot_of(n->id);

	if (s < 0)
		return;     /* more than CAP_SLOTS capped groups */
	sl = &slots[s];
	if (!sl->id) {
		memset(sl, 0, offsetof(struct cap_slot, tid));
		sl->gen = gate[s] >> 1;
		sl->id = n->id;
		sl->start = now;
		nused++;
	}
	sl->seen = 1;
	sl->quota = n->quota_us * 1000;
	sl->period = n->period_us * 1000;
	c.n = 0;
	collect(n, &c);
	/* Keep the bases of members still there; a new one counts from now. */
	for (int i = 0; i < c.n; i++) {
		int j;

		for (j = 0; j < sl->n && sl->tid[j] != c.tid[i]; j++)
			;
		if (j < sl->n) {
			c.base[i] = sl->base[j];
			c.last[i] = sl->last[j];
		} else {
			c.base[i] = c.last[i] = now_ns(tid_clock(c.tid[i]));
		}
	}
	memcpy(sl->base, c.base, sizeof(uint64_t) * (size_t)c.n);
	memcpy(sl->last, c.last, sizeof(uint64_t) * (size_t)c.n);
	for (int i = 0; i < c.n; i++)   /* the handler reads these */
		__atomic_store_n(&sl->tid[i], c.tid[i], __ATOMIC_RELAXED);
	__atomic_store_n(&sl->n, c.n, __ATOMIC_RELEASE);
}

static void walk(const struct rgroup__node *list, uint64_t now)
{
	for (const struct rgroup__node *n = list; n; n = n->next) {
		if (n->quota_us)
			take(n, now);
		walk(n->children, now);
	}
}

static void snapshot(uint64_t now)
{
	if (rgroup__trylock() != 0)
		return;   /* the next poll tries again */
	for (int s = 0; s < CAP_SLOTS; s++)
		slots[s].seen = 0;
	walk(rgroup__core.top, now);
	rgroup__unlock();
	for (int s = 0; s < CAP_SLOTS; s++) {
		if (!slots[s].id || slots[s].seen)
			continue;
		slots[s].id = 0;   /* the group is gone, or its cap lifted */
		__atomic_store_n(&slots[s].n, 0, __ATOMIC_RELEASE);
		open_gate(s);
		nused--;
	}
	last_snap = now;
	__atomic_store_n(&changed, 0, __ATOMIC_RELAXED);
}

/* ---- The periods ------------------------------------------------------------- */

/* The value a cap pause carries: negative, slot and generation. */
static int pause_value(int s)
{
	unsigned int v = ((unsigned int)s << 16) | (slots[s].gen & 0xffffu);

	return -1 - (int)v;
}

void rgroup__gov_cap_poll(void (*send)(pid_t tid, int value))
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (__atomic_load_n(&changed, __ATOMIC_RELAXED) || (nused && now - last_snap >= RESNAP_NS))
		snapshot(now);
	for (int s = 0; s < CAP_SLOTS; s++) {
		struct cap_slot *sl = &slots[s];
		uint64_t used = 0, allow;
		int closed;

		if (!sl->id)
			continue;
		for (int i = 0; i < sl->n; i++) {
			uint64_t c = now_ns(tid_clock(sl->tid[i]));
			if (c > sl->base[i])
				used += c - sl->base[i];
		}
		allow = sl->quota > sl->debt ? sl->quota - sl->debt : 0;
		if (now - sl->start >= sl->period) {
			/* The period ends: what was overrun is owed (at most a
			 * quota), the gate opens, the clocks count afresh. */
			uint64_t over = used > allow ? used - allow : 0;
			sl->debt = over > sl->quota ? sl->quota : over;
			sl->start += sl->period * ((now - sl->start) / sl->period);
			for (int i = 0; i < sl->n; i++)
				sl->base[i] = sl->last[i] = now_ns(tid_clock(sl->tid[i]));
			if (__atomic_load_n(&gate[s], __ATOMIC_ACQUIRE) & 1)
				open_gate(s);
			continue;
		}
		closed = __atomic_load_n(&gate[s], __ATOMIC_ACQUIRE) & 1;
		if (!closed && used < allow) {
			for (int i = 0; i < sl->n; i++)
				sl->last[i] = now_ns(tid_clock(sl->tid[i]));
			continue;
		}
		if (!closed)
			__atomic_store_n(&gate[s], ((sl->gen & 0x7fffffffu) << 1) | 1, __ATOMIC_RELEASE);
		for (int i = 0; i < sl->n; i++) {
			uint64_t c = now_ns(tid_clock(sl->tid[i]));
			/* Closing: everyone; later: whoever still runs. */
			if (!closed || c > sl->last[i])
				send(sl->tid[i], pause_value(s));
			sl->last[i] = c;
		}
	}
}

void rgroup__gov_cap_changed(void)
{
	__atomic_store_n(&changed, 1, __ATOMIC_RELAXED);
}

void rgroup__gov_cap_pause(int value)
{
	unsigned int v = (unsigned int)(-1 - value);
	int s = (int)(v >> 16), n, member = 0;
	pid_t me;
	uint32_t w;

	if (value >= 0 || s >= CAP_SLOTS)
		return;
	w = __atomic_load_n(&gate[s], __ATOMIC_ACQUIRE);
	if (!(w & 1) || ((w >> 1) & 0xffffu) != (v & 0xffffu))
		return;   /* open, or another period's: stale */
	me = (pid_t)syscall(SYS_gettid);
	n = __atomic_load_n(&slots[s].n, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n && i < CAP_MEMBERS; i++)
		member |= __atomic_load_n(&slots[s].tid[i], __ATOMIC_RELAXED) == me;
	if (!member)
		return;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), t1;

	while (__atomic_load_n(&gate[s], __ATOMIC_ACQUIRE) == w)
		syscall(SYS_futex, &gate[s], FUTEX_WAIT_PRIVATE, w, NULL, NULL, 0);
	t1 = now_ns(CLOCK_MONOTONIC);
	if (t1 > t0)
		__atomic_add_fetch(&slots[s].paused_ns, t1 - t0, __ATOMIC_RELAXED);
}

uint64_t rgroup__gov_cap_take_paused(rgroup_id_t id)
{
	for (int s = 0; s < CAP_SLOTS; s++)
		if (slots[s].id == id)
			return __atomic_exchange_n(&slots[s].paused_ns, 0, __ATOMIC_RELAXED);
	return 0;
}

void rgroup__gov_cap_signal(int value)
{
	if (rgroup__in_lib)
		rgroup__pause_token = value;   /* < 0: paused in rgroup__unlock() */
	else
		rgroup__gov_cap_pause(value);
}

void rgroup__gov_cap_stop(void)
{
	for (int s = 0; s < CAP_SLOTS; s++) {
		__atomic_store_n(&slots[s].n, 0, __ATOMIC_RELEASE);
		if (slots[s].id)
			open_gate(s);
		slots[s].id = 0;
	}
	nused = 0;
	__atomic_store_n(&changed, 1, __ATOMIC_RELAXED);
}

void rgroup__gov_cap_fork_child(void)
{
	for (int s = 0; s < CAP_SLOTS; s++) {
		__atomic_store_n(&slots[s].n, 0, __ATOMIC_RELAXED);
		slots[s].id = 0;
		__atomic_store_n(&gate[s], 0, __ATOMIC_RELAXED);
	}
	nused = 0;
	__atomic_store_n(&changed, 1, __ATOMIC_RELAXED);
}
