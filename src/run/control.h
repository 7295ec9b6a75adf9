/* SPDX-License-Identifier: MIT */
/*
 * control.h - the channel through which `rgroup set` changes the groups
 * of a program running under `rgroup run` (control.c). The program's
 * preload listens; the rgroup command asks; the change itself is made by
 * the library inside the program, with the program's own rights, exactly
 * as the program's own calls would make it.
 *
 * The channel is a Unix stream socket in the abstract namespace, named
 * "rgroup-<pid>-<starttime>.ctl" (the pid as the program's own PID
 * namespace numbers it, its start time in clock ticks after boot, as
 * /proc/PID/stat field 22): no file to leave behind, gone with the
 * process. Both ends check who is at the other:
 *  - the program answers only a peer whose effective uid is 0 or one of
 *    its own real and effective uids (the kernel's SO_PEERCRED), as
 *    kill(2) lets a user signal only their own processes;
 *  - the rgroup command talks only to the process it names (the
 *    listener's pid, SO_PEERCRED again), so a name taken by someone else
 *    first is refused, not believed.
 * A request is one line, "set GROUP SETTINGS\n"; the answer is one line,
 * "0 TEXT\n" (done: TEXT says what changed) or "ERRNO TEXT\n" (nothing
 * changed: TEXT says why).
 */
#ifndef RGROUP_RUN_CONTROL_H
#define RGROUP_RUN_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RGROUP__CONTROL_LINE 1024   /* a request or an answer, '\n' included */

/* The socket's name (without the abstract namespace's leading NUL).
 * 0, or -EINVAL / -ENAMETOOLONG. */
int rgroup__control_name(char *out, size_t len, pid_t pid, uint64_t start);

/* The program's side. A listening socket for the calling process (pid
 * and start time as above), close-on-exec; or -errno. */
int rgroup__control_listen(pid_t pid, uint64_t start);

/* Answer requests on listening socket fd, one at a time, for ever (it
 * returns only when the socket fails). fn makes the change: 0 with what
 * it did in msg, or -errno with why. A peer that sends nothing is given
 * up on after two seconds. */
typedef int rgroup__control_fn(const char *group, const char *settings, char *msg,
			       size_t len);
void rgroup__control_serve(int fd, rgroup__control_fn *fn);

/*
 * The rgroup command's side: ask process `pid` (as this process's PID
 * namespace numbers it; ns_pid and start as its own namespace names its
 * socket) to change GROUP. 0 or the program's errno (positive) with its
 * text in msg; or -errno when it cannot be asked: -ECONNREFUSED (no such
 * socket: no group made yet, or not under rgroup run), -EPERM (the socket
 * is not pid's), -ETIMEDOUT (no answer within five seconds), with why in
 * msg.
 */
int rgroup__control_call(pid_t pid, pid_t ns_pid, uint64_t start, const char *group,
			 const char *settings, char *msg, size_t len);

#endif /* RGROUP_RUN_CONTROL_H */
