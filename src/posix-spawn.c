/* SPDX-License-Identifier: MIT */
/*
 * posix-spawn.c - posix_spawn() and posix_spawnp() for rule 7 (spawn.c),
 * in the shared library only: ours are found before libc's by a program
 * linked with -lrgroup, and they call libc's, looked up behind them. A
 * static link cannot hold both definitions, so a statically linked
 * program's posix_spawn is libc's (rgroup(7), LIMITS); its system() and
 * popen() are still the library's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "tree.h"

/* glibc's current versions of the two, behind ours. */
rgroup__spawn_fn *rgroup__libc_posix_spawn(int search)
{
	static rgroup__spawn_fn *fns[2];
	rgroup__spawn_fn *fn = __atomic_load_n(&fns[search], __ATOMIC_ACQUIRE);

	if (!fn) {
		const char *name = search ? "posix_spawnp" : "posix_spawn";

		fn = (rgroup__spawn_fn *)dlvsym(RTLD_NEXT, name, "GLIBC_2.15");
		if (!fn)
			fn = (rgroup__spawn_fn *)dlsym(RTLD_NEXT, name);
		__atomic_store_n(&fns[search], fn, __ATOMIC_RELEASE);
	}
	return fn;
}

int rgroup__libc_pclose(FILE *f)
{
	int (*fn)(FILE *) = (int (*)(FILE *))dlsym(RTLD_NEXT, "pclose");

	return fn ? fn(f) : fclose(f);
}

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
