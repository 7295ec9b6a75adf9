/* SPDX-License-Identifier: MIT */
/*
 * governor-sigaction.c - the shared library's sigaction(), signal() and
 * bsd_signal(), which a program linked with librgroup calls before libc's
 * (as it calls the library's exec functions): the governor's signal keeps
 * the governor's handler (backend-governor.c, "The program may change the
 * signal's disposition").
 *
 *   - Any other signal, or before the governor installed its handler: the
 *     call is libc's, unchanged.
 *   - SIG_DFL or SIG_IGN for the governor's signal: the governor's handler
 *     stays, the call returns success and, in *old, that handler. A
 *     program that resets every signal (daemons do) goes on being
 *     governed, and no signal queued for one of its threads ends it.
 *   - A handler of the program's for the governor's signal: the governor
 *     sends nothing more, then the handler is installed; the governor lets
 *     every paused thread go and says so (rgroup_info(3),
 *     RGROUP_INFO_UNENFORCED).
 *
 * Only in the shared library: a static library holding sigaction() would
 * take libc's place in every program that links it. There, and for raw
 * system calls, the governor sees a reset at its next poll.
 */
#include <dlfcn.h>
#include <signal.h>

#include "governor-signal.h"
#include "tree.h"

/* glibc's sigaction() under the name nothing interposes. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

RGROUP__EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int r, how;

	/* Not the governor's signal (and before any governor: a sanitizer
	 * starting up): libc's, without a call into instrumented code. */
	if (!act || sig != __atomic_load_n(&rgroup__gov_sig_no, __ATOMIC_ACQUIRE))
		return __sigaction(sig, act, old);
	how = rgroup__gov_program_sets(sig, (const void *)act->sa_handler);

	if (how > 0)
		return __sigaction(sig, NULL, old);
	r = __sigaction(sig, act, old);
	if (how < 0)
		rgroup__gov_program_set();
	return r;
}

/* glibc's semantics for signal() (the signal blocked in its handler,
 * SA_RESTART) through sigaction() above. */
static __sighandler_t by_sigaction(int sig, __sighandler_t handler)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART }, old;

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	return sigaction(sig, &sa, &old) < 0 ? SIG_ERR : old.sa_handler;
}

/* glibc's signal(), for the signals that are not the governor's: asked of
 * libc by name (it also honours siginterrupt()). */
static __sighandler_t libc_signal(int sig, __sighandler_t handler)
{
	static __sighandler_t (*fn)(int, __sighandler_t);
	__sighandler_t (*f)(int, __sighandler_t) = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);

	if (!f) {
		void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			f = (__sighandler_t (*)(int, __sighandler_t))dlsym(h, "signal");
			dlclose(h);   /* only the reference NOLOAD took */
		}
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);
	}
	return f ? f(sig, handler) : by_sigaction(sig, handler);
}

RGROUP__EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	if (sig == rgroup__gov_installed_signal())
		return by_sigaction(sig, handler);
	return libc_signal(sig, handler);
}

RGROUP__EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler)
{
	return signal(sig, handler);
}
