/* SPDX-License-Identifier: MIT */
/*
 * named.c - a program that knows nothing of rgroups, for the package
 * test: one thread names itself "worker", then the program prints
 * "READY <pid> <tid>" and lives until its stdin closes, so that the test
 * can look at where `rgroup run` put the thread.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *worker(void *arg)
{
	char buf[64];

	pthread_setname_np(pthread_self(), "worker");
	printf("READY %d %ld\n", (int)getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return arg;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	return pthread_join(t, NULL) != 0;
}
