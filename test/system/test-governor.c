/* SPDX-License-Identifier: MIT */
/*
 * test-governor.c - the governor's safety rules: while it pauses
 * threads with its signal, the application's own work stays correct and
 * nothing hangs.
 *
 *   syscalls    pipe write/read and mutex + condition-variable ping-pong
 *               between a group that is paused most of the time and a
 *               plain thread: no call fails with EINTR, no byte is lost,
 *               and the group really was paused;
 *   blocked     a thread that blocks the signal is not paused, is counted
 *               (rgroup_info's unthrottled), and nothing hangs;
 *   exec        a process whose threads are being paused execs itself
 *               forty times, from a thread being paused: no image is killed by a signal left pending;
 *   fork        fork() while threads are paused, children that make their
 *               own groups: every child ends normally.
 *   signal_reset     the program resets every signal to SIG_DFL, again
 *               and again, while groups contend: the process lives on, the
 *               split stays the model's (the one rule, test/lib/judge.h);
 *               not when linked with the static library (RGT_STATIC_LIBRARY),
 *               which does not interpose sigaction();
 *   signal_taken     the program installs its own handler on the
 *               governor's signal: the process lives on, rgroup_info
 *               says RGROUP_INFO_UNENFORCED, and from then on the handler
 *               gets no signal of the governor's.
 *   handler_first_use   a signal handler calls rgroup_of() again and again
 *               while the process's first call sets the library up: no
 *               hang; during the set-up it gets EDEADLK, after it an answer.
 * These cases run in a child process of their own (a killed or hung child
 * is a failure, not the end of the test; the last needs a fresh process).
 *
 * Registered for the governor (RGROUP_BACKEND=governor). Pinned to one
 * CPU, so that the groups contend and the governor pauses.
 */
#include <pthread.h>
#include <sched.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "sgroup.h"
#include "judge.h"
#include "scenario.h"

#define LOW_NICE 19               /* weight 15 against 1024: paused most of the time */
#define PIPE_BYTES (1 << 20)      /* at least; on until the group was paused */
#define PIPE_MAX (64 << 20)
#define PINGPONGS 300
#define EXEC_CHAIN 40
#define FORKS 40

/* The governor's signal, as the library chooses it. */
static int governor_signal(void)
{
	const char *env = getenv("RGROUP_GOVERNOR_SIGNAL");
	return SIGRTMIN + (env && *env ? atoi(env) : 7);
}

/* ---- Threads the cases start ---------------------------------------------- */

static int stop;                  /* atomic: the threads' signal to end */

/* A busy thread in a new group at nice 0: the contention. */
static void *spin(void *p)
{
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		;
	return p;
}

struct low {
	rgroup_id_t id;
	int blocks;               /* block the governor's signal first */
	void *(*work)(void *);    /* then run this (NULL: spin) */
	void *arg;
	int err;
};

/* The first thread of a low-weight group: PRIO_RGRP 19, then its work. */
static void *low_main(void *p)
{
	struct low *l = p;

	if (rgroup_setpriority(PRIO_RGRP, 0, LOW_NICE) < 0 || rgroup_of(0, &l->id) < 0)
		l->err = errno ? errno : EIO;
	if (l->blocks) {
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, governor_signal());
		pthread_sigmask(SIG_BLOCK, &s, NULL);
	}
	return l->work ? l->work(l->arg) : spin(NULL);
}

static int start_low(pthread_t *t, struct low *l)
{
	int r = rgroup_thread_create(t, NULL, RGROUP_NEW, low_main, l);
	while (!r && !l->id && !l->err)
		scn_sleep(0.001);
	return r ? r : l->err;
}

static int start_spinner(pthread_t *t)
{
	return rgroup_thread_create(t, NULL, RGROUP_NEW, spin, NULL);
}

static struct rgroup_info info_of(rgroup_id_t id)
{
	struct rgroup_info in = { .sz = sizeof(in) };
	if (rgroup_info(id, &in) < 0)
		memset(&in, 0, sizeof(in));
	return in;
}

/* ---- syscalls ------------------------------------------------------------ */

struct talk {
	int pipe[2];
	long eintr;               /* calls that failed with EINTR */
	long written;             /* bytes the writer wrote */
	long bad;                 /* short or failed calls, wrong bytes */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int turn;                 /* ping-pong: 0 the low thread's, 1 the plain one's */
	int rounds;
};

/* The low group was paused at least once (the governor counts a round's
 * pauses when the next round begins). */
static int was_paused(void)
{
	struct rgroup_info in = { .sz = sizeof(in) };
	rgroup_id_t id;

	return rgroup_of(0, &id) == 0 && rgroup_info(id, &in) == 0 && in.throttled_ns > 0;
}

/* In the low group: write a known pattern, 0.1 ms of CPU per block so that
 * the group uses up its small share and is paused; at least PIPE_BYTES, and
 * on until the group has been paused (the governor needs a round or two to
 * see a new group), then ping-pong. */
static void *talker(void *p)
{
	struct talk *k = p;
	unsigned char buf[4096];
	int paused = 0;
	long off;

	for (off = 0; off < PIPE_MAX && (off < PIPE_BYTES || !paused); off += sizeof(buf)) {
		if (off % (64 * sizeof(buf)) == 0)
			paused = was_paused();
		double t0 = scn_now();
		while (scn_now() - t0 < 0.0001)
			;
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)((off + i) * 7);
		ssize_t w = write(k->pipe[1], buf, sizeof(buf));
		if (w < 0 && errno == EINTR)
			k->eintr++;
		if (w != (ssize_t)sizeof(buf))
			k->bad++;
	}
	k->written = off;
	close(k->pipe[1]);
	for (int i = 0; i < PINGPONGS; i++) {
		pthread_mutex_lock(&k->lock);
		while (k->turn != 0)
			pthread_cond_wait(&k->cond, &k->lock);
		k->turn = 1;
		k->rounds++;
		pthread_cond_signal(&k->cond);
		pthread_mutex_unlock(&k->lock);
	}
	/* Keep the group until the main thread has read its statistics. */
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		scn_sleep(0.001);
	return NULL;
}

static void syscalls(void)
{
	struct talk k = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct low l = { .work = talker, .arg = &k };
	pthread_t hi, lo;
	unsigned char buf[4096];
	long got = 0;

	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	CHECK(pipe(k.pipe) == 0, "pipe: %s", strerror(errno));
	CHECK(start_spinner(&hi) == 0, "spinner group");
	CHECK(start_low(&lo, &l) == 0, "low group: %s", strerror(l.err));
	/* The plain main thread reads and checks the pattern. */
	for (;;) {
		ssize_t r = read(k.pipe[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR) {
			k.eintr++;
			continue;
		}
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != (unsigned char)((got + i) * 7))
				k.bad++;
		got += r;
	}
	for (int i = 0; i < PINGPONGS; i++) {
		pthread_mutex_lock(&k.lock);
		while (k.turn != 1)
			pthread_cond_wait(&k.cond, &k.lock);
		k.turn = 0;
		pthread_cond_signal(&k.cond);
		pthread_mutex_unlock(&k.lock);
	}
	struct rgroup_info in = info_of(l.id);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(lo, NULL);
	pthread_join(hi, NULL);
	close(k.pipe[0]);
	fprintf(stderr, "  %ld bytes, %d ping-pongs; low group paused %.2f s\n",
		got, k.rounds, in.throttled_ns / 1e9);
	CHECK(got >= PIPE_BYTES && got == k.written, "read %ld of %ld bytes", got, k.written);
	CHECK(k.bad == 0, "%ld short writes or wrong bytes", k.bad);
	CHECK(k.eintr == 0, "%ld reads or writes failed with EINTR (SA_RESTART)", k.eintr);
	CHECK(k.rounds == PINGPONGS, "%d ping-pongs", k.rounds);
	CHECK(in.throttled_ns > 0, "the low group was never paused: the case proves nothing");
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

/* ---- blocked ------------------------------------------------------------- */

/* The process's CPU seconds. */
static double process_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The governor counts a pause as not taken when the thread has run on
 * well past its quota (MISS_NS of CPU time) within one round. Its rounds
 * also end after four round lengths of wall time, so while outside load
 * (or a sanitizer) starves the process no round lasts long enough, and
 * the count waits for a moment with CPU to spare: the case waits for the
 * first count, at most 30 s, whatever the load; unloaded it comes within
 * a few rounds. */
static void blocked(void)
{
	struct low l = { .blocks = 1 };
	struct rgroup_info in;
	pthread_t hi, lo;
	double c0 = process_cpu(), t0 = scn_now();

	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	CHECK(start_spinner(&hi) == 0, "spinner group");
	CHECK(start_low(&lo, &l) == 0, "low group: %s", strerror(l.err));
	do {
		scn_sleep(0.1);
		in = info_of(l.id);
	} while (!in.unthrottled && scn_now() - t0 < 30);
	fprintf(stderr, "  waited %.1f s, in which the process had %.2f s of CPU\n",
		scn_now() - t0, process_cpu() - c0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(lo, NULL);
	pthread_join(hi, NULL);
	fprintf(stderr, "  pauses not taken %llu, paused %.3f s\n",
		(unsigned long long)in.unthrottled, in.throttled_ns / 1e9);
	CHECK(in.unthrottled > 0, "a thread that blocks the signal is not counted");
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

/* ---- exec ---------------------------------------------------------------- */

/* One link of the chain: groups that contend; the thread of the low
 * group, which the governor keeps pausing, spins a moment and execs the
 * next link. */
static void *exec_next(void *p)
{
	double t0 = scn_now();

	while (scn_now() - t0 < 0.05)
		;
	execl("/proc/self/exe", "test-governor", "--exec-link", (char *)p, (char *)NULL);
	return p;
}

static int exec_link(int left)
{
	char arg[16];
	struct low l = { .work = exec_next, .arg = arg };
	pthread_t hi, lo;

	snprintf(arg, sizeof(arg), "%d", left - 1);
	scn_pin_one_cpu(NULL);
	if (left == 0)
		return 0;
	if (start_spinner(&hi) || start_low(&lo, &l))
		return 2;
	pthread_join(lo, NULL);
	return 3; /* exec failed */
}

/* Before a hung child is killed: the state and wait channel of each of its
 * threads, so that a deadlock (all asleep) tells itself from a child that
 * runs without getting anywhere. */
static void describe_hang(pid_t pid)
{
	char path[64], buf[512];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		char wchan[64] = "", *paren;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, e->d_name);
		if (rgt_read(path, buf, sizeof(buf)) < 0 || !(paren = strrchr(buf, ')')))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", (int)pid, e->d_name);
		rgt_read(path, wchan, sizeof(wchan));
		fprintf(stderr, "  hung child's thread %s: state %.1s, waiting in %s\n", e->d_name,
			paren[1] ? paren + 2 : "?", wchan[0] ? wchan : "-");
	}
	closedir(d);
}

/* Wait for pid at most `secs`; kill it after. Returns its status. */
static int wait_for(pid_t pid, double secs, int *status)
{
	for (double t = 0; t < secs; t += 0.01) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		scn_sleep(0.01);
	}
	describe_hang(pid);
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return -1;
}

/* Run this program with `mode` (and `arg`, may be NULL) in a child, for at
 * most `secs`; its wait status (a hang is a failure, and killed). */
static int run_self(const char *mode, const char *arg, double secs)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		execl("/proc/self/exe", "test-governor", mode, arg, (char *)NULL);
		_exit(4);
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	CHECK(pid > 0 && wait_for(pid, secs, &status) == 0, "the child (%s) hung", mode);
	if (WIFSIGNALED(status))
		fprintf(stderr, "  killed by signal %d (the governor's is %d)\n",
			WTERMSIG(status), governor_signal());
	return status;
}

static void exec_chain(void)
{
	char arg[16];
	int status;

	snprintf(arg, sizeof(arg), "%d", EXEC_CHAIN);
	status = run_self("--exec-link", arg, 60);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exec chain status %#x", status);
}

/* ---- fork ---------------------------------------------------------------- */

static void *short_spin(void *p)
{
	double t0 = scn_now();
	while (scn_now() - t0 < 0.02)
		;
	return p;
}

static void forks(void)
{
	struct low l = { 0 };
	pthread_t hi, lo;
	int ok = 0;

	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	CHECK(start_spinner(&hi) == 0, "spinner group");
	CHECK(start_low(&lo, &l) == 0, "low group: %s", strerror(l.err));
	for (int i = 0; i < FORKS; i++) {
		int status = 0;
		pid_t pid = fork();
		if (pid == 0) {
			pthread_t t;
			if (rgroup_thread_create(&t, NULL, RGROUP_NEW, short_spin, NULL))
				_exit(2);
			pthread_join(t, NULL);
			_exit(0);
		}
		if (pid > 0 && wait_for(pid, 20, &status) == 0 && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			ok++;
		else if (pid > 0)
			fprintf(stderr, "  child %d: status %#x\n", i, status);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(lo, NULL);
	pthread_join(hi, NULL);
	CHECK(ok == FORKS, "%d of %d children ended normally", ok, FORKS);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
}

/* ---- stale state files ---------------------------------------------------- */

/* A process killed, or a fork child ended by _exit(), leaves its state file;
 * the next process of the same user to start the governor removes it (that
 * a live process's file stays is test/tools/test-tree-top.sh's). */
static void stale_files(void)
{
	char name[128], dead[PATH_MAX];
	pid_t pid = fork();
	int status = 0, fd;

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0); /* pid: a process that no longer exists */
	rgroup__format_statename(name, sizeof(name), pid, 12345, 0);
	snprintf(dead, sizeof(dead), "%s/%s", RGROUP__STATE_DIR, name);
	fd = open(dead, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "make %s: %s", dead, strerror(errno));
	if (fd >= 0)
		close(fd);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "test-governor", "--one-group", (char *)NULL);
		_exit(4);
	}
	CHECK(pid > 0 && wait_for(pid, 20, &status) == 0 && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "the next process ran (status %#x)", status);
	CHECK(access(dead, F_OK) < 0 && errno == ENOENT, "%s is still there", dead);
	unlink(dead); /* if the check failed */
}

/* ---- signals the program takes back ---------------------------------------- */

#define RESET_EVERY_S 0.02
#define MIN_CPUS 0.3              /* as test-gov-share.c: windows the split is judged in */

/* Every signal that can be set, to SIG_DFL, as daemons do. */
static void reset_all_signals(void)
{
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
}

static void *resetter(void *p)
{
	long *resets = p;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		reset_all_signals();
		(*resets)++;
		scn_sleep(RESET_EVERY_S);
	}
	return NULL;
}

/* The groups' flags, or'ed; -1 if a group could not be read. */
static int groups_flags(void)
{
	rgroup_id_t ids[SCN_MAX];
	int n = rgroup_list(ids, SCN_MAX), flags = 0;

	for (int i = 0; i < n && i < SCN_MAX; i++) {
		struct rgroup_info in = { .sz = sizeof(in) };
		if (rgroup_info(ids[i], &in) < 0)
			return -1;
		flags |= (int)in.flags;
	}
	return n > 0 ? flags : -1;
}

/* Child: the flat 1:2:4 scenario, judged while a plain thread resets every
 * signal every RESET_EVERY_S. */
static int signal_reset_child(void)
{
	struct scn_table s;
	pthread_t t;
	long resets = 0;
	int err, judged;

	scn_flat124(&s, 2);
	err = scn_start(&s);
	CHECK(err == 0, "set up: %s failed: %s", scn_cur.what, strerror(err));
	if (err)
		return 1;
	scn_sleep(1.0);
	reset_all_signals();
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	CHECK(pthread_create(&t, NULL, resetter, &resets) == 0, "resetter thread");
	judged = rgt_scn_judge("flat-1:2:4, every signal reset to SIG_DFL every 20 ms", 1,
			       MIN_CPUS, 0, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	int flags = groups_flags();
	fprintf(stderr, "  %ld resets; groups' flags %#x\n", resets, flags);
	CHECK(flags == 0, "rgroup_info flags %#x after resets to SIG_DFL", flags);
	scn_stop();
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
	return rgt_failures ? 1 : judged < 0 ? 77 : 0;
}

static long foreign_calls;        /* atomic: the program's own handler ran */

static void foreign_handler(int sig, siginfo_t *si, void *uc)
{
	__atomic_add_fetch(&foreign_calls, 1, __ATOMIC_RELAXED);
}

/* Child: groups that contend; the program takes the governor's signal. */
static int signal_taken_child(void)
{
	struct sigaction sa = { .sa_sigaction = foreign_handler, .sa_flags = SA_SIGINFO };
	struct low l = { 0 };
	pthread_t hi, lo;
	int flags = 0;
	double t0;

	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	CHECK(start_spinner(&hi) == 0, "spinner group");
	CHECK(start_low(&lo, &l) == 0, "low group: %s", strerror(l.err));
	/* Enforced first: the low group is paused. */
	t0 = scn_now();
	while (info_of(l.id).throttled_ns == 0 && scn_now() - t0 < 30)
		scn_sleep(0.05);
	CHECK(info_of(l.id).throttled_ns > 0, "the low group was never paused: the case proves nothing");
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(governor_signal(), &sa, NULL) == 0, "sigaction: %s", strerror(errno));
	t0 = scn_now();
	while (!((flags = (int)info_of(l.id).flags) & RGROUP_INFO_UNENFORCED) && scn_now() - t0 < 5)
		scn_sleep(0.01);
	CHECK(flags & RGROUP_INFO_UNENFORCED, "rgroup_info does not say RGROUP_INFO_UNENFORCED");
	/* From now on nothing of the governor's reaches the handler, and the
	 * low group is no longer paused. */
	long before = __atomic_load_n(&foreign_calls, __ATOMIC_RELAXED);
	uint64_t paused = info_of(l.id).throttled_ns;
	scn_sleep(1.0);
	long calls = __atomic_load_n(&foreign_calls, __ATOMIC_RELAXED) - before;
	uint64_t more = info_of(l.id).throttled_ns - paused;
	fprintf(stderr, "  handler ran %ld times before the governor saw it, %ld after; "
		"low group paused %.3f s more\n", before, calls, more / 1e9);
	CHECK(calls == 0, "the program's handler got %ld signals after the governor let go", calls);
	CHECK(more == 0, "the low group was paused %.3f s after the governor let go", more / 1e9);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(lo, NULL);
	pthread_join(hi, NULL);
	CHECK(scn_wait_no_groups(2.0) == 0, "groups removed");
	return rgt_failures ? 1 : 0;
}

static void run_signal_child(const char *mode)
{
	int status = run_self(mode, NULL, 110);

	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		rgt_skip_case("the machine was too busy to judge the split");
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
}

/* ---- rgroup_of from a signal handler during the first use ----------------- */

static long of_ok, of_deadlk, of_other;   /* the handler's results */
static timer_t of_timer;

#define FIRST_USE_ANSWERS 20      /* answers after the set-up: enough */
#define FIRST_USE_MAX_RUNS 100000 /* 2 s of ticks: stop, answered or not */

/* The handler stops the timer itself once it has its answers: where one
 * run of it takes longer than the 20 us period (sanitizers, a loaded
 * machine), the next tick is already due when it returns, and the
 * interrupted thread would never run again to stop it. */
static void of_handler(int sig)
{
	static const struct itimerspec stop;
	rgroup_id_t id;
	int r = rgroup_of(0, &id), e = errno;

	if (r == 0)
		of_ok++;
	else if (r == -EDEADLK)
		of_deadlk++;
	else
		of_other++;
	if (of_ok >= FIRST_USE_ANSWERS || of_ok + of_deadlk + of_other >= FIRST_USE_MAX_RUNS)
		timer_settime(of_timer, 0, &stop, NULL);
	errno = e;
}

#define FIRST_USE_TRIES 60   /* fresh processes, each with a later first tick */
#define INCONCLUSIVE 3            /* exit status: no handler ran in the set-up */

/* Child, before any call to the library: a timer every 20 us of wall
 * time, first after `first_ns`, runs the handler while rgroup_backend()
 * sets the library up, and on until it has had 20 answers after. */
static int handler_first_use_child(long first_ns)
{
	struct sigaction sa = { .sa_handler = of_handler, .sa_flags = SA_RESTART };
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	struct itimerspec its = { { 0, 20000 }, { 0, first_ns } };
	const char *be;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0 || timer_create(CLOCK_MONOTONIC, &ev, &of_timer) < 0 ||
	    timer_settime(of_timer, 0, &its, NULL) < 0)
		return 2;
	be = rgroup_backend();
	for (double t0 = scn_now(); *(volatile long *)&of_ok < FIRST_USE_ANSWERS && scn_now() - t0 < 5;)
		;
	timer_delete(of_timer);
	fprintf(stderr, "  backend %s; the handler's rgroup_of: %ld EDEADLK, %ld answers, %ld other\n",
		be ? be : "(none)", of_deadlk, of_ok, of_other);
	CHECK(of_ok > 0, "no handler got an answer after the set-up");
	CHECK(of_other == 0, "%ld other errors", of_other);
	return rgt_failures ? 1 : of_deadlk ? 0 : INCONCLUSIVE;
}

/* A fresh process each try, until a handler ran during the set-up. A
 * first tick that comes before the child's call reaches the set-up makes
 * the handler set the library up itself, with the signal blocked, and a
 * first tick after the set-up finds it done: either way the try proves
 * nothing. When the set-up starts and how long it lasts depend on the
 * build and the machine: on a quiet machine it starts a few us after the
 * timer is set (the call's symbol binding, its first page faults) and
 * lasts some tens of us, a window that a fixed step of 20 us can miss in
 * every try; the ASan build or a loaded machine takes hundreds. So the
 * first tick comes later each try, from 2 us to about 770 us after the
 * timer is set, each about 11% later than the last: a set-up in that
 * range that lasts a tenth of its start time or more has a try's first
 * tick inside it. */
static void handler_first_use(void)
{
	long first_ns = 2000;
	int status = 0;
	char first[24];

	for (int i = 0; i < FIRST_USE_TRIES; i++, first_ns = first_ns * 1106 / 1000) {
		snprintf(first, sizeof(first), "%ld", first_ns);
		status = run_self("--handler-first-use", first, 20);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != INCONCLUSIVE)
			break;
	}
	CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == INCONCLUSIVE),
	      "in %d tries no handler ran during the set-up: the case proves nothing", FIRST_USE_TRIES);
	CHECK(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == INCONCLUSIVE),
	      "child status %#x", status);
}

/* Not in a program linked with the static library: only the shared
 * library interposes sigaction() and signal(), so there a reset to SIG_DFL
 * can let a queued governor signal kill the process (rgroup(7)). */
#ifndef RGT_STATIC_LIBRARY
static void signal_reset(void)
{
	run_signal_child("--signal-reset");
}
#endif

static void signal_taken(void)
{
	run_signal_child("--signal-taken");
}

static const struct rgt_case cases[] = {
	{ "syscalls", syscalls },
	{ "blocked", blocked },
	{ "exec", exec_chain },
	{ "fork", forks },
	{ "stale_files", stale_files },
#ifndef RGT_STATIC_LIBRARY
	{ "signal_reset", signal_reset },
#endif
	{ "signal_taken", signal_taken },
	{ "handler_first_use", handler_first_use },
};

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--handler-first-use") == 0)
		return handler_first_use_child(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "--exec-link") == 0)
		return exec_link(atoi(argv[2]));
	if (argc == 2 && strcmp(argv[1], "--one-group") == 0) {
		pthread_t t;
		return rgroup_thread_create(&t, NULL, RGROUP_NEW, short_spin, NULL) ||
		       pthread_join(t, NULL);
	}
	if (scn_pin_one_cpu(NULL) < 0)
		rgt_skip_all("cannot pin to one CPU: %s", strerror(errno));
	if (argc == 2 && strcmp(argv[1], "--signal-reset") == 0)
		return signal_reset_child();
	if (argc == 2 && strcmp(argv[1], "--signal-taken") == 0)
		return signal_taken_child();
	fprintf(stderr, "backend %s, pinned to one CPU\n", rgroup_backend());
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
