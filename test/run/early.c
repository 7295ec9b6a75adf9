/* SPDX-License-Identifier: MIT */
/*
 * early.c - a library whose constructor calls every function rgroup run's
 * preload stands in for, as libcap-ng's and others' start-up code do. It
 * is a dependency of early-main.c, so the dynamic loader runs this
 * constructor before the preload's: each call must work all the same.
 * What each returned is kept for main() to print.
 */
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "early.h"

char early_log[4096];

static void note(const char *what, long r)
{
	size_t n = strlen(early_log);

	snprintf(early_log + n, sizeof(early_log) - n, "%s %ld\n", what, r);
}

static void *named(void *arg)
{
	*(int *)arg = pthread_setname_np(pthread_self(), "early-thread");
	return NULL;
}

static void on_usr2(int sig)
{
	sigset_t none;

	/* the first sigprocmask of this handler's thread, in a handler */
	sigemptyset(&none);
	(void)sig;
	sigprocmask(SIG_BLOCK, &none, NULL);
}

__attribute__((constructor)) static void early(void)
{
	extern char **environ;
	char *const argv[] = { "true", NULL };
	struct sigaction sa;
	sigset_t set, old;
	pthread_t t;
	pid_t pid;
	int st = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	note("sigprocmask", sigprocmask(SIG_BLOCK, &set, &old));
	note("pthread_sigmask", pthread_sigmask(SIG_SETMASK, &old, NULL));
	note("prctl", prctl(PR_SET_NAME, "early-ctor", 0, 0, 0));
	note("signal", signal(SIGUSR2, on_usr2) != SIG_ERR);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	note("sigaction", sigaction(SIGUSR2, &sa, NULL));
	note("raise", raise(SIGUSR2));
	int setname = -1;
	note("pthread_create", pthread_create(&t, NULL, named, &setname));
	note("pthread_join", pthread_join(t, NULL));
	note("pthread_setname_np", setname);
	note("posix_spawn", posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ));
	note("waitpid", waitpid(pid, &st, 0) == pid && st == 0);
	note("system", system("exit 3"));
	FILE *f = popen("echo popen", "r");
	char line[32] = "";
	note("popen", f && fgets(line, sizeof(line), f) && !strcmp(line, "popen\n"));
	note("pclose", f ? pclose(f) : -1);
	pid = vfork();
	if (pid == 0) {
		execve("/bin/true", argv, environ);
		_exit(127);
	}
	note("vfork+execve", waitpid(pid, &st, 0) == pid && st == 0);
}
