/* SPDX-License-Identifier: MIT */
/*
 * governor-signal.h - who may have the governor's signal: what
 * governor-signal.c offers governor-cap.c and the shared library's
 * sigaction() and signal() (governor-sigaction.c).
 */
#ifndef RGROUP_GOVERNOR_SIGNAL_H
#define RGROUP_GOVERNOR_SIGNAL_H

/* May the governor's signal be sent now? 1 if its handler is in place (put
 * back if the signal was reset to SIG_DFL or SIG_IGN), 0 if not. The
 * governor thread only. */
int rgroup__gov_signal_ours(void);

/* The governor's real-time signal (installed, or the one it would
 * install), 0 if none would do. */
int rgroup__gov_signal(void);

/* The signal the governor's handler is installed on, -1 if none yet. */
int rgroup__gov_installed_signal(void);

/*
 * The program sets the disposition of signal `sig` to `handler` (a
 * sa_handler or sa_sigaction value). 0: not the governor's installed
 * signal, or its own handler: go on. 1: the program resets the governor's
 * signal (SIG_DFL, SIG_IGN): the governor keeps its handler, the call must
 * not reach the kernel. -1: a handler of the program's; the governor sends
 * nothing more and lets go; install it, then call rgroup__gov_program_set().
 * Async-signal-safe.
 */
int rgroup__gov_program_sets(int sig, const void *handler);
void rgroup__gov_program_set(void);
/* The governor's installed signal, -1 while none: read before anything
 * else by governor-sigaction.c, which a sanitizer's start-up calls before
 * the sanitizer can run instrumented code. */
extern int rgroup__gov_sig_no;

#endif /* RGROUP_GOVERNOR_SIGNAL_H */
