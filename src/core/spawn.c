/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - rule 7: a child process and a program started by exec begin in
 * the process's sgroup, never inside an rgroup. Here are the fork handlers,
 * the exec family (also when a thread inside an rgroup calls exec directly
 * without a fork first), and posix_spawn, system and popen.
 *
 * The kernel keeps an exec'ing thread in its cgroup, and there is no hook
 * for a library to run at exec. So librgroup defines the exec functions
 * itself: a program linked with -lrgroup resolves them here before libc.
 * Each calls exec_prepare() (groups emptied into the sgroup and removed),
 * makes the system call, and on failure exec_failed() puts the tree back
 * as it was. Everything is built on the execve and execveat system calls,
 * so it also works statically linked, where no "next" libc symbol can be
 * looked up.
 *
 * A child made by a thread inside an rgroup starts in that thread's
 * cgroup (backends with forks_inherit). fork() is followed by the fork
 * handler, which moves the child out before it returns; but glibc's
 * posix_spawn, system and popen clone and exec with no hook in between.
 * So those children are spawned by a helper thread that lives in the
 * sgroup: born of the caller (it inherits the caller's nice, policy and
 * CPU affinity, as the child must), it moves itself to the sgroup and
 * spawns with the caller's signal mask. system() and popen() are the
 * library's own, on top of that; posix_spawn() and posix_spawnp() are
 * interposed by posix-spawn.c, in the shared library only (a static link
 * cannot have libc's and ours side by side).
 */
#include <alloca.h>
#include <paths.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"

extern char **environ;

static struct rgroup__core *const st = &rgroup__core;

/* ---- fork ------------------------------------------------------------- */

void rgroup__fork_prepare(void)
{
	rgroup__lock();
	rgroup__helpers_fork_prepare();
}

void rgroup__fork_parent(void)
{
	rgroup__helpers_fork_parent();
	rgroup__unlock();
}

static void free_list(struct rgroup__node *list)
{
	for (struct rgroup__node *n = list, *next; n; n = next) {
		next = n->next;
		free_list(n->children);
		free_list(n->spares);
		rgroup__node_free(n);
	}
}

void rgroup__drop_stale(void)
{
	/* A fork child frees its copy of the parent's tree at its first
	 * group, not earlier: a child that only asks or execs never calls the
	 * allocator, which is not safe in every fork child (sanitizers). */
	if (!st->stale_top && !st->stale_spares && !st->stale_slots[0] && !st->stale_slots[1])
		return;
	free_list(st->stale_top);
	free_list(st->stale_spares);
	free(st->stale_slots[0]);
	free(st->stale_slots[1]);
	st->stale_top = st->stale_spares = NULL;
	st->stale_slots[0] = st->stale_slots[1] = NULL;
}

/*
 * The child begins in the sgroup with an empty tree. This runs in the
 * child of a multi-threaded process, so it only lets go of the backend's
 * resources and resets state; the parent's tree is freed when the child
 * makes its first group. The lock, taken in rgroup__fork_prepare() by this
 * very thread, is released, not re-initialised.
 */
void rgroup__fork_child(void)
{
	rgroup__helpers_fork_child();
	if (st->be && st->be->fork_child)
		st->be->fork_child(st->be->priv);
	st->stale_top = st->top;
	st->stale_spares = st->top_spares;
	st->stale_slots[0] = st->ids.slot;
	st->stale_slots[1] = st->tids.slot;
	st->ids = st->tids = (struct rgroup__htab){ 0 };
	st->top = NULL;
	st->top_spares = NULL;
	st->nspares = 0;
	st->ngroups = 0;
	st->attached = 0;
	st->keeper_running = 0;
	st->keeper_tid = 0;
	st->reap_wanted = 0;
	st->placing = 0;                /* the placing threads are not here */
	st->nplain = st->nstrays = 0;   /* the census's buffers are reused */
	st->pid = getpid();
	rgroup__self.node = NULL;
	rgroup__self.known = 1;
	rgroup__self.tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_init(&st->cond, NULL);
	rgroup__unlock();
}

/* ---- exec --------------------------------------------------------------- */

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
		rgroup__unbind_all(1);
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

/* ---- posix_spawn, system, popen ------------------------------------------ */

/* posix-spawn.c, in the shared library only: libc's posix_spawn and
 * pclose, found behind ours. In a static link libc's are the only ones. */
extern rgroup__spawn_fn *rgroup__libc_posix_spawn(int search) __attribute__((weak));
extern int rgroup__libc_pclose(FILE *f) __attribute__((weak));

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
