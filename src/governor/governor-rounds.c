/* SPDX-License-Identifier: MIT */
/*
 * governor-rounds.c - the governor thread (governor.h; the design is there):
 * it finds the process's threads, measures what they want, asks the model
 * for their shares, and runs the rounds that hold each to its quota.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "affinity.h"
#include "backend.h"
#include "governor-faults.h"
#include "governor.h"
#include "governor-cap.h"
#include "governor-model.h"
#include "governor-signal.h"
#include "governor-state.h"
#include "locate.h"
#include "weight.h"

#define ROUND_NS       24000000L  /* a round's length, few threads */
#define SLICE_NS       6000000L   /* ... at least this per busy thread per CPU */
#define CHANGE_NS      20000L     /* per thread: a round this old restarts when
                                   * the tree changed (bounds the cost of churn) */
#define POLL_NS        2000000L   /* checks within a round */
#define SCAN_MAX       64         /* threads whose clocks every poll reads */
#define MISS_NS        20000000L  /* past its quota: it did not take the pause */
#define ACTIVE_NS      500000L    /* ran or waited this much in a round: it wants CPU */
#define WANT_MIN       0.05       /* ... or wants this much of a CPU (smoothed) */
#define SMOOTH_NS      100000000.0 /* demand, rate, intake: averaged over about this */
#define UNCONTENDED    0.95       /* demand below this part of the CPUs: no pauses */
#define WAITED         0.10       /* run queue wait per run: other load */
#define INTAKE_SLACK   1.05
#define SATISFIED      0.98       /* a share this near its demand is all of it */
#define RATE_MIN       0.05       /* weigh a group's thread by no less a rate */
#define STRETCH_MAX    8.0        /* a round lasts at most this many times longer, */
#define LIMIT_NS       400000000L /* ... or this long */
#define DEBT_ROUNDS    8          /* at most this many rounds' share owed, */
#define DEBT_MIN_NS    40000000.0 /* ... or this much */
#define PUBLISH_NS     250000000L /* the state file for the tools */

/* ---- The governor's own state (its thread only) ------------------------- */

struct gov rgroup__gov;

/* A thread the governor watches. */
struct gthread {
	pid_t tid;
	int slot;                 /* -1: none free, not governed */
	int seen;
	int group;                /* model node of its rgroup, 0: none */
	int node;                 /* its leaf in this round's model */
	clockid_t clk;
	timer_t timer;
	int has_timer;
	int wants;                /* it ran lately, or was held back */
	int paused;               /* it waits in the handler now */
	int armed;                /* has a quota this round */
	int sent;                 /* the pause signal went out this round */
	uint64_t start;           /* CPU clock at the round's start */
	uint64_t seen_ns;         /* CPU clock at the last scan */
	uint64_t quota;
	double debt;              /* ns overrun, owed */
	double demand;            /* CPUs it would use unhindered (smoothed) */
	double rate;              /* CPUs it gets while not paused (smoothed) */
	uint64_t run_last, wait_last; /* schedstat ... */
	uint64_t stat_at;         /* ... read then (CLOCK_MONOTONIC), 0: never */
};

/* An rgroup of this round (by model node), for the statistics. */
struct ggroup {
	rgroup_id_t id;
	uint64_t paused_ns;       /* its threads' paused time this round */
	uint64_t missed;          /* pauses not taken this round */
	double w, wr;             /* weigh_by_rate(): its threads' weights */
	uint64_t quota, used;     /* pooled rounds: its armed threads' quotas, use */
	double owed, share;       /* settle_round(): ... what they owe, their shares */
};

static int mvec_fit(struct mvec *v, size_t n, size_t elem)
{
	size_t cap = v->cap ? v->cap : 64;
	void *p;

	if (n <= v->cap)
		return 0;
	if (rgroup__fault_site(RGROUP__FAULT_GOV_MMAP) < 0)
		return -ENOMEM;
	while (cap < n)
		cap *= 2;
	p = v->p ? mremap(v->p, v->cap * elem, cap * elem, MREMAP_MAYMOVE)
		 : mmap(NULL, cap * elem, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	v->p = p;
	v->cap = cap;
	return 0;
}

#define T(i) (((struct gthread *)rgroup__gov.t.p)[i])
#define G(i) (((struct ggroup *)rgroup__gov.g.p)[i])
#define N(i) (((struct model_node *)rgroup__gov.nodes.p)[i])

/* ---- Threads ----------------------------------------------------------- */

static struct gthread *find(pid_t tid)
{
	size_t lo = 0, hi = rgroup__gov.nt;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (T(mid).tid == tid)
			return &T(mid);
		if (T(mid).tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int free_slot(void)
{
	static int next;

	for (int i = 0; i < MAX_SLOTS; i++) {
		int s = (next + i) % MAX_SLOTS;
		if (!rgroup__gov_slots[s].tid) {
			next = s + 1;
			return s;
		}
	}
	return -1;
}

/* A timer on the thread's CPU clock that signals that thread. */
static void make_timer(struct gthread *t)
{
	struct sigevent ev;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = rgroup__gov_sig_no;
	ev.sigev_value.sival_int = t->slot;
	ev._sigev_un._tid = rgroup__gov.tid;   /* gov_wait() passes it on */
	/* Without a timer the thread is paused by the polls alone. */
	t->has_timer = rgroup__fault_site(RGROUP__FAULT_GOV_TIMER) == 0 &&
		       timer_create(t->clk, &ev, &t->timer) == 0;
}

static void forget(struct gthread *t)
{
	if (t->has_timer)
		timer_delete(t->timer);
	t->has_timer = 0;
	if (t->slot >= 0) {
		__atomic_store_n(&rgroup__gov_slots[t->slot].word, WORD(0, S_FREE), __ATOMIC_RELEASE);
		__atomic_store_n(&rgroup__gov_slots[t->slot].tid, 0, __ATOMIC_RELAXED);
	}
	t->slot = -1;
}

/* A thread seen for the first time. */
static void init_thread(struct gthread *t, pid_t tid)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->seen = 1;
	t->clk = (clockid_t)((~(unsigned int)tid << 3) | 6); /* its CPU clock */
	t->slot = free_slot();
	if (t->slot >= 0) {
		__atomic_store_n(&rgroup__gov_slots[t->slot].tid, tid, __ATOMIC_RELAXED);
		make_timer(t);
	}
	t->start = t->seen_ns = clock_ns(t->clk);
	/* New: it wants CPU if it runs in its first round (with thousands
	 * of threads parked at birth, arming them all would cost most). */
	t->wants = 0;
}

/* Heapsort (no malloc: qsort may allocate). */
static void sift(pid_t *a, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && a[c + 1] > a[c])
			c++;
		if (a[i] >= a[c])
			return;
		pid_t x = a[i];
		a[i] = a[c];
		a[c] = x;
	}
}

static void sort_tids(pid_t *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(a, i, n);
	for (size_t k = n; k-- > 1;) {
		pid_t x = a[0];
		a[0] = a[k];
		a[k] = x;
		sift(a, 0, k);
	}
}

/*
 * The process's threads now, from /proc/self/task (getdents64, no malloc);
 * keeps what is known of threads still there. The governor and the keeper
 * are left out. New threads are collected, sorted and merged in one pass:
 * O(n log n) however many threads a process starts between two rounds.
 */
static void discover(void)
{
	static char buf[8192];
	static struct mvec fresh;
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pid_t keeper = rgroup__keeper_tid();
	size_t nfresh = 0, j = 0;
	long n;

	if (fd < 0)
		return;
	for (size_t i = 0; i < rgroup__gov.nt; i++)
		T(i).seen = 0;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct { uint64_t ino; int64_t off; unsigned short len;
				 unsigned char type; char name[]; } *de = (void *)(buf + off);
			pid_t tid = (pid_t)atoi(de->name);
			struct gthread *t;
			off += de->len;
			if (tid <= 0 || tid == rgroup__gov.tid || tid == keeper)
				continue;
			t = find(tid);
			if (t)
				t->seen = 1;
			else if (mvec_fit(&fresh, nfresh + 1, sizeof(pid_t)) == 0)
				((pid_t *)fresh.p)[nfresh++] = tid;
		}
	}
	close(fd);
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		if (!T(i).seen) {
			forget(&T(i));
			continue;
		}
		T(j++) = T(i);
	}
	rgroup__gov.nt = j;
	if (!nfresh || mvec_fit(&rgroup__gov.t, rgroup__gov.nt + nfresh, sizeof(struct gthread)) < 0)
		return;
	/* Merge from the end: the known (sorted) and the new (sorted). */
	pid_t *nw = fresh.p;
	sort_tids(nw, nfresh);
	size_t i = rgroup__gov.nt, k = nfresh, out = rgroup__gov.nt + nfresh;
	while (k > 0) {
		if (i > 0 && T(i - 1).tid > nw[k - 1])
			T(--out) = T(--i);
		else
			init_thread(&T(--out), nw[--k]);
	}
	rgroup__gov.nt += nfresh;
}

/* /proc/self/task/TID/<file> into buf (NUL-terminated); length or -1.
 * No malloc, no stdio. */
static ssize_t read_task(pid_t tid, const char *file, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Is thread tid runnable (state R)? */
static int runnable(pid_t tid)
{
	char buf[1024];
	const char *p;

	if (read_task(tid, "stat", buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')'); /* the name may hold anything, even ") R" */
	return p && p[1] == ' ' && p[2] == 'R';
}

/*
 * How much CPU the thread would use if nothing held it back: of the time
 * since its last reading in which it was neither paused nor waiting for a
 * CPU (schedstat's run queue wait), the part it ran; 1 for a busy thread
 * however crowded the CPU, 0.4 for one that sleeps 60% of the time.
 * Smoothed over SMOOTH_NS, not over rounds: a round can be one burst of a
 * thread that sleeps in between. Each thread's reading has its own time
 * stamp: a thread is read only while it wants CPU. Returns the time it
 * waited for a CPU since the last reading (ns).
 */
static double smooth(double old, double x, double span)
{
	return old + span / (span + SMOOTH_NS) * (x - old);
}

static uint64_t measure_demand(struct gthread *t, uint64_t now, uint64_t paused)
{
	char buf[128], *end;
	uint64_t run, wait, waited = 0;

	if (read_task(t->tid, "schedstat", buf, sizeof(buf)) < 0) {
		t->demand = 1; /* no schedstat: every thread that ran is busy */
		return 0;
	}
	run = strtoull(buf, &end, 10);
	wait = strtoull(end, NULL, 10);
	if (t->stat_at && now > t->stat_at + paused + POLL_NS) {
		double r = (double)(run - t->run_last), w = (double)(wait - t->wait_last);
		double avail = (double)(now - t->stat_at - paused) - w;
		double d = avail > r ? r / avail : 1, span = (double)(now - t->stat_at - paused);
		double rate = r / span;
		t->rate = t->rate > 0 ? smooth(t->rate, rate, span) : rate;
		rgroup__gov.sum_run += r;
		rgroup__gov.sum_wait += w;
		t->demand = smooth(t->demand, d, span);
	} else if (!t->stat_at) {
		t->demand = 1;
	}
	if (t->stat_at)
		waited = wait - t->wait_last;
	t->run_last = run;
	t->wait_last = wait;
	t->stat_at = now;
	return waited;
}

static void send_pause(struct gthread *t)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = rgroup__gov_sig_no;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = t->slot;
	if (rgroup__fault_site(RGROUP__FAULT_GOV_SIGQUEUE) == 0 && rgroup__gov_signal_ours() &&
	    syscall(SYS_rt_tgsigqueueinfo, getpid(), t->tid, rgroup__gov_sig_no, &si) == 0)
		t->sent = 1;
}

/* ---- Rounds ------------------------------------------------------------- */

/*
 * On several CPUs, with few threads (every poll reads their clocks), the
 * threads of a group share the group's quota: the group is paused when
 * together they have used it. With uneven load one thread of a group runs
 * faster than its sibling; with a quota each, it would sit paused while
 * the other catches up, though the group is still below its share (and,
 * on a CPU of its own, leave that CPU to other processes or idle). A
 * thread's timer is then set at its group's quota, a backstop: the polls
 * pause the group. On one CPU, or with many threads, each thread has its
 * own quota and timer, which fires at the tick even when the governor's
 * poll comes late (pooled on one CPU, over-committed was 36-60% off under
 * load, 2.5-7% with a quota each).
 */
static int pooled_member(const struct gthread *t)
{
	return rgroup__gov.pooled && t->armed && t->group > 0 && (size_t)t->group < rgroup__gov.ng;
}

/* Settle the round that ends, while its paused threads still wait: each
 * armed thread's use against its quota. What it ran beyond the quota is
 * owed (not paid for forever: at most DEBT_ROUNDS rounds' share); what it
 * left unused is not carried, as a sleeper's is not in the kernel. */
static void settle_round(void)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	rgroup__gov.sum_run = rgroup__gov.sum_wait = 0;
	for (size_t g = 1; g < rgroup__gov.ng; g++)
		G(g).owed = G(g).share = 0;
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		uint64_t c = clock_ns(t->clk), used = c > t->start ? c - t->start : 0;
		int st = t->slot < 0 ? S_FREE :
			 WORD_STATE(__atomic_exchange_n(&rgroup__gov_slots[t->slot].word, WORD(0, S_FREE),
							__ATOMIC_ACQ_REL));
		struct ggroup *g = t->group > 0 && (size_t)t->group < rgroup__gov.ng ? &G(t->group) : NULL;

		if (!t->armed)
			st = S_FREE;
		uint64_t paused = 0;
		if (st == S_PAUSED) {
			uint64_t *at = &rgroup__gov_slots[t->slot].paused_at;
			paused = now - __atomic_load_n(at, __ATOMIC_RELAXED);
			if (g)
				g->paused_ns += paused;
			__atomic_store_n(at, now, __ATOMIC_RELAXED); /* if it stays paused */
		}
		/* A thread wants CPU if it was held back, ran ACTIVE_NS, or,
		 * wanting it last round, waited that long for a CPU (on a
		 * crowded machine a busy thread may wait on a run queue for a
		 * whole round) or still wants WANT_MIN of a CPU on average (a
		 * round can fall between two bursts of a sleeper). The
		 * schedstat of one that wanted none and hardly ran is not read
		 * (with thousands of parked threads that would be most of a
		 * round's cost). */
		int active = st == S_PAUSED || used >= ACTIVE_NS;
		if (active || t->wants)
			active |= measure_demand(t, now, paused) >= ACTIVE_NS ||
				  t->demand >= WANT_MIN;
		if (!active) {
			t->demand = smooth(t->demand, 0, (double)(now - rgroup__gov.round_start));
			t->stat_at = 0;
		}
		t->paused = st == S_PAUSED;
		if (g && st == S_MISSED)
			g->missed++;
		if (t->armed) {
			double owed = t->debt + (double)used - (double)t->quota;
			/* A round that ends early because the threads with
			 * quota left sleep starts the next one, with fresh
			 * quotas, before its time: a thread that used its
			 * quota owes the part of it that was for the rest of
			 * the round, or every sleep of a thread of great
			 * weight would hand one of little weight a whole
			 * quota more. */
			if (rgroup__gov.asleep_end && st == S_PAUSED && now < rgroup__gov.round_start + rgroup__gov.round_len)
				owed += (double)t->quota * (double)(rgroup__gov.round_start + rgroup__gov.round_len - now) /
					(double)rgroup__gov.round_len;
			/* A quota below the timer's tick (4 ms) is overrun
			 * by most of a tick each round: what is owed must
			 * be able to cover that, or a thread of little
			 * weight keeps a multiple of its share. */
			double cap = DEBT_ROUNDS * N(t->node).share * (double)rgroup__gov.round_len;
			if (cap < DEBT_MIN_NS)
				cap = DEBT_MIN_NS;
			if (pooled_member(t)) {
				/* What it owes is its group's (below). */
				G(t->group).owed += owed;
				G(t->group).share += N(t->node).share;
			}
			t->debt = owed < 0 ? 0 : owed > cap ? cap : owed;
		} else {
			t->debt = 0;
		}
		t->wants = active || (t->armed && t->quota == 0);
		t->start = t->seen_ns = c;
	}
	/* In a pooled round a thread that used a sibling's unused quota owes
	 * nothing its group does not: the group's debt, by share. */
	for (size_t i = 0; rgroup__gov.pooled && i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		if (!pooled_member(t) || G(t->group).share <= 0)
			continue;
		double owed = G(t->group).owed * N(t->node).share / G(t->group).share;
		double cap = DEBT_ROUNDS * N(t->node).share * (double)rgroup__gov.round_len;
		if (cap < DEBT_MIN_NS)
			cap = DEBT_MIN_NS;
		t->debt = owed < 0 ? 0 : owed > cap ? cap : owed;
	}
	/* What the process's threads got, and whether they waited for it. */
	if (rgroup__gov.sum_run > 0) {
		double wall = (double)(now - rgroup__gov.round_start);
		double in = rgroup__gov.sum_run / wall, wt = rgroup__gov.sum_wait / rgroup__gov.sum_run;
		rgroup__gov.intake = rgroup__gov.intake > 0 ? smooth(rgroup__gov.intake, in, wall) : in;
		rgroup__gov.waited = smooth(rgroup__gov.waited, wt, wall);
	}
}

/* Groups as model nodes, parents first (pre-order), each with its ggroup;
 * their threads are marked with the group's node. The last round's paused
 * time, by the governor's shares and at the group's cap, goes into each
 * group's statistics on the way. */
static void add_groups(struct rgroup__node *list, int parent, const struct ggroup *last,
		       size_t nlast)
{
	for (struct rgroup__node *n = list; n; n = n->next) {
		if (n->quota_us) {   /* its members' time paused at its cap */
			struct rgroup__gov_node *g = rgroup__node_priv(n);

			g->throttled_ns += rgroup__gov_cap_take_paused(n->id);
		}
		for (size_t k = 1; k < nlast; k++) {
			if (last[k].id == n->id) {
				struct rgroup__gov_node *g = rgroup__node_priv(n);

				g->throttled_ns += last[k].paused_ns;
				g->unthrottled += last[k].missed;
				break;
			}
		}
		if (mvec_fit(&rgroup__gov.nodes, rgroup__gov.nnodes + 1, sizeof(struct model_node)) < 0 ||
		    mvec_fit(&rgroup__gov.g, rgroup__gov.ng + 1, sizeof(struct ggroup)) < 0)
			return;
		int me = rgroup__gov.nnodes++;
		N(me) = (struct model_node){ .parent = parent,
			.weight = rgroup__nice_to_weight(n->nice) };
		G(rgroup__gov.ng++) = (struct ggroup){ .id = n->id };
		for (struct rgroup__thread *th = n->threads; th; th = th->next) {
			struct gthread *t = find(th->tid);
			if (t)
				t->group = me;
		}
		add_groups(n->children, me, last, nlast);
	}
}

/* The tree's shape for this round. While the core lock is busy the last
 * round's shape stays (threads new since then count as plain threads);
 * 0 if there is none yet. */
static int take_tree(void)
{
	static struct mvec last;
	size_t nlast = rgroup__gov.ng;

	discover();
	if (mvec_fit(&last, rgroup__gov.ng + 1, sizeof(struct ggroup)) < 0 ||
	    mvec_fit(&rgroup__gov.nodes, 1, sizeof(struct model_node)) < 0 ||
	    mvec_fit(&rgroup__gov.g, 1, sizeof(struct ggroup)) < 0 ||
	    rgroup__trylock() != 0)
		return rgroup__gov.ngroup_nodes > 0;
	if (nlast)
		memcpy(last.p, rgroup__gov.g.p, nlast * sizeof(struct ggroup));
	for (size_t i = 0; i < rgroup__gov.nt; i++)
		T(i).group = 0;
	N(0) = (struct model_node){ .parent = -1, .weight = 1024 };
	G(0) = (struct ggroup){ 0 };
	rgroup__gov.nnodes = 1;
	rgroup__gov.ng = 1;
	add_groups(rgroup__core.top, 0, last.p, nlast);
	rgroup__unlock();
	rgroup__gov.ngroup_nodes = rgroup__gov.nnodes;
	return 1;
}

/* CPUs the threads that want CPU may run on. */
static double capacity(void)
{
	cpu_set_t all, one;

	CPU_ZERO(&all);
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		if (!T(i).wants || sched_getaffinity(T(i).tid, sizeof(one), &one) < 0)
			continue;
		CPU_OR(&all, &all, &one);
	}
	return CPU_COUNT(&all) ? CPU_COUNT(&all) : 1;
}

/*
 * On several CPUs with uneven load (other processes', or a thread of the
 * process that the model gives a CPU of its own), the busy threads of one
 * group get unequal CPU while they run: at equal quotas the one on the
 * quieter CPU would use its quota first and sit paused, a CPU it could use
 * left to others, while its sibling catches up. So the wanting threads
 * of a group share their weight among themselves in proportion to the CPU
 * each gets while not paused (RATE_MIN at least): their sum, and so the
 * group's split between its threads and its subgroups, stays the model's.
 */
static double rate_of(const struct gthread *t)
{
	return t->rate > RATE_MIN ? t->rate : RATE_MIN;
}

static void weigh_by_rate(void)
{
	for (size_t g = 1; g < rgroup__gov.ng; g++)
		G(g).w = G(g).wr = 0;
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		if (t->group > 0 && (size_t)t->group < rgroup__gov.ng && N(t->node).demand > 0) {
			G(t->group).w += N(t->node).weight;
			G(t->group).wr += N(t->node).weight * rate_of(t);
		}
	}
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		if (t->group > 0 && (size_t)t->group < rgroup__gov.ng && N(t->node).demand > 0)
			N(t->node).weight *= rate_of(t) * G(t->group).w / G(t->group).wr;
	}
}

/* Each thread's share of the process's CPUs from the model; 0 when no
 * thread wants CPU, when together they want less than the CPUs there are
 * (the kernel gives each what it wants: nothing to divide), or when there
 * is no room for the model. */
static int solve(void)
{
	int nactive = 0;
	double total = 0, cpus = rgroup__gov.nominal = capacity();

	/*
	 * On one CPU shared with other load the process's threads get less
	 * than the CPU: then the time they do get is what the model divides,
	 * or a partly sleeping thread of little weight would keep the CPU
	 * from one of great weight (the kernel treats both as equal tasks).
	 * A little more than they got, so that it can grow back. Not on
	 * several CPUs: other load is uneven across them, and pausing a
	 * thread on one does not help one that waits on another.
	 */
	if (cpus == 1 && rgroup__gov.waited > WAITED && rgroup__gov.intake > 0 && rgroup__gov.intake * INTAKE_SLACK < cpus)
		cpus = rgroup__gov.intake * INTAKE_SLACK;
	rgroup__gov.cpus = cpus;

	if (mvec_fit(&rgroup__gov.nodes, rgroup__gov.ngroup_nodes + rgroup__gov.nt, sizeof(struct model_node)) < 0)
		return 0;
	rgroup__gov.nnodes = rgroup__gov.ngroup_nodes;
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		/* The weight matters only for a thread that wants CPU. */
		int nice = t->wants ? getpriority(PRIO_PROCESS, t->tid) : 0;
		t->node = rgroup__gov.nnodes++;
		N(t->node) = (struct model_node){ .parent = t->group,
			.weight = rgroup__nice_to_weight(nice),
			.demand = t->wants && t->slot >= 0 ?
				  (t->demand > 0.05 ? t->demand : 0.05) : 0.0 };
		nactive += N(t->node).demand > 0;
		total += N(t->node).demand;
	}
	if (total <= UNCONTENDED * cpus)
		return 0;
	if (cpus > 1)
		weigh_by_rate();
	if (rgroup__model_solve(rgroup__gov.nodes.p, rgroup__gov.nnodes, cpus) < 0)
		return 0;
	return nactive;
}

/* Start a round: quotas from the shares, timers. A round in which nobody
 * wants CPU, or whose tree could not be had, arms nothing and is short
 * (longer with many threads, to bound the governor's own cost). */
static void start_round(void)
{
	int nactive = take_tree() ? solve() : 0;
	int r = __atomic_load_n(&rgroup__gov_round_word, __ATOMIC_ACQUIRE) + 1;

	rgroup__gov.round_len = (uint64_t)SLICE_NS * nactive / (rgroup__gov.nominal > 0 ? rgroup__gov.nominal : 1);
	if (rgroup__gov.round_len < ROUND_NS)
		rgroup__gov.round_len = ROUND_NS;
	if (!nactive && rgroup__gov.nt > SCAN_MAX)
		rgroup__gov.round_len = ROUND_NS * (rgroup__gov.nt / SCAN_MAX);
	rgroup__gov.narmed = 0;
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		double due = nactive ? N(t->node).share * rgroup__gov.round_len : 0;
		int was = t->armed;
		/* A thread the model gives all it wants is not held back:
		 * pausing it would only leave its CPU to other processes (or
		 * idle) while a thread of the round with quota left waits on
		 * another CPU. */
		t->armed = nactive && N(t->node).demand > 0 && due > 0 &&
			   N(t->node).share < SATISFIED * N(t->node).demand;
		t->sent = 0;
		if (!t->armed) {
			if (was && t->has_timer)
				timer_settime(t->timer, 0, &(struct itimerspec){ 0 }, NULL);
			continue;
		}
		/* The debt is paid out of this round's quota; a debt larger
		 * than the quota is paid by sitting the round out. */
		t->quota = t->debt >= due ? 0 : (uint64_t)(due - t->debt);
		t->debt = t->quota ? 0 : t->debt - due;
		rgroup__gov.narmed++;
	}
	/*
	 * Arm round r before opening the gate, so that no thread runs on
	 * with the last round's settings while the governor, perhaps on a
	 * busy CPU, arms it. A thread that sits the round out and is paused
	 * now stays paused (its `until` moves on to r + 1); one that is
	 * running is told with the signal once the round has begun.
	 */
	int npaused = 0;
	rgroup__gov.pooled = rgroup__gov.nt <= SCAN_MAX && rgroup__gov.nominal > 1;
	for (size_t g = 1; g < rgroup__gov.ng; g++)
		G(g).quota = 0;
	for (size_t i = 0; i < rgroup__gov.nt; i++)
		if (pooled_member(&T(i)))
			G(T(i).group).quota += T(i).quota;
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		struct gov_slot *sl;
		if (t->slot < 0)
			continue;
		sl = &rgroup__gov_slots[t->slot];
		if (!t->armed)
			continue;
		__atomic_store_n(&sl->expire, t->start + (pooled_member(t) && t->quota ?
			G(t->group).quota : t->quota), __ATOMIC_RELAXED);
		if (!t->quota && t->paused) {
			__atomic_store_n(&sl->until, r + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&sl->word, WORD(r, S_PAUSED), __ATOMIC_RELEASE);
			npaused++;
			continue;
		}
		__atomic_store_n(&sl->word, WORD(r, S_RUN), __ATOMIC_RELEASE);
		if (t->quota && t->has_timer) {
			struct itimerspec its = { .it_value = {
				(time_t)(sl->expire / 1000000000u), (long)(sl->expire % 1000000000u) } };
			timer_settime(t->timer, TIMER_ABSTIME, &its, NULL);
		}
	}
	__atomic_store_n(&rgroup__gov_running, rgroup__gov.narmed - npaused, __ATOMIC_RELEASE);
	__atomic_store_n(&rgroup__gov_round_word, r, __ATOMIC_RELEASE);
	futex_wake(&rgroup__gov_round_word, INT32_MAX);
	for (size_t i = 0; i < rgroup__gov.nt; i++)
		if (T(i).armed && !T(i).quota && !T(i).paused)
			send_pause(&T(i));
	rgroup__gov.round_start = rgroup__gov.poll_last = clock_ns(CLOCK_MONOTONIC);
	rgroup__gov.proc_last = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	rgroup__gov.asleep_end = 0;
}

/* The state file for `rgroup tree` and `rgroup top`, every PUBLISH_NS. */
static void publish(void)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (now - rgroup__gov.published >= PUBLISH_NS && rgroup__publish("governor") != -EBUSY)
		rgroup__gov.published = now;
}

static int still_running(const struct gthread *t)
{
	return t->armed && WORD_STATE(__atomic_load_n(&rgroup__gov_slots[t->slot].word, __ATOMIC_ACQUIRE)) == S_RUN;
}

/* Every armed thread still running is asleep: the round cannot go on. */
static int all_asleep(void)
{
	for (size_t i = 0; i < rgroup__gov.nt; i++)
		if (still_running(&T(i)) && runnable(T(i).tid))
			return 0;
	return 1;
}

/* Read the clocks of the armed threads still running: pause those past
 * their quota that the timer has not stopped yet (it fires at the kernel's
 * tick, the poll is finer), give up on those that do not take the pause.
 * Returns the CPU time they used since the last scan. */
static uint64_t scan(void)
{
	uint64_t sum = 0;

	for (size_t g = 1; g < rgroup__gov.ng; g++)
		G(g).used = 0;
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		if (still_running(t)) {
			uint64_t c = clock_ns(t->clk);
			sum += c > t->seen_ns ? c - t->seen_ns : 0;
			t->seen_ns = c;
		}
		if (pooled_member(t))
			G(t->group).used += t->seen_ns > t->start ? t->seen_ns - t->start : 0;
	}
	for (size_t i = 0; i < rgroup__gov.nt; i++) {
		struct gthread *t = &T(i);
		if (!still_running(t))
			continue;
		struct gov_slot *sl = &rgroup__gov_slots[t->slot];
		uint64_t c = t->seen_ns;
		if (pooled_member(t)) {
			if (G(t->group).used < G(t->group).quota)
				continue;
			/* The group's quota is used: its handler must see its
			 * own quota as used too. */
			if (c < __atomic_load_n(&sl->expire, __ATOMIC_RELAXED))
				__atomic_store_n(&sl->expire, c, __ATOMIC_RELAXED);
		} else if (c < sl->expire) {
			continue;
		}
		if (!t->sent) {
			send_pause(t);
		} else if (c >= sl->expire + MISS_NS) {
			uint32_t w = __atomic_load_n(&sl->word, __ATOMIC_ACQUIRE);
			if (WORD_STATE(w) == S_RUN &&
			    __atomic_compare_exchange_n(&sl->word, &w, (w & ~3u) | S_MISSED, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				__atomic_sub_fetch(&rgroup__gov_running, 1, __ATOMIC_ACQ_REL);
		}
	}
	return sum;
}

/*
 * How long a round may last in wall time: four round lengths, longer by
 * how much less than their CPUs the threads get (the quotas add up to the
 * CPUs; on a machine with other load a round takes longer, and one cut
 * short before the threads with the greater shares have used them gives
 * everyone the same, as the kernel would), up to STRETCH_MAX times, but
 * not beyond LIMIT_NS if four lengths are less: a group that has used its
 * quota waits no longer than that for the others.
 */
static uint64_t round_limit(void)
{
	double f = rgroup__gov.intake > 0 ? rgroup__gov.nominal / rgroup__gov.intake : 1;
	uint64_t limit = 4 * rgroup__gov.round_len;

	if (!rgroup__gov.narmed)
		return rgroup__gov.round_len;
	if (f > 1)
		limit = (uint64_t)((double)limit * (f < STRETCH_MAX ? f : STRETCH_MAX));
	return limit > LIMIT_NS && limit > 4 * rgroup__gov.round_len ?
		(LIMIT_NS > 4 * rgroup__gov.round_len ? LIMIT_NS : 4 * rgroup__gov.round_len) : limit;
}

/* A poll within the round: 1 if the round is over. */
static int poll_round(void)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), since = now - rgroup__gov.poll_last;
	uint64_t used;

	rgroup__gov.poll_last = now;
	rgroup__gov.polls++;
	if (__atomic_load_n(&rgroup__gov.changed, __ATOMIC_ACQUIRE) &&
	    now - rgroup__gov.round_start >= CHANGE_NS * rgroup__gov.nt) {
		__atomic_store_n(&rgroup__gov.changed, 0, __ATOMIC_RELEASE);
		return 1;
	}
	if (now - rgroup__gov.round_start > round_limit())
		return 1;
	if (rgroup__gov.narmed == 0)
		return 0;
	if (__atomic_load_n(&rgroup__gov_running, __ATOMIC_ACQUIRE) <= 0)
		return 1;
	if (rgroup__gov.nt <= SCAN_MAX) {
		used = scan();
	} else {
		/* Many threads: the process's clock stands for theirs, and
		 * their clocks are read (to catch late pauses) every 8th poll. */
		uint64_t proc = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		used = proc > rgroup__gov.proc_last ? proc - rgroup__gov.proc_last : 0;
		rgroup__gov.proc_last = proc;
		if (rgroup__gov.polls % 8 == 0)
			scan();
	}
	if (__atomic_load_n(&rgroup__gov_running, __ATOMIC_ACQUIRE) <= 0)
		return 1;
	/* The threads that still have quota barely ran: are they all asleep? */
	if (used < since / 10 && all_asleep()) {
		rgroup__gov.asleep_end = 1;
		return 1;
	}
	return 0;
}

/* A governed thread's timer fired: its quota is used up. */
static void timer_fired(int s)
{
	struct gthread *t;

	if (s < 0 || s >= MAX_SLOTS)
		return;
	t = find(__atomic_load_n(&rgroup__gov_slots[s].tid, __ATOMIC_RELAXED));
	if (t && t->slot == s && still_running(t) && !t->sent)
		send_pause(t);
}

/* Wait up to ns for a timer or a wake-up, and pass the timers on. */
static void gov_wait(long ns)
{
	struct timespec ts = { 0, ns }, zero = { 0, 0 };
	siginfo_t si;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, rgroup__gov_sig_no);
	for (int k = 0; k < 64 && sigtimedwait(&set, &si, k ? &zero : &ts) > 0; k++)
		if (si.si_code == SI_TIMER)
			timer_fired(si.si_value.sival_int);
}

/* Enforce nothing: no timer fires again, no thread stays paused (the cap's
 * neither), and the next round starts afresh. */
static void let_go(void)
{
	rgroup__gov_cap_stop();
	for (size_t i = 0; i < rgroup__gov.nt; i++)
		forget(&T(i));
	for (int i = 0; i < MAX_SLOTS; i++)
		__atomic_store_n(&rgroup__gov_slots[i].until, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&rgroup__gov_running, 0, __ATOMIC_RELEASE);
	__atomic_add_fetch(&rgroup__gov_round_word, 1, __ATOMIC_ACQ_REL);
	futex_wake(&rgroup__gov_round_word, INT32_MAX);
	rgroup__gov.nt = 0;
	rgroup__gov.ng = 0;
	rgroup__gov.ngroup_nodes = 0;
	rgroup__gov.narmed = 0;
}

void *rgroup__gov_main(void *arg)
{
	int enforcing = 1;

	rgroup__gov.tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&rgroup__gov_tid, rgroup__gov.tid, __ATOMIC_RELEASE);
	pthread_setname_np(pthread_self(), "rgroup-governor");
	start_round();
	while (__atomic_load_n(&rgroup__gov.state, __ATOMIC_ACQUIRE) == G_RUNNING) {
		if (__atomic_load_n(&rgroup__gov_running, __ATOMIC_ACQUIRE) > 0 || !rgroup__gov.narmed)
			gov_wait(!enforcing ? POLL_NS * 8 : rgroup__gov.nt > SCAN_MAX ? POLL_NS * 4 : POLL_NS);
		/* The program's handler has the signal: let go until it gives
		 * the signal back (see the top of this file). */
		if (!rgroup__gov_signal_ours()) {
			if (enforcing)
				let_go();
			if (__atomic_load_n(&rgroup__gov_taken, __ATOMIC_ACQUIRE))
				rgroup__gov_say_taken(rgroup__gov_sig_no);
			enforcing = 0;
			publish();
			continue;
		}
		if (!enforcing) {
			enforcing = 1;
			start_round();
		} else if (poll_round()) {
			settle_round();
			start_round();
		}
		rgroup__gov_cap_poll(rgroup__gov_send_value);
		publish();
	}
	/* Stopping: no timer fires again, no thread stays paused, no state
	 * file stays. */
	rgroup__publish_remove();
	let_go();
	__atomic_store_n(&rgroup__gov_tid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&rgroup__gov.state, G_NONE, __ATOMIC_RELEASE);
	futex_wake(&rgroup__gov.state, INT32_MAX);
	return NULL;
}

