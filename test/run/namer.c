/* SPDX-License-Identifier: MIT */
/*
 * namer.c - a stand-in for a program nobody changed, for test-run.c: it
 * knows nothing of rgroups (no librgroup), and names its threads in every
 * way programs do, so that the test can see where `rgroup run`'s preload
 * put each one. It reports on stdout, "T <label> <tid>" per thread, then
 * "READY", and lives until its stdin closes.
 *
 *   namer names       the cases of placement (see main's table below)
 *   namer fork        a named thread forks; the child names a thread
 *   namer exec        a named thread execs "namer lite"
 *   namer lite        names one thread; says whether the rules came along
 *   namer spawn       a named thread starts "namer lite" with posix_spawn
 *   namer system      a named thread starts "namer lite" with system
 *   namer handler     installs a handler for SIGRTMIN+N (N: argv[2])
 *   namer reset       resets every signal to SIG_DFL, as daemons do
 *   namer blocked     a thread that blocks every signal names itself
 *   namer spin N      N busy threads named busy-0..busy-N-1 (and a busy main)
 *   namer rawclone    a thread made by clone(CLONE_THREAD) without
 *                     CLONE_SETTLS (it shares main's thread-local storage)
 *                     names itself "work-raw" with prctl; reported as "raw"
 *   namer none        names no thread and exits 0 at once
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int spin_all;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Every line goes out whole under mu, which fork() also takes (forker):
 * a fork child inherits neither a held mu nor a half-written line. */
static void say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&mu);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&mu);
}

static void report(const char *label, pid_t tid)
{
	say("T %s %d\n", label, (int)tid);
}

/* Until the test closes our stdin. */
static void wait_for_eof(void)
{
	char buf[64];

	while (read(0, buf, sizeof(buf)) > 0)
		;
}

/* The main thread's report, READY, and wait for the end. */
static int ready(void)
{
	report("main", gettid_());
	say("READY\n");
	wait_for_eof();
	return 0;
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

struct job {
	const char *label;
	void (*how)(struct job *);
	const char *name, *rename;
	pid_t tid;
	volatile int started;
	pthread_t t;
};

static void by_setname(struct job *j)
{
	pthread_setname_np(pthread_self(), j->name);
	if (j->rename)
		pthread_setname_np(pthread_self(), j->rename);
}

static void by_prctl(struct job *j)
{
	prctl(PR_SET_NAME, (unsigned long)j->name, 0, 0, 0);
}

static void by_comm(struct job *j)
{
	int fd = open("/proc/thread-self/comm", O_WRONLY);

	if (fd >= 0) {
		(void)!write(fd, j->name, strlen(j->name));
		close(fd);
	}
}

static void *child_reporter(void *p);

/* Named by itself, then makes an unnamed thread of its own (rule 1), which
 * reports itself as "kid". */
static volatile int kid_reported, quick_reported;

static void by_setname_then_child(struct job *j)
{
	pthread_t t;

	by_setname(j);
	pthread_create(&t, NULL, child_reporter, (void *)"kid");
	while (!__atomic_load_n(&kid_reported, __ATOMIC_ACQUIRE))
		usleep(1000);   /* reported before READY */
}

static void *job_main(void *p)
{
	struct job *j = p;

	j->tid = gettid_();
	if (j->how)
		j->how(j);
	/* Reported before start() returns, so before READY. */
	report(j->label, j->tid);
	__atomic_store_n(&j->started, 1, __ATOMIC_RELEASE);
	if (spin_all)
		for (;;)
			;
	return sleeper(NULL);
}

static void *child_reporter(void *p)
{
	report(p, gettid_());
	if (strcmp(p, "kid") == 0)
		__atomic_store_n(&kid_reported, 1, __ATOMIC_RELEASE);
	else
		__atomic_add_fetch(&quick_reported, 1, __ATOMIC_RELEASE);
	return sleeper(NULL);
}

static void start(struct job *j)
{
	pthread_create(&j->t, NULL, job_main, j);
	while (!__atomic_load_n(&j->started, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static int names(void)
{
	static struct job jobs[] = {
		{ "self", by_setname, "work-1", NULL },
		{ "prctl", by_prctl, "work-2", NULL },
		{ "other", by_setname, "other", NULL },
		{ "renamed", by_setname, "work-6", "bg-6" },
		{ "bg", by_setname, "bg-8", NULL },
		{ "comm", by_comm, "work-9", NULL },
	};
	struct job named_after = { "named-after", NULL, NULL, NULL };
	struct job maker = { "maker", by_setname_then_child, "work-m", NULL };
	pthread_t quick[16];

	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		start(&jobs[i]);
	/* Named by another thread after it started. */
	start(&named_after);
	pthread_setname_np(named_after.t, "work-3");
	/* Named by its creator at once (RocksDB does this): it may not have
	 * run yet. */
	for (int i = 0; i < 16; i++) {
		char name[16];
		pthread_create(&quick[i], NULL, child_reporter, (void *)"quick");
		snprintf(name, sizeof(name), "work-q%d", i);
		pthread_setname_np(quick[i], name);
	}
	while (__atomic_load_n(&quick_reported, __ATOMIC_ACQUIRE) < 16)
		usleep(1000);
	/* A thread made by a thread in a group (rule 1): it names nothing. */
	start(&maker);
	return ready();
}

static void *forker(void *p)
{
	pid_t pid;

	pthread_setname_np(pthread_self(), "work-f");
	report("forker", gettid_());
	pthread_mutex_lock(&mu);
	pid = fork();
	pthread_mutex_unlock(&mu);
	if (pid == 0) {
		pthread_t t;
		struct job j = { "child-named", by_setname, "work-c", NULL };
		printf("CHILD %d %d\n", (int)getpid(), (int)gettid_());
		fflush(stdout);
		pthread_create(&t, NULL, job_main, &j);
		(void)t;
		wait_for_eof();
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return NULL;
}

static int do_fork(void)
{
	pthread_t t;

	pthread_create(&t, NULL, forker, NULL);
	report("main", gettid_());
	say("READY\n");
	pthread_join(t, NULL);
	return 0;
}

static const char *self_path;

static void *execer(void *p)
{
	pthread_setname_np(pthread_self(), "work-e");
	report("execer", gettid_());
	execl(self_path, "namer", "lite", (char *)NULL);
	perror("execl");
	_exit(1);
}

static int do_exec(void)
{
	pthread_t t;

	pthread_create(&t, NULL, execer, NULL);
	pthread_join(t, NULL);
	return 1;
}

/* A named thread starts "namer lite" as a child process and waits for it:
 * through posix_spawn or system. The child reports as "main". */
static void *spawner(void *p)
{
	const char *how = p;
	char cmd[4200], exe[4096];
	ssize_t n;
	pid_t pid;

	pthread_setname_np(pthread_self(), "work-s");
	report("spawner", gettid_());
	if (!strcmp(how, "system")) {
		/* The shell's /proc/self/exe would be the shell. */
		n = readlink(self_path, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		snprintf(cmd, sizeof(cmd), "exec '%s' lite", exe);
		system(cmd);
	} else {
		char *argv[] = { (char *)"namer", (char *)"lite", NULL };
		extern char **environ;

		if (posix_spawn(&pid, self_path, NULL, NULL, argv, environ) == 0)
			waitpid(pid, NULL, 0);
	}
	return NULL;
}

static int do_spawn(const char *how)
{
	pthread_t t;

	pthread_create(&t, NULL, spawner, (void *)how);
	pthread_join(t, NULL);
	return 0;
}

static int lite(void)
{
	struct job j = { "lite-named", by_setname, "work-x", NULL };

	printf("EXEC rules=%s preload=%s\n", getenv("RGROUP_RUN_RULES") ? "yes" : "no",
	       getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "rgroup") ? "yes" : "no");
	start(&j);
	return ready();
}

static void on_sig(int sig)
{
	(void)sig;
}

static int handler(int offset)
{
	struct job j = { "handled", by_setname, "work-h", NULL };
	struct sigaction sa;

	start(&j);   /* a group exists: the governor runs */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigaction(SIGRTMIN + offset, &sa, NULL);
	return ready();
}

/* A worker that blocks every signal, as qemu's do, then names itself and
 * blocks them all again. */
static void by_setname_blocked(struct job *j)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	by_setname(j);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
}

static int blocked(void)
{
	struct job j = { "blocked", by_setname_blocked, "work-b", NULL };

	start(&j);
	return ready();
}

static int reset(void)
{
	struct job j = { "reset", by_setname, "work-r", NULL };

	start(&j);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	return ready();
}

static int spin(int n)
{
	spin_all = 1;
	for (int i = 0; i < n; i++) {
		struct job *j = calloc(1, sizeof(*j));
		char *name = malloc(16), *label = malloc(16);
		snprintf(name, 16, "busy-%d", i);
		snprintf(label, 16, "busy-%d", i);
		*j = (struct job){ label, by_setname, name, NULL };
		start(j);
	}
	return ready();
}

/* The raw thread: it shares main's TLS, so it calls nothing of libc
 * that keeps state there but prctl (the call under test) and raw system
 * calls; main reports it. */
static volatile pid_t raw_tid;
static volatile int raw_named;

static int raw_main(void *arg)
{
	raw_tid = (pid_t)syscall(SYS_gettid);
	prctl(PR_SET_NAME, (unsigned long)"work-raw", 0, 0, 0);
	__atomic_store_n(&raw_named, 1, __ATOMIC_RELEASE);
	for (;;)
		syscall(SYS_pause);
	return 0;
}

static int rawclone(void)
{
	size_t size = 256 * 1024;
	char *stack = malloc(size);

	/* Names itself first, with a name outside the rules: the preload's
	 * prctl has been called once before the raw thread calls it. */
	prctl(PR_SET_NAME, (unsigned long)"namer-main", 0, 0, 0);
	if (!stack || clone(raw_main, stack + size, CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			    CLONE_THREAD | CLONE_SYSVSEM, NULL) < 0) {
		perror("clone");
		return 1;
	}
	while (!__atomic_load_n(&raw_named, __ATOMIC_ACQUIRE))
		usleep(1000);
	report("raw", raw_tid);
	return ready();
}

int main(int argc, char **argv)
{
	self_path = "/proc/self/exe";
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "names"))
		return names();
	if (!strcmp(argv[1], "none"))
		return 0;
	if (!strcmp(argv[1], "fork"))
		return do_fork();
	if (!strcmp(argv[1], "exec"))
		return do_exec();
	if (!strcmp(argv[1], "spawn") || !strcmp(argv[1], "system"))
		return do_spawn(argv[1]);
	if (!strcmp(argv[1], "lite"))
		return lite();
	if (!strcmp(argv[1], "handler"))
		return handler(argc > 2 ? atoi(argv[2]) : 7);
	if (!strcmp(argv[1], "reset"))
		return reset();
	if (!strcmp(argv[1], "blocked"))
		return blocked();
	if (!strcmp(argv[1], "spin"))
		return spin(argc > 2 ? atoi(argv[2]) : 2);
	if (!strcmp(argv[1], "rawclone"))
		return rawclone();
	return 2;
}
