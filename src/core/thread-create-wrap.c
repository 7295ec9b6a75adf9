/* SPDX-License-Identifier: MIT */
/*
 * thread-create-wrap.c - pthread_create() for rule 1 (birth.c), in the
 * static library only, as thread-create.c is in the shared one: a static
 * program linked with the linker's `--wrap=pthread_create`, which
 * `pkg-config --static --libs rgroup` gives, reaches this, and this
 * reaches libc's as __real_pthread_create. The library's own calls are
 * wrapped too and pass straight on (rgroup__creating). Without the
 * option nothing refers to this file and the linker leaves it out.
 */
#include "tree.h"

int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	return rgroup__app_pthread_create(__real_pthread_create, thread, attr, fn, arg);
}
