/* SPDX-License-Identifier: MIT */
/*
 * create.c - the guest side of profile.sh: windows of thread creation for
 * the instruction profile, each ended by sync(2), the marker that
 * tbcount.c snapshots its counts at.
 *
 *   A  N x pthread_create + join, by a thread in a top-level rgroup
 *   B  the same by a thread one level deeper (its threads join its rgroup)
 *   C  N x the same as A, each thread in a new rgroup nested under the
 *      creator's (PR_RGROUP_SET_NEXT_NEW, as the library does)
 *   -  an empty window: what every window has besides its loop (the
 *      settling sleep, the marker itself, the ticks meanwhile)
 *
 * A against C is native-bench's "RGROUP_NEW + join / pthread_create +
 * join"; B splits C - A into what a thread one level deeper costs and
 * what making and destroying the rgroup costs. Each window is preceded by
 * a 0.3 s sleep, so that the RCU callbacks and frees of the last one have
 * run. The guest's random number generator is seeded first, as on a booted
 * machine (seed-random.h says why).
 *
 * usage: create N          (N iterations per window; in the VM)
 *        create --kallsyms (print /proc/kallsyms, each line after "KS ")
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "../seed-random.h"

#ifndef PR_RGROUP
#define PR_RGROUP 74
#define PR_RGROUP_SET_NEXT_NEW 1
#endif

#define WARMUP 300

static int n;
static sem_t deep_go, deep_done, deep_end;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void next_new(void)
{
	if (prctl(PR_RGROUP, PR_RGROUP_SET_NEXT_NEW, 1, 0, 0))
		die("PR_RGROUP_SET_NEXT_NEW");
}

static void *nothing(void *arg)
{
	return arg;
}

static void create_join(int new_group)
{
	pthread_t t;

	if (new_group)
		next_new();
	if (pthread_create(&t, NULL, nothing, NULL))
		die("pthread_create");
	pthread_join(t, NULL);
}

static void loop(int count, int new_group)
{
	for (int i = 0; i < count; i++)
		create_join(new_group);
}

/* End a window: let deferred work of the loop finish, then mark */
static void mark(void)
{
	usleep(300000);
	sync();
}

static void *deep(void *arg)
{
	(void)arg;
	loop(WARMUP, 0);
	sem_post(&deep_done);
	sem_wait(&deep_go);
	loop(n, 0);
	mark();
	sem_post(&deep_done);
	sem_wait(&deep_end);
	return NULL;
}

static void *top(void *arg)
{
	pthread_t d;

	(void)arg;
	next_new();
	if (pthread_create(&d, NULL, deep, NULL))
		die("pthread_create");
	loop(WARMUP, 0);
	loop(WARMUP, 1);
	sem_wait(&deep_done);

	mark();
	loop(n, 0);		/* A */
	mark();
	sem_post(&deep_go);	/* B */
	sem_wait(&deep_done);
	loop(n, 1);		/* C */
	mark();
	mark();			/* the empty window */

	sem_post(&deep_end);
	pthread_join(d, NULL);
	return NULL;
}

static int print_kallsyms(void)
{
	char line[512];
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		die("/proc/kallsyms");
	while (fgets(line, sizeof(line), f))
		printf("KS %s", line);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc == 2 && !strcmp(argv[1], "--kallsyms"))
		return print_kallsyms();
	if (argc != 2 || (n = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: create N | create --kallsyms\n");
		return 2;
	}
	if (nt_seed_random() < 0)
		die("seeding the random number generator");
	sem_init(&deep_go, 0, 0);
	sem_init(&deep_done, 0, 0);
	sem_init(&deep_end, 0, 0);
	/* The creating thread is in a top-level rgroup, as in native-bench */
	next_new();
	if (pthread_create(&t, NULL, top, NULL))
		die("pthread_create");
	pthread_join(t, NULL);
	printf("create: windows of %d done\n", n);
	return 0;
}
