/* SPDX-License-Identifier: MIT */
/*
 * thread-create.c - pthread_create() for rule 1, in the shared library
 * only, as posix-spawn.c is for rule 7: a program linked with -lrgroup
 * finds this definition before libc's. A thread that a thread inside an
 * rgroup makes with plain pthread_create() is born a tracked member of
 * its creator's group (rgroup_thread_create() without RGROUP_NEW,
 * birth.c): on the governor it is governed with its group from its first
 * instruction (rule 1), and on the cgroup backends the keeper knows it
 * from birth, so a migration right after carries it along (rule 8) with
 * no wait for the keeper's census. Any other caller's call goes on to the
 * next definition unchanged.
 *
 * Not covered, and left to the keeper's census (cgroup backends): threads
 * made with clone(CLONE_THREAD) or clone3 directly. There is no library
 * call to stand in for (the system call, or glibc's clone(), which the
 * kernel enters with the caller's stack and function), and such a thread
 * has no thread-local storage of its own, or the C library's, where the
 * library keeps a member's record and takes its lock; nor do glibc's own
 * internal threads (SIGEV_THREAD timers, mq_notify), which it creates
 * without calling pthread_create() by that name. A statically linked
 * program gets the same through the linker's --wrap
 * (thread-create-wrap.c).
 */
#include <dlfcn.h>
#include <errno.h>

#include "tree.h"

/*
 * The definition after ours: RTLD_NEXT (an interposer loaded after the
 * library, or libc), else libc's own, asked of libc by name, as
 * posix-spawn.c does where librgroup was loaded after libc (rgroup run's
 * preload). libpthread for a C library older than glibc 2.34.
 */
static rgroup__pthread_create_fn *next_create(void)
{
	static rgroup__pthread_create_fn *next;
	rgroup__pthread_create_fn *fn = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
	static const char *const libs[] = { "libc.so.6", "libpthread.so.0" };

	if (fn)
		return fn;
	fn = (rgroup__pthread_create_fn *)dlsym(RTLD_NEXT, "pthread_create");
	for (size_t i = 0; i < 2 && !fn; i++) {
		void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);

		fn = h ? (rgroup__pthread_create_fn *)dlsym(h, "pthread_create") : NULL;
		if (h)
			dlclose(h);   /* only the reference NOLOAD took */
	}
	__atomic_store_n(&next, fn, __ATOMIC_RELEASE);
	return fn;
}

RGROUP__EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg)
{
	rgroup__pthread_create_fn *next = next_create();

	return next ? rgroup__app_pthread_create(next, thread, attr, fn, arg) : ENOSYS;
}
