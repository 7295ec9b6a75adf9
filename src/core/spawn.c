/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - rule 7 for posix_spawn, system and popen: their children
 * begin in the process's sgroup, never inside an rgroup.
 *
 * A child made by a thread inside an rgroup starts in that thread's
 * cgroup (backends with forks_inherit). fork() is followed by the fork
 * handler (fork.c), which moves the child out before it returns; but
 * glibc's posix_spawn, system and popen clone and exec with no hook in
 * between. So those children are spawned by a helper thread that lives
 * in the sgroup: born of the caller (it inherits the caller's nice,
 * policy and CPU affinity, as the child must), it moves itself to the
 * sgroup and spawns with the caller's signal mask. system() and popen()
 * are the library's own, on top of that; posix_spawn() and posix_spawnp()
 * reach rgroup__spawn() through posix-spawn.c in the shared library and
 * posix-spawn-wrap.c in a static link.
 */
#include <paths.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "libc-next.h"

extern char **environ;

static struct rgroup__core *const st = &rgroup__core;

static rgroup__spawn_fn *libc_spawn(int search)
{
	rgroup__spawn_fn *fn = NULL;

	if (rgroup__libc_posix_spawn)
		fn = rgroup__libc_posix_spawn(search);
	else
		fn = search ? posix_spawnp : posix_spawn;
	return fn;
}

struct spawn_req {
	rgroup__spawn_fn *fn;
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *actions;
	posix_spawnattr_t attr;
	char *const *argv, *const *envp;
	int result;
};

static void *spawn_helper(void *p)
{
	struct spawn_req *rq = p;
	int r;

	rgroup__lock();
	r = st->attached ? st->be->place(st->be->priv, NULL, rgroup__self_tid()) : -ENODEV;
	rgroup__unlock();
	rq->result = r < 0 ? -r
		: rq->fn(rq->pid, rq->path, rq->actions, &rq->attr, rq->argv, rq->envp);
	return NULL;
}

/* Does a child of the calling thread start inside one of our groups? */
static int child_starts_inside(void)
{
	struct rgroup__node *n;
	int err;

	rgroup__init();
	if (!st->be || !st->be->forks_inherit)
		return 0;
	rgroup__lock();
	n = rgroup__node_of(rgroup__self_tid(), &err);
	rgroup__unlock();
	return n != NULL;
}

int rgroup__spawn(rgroup__spawn_fn *fn, pid_t *pid, const char *path,
		  const posix_spawn_file_actions_t *actions,
		  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct spawn_req rq = { .fn = fn, .pid = pid, .path = path, .actions = actions };
	pthread_attr_t ta;
	pthread_t t;
	sigset_t all, mine;
	short flags = 0;
	int r;

	if (!child_starts_inside())
		return fn(pid, path, actions, attr, argv, envp);
	rq.argv = argv;
	rq.envp = envp;
	/* The caller's attributes, plus its signal mask unless they set one:
	 * the helper runs with every signal blocked. */
	if (attr) {
		rq.attr = *attr;
		posix_spawnattr_getflags(attr, &flags);
	} else {
		posix_spawnattr_init(&rq.attr);
	}
	if (!(flags & POSIX_SPAWN_SETSIGMASK)) {
		pthread_sigmask(SIG_SETMASK, NULL, &mine);
		posix_spawnattr_setsigmask(&rq.attr, &mine);
		posix_spawnattr_setflags(&rq.attr, flags | POSIX_SPAWN_SETSIGMASK);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mine);
	pthread_attr_init(&ta);
	pthread_attr_setstacksize(&ta, 256 * 1024);
	r = rgroup__pthread_create(&t, &ta, spawn_helper, &rq);
	pthread_attr_destroy(&ta);
	pthread_sigmask(SIG_SETMASK, &mine, NULL);
	if (r == 0) {
		pthread_join(t, NULL);
		r = rq.result;
	}
	if (!attr)
		posix_spawnattr_destroy(&rq.attr);
	return r;
}

/* "sh -c cmd", spawned as rgroup__spawn() does: posix_spawn()'s errors. */
static int spawn_shell(pid_t *pid, const char *cmd, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)cmd, NULL };
	rgroup__spawn_fn *fn = libc_spawn(0);

	return fn ? rgroup__spawn(fn, pid, _PATH_BSHELL, fa, attr, argv, environ) : ENOSYS;
}

/* Wait for a child of ours, through signals: its status, or -1. */
static int reap_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

/*
 * system(3) as glibc does it: SIGINT and SIGQUIT ignored and SIGCHLD
 * blocked in the caller while the command runs (counted, for calls from
 * several threads at once), the defaults and the caller's mask in the
 * child, 127 from the shell when it cannot be started.
 */
static pthread_mutex_t system_lock = PTHREAD_MUTEX_INITIALIZER;
static int system_users;
static struct sigaction saved_int, saved_quit;

RGROUP__EXPORT int system(const char *cmd)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	posix_spawnattr_t attr;
	sigset_t chld, omask, reset;
	int status, r;
	pid_t pid;

	if (!cmd)
		return system("exit 0") == 0;
	sigemptyset(&ign.sa_mask);
	pthread_mutex_lock(&system_lock);
	if (system_users++ == 0) {
		sigaction(SIGINT, &ign, &saved_int);
		sigaction(SIGQUIT, &ign, &saved_quit);
	}
	pthread_mutex_unlock(&system_lock);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &omask);

	sigemptyset(&reset);
	if (saved_int.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGINT);
	if (saved_quit.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGQUIT);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	r = spawn_shell(&pid, cmd, NULL, &attr);
	posix_spawnattr_destroy(&attr);
	status = r == 0 ? reap_child(pid) : W_EXITCODE(127, 0);

	pthread_mutex_lock(&system_lock);
	if (--system_users == 0) {
		sigaction(SIGINT, &saved_int, NULL);
		sigaction(SIGQUIT, &saved_quit, NULL);
	}
	pthread_mutex_unlock(&system_lock);
	pthread_sigmask(SIG_SETMASK, &omask, NULL);
	return status;
}

/* The streams popen() made and their children, for pclose(). */
struct piped {
	FILE *f;
	pid_t pid;
	struct piped *next;
};
static struct piped *piped;
static pthread_mutex_t piped_lock = PTHREAD_MUTEX_INITIALIZER;

/* The pipe of a popen(): *mine for the caller, *theirs (never fd 0 or 1,
 * whose dup2 onto itself would keep close-on-exec) for the child. */
static int popen_pipe(int reading, int *mine, int *theirs)
{
	int fds[2], moved;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return errno;
	*mine = reading ? fds[0] : fds[1];
	*theirs = reading ? fds[1] : fds[0];
	if (*theirs > STDOUT_FILENO)
		return 0;
	moved = fcntl(*theirs, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	if (moved < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		return e;
	}
	close(*theirs);
	*theirs = moved;
	return 0;
}

RGROUP__EXPORT FILE *popen(const char *cmd, const char *mode)
{
	int reading = mode && mode[0] == 'r', mine = -1, theirs = -1, r;
	posix_spawn_file_actions_t fa;
	struct piped *p;
	pid_t pid;

	if (!cmd || !mode || (mode[0] != 'r' && mode[0] != 'w') ||
	    strspn(mode + 1, "e") != strlen(mode + 1)) {
		errno = EINVAL;
		return NULL;
	}
	p = malloc(sizeof(*p));
	if (!p)
		return NULL;
	r = popen_pipe(reading, &mine, &theirs);
	if (r)
		goto fail;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, theirs, reading ? STDOUT_FILENO : STDIN_FILENO);
	r = spawn_shell(&pid, cmd, &fa, NULL);
	posix_spawn_file_actions_destroy(&fa);
	close(theirs);
	if (r) {
		close(mine);
		goto fail;
	}
	if (!strchr(mode, 'e'))
		fcntl(mine, F_SETFD, 0);
	p->f = fdopen(mine, reading ? "r" : "w");
	if (!p->f) {
		r = errno;
		close(mine);
		reap_child(pid);
		goto fail;
	}
	p->pid = pid;
	pthread_mutex_lock(&piped_lock);
	p->next = piped;
	piped = p;
	pthread_mutex_unlock(&piped_lock);
	return p->f;
fail:
	free(p);
	errno = r;
	return NULL;
}

RGROUP__EXPORT int pclose(FILE *f)
{
	struct piped **pp, *p = NULL;
	int status;

	pthread_mutex_lock(&piped_lock);
	for (pp = &piped; *pp; pp = &(*pp)->next)
		if ((*pp)->f == f) {
			p = *pp;
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&piped_lock);
	if (!p) {
		/* Not ours: a stream libc's popen made for another library. */
		if (rgroup__libc_pclose)
			return rgroup__libc_pclose(f);
		errno = ECHILD;
		return -1;
	}
	fclose(f);
	status = reap_child(p->pid);
	free(p);
	return status;
}
