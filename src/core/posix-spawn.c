/* SPDX-License-Identifier: MIT */
/*
 * posix-spawn.c - posix_spawn() and posix_spawnp() for rule 7 (spawn.c),
 * in the shared library only: ours are found before libc's by a program
 * linked with -lrgroup, and they call libc's (libc-next.c). A static link
 * cannot hold both definitions: there posix-spawn-wrap.c stands in,
 * through the linker's --wrap.
 */
#include <errno.h>

#include "libc-next.h"

RGROUP__EXPORT int posix_spawn(pid_t *pid, const char *path,
			       const posix_spawn_file_actions_t *actions,
			       const posix_spawnattr_t *attr, char *const argv[],
			       char *const envp[])
{
	rgroup__spawn_fn *fn = rgroup__libc_posix_spawn(0);

	return fn ? rgroup__spawn(fn, pid, path, actions, attr, argv, envp) : ENOSYS;
}

RGROUP__EXPORT int posix_spawnp(pid_t *pid, const char *file,
				const posix_spawn_file_actions_t *actions,
				const posix_spawnattr_t *attr, char *const argv[],
				char *const envp[])
{
	rgroup__spawn_fn *fn = rgroup__libc_posix_spawn(1);

	return fn ? rgroup__spawn(fn, pid, file, actions, attr, argv, envp) : ENOSYS;
}
