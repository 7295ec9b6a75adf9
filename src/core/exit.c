/* SPDX-License-Identifier: MIT */
/*
 * exit.c - _exit() and _Exit() for rule 3, in the shared library only: a
 * process that ends without running its destructors (a fork child's
 * usual way out, a daemon's signal handler) would leave its groups'
 * directories until someone's gc. These remove them first, through
 * rgroup__exit_now() (keeper.c): async-signal-safe, as _exit() must be,
 * and only when no thread is inside the library; then the process ends,
 * as libc's would end it, with exit_group(2). A statically linked program
 * gets the same through the linker's --wrap (exit-wrap.c).
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "tree.h"

static __attribute__((noreturn)) void end(int status)
{
	rgroup__exit_now();
	for (;;)
		syscall(SYS_exit_group, status);
}

RGROUP__EXPORT void _exit(int status)
{
	end(status);
}

RGROUP__EXPORT void _Exit(int status)
{
	end(status);
}
