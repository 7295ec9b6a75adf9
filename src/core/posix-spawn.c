/* SPDX-License-Identifier: MIT */
/*
 * posix-spawn.c - posix_spawn() and posix_spawnp() for rule 7 (spawn.c),
 * in the shared library only: ours are found before libc's by a program
 * linked with -lrgroup, and they call libc's, looked up in libc. A
 * static link cannot hold both definitions, so a statically linked
 * program's posix_spawn is libc's (rgroup(7), LIMITS); its system() and
 * popen() are still the library's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "tree.h"

/* A function of libc itself, asked of libc by name: not RTLD_NEXT, which
 * finds nothing when librgroup is loaded after libc (by rgroup run's
 * preload) and ours when it is loaded before. */
static void *libc_sym(const char *name, const char *version)
{
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	void *fn = NULL;

	if (h) {
		fn = dlvsym(h, name, version);
		dlclose(h);   /* only the reference NOLOAD took */
	}
	return fn;
}

/* glibc's current versions of the two. */
rgroup__spawn_fn *rgroup__libc_posix_spawn(int search)
{
	static rgroup__spawn_fn *fns[2];
	rgroup__spawn_fn *fn = __atomic_load_n(&fns[search], __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = (rgroup__spawn_fn *)libc_sym(search ? "posix_spawnp" : "posix_spawn", "GLIBC_2.15");
		__atomic_store_n(&fns[search], fn, __ATOMIC_RELEASE);
	}
	return fn;
}

int rgroup__libc_pclose(FILE *f)
{
	int (*fn)(FILE *) = (int (*)(FILE *))libc_sym("pclose", "GLIBC_2.2.5");

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
