/* SPDX-License-Identifier: MIT */
/*
 * backend-governor.c - rgroups for a process that can write no cgroup: a
 * governor thread inside the process divides the process's CPU time among
 * its threads by the rgroup tree.
 *
 * Every period the governor takes the tree (under the core lock), measures
 * each thread (CPU clock; runnable time from /proc/self/task/TID/schedstat
 * for threads that ran) and asks the reference model (model.c) for each
 * entity's ideal share: plain threads of the process at their nice weight,
 * each rgroup at its PRIO_RGRP weight, nested groups inside their parent's
 * share. A thread's demand is the CPU it would use if it never waited,
 * run / (period - wait) (1 if it was paused), so idle groups give their
 * share away (the CPU is not left idle). The model divides the process's allowed CPUs; what the
 * process really obtains depends on the rest of the machine, so budgets are
 * used as proportions, not as amounts: at each check within the period
 * (every 2 ms with few threads), among the entities under one parent that
 * had a demand, one whose progress (used and owed, over its fair share) is
 * ahead of the slowest by more than a margin has its threads paused until
 * the others catch up, at the latest until the next period; what it used
 * beyond its share is owed into the next periods (at most two periods'
 * worth). Pausing is one real-time signal
 * (SIGRTMIN+7, or RGROUP_GOVERNOR_SIGNAL=N for SIGRTMIN+N), sent with
 * rt_tgsigqueueinfo() so that the handler finds its gate (a futex word) in
 * si_value without a lookup. The handler:
 *   - never waits while its thread is in the library's lock (it leaves a
 *     token; the thread pauses when it leaves the lock);
 *   - is installed with SA_RESTART, so interrupted calls restart where the
 *     kernel allows (read, write, ...; nanosleep and some others return
 *     EINTR as with any handler);
 *   - preserves errno.
 * A thread that blocks the signal is not paused (counted in `missed`), and
 * never hangs: every gate opens at the end of its period.
 *
 * Status: experimental. It is used only when RGROUP_BACKEND=governor asks
 * for it, never chosen automatically: on a loaded machine, where a thread
 * runs only now and then, it does not yet hold groups to their shares (see
 * issue notes and docs/BENCHMARKS.md); the rules other than 4 hold.
 *
 * Limits: rule 4 across processes (an rgroup competing as one entity against
 * other processes) needs the kernel; only threads the library knows (made
 * by rgroup_thread_create, or that called the library) belong to rgroups,
 * other threads count as plain threads of the process.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "model-lib.h"

#define PERIOD_NS      20000000L  /* 20 ms; longer with many threads */
#define SUBTICKS_FINE  10         /* checks per period, few threads */
#define SUBTICKS       4          /* ... many threads */
#define MARGIN         0.05       /* progress lead that pauses an entity */
#define DEBT_PERIODS   10         /* at most this many periods' share owed */
#define MAX_ENT        MODEL_MAX_NODES
#define MAX_GATES      8192
#define DEFAULT_SIGNAL 7          /* SIGRTMIN + 7 */

/* One gate per governed thread: 1 while it must stay paused. */
static int gates[MAX_GATES];

/* An entity of this period: the process (0), an rgroup or a thread. */
struct ent {
	int parent;                /* index; -1 for the process */
	int node_id;               /* rgroup id (groups), 0 otherwise */
	double weight;
	double budget_ns;          /* this period, debt taken off */
	double fair_ns;            /* this period, before the debt */
	double debt_ns;            /* owed from earlier periods */
	uint64_t used_ns;          /* this period, its subtree */
	uint64_t used_tick;        /* in the last check interval */
	int paused;
	int runnable;              /* had a demand this period, or is paused */
	int capped;                /* its share covers all it wants: it does
	                            * not compete for more */
	uint64_t paused_ns;        /* its threads' paused time, this period */
};

/* A thread the governor watches. */
struct gthread {
	pid_t tid;
	int ent;                   /* its entity (a leaf) */
	int gate;
	clockid_t clk;
	uint64_t clk_last;         /* CPU clock at the last look */
	uint64_t run_last, wait_last; /* schedstat at the period start */
	double demand;             /* CPUs it would use, for the model */
	int wanted;                /* it was paused: it wanted CPU */
	uint64_t period_used;      /* CPU ns in the period that ended */
	double debt_ns;            /* as a plain thread: owed from earlier */
	int paused;
	uint64_t paused_at;
	int seen;
};

static struct gov {
	pthread_t thread;
	int alive, stop;           /* under the core lock */
	int contended;             /* this period: demand exceeds capacity */
	pid_t gov_tid;
	int sig;
	int handler_ok;
	unsigned int ngroups;
	double cpus;               /* allowed CPUs */
	double capacity;           /* CPUs to divide this period */
	struct gthread *t;
	size_t nt, capt;
	struct ent e[MAX_ENT];
	int ne;
	uint64_t missed;           /* pauses a thread did not take */
	double period_len;         /* ns, of the running period */
	struct { int id; double ns; } debt[1024]; /* groups' debts */
	int ndebt;
	uint64_t rounds;
} gov = { .sig = -1 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static uint64_t thread_clock(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* ---- Pausing ---------------------------------------------------------- */

static void wait_gate(int gate)
{
	while (__atomic_load_n(&gates[gate], __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &gates[gate], FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno, gate = si->si_value.sival_int;

	if (si->si_code != SI_QUEUE || si->si_pid != getpid() || gate < 0 || gate >= MAX_GATES)
		return;
	if (rgroup__in_lib)
		rgroup__pause_token = gate + 1; /* paused in core_unlock() */
	else
		wait_gate(gate);
	errno = saved;
}

static void gov_deferred(void *priv, int token)
{
	wait_gate(token - 1);
}

static void open_gate(int gate)
{
	if (__atomic_exchange_n(&gates[gate], 0, __ATOMIC_ACQ_REL))
		syscall(SYS_futex, &gates[gate], FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void pause_thread(struct gthread *t)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = gov.sig;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = t->gate;
	__atomic_store_n(&gates[t->gate], 1, __ATOMIC_RELEASE);
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), t->tid, gov.sig, &si) < 0) {
		__atomic_store_n(&gates[t->gate], 0, __ATOMIC_RELEASE);
		return;
	}
	t->paused = 1;
	t->paused_at = now_ns();
}

/* ---- Threads ---------------------------------------------------------- */

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = ((const struct gthread *)a)->tid, y = ((const struct gthread *)b)->tid;
	return (x > y) - (x < y);
}

static struct gthread *find(pid_t tid)
{
	struct gthread key = { .tid = tid };

	if (!gov.nt)
		return NULL;
	return bsearch(&key, gov.t, gov.nt, sizeof(key), cmp_tid);
}

static int free_gate(void)
{
	static int next;

	for (int i = 0; i < MAX_GATES; i++) {
		int g = (next + i) % MAX_GATES, used = 0;
		for (size_t k = 0; k < gov.nt && !used; k++)
			used = gov.t[k].gate == g;
		if (!used) {
			next = g + 1;
			return g;
		}
	}
	return -1;
}

/* The process's threads now, from /proc/self/task; keeps what is known of
 * threads still there. The governor and the keeper are left out. */
static void discover(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	pid_t keeper = rgroup__keeper_tid();

	if (!d)
		return;
	for (size_t i = 0; i < gov.nt; i++)
		gov.t[i].seen = 0;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		struct gthread *t;
		if (tid <= 0 || tid == gov.gov_tid || tid == keeper)
			continue;
		t = find(tid);
		if (t) {
			t->seen = 1;
			continue;
		}
		if (gov.nt == gov.capt) {
			size_t cap = gov.capt ? gov.capt * 2 : 64;
			struct gthread *n = realloc(gov.t, cap * sizeof(*n));
			if (!n)
				break;
			gov.t = n;
			gov.capt = cap;
		}
		t = &gov.t[gov.nt];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		t->seen = 2; /* new: sorted in below */
		t->gate = -1;
		t->clk = (clockid_t)((~(unsigned int)tid << 3) | 6);
		t->clk_last = thread_clock(t->clk);
		gov.nt++;
		qsort(gov.t, gov.nt, sizeof(*gov.t), cmp_tid);
	}
	closedir(d);
	/* Drop threads that are gone; their gates are open. */
	size_t j = 0;
	for (size_t i = 0; i < gov.nt; i++) {
		if (!gov.t[i].seen)
			continue;
		if (gov.t[i].gate < 0)
			gov.t[i].gate = free_gate();
		gov.t[j++] = gov.t[i];
	}
	gov.nt = j;
}

/* run and wait (runqueue) nanoseconds of a thread, from schedstat. */
static int schedstat(pid_t tid, uint64_t *run, uint64_t *wait)
{
	char path[64], buf[128];
	unsigned long long r, w;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	if (rgroup__read_path(path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu %llu", &r, &w) != 2)
		return -1;
	*run = r;
	*wait = w;
	return 0;
}

/* ---- The period -------------------------------------------------------- */

static int add_ent(int parent, int node_id, double weight)
{
	if (gov.ne == MAX_ENT)
		return -1;
	gov.e[gov.ne] = (struct ent){ .parent = parent, .node_id = node_id, .weight = weight };
	return gov.ne++;
}

/* Groups as entities, parents first (pre-order). */
static void add_groups(struct rgroup__node *list, int parent)
{
	for (struct rgroup__node *n = list; n; n = n->next) {
		int e = add_ent(parent, (int)n->id, rgroup__nice_to_weight(n->nice));
		if (e < 0)
			return;
		for (struct rgroup__thread *th = n->threads; th; th = th->next) {
			struct gthread *t = find(th->tid);
			if (t)
				t->ent = -e - 2; /* mark: thread of group entity e */
		}
		add_groups(n->children, e);
	}
}

static int ent_of_group(int id)
{
	for (int i = 1; i < gov.ne; i++)
		if (gov.e[i].node_id == id)
			return i;
	return -1;
}

/* Put the paused time of the last period into the groups' statistics. */
static void account_paused(struct rgroup__node *list, const uint64_t *paused)
{
	for (struct rgroup__node *n = list; n; n = n->next) {
		int e = ent_of_group((int)n->id);
		if (e >= 0)
			n->throttled_ns += paused[e];
		account_paused(n->children, paused);
	}
}

/* Start a period: open every gate, account, rebuild the entities and
 * their budgets. Returns the period's length. */
static uint64_t start_period(uint64_t last_len)
{
	static uint64_t paused[MAX_ENT];
	struct model m;
	uint64_t t_now = now_ns(), period;
	int leaf_of_thread[MAX_ENT];

	memset(paused, 0, sizeof(paused));
	for (int e = 0; e < gov.ne; e++)
		paused[e] = gov.e[e].paused_ns;
	for (size_t i = 0; i < gov.nt; i++) {
		struct gthread *t = &gov.t[i];
		if (t->paused) {
			uint64_t c = thread_clock(t->clk);
			/* It ran while it should have waited: the signal is
			 * blocked, or the thread was in a long system call. */
			if (c > t->clk_last + 1000000)
				gov.missed++;
			int e = t->ent;
			while (e > 0) {
				paused[e] += t_now - t->paused_at;
				e = gov.e[e].parent;
			}
			open_gate(t->gate);
			t->paused = 0;
			t->wanted = 1;
		}
	}
	/*
	 * Debt: a pause comes at the next check only, so an entity can run
	 * past its proportion by up to a kernel time slice. What it used
	 * beyond its fair share of what the process obtained is owed: taken
	 * off its next budgets, so the long-run average converges on the
	 * model's split. Under-use is not carried: that CPU went to others.
	 */
	gov.ndebt = 0;
	for (int e = 1; e < gov.ne; e++) {
		int p = gov.e[e].parent;
		double scale = gov.e[p].fair_ns > 0 ? gov.e[p].used_ns / gov.e[p].fair_ns : 0;
		double d = gov.e[e].debt_ns + gov.e[e].used_ns - gov.e[e].fair_ns * scale;
		if (!gov.contended || d < 0)
			d = 0;
		if (d > DEBT_PERIODS * gov.e[e].fair_ns)
			d = DEBT_PERIODS * gov.e[e].fair_ns; /* not paid for forever */
		if (gov.e[e].node_id && gov.ndebt < 1024) {
			gov.debt[gov.ndebt].id = gov.e[e].node_id;
			gov.debt[gov.ndebt++].ns = d;
		}
		gov.e[e].debt_ns = d;
	}
	for (size_t i = 0; i < gov.nt; i++) {
		struct gthread *t = &gov.t[i];
		t->debt_ns = t->ent > 0 && t->ent < gov.ne && !gov.e[t->ent].node_id ?
			     gov.e[t->ent].debt_ns : 0;
	}

	rgroup__lock();
	account_paused(rgroup__tree(), paused);
	discover();
	for (size_t i = 0; i < gov.nt; i++)
		gov.t[i].ent = 0;
	gov.ne = 0;
	add_ent(-1, 0, 1024);
	add_groups(rgroup__tree(), 0);
	rgroup__unlock();

	/* Threads as leaves under their group (or the process). */
	for (size_t i = 0; i < gov.nt; i++) {
		struct gthread *t = &gov.t[i];
		int parent = t->ent < -1 ? -t->ent - 2 : 0;
		int nice = getpriority(PRIO_PROCESS, t->tid);
		/* Beyond the model's size a thread is not governed (-1). */
		t->ent = add_ent(parent, 0, rgroup__nice_to_weight(nice));
	}

	/* Demand: the CPU a thread would have used had it not waited (from
	 * schedstat); 1 if it was paused or is new. */
	model_init(&m);
	for (int e = 0; e < gov.ne; e++)
		leaf_of_thread[e] = -1;
	for (size_t i = 0; i < gov.nt; i++) {
		struct gthread *t = &gov.t[i];
		uint64_t run, wait, c = thread_clock(t->clk);
		double d = 0;
		if (t->wanted || !t->run_last) {
			d = 1;
			if (schedstat(t->tid, &run, &wait) == 0) {
				t->run_last = run;
				t->wait_last = wait;
			}
		} else if (t->period_used && schedstat(t->tid, &run, &wait) == 0) {
			/* What it would use if it never waited for the CPU:
			 * run / (run + sleep) = run / (period - wait). 1 for
			 * a busy thread; small for one that mostly sleeps,
			 * however long a crowded CPU keeps it waiting. */
			double r = (double)(run - t->run_last), w = (double)(wait - t->wait_last);
			if (last_len)
				d = last_len - w > r ? r / (last_len - w) : 1;
			t->run_last = run;
			t->wait_last = wait;
		}
		t->wanted = 0;
		t->period_used = 0;
		t->clk_last = c;
		t->demand = d > 1 ? 1 : d;
		if (t->ent > 0 && t->ent < gov.ne && gov.e[t->ent].node_id == 0)
			leaf_of_thread[t->ent] = (int)i;
	}
	double total_demand = 0;
	for (int e = 0; e < gov.ne; e++) {
		int i = leaf_of_thread[e];
		double demand = i >= 0 ? gov.t[i].demand : 0;
		total_demand += demand;
		model_add(&m, gov.e[e].parent, gov.e[e].weight, demand);
	}

	gov.capacity = gov.cpus;
	model_run(&m, gov.capacity);
	gov.contended = total_demand > gov.capacity + 0.05;

	period = PERIOD_NS;
	if (gov.nt > 100)
		period = PERIOD_NS * (gov.nt / 100); /* bound the overhead */
	for (int e = 0; e < gov.ne; e++) {
		gov.e[e].fair_ns = m.nodes[e].share * period;
		gov.e[e].capped = m.nodes[e].share >= m.nodes[e].total_demand * 0.999;
		gov.e[e].debt_ns = 0;
		for (int k = 0; gov.e[e].node_id && k < gov.ndebt; k++)
			if (gov.debt[k].id == gov.e[e].node_id)
				gov.e[e].debt_ns = gov.debt[k].ns;
		gov.e[e].budget_ns = gov.e[e].fair_ns;
		gov.e[e].used_ns = 0;
		gov.e[e].paused = 0;
		gov.e[e].paused_ns = 0;
	}
	for (size_t i = 0; i < gov.nt; i++)
		if (gov.t[i].ent > 0 && gov.t[i].ent < gov.ne)
			gov.e[gov.t[i].ent].debt_ns = gov.t[i].debt_ns;
	for (int e = 1; e < gov.ne; e++)
		gov.e[e].budget_ns = gov.e[e].fair_ns - gov.e[e].debt_ns;
	return period;
}

/* A quarter period: add up usage; pause entities over budget. */
/* Progress of entity e in this period: what it used (and owes) over its
 * fair share. Only for entities with a fair share. */
static double progress(int e)
{
	return (gov.e[e].used_ns + gov.e[e].debt_ns) / gov.e[e].fair_ns;
}

/*
 * A check within the period: add up usage; then, parent by parent, pause a
 * runnable entity that is ahead of its slowest runnable sibling, and let
 * one that is no longer ahead run again. Only while the process is
 * contended: with fewer runnable threads than CPUs there is nobody to give
 * the time to, and nothing is paused.
 */
static void subtick(void)
{
	static double slowest[MAX_ENT];

	for (int e = 0; e < gov.ne; e++)
		gov.e[e].used_tick = 0;
	for (size_t i = 0; i < gov.nt; i++) {
		struct gthread *t = &gov.t[i];
		uint64_t c = thread_clock(t->clk);
		uint64_t d = c > t->clk_last ? c - t->clk_last : 0;
		t->clk_last = c;
		t->period_used += d;
		for (int e = t->ent; e >= 0; e = gov.e[e].parent) {
			gov.e[e].used_ns += d;
			gov.e[e].used_tick += d;
		}
	}
	/* Runnable: it had a demand when the period began (its fair share is
	 * not zero). Whether it ran since the last check says little: on a
	 * busy CPU the kernel gives each thread a slice now and then. An entity
	 * that falls asleep mid-period holds its siblings back at most until
	 * the period ends, when its demand is measured again. */
	for (int e = 0; e < gov.ne; e++) {
		gov.e[e].runnable = gov.e[e].fair_ns > 0 || gov.e[e].paused;
		slowest[e] = 1e18;
	}
	/* A paused group counts as runnable for its parent. */
	for (int e = gov.ne - 1; e > 0; e--)
		if (gov.e[e].runnable && gov.e[gov.e[e].parent].paused)
			gov.e[gov.e[e].parent].runnable = 1;
	/* The pace is set by the siblings that want more than they get: one
	 * whose share covers its whole demand (a thread that mostly sleeps)
	 * is not held back and holds nobody back. */
	for (int e = 1; e < gov.ne; e++) {
		int p = gov.e[e].parent;
		if (gov.e[e].runnable && !gov.e[e].capped && gov.e[e].fair_ns > 0 &&
		    progress(e) < slowest[p])
			slowest[p] = progress(e);
	}
	for (int e = 1; e < gov.ne; e++) {
		int p = gov.e[e].parent;
		int ahead = gov.contended && gov.e[e].runnable && !gov.e[e].capped &&
			    slowest[p] < 1e17 && progress(e) > slowest[p] + MARGIN;
		gov.e[e].paused = ahead || (p > 0 && gov.e[p].paused);
	}
	for (size_t i = 0; i < gov.nt; i++) {
		struct gthread *t = &gov.t[i];
		if (t->ent <= 0 || t->gate < 0)
			continue;
		if (gov.e[t->ent].paused && !t->paused) {
			pause_thread(t);
		} else if (!gov.e[t->ent].paused && t->paused) {
			uint64_t now = now_ns();
			for (int e = t->ent; e > 0; e = gov.e[e].parent)
				gov.e[e].paused_ns += now - t->paused_at;
			open_gate(t->gate);
			t->paused = 0;
			t->wanted = 1;
		}
	}
}

static void *gov_main(void *arg)
{
	uint64_t last_len = 0;

	gov.gov_tid = (pid_t)syscall(SYS_gettid);
	for (;;) {
		rgroup__lock();
		if (gov.stop) {
			gov.alive = 0;
			rgroup__unlock();
			break;
		}
		rgroup__unlock();
		uint64_t period = start_period(last_len);
		uint64_t t0 = now_ns();
		int ticks = gov.nt <= 64 ? SUBTICKS_FINE : SUBTICKS;
		gov.rounds++;
		for (int k = 0; k < ticks; k++) {
			struct timespec ts = { 0, (long)(period / ticks) };
			nanosleep(&ts, NULL);
			subtick();
		}
		last_len = now_ns() - t0;
	}
	for (size_t i = 0; i < gov.nt; i++) {
		if (gov.t[i].gate >= 0)
			open_gate(gov.t[i].gate);
		gov.t[i].paused = 0;
	}
	return NULL;
}

/* ---- The backend ------------------------------------------------------- */

static int gov_probe(void *priv, char *why, size_t len)
{
	return 0;
}

static int install_handler(void)
{
	struct sigaction sa, old;
	const char *env = secure_getenv("RGROUP_GOVERNOR_SIGNAL");
	int n = env && *env ? atoi(env) : DEFAULT_SIGNAL;

	if (gov.handler_ok)
		return 0;
	if (n < 0 || SIGRTMIN + n > SIGRTMAX)
		return -EINVAL;
	gov.sig = SIGRTMIN + n;
	if (sigaction(gov.sig, NULL, &old) < 0)
		return -errno;
	if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
		return -EBUSY; /* the application uses it: choose another */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(gov.sig, &sa, NULL) < 0)
		return -errno;
	gov.handler_ok = 1;
	return 0;
}

static int gov_attach(void *priv)
{
	cpu_set_t set;

	gov.cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
	return install_handler();
}

/* Core lock held. The governor takes the lock too, so it is not joined:
 * it sees `stop` at its next period and ends, opening every gate. */
static void gov_stop(void)
{
	gov.stop = 1;
}

static void gov_detach(void *priv)
{
	gov_stop();
}

static int gov_moved(void *priv)
{
	return 0;
}

static int start_governor(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	gov.stop = 0;
	if (gov.alive)
		return 0; /* still running (perhaps told to stop): carry on */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&gov.thread, &attr, gov_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r)
		return -r;
	gov.alive = 1;
	return 0;
}

static int gov_create(void *priv, struct rgroup__node *n)
{
	int r = start_governor();

	if (r < 0)
		return r;
	n->bound = 1;
	gov.ngroups++;
	return 0;
}

static int gov_place(void *priv, struct rgroup__node *n, pid_t tid)
{
	return 0; /* the core tracks members; the governor reads the tree */
}

static int gov_set_nice(void *priv, struct rgroup__node *n, int nice)
{
	return 0; /* read from n->nice at the next period (20 ms) */
}

static int gov_destroy(void *priv, struct rgroup__node *n)
{
	if (n->bound) {
		n->bound = 0;
		if (--gov.ngroups == 0)
			gov_stop();
	}
	return 0;
}

static int gov_evacuate(void *priv, const struct rgroup__node *n)
{
	return 0;
}

static int gov_usage(void *priv, const struct rgroup__node *n, uint64_t *ns)
{
	return -ENOTSUP; /* the core adds up the threads' CPU clocks */
}

static int gov_group_of(void *priv, pid_t tid, char *name, size_t len)
{
	return 0; /* no kernel view: only tracked threads are in rgroups */
}

static void gov_fork_child(void *priv)
{
	/* The child has no governor thread; its state starts afresh. */
	memset(gates, 0, sizeof(gates));
	gov.alive = 0;
	gov.stop = 0;
	gov.ngroups = 0;
	gov.nt = 0; /* the array is kept for reuse: no allocator in a fork child */
	gov.ne = 0;
}

static int gov_place_self(void *priv, const struct rgroup__node *n)
{
	return 0;
}

const struct rgroup__backend rgroup__backend_governor = {
	.name = "governor",
	.priv = &gov,
	.probe = gov_probe,
	.attach = gov_attach,
	.detach = gov_detach,
	.moved = gov_moved,
	.create = gov_create,
	.place = gov_place,
	.set_nice = gov_set_nice,
	.destroy = gov_destroy,
	.evacuate = gov_evacuate,
	.usage = gov_usage,
	.group_of = gov_group_of,
	.deferred = gov_deferred,
	.fork_child = gov_fork_child,
	.place_self = gov_place_self,
};
