/* SPDX-License-Identifier: MIT */
/*
 * query-vs-compaction.c - a database keeps its query threads in a top-level
 * rgroup at the process's own nice and its compaction threads in another at
 * nice 10: background work yields to queries, and no thread is reniced.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <rgroup.h>

struct pool { const char *name; int nice; };
static atomic_int stop;

static void *work(void *arg)    /* stands in for running queries or compacting */
{
	for (volatile unsigned long n = 0; !atomic_load(&stop); n++)
		;
	return arg;
}

/* A pool's first thread, born in a new rgroup: it sets that group's nice
 * from the inside and starts 3 more threads with flags 0, which join it. */
static void *pool_main(void *arg)
{
	struct pool *p = arg;
	pthread_t th[3];
	int n = 0, err = 0;

	if (rgroup_setpriority(PRIO_RGRP, 0, p->nice) < 0)   /* EACCES: below our nice */
		fprintf(stderr, "%s: PRIO_RGRP %d: %s\n", p->name, p->nice, strerror(errno));
	while (n < 3 && !(err = rgroup_thread_create(&th[n], NULL, 0, work, NULL)))
		n++;
	if (err)
		fprintf(stderr, "%s: rgroup_thread_create: %s\n", p->name, strerror(err));
	work(NULL);
	while (n > 0)
		pthread_join(th[--n], NULL);
	return NULL;
}

int main(void)
{
	struct pool pools[] = { { "queries", getpriority(PRIO_PROCESS, 0) }, { "compaction", 10 } };
	pthread_t th[2];
	rgroup_id_t ids[8];
	int started = 0, err = 0;

	while (started < 2 && !(err = rgroup_thread_create(&th[started], NULL, RGROUP_NEW,
							     pool_main, &pools[started])))
		started++;
	sleep(err ? 0 : 3);
	/* Read the groups while their threads run: an rgroup ends with them. */
	for (int i = 0, n = rgroup_list(ids, 8); i < n && i < 8; i++) {
		struct rgroup_info info = { .sz = sizeof(info) };

		if (rgroup_info(ids[i], &info) == 0)
			printf("rgroup at nice %3d (weight %4u), %u threads: %.2f s CPU\n",
			       info.nice, info.weight, info.nthreads, info.usage_ns / 1e9);
	}
	atomic_store(&stop, 1);
	while (started > 0)
		pthread_join(th[--started], NULL);
	if (err == ENOTSUP)
		fprintf(stderr, "rgroup: no backend here: run `rgroup doctor`\n");
	else if (err)
		fprintf(stderr, "rgroup_thread_create: %s\n", strerror(err));
	return err ? 1 : 0;
}
