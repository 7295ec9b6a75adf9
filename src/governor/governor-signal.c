/* SPDX-License-Identifier: MIT */
/*
 * governor-signal.c - the signal that pauses a governed thread (governor.h):
 * the handler and what it shares with the rounds, the signal's
 * disposition (who has it: the governor or the program), and choosing
 * and installing it.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "governor-faults.h"
#include "governor.h"
#include "governor-cap.h"
#include "governor-signal.h"
#include "locate.h"

struct gov_slot rgroup__gov_slots[MAX_SLOTS];
int rgroup__gov_round_word;
pid_t rgroup__gov_tid;
int rgroup__gov_running;
int rgroup__gov_sig_no = -1;   /* governor-signal.h */
static struct sigaction own_sa;   /* the handler as rgroup__gov_install_handler() set it */
int rgroup__gov_taken;
static int handing_over;          /* atomic: threads in rgroup__gov_program_sets()'s
                                   * hand-over to a handler of the program's */


/* Async-signal-safe. The governor thread blocks the signal: queued for it,
 * it ends the governor's wait whatever the signal's disposition. */
void rgroup__gov_wake(void)
{
	pid_t t = __atomic_load_n(&rgroup__gov_tid, __ATOMIC_ACQUIRE);

	if (t)
		syscall(SYS_tgkill, getpid(), t, rgroup__gov_sig_no);
}

/* The calling thread, told to pause through slot s: if its quota for this
 * round is used up, wait for the next round. Async-signal-safe. */
static void maybe_pause(int s)
{
	struct gov_slot *sl = &rgroup__gov_slots[s];
	int r = __atomic_load_n(&rgroup__gov_round_word, __ATOMIC_ACQUIRE);
	uint32_t w = __atomic_load_n(&sl->word, __ATOMIC_ACQUIRE);

	if (w >> 2 != WORD(r, 0) >> 2 || WORD_STATE(w) == S_FREE ||
	    __atomic_load_n(&sl->tid, __ATOMIC_RELAXED) != (pid_t)syscall(SYS_gettid) ||
	    clock_ns(CLOCK_THREAD_CPUTIME_ID) < __atomic_load_n(&sl->expire, __ATOMIC_RELAXED))
		return;
	/* S_RUN or S_MISSED (the governor gave up on it: it is no longer
	 * counted in `running`) becomes S_PAUSED. */
	while (WORD_STATE(w) != S_PAUSED) {
		/* paused_at first: the governor reads it once it sees S_PAUSED;
		 * the pause lasts until the next round (or longer, if the
		 * governor moves `until` on while the thread sits out). */
		__atomic_store_n(&sl->paused_at, clock_ns(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
		__atomic_store_n(&sl->until, r + 1, __ATOMIC_RELEASE);
		if (__atomic_compare_exchange_n(&sl->word, &w, WORD(r, S_PAUSED), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			if (WORD_STATE(w) == S_RUN &&
			    __atomic_sub_fetch(&rgroup__gov_running, 1, __ATOMIC_ACQ_REL) == 0)
				rgroup__gov_wake();
			break;
		}
		if (w >> 2 != WORD(r, 0) >> 2 || WORD_STATE(w) == S_FREE)
			return; /* the round ended meanwhile */
	}
	for (;;) {
		int now = __atomic_load_n(&rgroup__gov_round_word, __ATOMIC_ACQUIRE);
		if ((int)((unsigned int)now - (unsigned int)__atomic_load_n(&sl->until, __ATOMIC_ACQUIRE)) >= 0)
			break;
		syscall(SYS_futex, &rgroup__gov_round_word, FUTEX_WAIT_PRIVATE, now, NULL, NULL, 0);
	}
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno, s = si->si_value.sival_int;

	if (si->si_code == SI_QUEUE && s < 0) {
		rgroup__gov_cap_signal(s);   /* rule 10: governor-cap.c */
		errno = saved;
		return;
	}
	if ((si->si_code != SI_TIMER && si->si_code != SI_QUEUE) || s < 0 || s >= MAX_SLOTS)
		return;
	if (rgroup__in_lib)
		rgroup__pause_token = s + 1; /* paused in core_unlock() */
	else
		maybe_pause(s);
	errno = saved;
}

/* ---- The signal's disposition ------------------------------------------ */

static char *put_str(char *p, const char *e, const char *str)
{
	while (*str && p < e)
		*p++ = *str++;
	return p;
}

static char *put_int(char *p, const char *e, int v)
{
	char d[12];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0 && n < (int)sizeof(d));
	while (n > 0 && p < e)
		*p++ = d[--n];
	return p;
}

/* Once per process, from the governor thread: no stdio (a paused thread
 * may hold its lock), one write(2). */
void rgroup__gov_say_taken(int sig)
{
	static int said;
	char msg[400], *p = msg, *e = msg + sizeof(msg);

	if (said)
		return;
	said = 1;
	p = put_str(p, e, "rgroup: the program installed its own handler for signal ");
	p = put_int(p, e, sig);
	p = put_str(p, e, " (SIGRTMIN+");
	p = put_int(p, e, sig - SIGRTMIN);
	p = put_str(p, e, "), which the governor pauses threads with: rgroup weights and "
		    "CPU caps are no longer enforced in this process (rgroup_info: "
		    "RGROUP_INFO_UNENFORCED); set RGROUP_GOVERNOR_SIGNAL to a free offset (0..");
	p = put_int(p, e, SIGRTMAX - SIGRTMIN);
	p = put_str(p, e, ")\n");
	if (write(STDERR_FILENO, msg, (size_t)(p - msg)) < 0)
		return;
}

/*
 * May the governor send its signal now? 1 if its handler is in place: put
 * back if the program reset the signal to SIG_DFL or SIG_IGN behind the
 * interposers' back. 0 if a handler of the program's has it (`taken`
 * set), is being installed, or the handler was never installed. The
 * governor thread and governor-cap.c call it before every signal they
 * queue. A handler the program installs by a raw system call between the
 * read and the put-back is overwritten: the governor cannot tell.
 */
int rgroup__gov_signal_ours(void)
{
	struct sigaction now;
	int sig = __atomic_load_n(&rgroup__gov_sig_no, __ATOMIC_ACQUIRE);

	if (sig < 0 || __atomic_load_n(&handing_over, __ATOMIC_ACQUIRE) ||
	    sigaction(sig, NULL, &now) < 0)
		return 0;
	if ((void *)now.sa_sigaction == (void *)on_signal ||
	    ((now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN) &&
	     sigaction(sig, &own_sa, NULL) == 0)) {
		__atomic_store_n(&rgroup__gov_taken, 0, __ATOMIC_RELEASE);
		return 1;
	}
	__atomic_store_n(&rgroup__gov_taken, 1, __ATOMIC_RELEASE);
	return 0;
}

int rgroup__gov_installed_signal(void)
{
	return __atomic_load_n(&rgroup__gov_sig_no, __ATOMIC_ACQUIRE);
}

int rgroup__gov_program_sets(int sig, const void *handler)
{
	if (sig != __atomic_load_n(&rgroup__gov_sig_no, __ATOMIC_ACQUIRE) || handler == (const void *)on_signal)
		return 0;
	if (handler == (const void *)SIG_DFL || handler == (const void *)SIG_IGN)
		return 1;
	/* Nothing is sent from here on; the governor lets go at its next
	 * wake-up, this one. */
	__atomic_add_fetch(&handing_over, 1, __ATOMIC_ACQ_REL);
	rgroup__gov_wake();
	return -1;
}

void rgroup__gov_program_set(void)
{
	__atomic_sub_fetch(&handing_over, 1, __ATOMIC_ACQ_REL);
}

void rgroup__gov_deferred(void *priv, int token)
{
	if (token < 0)
		rgroup__gov_cap_pause(token);
	else
		maybe_pause(token - 1);
}

/* Queue the governor's signal with `value` for thread tid of this process,
 * if the handler in place is the governor's. The governor thread only. */
void rgroup__gov_send_value(pid_t tid, int value)
{
	siginfo_t si;
	int sig = rgroup__gov_signal();

	if (!sig || !rgroup__gov_signal_ours())
		return;
	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = value;
	syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, sig, &si);
}

/* ---- Choosing and installing it ------------------------------------------ */

/* The governor's signal: SIGRTMIN+7, or RGROUP_GOVERNOR_SIGNAL=N for
 * SIGRTMIN+N; a negative errno (and why) if it is out of range or the
 * program handles it itself. */
static int signal_offset(const char **env)
{
	*env = secure_getenv("RGROUP_GOVERNOR_SIGNAL");
	return *env && **env ? atoi(*env) : DEFAULT_SIGNAL;
}

int rgroup__gov_choose_signal(char *why, size_t len)
{
	const char *env;
	int n = signal_offset(&env);
	struct sigaction old;

	if (n < 0 || SIGRTMIN + n > SIGRTMAX)
		return rgroup__why(why, len, -EINVAL,
				   "RGROUP_GOVERNOR_SIGNAL=%s is not 0..%d; choose a free real-time signal offset",
				   env, SIGRTMAX - SIGRTMIN);
	if (sigaction(SIGRTMIN + n, NULL, &old) == 0 && old.sa_handler != SIG_DFL &&
	    old.sa_handler != SIG_IGN && (void *)old.sa_sigaction != (void *)on_signal)
		return rgroup__why(why, len, -EBUSY,
				   "the program handles SIGRTMIN+%d itself; set RGROUP_GOVERNOR_SIGNAL to a free offset", n);
	return SIGRTMIN + n;
}

/* The signal the governor pauses with: the installed one, else the one
 * it would install; 0 if none would do (enter.c: `rgroup run`'s preload
 * keeps the program from taking it). */
int rgroup__gov_signal(void)
{
	const char *env;
	int n;

	if (rgroup__gov_sig_no >= 0)
		return rgroup__gov_sig_no;
	n = signal_offset(&env);
	return n < 0 || SIGRTMIN + n > SIGRTMAX ? 0 : SIGRTMIN + n;
}

/* Once per process (rgroup__gov_sig_no stays set): the handler. */
int rgroup__gov_install_handler(void)
{
	struct sigaction sa;
	int sig, r;

	if (rgroup__gov_sig_no >= 0)
		return 0;
	sig = rgroup__gov_choose_signal(NULL, 0);
	if (sig < 0)
		return sig;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	r = rgroup__fault_site(RGROUP__FAULT_GOV_SIGNAL);
	if (r < 0)
		return r;
	if (sigaction(sig, &sa, NULL) < 0)
		return -errno;
	own_sa = sa;
	__atomic_store_n(&rgroup__gov_sig_no, sig, __ATOMIC_RELEASE);
	return 0;
}

