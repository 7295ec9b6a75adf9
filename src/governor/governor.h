/* SPDX-License-Identifier: MIT */
/*
 * governor.h - what the governor's parts share. The governor gives rgroups
 * to a process that can write no cgroup: a thread inside the process
 * divides the process's CPU time among its threads by the rgroup tree.
 *
 *   backend-governor.c  the backend's operations (backend.h), starting and
 *                       stopping the governor thread
 *   governor-rounds.c   the governor thread: the process's threads, their
 *                       demand, the rounds and the quotas
 *   governor-signal.c   the signal that pauses a thread: its handler, what
 *                       the handler shares with the rounds, its disposition
 *   governor-cap.c      rule 10's cap (its own periods)
 *   governor-state.c    the state file the tools read
 *   governor-publish.c  writing it
 *   governor-sigaction.c  the shared library's sigaction() and signal()
 *   governor-model.c    the reference model's solver
 *
 * Rounds. The governor works in rounds, like CFS bandwidth control, but
 * counted in CPU time, not wall time. At the start of a round it takes the
 * tree (under the core lock), sees which threads want CPU (those that ran,
 * waited for a CPU or were paused in the last round, or still want 5% of a
 * CPU on average) and how much (schedstat, averaged over 100 ms), and asks
 * the reference model (model.c) for each thread's share: plain threads of
 * the process at their nice weight, each rgroup at its PRIO_RGRP weight,
 * nested groups inside their parent's share. On one CPU shared with other
 * load the model divides what the threads got, not the whole CPU. A thread
 * the model gives all it wants is not held back. The others get a quota
 * for the round: their share of the round's length, less what they overran
 * before (the debt). Each governed thread has a POSIX timer on its own CPU
 * clock that fires when the quota is used up; with few threads the
 * governor also reads the clocks every poll (2 ms), which is finer than
 * the timer's tick, and on several CPUs a group's threads then share the
 * group's quota. The timers signal the governor thread, which blocks the
 * signal and waits for it (gov_wait()), not the governed thread: only the
 * governor sends a governed thread the signal, and only after it has seen
 * that the handler is its own (signal_ours() below). Either way the thread
 * gets one real-time signal and waits in the handler until the next round.
 *
 * A round ends when every thread that had a quota has used it, or when
 * those that still have some are all asleep (the process's CPU clock stops
 * moving and none is runnable in /proc; a thread that had used its quota
 * then owes the part meant for the rest of the round), or after four round
 * lengths, longer as other load makes the threads slower (400 ms at most).
 * So the split is in proportion whatever share of the machine the process
 * gets from other processes, and no CPU is left idle while a thread of the
 * process wants it (work-conserving), up to one poll.
 *
 * Signal handler (SIGRTMIN+7, or RGROUP_GOVERNOR_SIGNAL=N for SIGRTMIN+N):
 *   - pauses only if its own CPU clock has passed the quota armed for the
 *     current round: stale and forged signals do nothing;
 *   - never waits while its thread is in the library's lock (it leaves a
 *     token; the thread pauses when it leaves the lock);
 *   - is installed with SA_RESTART, so interrupted calls restart where the
 *     kernel allows (read, write, ...; nanosleep and some others return
 *     EINTR as with any handler);
 *   - preserves errno.
 * A thread that blocks the signal is not paused: its rgroup counts the
 * pauses not taken (rgroup_info's unthrottled), and the round goes on
 * without it. Every pause ends at the latest when its round does.
 *
 * The program may change the signal's disposition after the handler is in
 * place. A reset to SIG_DFL or SIG_IGN (daemons reset every signal) through
 * the shared library's sigaction() or signal() (governor-sigaction.c) never
 * reaches the kernel: a signal queued for a thread and taken after such a
 * reset would end the process. Any other way (a raw system call, or the
 * static library, which has no such functions) the governor sees it, at
 * the latest at its next poll and before each signal it queues, and puts
 * its handler back (rgroup__gov_signal_ours()). A handler of the
 * program's, however installed: the governor stops enforcing (it deletes
 * its timers, lets every paused thread go, sends nothing more), says so
 * once on stderr and through rgroup_info (RGROUP_INFO_UNENFORCED), and
 * starts again if the program gives the signal back.
 *
 * The governor thread itself calls nothing that takes a libc lock (no
 * malloc, no stdio, no opendir): a paused thread may hold one. Its arrays
 * grow with mmap. It takes the core lock only with trylock, and opens the
 * paused threads' gate before, so a thread waiting for the core lock never
 * waits for it.
 *
 * Limits: rule 4 across processes (an rgroup competing as one entity against
 * other processes) needs the kernel. Threads the library does not know
 * (plain pthread_create() threads that never called it) are governed as
 * plain threads of the process.
 */
#ifndef RGROUP_GOVERNOR_H
#define RGROUP_GOVERNOR_H

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_SLOTS      8192
#define DEFAULT_SIGNAL 7          /* SIGRTMIN + 7 */

/* ---- What the signal handler shares with the rounds (governor-signal.c) */

enum { S_FREE, S_RUN, S_PAUSED, S_MISSED };

/*
 * One per governed thread. `word` holds the round it is armed for and its
 * state in that round, (round << 2) | S_*, so that the handler's and the
 * governor's compare-and-swap see both at once. The governor writes expire,
 * then word (release); the handler trusts expire only when word's round is
 * the current round.
 */
struct gov_slot {
	uint32_t word;
	int until;                /* a paused thread waits for this round */
	pid_t tid;
	uint64_t expire;          /* CPU-clock ns at which its quota ends */
	uint64_t paused_at;       /* CLOCK_MONOTONIC ns */
};

#define WORD(round, state) ((((uint32_t)(round) & 0x3fffffffu) << 2) | (uint32_t)(state))
#define WORD_STATE(w)      ((int)((w) & 3u))

extern struct gov_slot rgroup__gov_slots[MAX_SLOTS];
/* futex: the round; paused threads wait on it */
extern int rgroup__gov_round_word;
/* The governor thread, 0: none; it blocks the signal, and its timers and
 * wake-ups come to it as that signal (gov_wait()). */
extern pid_t rgroup__gov_tid;
/* Armed threads not yet paused. */
extern int rgroup__gov_running;
/* Atomic: the program's own handler has the signal; nothing is enforced. */
extern int rgroup__gov_taken;

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static inline void futex_wake(int *word, int n)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Queue the governor's signal with `value` for thread tid of this process,
 * if the handler in place is the governor's. The governor thread only. */
void rgroup__gov_send_value(pid_t tid, int value);
/* Wake the governor thread (async-signal-safe). */
void rgroup__gov_wake(void);
/* Say once on stderr that the program's handler has signal sig. */
void rgroup__gov_say_taken(int sig);
/* The backend's deferred op: the pause a thread owed while it held the
 * core lock (token from the handler). */
void rgroup__gov_deferred(void *priv, int token);
/* The signal to install: SIGRTMIN+7 or RGROUP_GOVERNOR_SIGNAL's; a
 * negative errno (and why) if it is out of range or the program handles
 * it itself. */
int rgroup__gov_choose_signal(char *why, size_t len);
/* Once per process (rgroup__gov_sig_no stays set): the handler. */
int rgroup__gov_install_handler(void);

/* ---- The governor's state (governor-rounds.c) ------------------------------ */

/* An array that grows with mmap (no malloc in the governor). */
struct mvec {
	void *p;
	size_t cap;               /* elements */
};

enum { G_NONE, G_RUNNING, G_STOPPING };

struct gov {
	int state;                /* G_*: futex word; set under the core lock,
	                           * except G_STOPPING -> G_NONE (the governor) */
	int changed;              /* the tree or a weight changed: a new round */
	pid_t tid;
	unsigned int ngroups;
	struct mvec t, g, nodes;  /* gthread, ggroup, model_node */
	size_t nt, ng;
	int nnodes, ngroup_nodes;
	uint64_t round_start;     /* CLOCK_MONOTONIC */
	uint64_t round_len;       /* nominal, ns */
	uint64_t poll_last;       /* CLOCK_MONOTONIC at the last poll */
	uint64_t proc_last;       /* process CPU clock at the last poll */
	int narmed;
	int asleep_end;           /* the round ends early: the rest are asleep */
	int pooled;               /* this round, a group's threads share its quota */
	double cpus;              /* the round's capacity */
	double nominal;           /* ... the CPUs the threads may run on */
	double intake;            /* CPUs the threads that want CPU got (smoothed) */
	double waited;            /* their run queue wait per unit run (smoothed) */
	double sum_run, sum_wait; /* settle_round(): this round's */
	uint64_t polls;
	uint64_t published;       /* CLOCK_MONOTONIC of the last state file */
};

extern struct gov rgroup__gov;

/* The governor thread (rgroup__start_helper()). */
void *rgroup__gov_main(void *arg);

#endif /* RGROUP_GOVERNOR_H */
