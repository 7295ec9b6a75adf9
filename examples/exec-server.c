/* SPDX-License-Identifier: MIT */
/*
 * exec-server.c - a server that runs each tenant's requests in the tenant's
 * work group. "busy" sends ten requests for each one of "quiet"'s, more
 * than the CPUs can serve, yet both get half the CPU: a work group's
 * workers live in one rgroup, and the kernel weighs rgroups, not requests.
 *
 *   ./exec-server        both at nice 0: about 50% / 50%
 *   ./exec-server 5      busy at nice 5: about 25% / 75% (weights 335 : 1024)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rgroup.h>

static double now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void handle(void *request)   /* one request: 1 ms of CPU */
{
	double end = now(CLOCK_THREAD_CPUTIME_ID) + 0.001;
	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		;
	(void)request;
}

int main(int argc, char **argv)
{
	struct rgroup_exec_group_opts busy_opts = { .sz = sizeof(busy_opts) };
	struct rgroup_exec_group_info info[2];
	const char *names[2] = { "busy", "quiet" };
	rgroup_exec_group_t tenant[2];
	rgroup_exec_t pool;
	int err, canceled;

	busy_opts.nice = argc > 1 ? atoi(argv[1]) : 0;
	/* Workers: up to one per CPU in each group, started on demand. */
	err = rgroup_exec_create(&pool, NULL);
	if (!err)
		err = rgroup_exec_group_create(pool, "busy", &busy_opts, &tenant[0]);
	if (!err)
		err = rgroup_exec_group_create(pool, "quiet", NULL, &tenant[1]);
	if (err) {
		fprintf(stderr, "rgroup_exec: %s (try `rgroup doctor`)\n", strerror(-err));
		return 1;
	}

	/* The server loop: every millisecond, 20 requests for busy and 2 for
	 * quiet arrive; each tenant's are run by its own work group. */
	double start = now(CLOCK_MONOTONIC), next = start;
	while (next < start + 3) {
		for (int i = 0; i < 20; i++)
			rgroup_exec_submit(tenant[0], handle, NULL);
		for (int i = 0; i < 2; i++)
			rgroup_exec_submit(tenant[1], handle, NULL);
		next += 0.001;
		struct timespec ts = { (time_t)next, (long)((next - (time_t)next) * 1e9) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}

	for (int i = 0; i < 2; i++) {
		info[i].sz = sizeof(info[i]);
		rgroup_exec_group_info(tenant[i], &info[i]);
	}
	double total = (info[0].cpu_ns + info[1].cpu_ns) / 1e9;
	printf("backend %s; 3 s of requests\n", rgroup_backend());
	printf("tenant  nice   sent  served  CPU s  share\n");
	for (int i = 0; i < 2; i++)
		printf("%-6s %5d %6llu %7llu %6.2f %5.1f%%\n", names[i], info[i].nice,
		       (unsigned long long)info[i].submitted, (unsigned long long)info[i].completed,
		       info[i].cpu_ns / 1e9, 100 * info[i].cpu_ns / 1e9 / total);
	/* Shutting down: the requests still queued are dropped. */
	canceled = rgroup_exec_destroy(pool, 0);
	printf("%d requests still queued at the end were canceled\n", canceled);
	return 0;
}
