/* SPDX-License-Identifier: MIT */
/*
 * libc-next.c - see libc-next.h. In the shared library only.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "libc-next.h"

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

