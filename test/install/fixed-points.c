/* SPDX-License-Identifier: MIT */
/*
 * fixed-points.c - a program written against DESIGN.md §5 only, built by
 * check-install.sh with `pkg-config --cflags --libs rgroup` against a staged
 * install. It must compile and run on any machine, so it makes no rgroup
 * (that would need a writable cgroup): it checks the names exist and the
 * calls that need no group behave as documented.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <rgroup.h>

static void *run(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;
	void *ret = NULL;
	unsigned int flags = RGROUP_NEW;
	const char *be = rgroup_backend();

	if (!be || !*be)
		return 1;
	if (rgroup_thread_create(&t, NULL, 0, run, &flags) != 0 ||
	    pthread_join(t, &ret) != 0 || ret != &flags)
		return 1;
	if (rgroup_thread_create(&t, NULL, ~RGROUP_NEW, run, NULL) != EINVAL)
		return 1;
	/* The main thread is in no rgroup. */
	errno = 0;
	if (rgroup_setpriority(PRIO_RGRP, 0, 5) != -1 || errno != EINVAL)
		return 1;
	if (rgroup_getpriority(PRIO_PROCESS, 0) == -1 && errno)
		return 1;
	printf("fixed points ok (backend %s)\n", be);
	return 0;
}
