/* SPDX-License-Identifier: MIT */
/*
 * exec.c - rule 7 for exec: a program started by exec begins in the
 * process's sgroup, never inside an rgroup, also when a thread inside an
 * rgroup calls exec directly without a fork first.
 *
 * The kernel keeps an exec'ing thread in its cgroup, and there is no hook
 * for a library to run at exec. So librgroup defines the exec functions
 * itself: a program linked with -lrgroup resolves them here before libc.
 * Each calls exec_prepare() (groups emptied into the sgroup and removed),
 * makes the system call, and on failure exec_failed() puts the tree back
 * as it was. Everything is built on the execve and execveat system calls,
 * so it also works statically linked, where no "next" libc symbol can be
 * looked up.
 */
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <paths.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"

extern char **environ;

static struct rgroup__core *const st = &rgroup__core;

/*
 * exec replaces the process: the new program starts in the sgroup and our
 * groups must not outlive the old image. So before an exec every group is
 * emptied into the sgroup and removed; the lock stays held so nobody makes
 * another, and if the exec fails the tree is rebuilt as it was. (A
 * self-managed kernel does this at exec itself.) In a vfork child (another
 * process sharing our memory) only the child itself moves: it must not
 * touch the parent's tree or lock.
 */
static void exec_prepare(void)
{
	if (!st->be)
		return;
	/* The kernel starts the program outside every group; what else the
	 * group gave the thread (rule 10's CPUs) is the backend's to undo. */
	if (st->be->self_managed) {
		if (rgroup__self.node && st->be->place_self)
			st->be->place_self(st->be->priv, NULL);
		return;
	}
	if ((pid_t)syscall(SYS_getpid) != st->pid) {
		if (rgroup__self.node && st->attached && st->be->place_self)
			st->be->place_self(st->be->priv, NULL);
		return;
	}
	rgroup__lock();
	if ((st->ngroups || rgroup__any_spares()) && st->attached) {
		rgroup__unbind_all();
		st->dismantled = 1;
	}
	if (st->be->quiesce)
		st->be->quiesce(st->be->priv);
}

static void exec_failed(void)
{
	if (!st->be || (pid_t)syscall(SYS_getpid) != st->pid)
		return;
	if (st->be->self_managed) {
		/* Still in its group: what the group gives, again. */
		rgroup__lock();
		if (rgroup__self.node && st->be->place_self)
			st->be->place_self(st->be->priv, rgroup__self.node);
		rgroup__unlock();
		return;
	}
	if (st->dismantled) {
		rgroup__bind_all();
		st->dismantled = 0;
		pthread_cond_signal(&st->cond);
	}
	rgroup__unlock();
}

static int do_execve(const char *path, char *const argv[], char *const envp[])
{
	int e;

	exec_prepare();
	syscall(SYS_execve, path, argv, envp);
	e = errno;
	exec_failed();
	errno = e;
	return -1;
}

RGROUP__EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_execve(path, argv, envp);
}

RGROUP__EXPORT int execv(const char *path, char *const argv[])
{
	return do_execve(path, argv, environ);
}

RGROUP__EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	int e;

	exec_prepare();
	syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
	e = errno;
	exec_failed();
	errno = e;
	return -1;
}

/* A file the kernel would not run (no #! line): run it with the shell, as
 * POSIX asks of execvp. */
static void exec_shell(const char *file, char *const argv[], char *const envp[])
{
	size_t n = 0;

	while (argv[n])
		n++;
	char **sh = alloca((n + 2) * sizeof(char *));
	sh[0] = (char *)"sh";
	sh[1] = (char *)file;
	for (size_t i = 1; i <= n; i++)
		sh[i + 1] = argv[i];
	do_execve(_PATH_BSHELL, sh, envp);
}

/* execvpe(3): search PATH as glibc does (default "/bin:/usr/bin"), try each
 * directory, remember EACCES, skip ENOENT/ENOTDIR and similar. */
RGROUP__EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	const char *path, *p;
	size_t flen;
	int got_eacces = 0;

	if (!*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/')) {
		do_execve(file, argv, envp);
		if (errno == ENOEXEC)
			exec_shell(file, argv, envp);
		return -1;
	}
	path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	flen = strlen(file);
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = end - p;
		char *full = alloca(dlen + flen + 2);

		if (dlen) {
			memcpy(full, p, dlen);
			full[dlen] = '/';
			memcpy(full + dlen + 1, file, flen + 1);
		} else {
			memcpy(full, file, flen + 1); /* empty entry: cwd */
		}
		do_execve(full, argv, envp);
		switch (errno) {
		case ENOEXEC:
			exec_shell(full, argv, envp);
			return -1;
		case EACCES:
			got_eacces = 1;
			break;
		case ENOENT: case ENOTDIR: case ESTALE: case ENODEV: case ETIMEDOUT:
			break;
		default:
			return -1;
		}
		if (!*end)
			break;
		p = end;
	}
	errno = got_eacces ? EACCES : ENOENT;
	return -1;
}

RGROUP__EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The execl* forms gather their arguments into an argv on the stack. */
#define GATHER_ARGS(arg0, ap, argv, envp_out)                                \
	do {                                                                 \
		size_t n_ = 1;                                               \
		va_start(ap, arg0);                                          \
		while (va_arg(ap, char *))                                   \
			n_++;                                                \
		va_end(ap);                                                  \
		argv = alloca((n_ + 1) * sizeof(char *));                    \
		argv[0] = (char *)arg0;                                      \
		va_start(ap, arg0);                                          \
		for (size_t i_ = 1; i_ <= n_; i_++)                          \
			argv[i_] = va_arg(ap, char *);                       \
		envp_out;                                                    \
		va_end(ap);                                                  \
	} while (0)

RGROUP__EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv;

	GATHER_ARGS(arg, ap, argv, (void)0);
	return do_execve(path, argv, environ);
}

RGROUP__EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	char **argv;

	GATHER_ARGS(arg, ap, argv, (void)0);
	return execvpe(file, argv, environ);
}

RGROUP__EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv, **envp;

	GATHER_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
	return do_execve(path, argv, envp);
}

