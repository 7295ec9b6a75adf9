/* SPDX-License-Identifier: MIT */
/*
 * tenants.c - one rgroup per tenant: a tenant's pool competes like a single
 * thread however many threads it runs, so "big" with 8 busy threads and
 * "small" with 1 get about the same CPU time.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <rgroup.h>

struct tenant { const char *name; int nthreads; };
static atomic_int stop;

static void *serve(void *arg)   /* stands in for serving the tenant's requests */
{
	for (volatile unsigned long n = 0; !atomic_load(&stop); n++)
		;
	return arg;
}

/* A tenant's first thread, born in the tenant's new rgroup: the rest of the
 * pool is started from inside with flags 0, so it joins that rgroup. */
static void *tenant_main(void *arg)
{
	struct tenant *t = arg;
	pthread_t th[16];
	int n = 0, err = 0;

	while (n < t->nthreads - 1 && !(err = rgroup_thread_create(&th[n], NULL, 0, serve, NULL)))
		n++;
	if (err)
		fprintf(stderr, "%s: rgroup_thread_create: %s\n", t->name, strerror(err));
	serve(NULL);
	while (n > 0)
		pthread_join(th[--n], NULL);
	return NULL;
}

int main(void)
{
	struct tenant tenants[] = { { "big", 8 }, { "small", 1 } };
	pthread_t th[2];
	rgroup_id_t ids[8];
	int started = 0, err = 0;

	while (started < 2 && !(err = rgroup_thread_create(&th[started], NULL, RGROUP_NEW,
							     tenant_main, &tenants[started])))
		started++;
	sleep(err ? 0 : 3);
	/* Read the groups while their threads run: an rgroup ends with them. */
	for (int i = 0, n = rgroup_list(ids, 8); i < n && i < 8; i++) {
		struct rgroup_info info = { .sz = sizeof(info) };

		if (rgroup_info(ids[i], &info) == 0)
			printf("tenant rgroup %llu: %u threads, %.2f s CPU\n",
			       (unsigned long long)info.id, info.nthreads, info.usage_ns / 1e9);
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
