/* SPDX-License-Identifier: MIT */
/*
 * preload-control.c - `rgroup set` in the preload (preload.h, control.h).
 *
 * `rgroup set` (control.h): a thread, "rgroup-ctl", answers on the
 * process's control socket from the first time a thread's name matches a
 * rule (a program whose names match nothing gets no thread), unless
 * --no-control (RGROUP_RUN_CONTROL=0). It is started by the thread that
 * enters the first group, before it enters, so that it is born outside
 * every group (the native kernel keeps a thread in its creator's); it
 * is one of the library's helpers (every signal blocked, fork-safe).
 * A fork child starts its own, for its own groups.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "control.h"
#include "preload.h"

static int control = 1, control_fd = -1;
static pid_t control_pid;
static struct rgroup__run_rules changed;   /* preload_mu held */

static int control_apply(const char *path, const char *settings, char *msg, size_t len)
{
	struct rgroup__run_group *ng;
	struct rgroup__level l;
	unsigned int what, how = 0;
	char now[256] = "";
	int g, r = 0;

	pthread_mutex_lock(&preload_mu);
	g = rgroup__run_change(&preload_rules, &changed, path, settings, &what, msg, len);
	if (g < 0) {
		pthread_mutex_unlock(&preload_mu);
		return g;
	}
	ng = &changed.groups[g];
	l = preload_levels[g];
	preload_level_settings(&l, ng);
	how |= what & RGROUP__RUN_NICE ? RGROUP__CHANGE_NICE : 0;
	how |= what & RGROUP__RUN_CPUS ? RGROUP__CHANGE_CPUS : 0;
	how |= what & RGROUP__RUN_MAX ? RGROUP__CHANGE_CAP : 0;
	if (l.id)
		r = rgroup__enter_change(l.id, &l, how);
	if (r == -ESRCH)
		preload_levels[g].id = 0;   /* gone: the next one made gets the settings */
	else if (r < 0) {
		snprintf(msg, len, "group '%s': %s%s; nothing changed", path, strerror(-r), preload_why(r));
		pthread_mutex_unlock(&preload_mu);
		return r;
	}
	preload_rules.groups[g] = *ng;
	preload_level_settings(&preload_levels[g], &preload_rules.groups[g]);
	rgroup__run_format_settings(ng, now, sizeof(now));
	snprintf(msg, len, "group '%s' now has %s%s", path, now[0] ? now : "no settings of its own",
		 preload_levels[g].id ? "" : " (it has no thread now: the next group made for it gets them)");
	if (preload_levels[g].id)
		names_publish();
	if (preload_verbose)
		preload_say("rgroup set: %s", msg);
	pthread_mutex_unlock(&preload_mu);
	return 0;
}

static void *control_main(void *unused)
{
	(void)unused;
	/* Past the wrappers: this name is not the program's to match. */
	syscall(SYS_prctl, PR_SET_NAME, "rgroup-ctl", 0, 0, 0);
	rgroup__control_serve(control_fd, control_apply);
	return NULL;
}

/* Once per process, from the first entry, preload_mu held. Best effort: without
 * it the program runs as the rules say, only `rgroup set` cannot reach
 * it (and says so). */
void control_start(void)
{
	uint64_t start;
	int fd;

	if (!control || control_pid == getpid())
		return;
	control_pid = getpid();
	if (preload_self_start(&start) < 0 || (fd = rgroup__control_listen(control_pid, start)) < 0)
		return;
	control_fd = fd;
	if (rgroup__start_helper(control_main) < 0) {
		close(fd);
		control_fd = -1;
	}
}

void control_init(void)
{
	const char *v = getenv("RGROUP_RUN_CONTROL");

	control = !(v && strcmp(v, "0") == 0);
}

void control_fork_child(void)
{
	if (control_fd >= 0)
		close(control_fd);
	control_fd = -1;
}
