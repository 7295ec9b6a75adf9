/* SPDX-License-Identifier: MIT */
/*
 * busy-exit.c - a governor process that exits while its rgroup threads
 * still run, for test-tree-top.sh: its state file must be gone when exit()
 * returns to the kernel, not only when the governor gets round to it.
 *
 * Starts two spinning threads in new rgroups, waits (at most 5 s) until the
 * governor has written the state file, prints its path and returns from
 * main. Exit 0, 1 (no state file appeared) or 77 (not on the governor).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rgroup.h>

#include "governor-state.h"
#include "locate.h"

static void *spin(void *arg)
{
	for (volatile unsigned long n = 0;; n++)
		;
	return arg;
}

int main(void)
{
	char name[64], path[128];
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	pthread_t t;

	if (strcmp(rgroup_backend(), "governor") != 0) {
		fprintf(stderr, "busy-exit: backend %s, not the governor (set RGROUP_BACKEND=governor)\n",
			rgroup_backend());
		return 77;
	}
	for (int i = 0; i < 2; i++) {
		int err = rgroup_thread_create(&t, NULL, RGROUP_NEW, spin, NULL);

		if (err) {
			fprintf(stderr, "busy-exit: rgroup_thread_create: %s\n", strerror(err));
			return 1;
		}
	}
	if (rgroup__format_statename(name, sizeof(name), getpid(), rgroup__starttime(0), 0) < 0) {
		fprintf(stderr, "busy-exit: cannot name the state file\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s", RGROUP__STATE_DIR, name);
	for (int i = 0; i < 500 && access(path, F_OK) < 0; i++)
		nanosleep(&tick, NULL);
	printf("%s\n", path);
	if (access(path, F_OK) < 0) {
		fprintf(stderr, "busy-exit: no state file %s after 5 s\n", path);
		return 1;
	}
	return 0;   /* with both threads still spinning */
}
