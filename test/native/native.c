/* SPDX-License-Identifier: MIT */
/*
 * native.c - shared code of the native-kernel selftests; see native.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <math.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "judge.h"
#include "model.h"

/* struct clone_args of the clone3() ABI (CLONE_ARGS_SIZE_VER2). */
struct nt_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
		stack_size, tls, set_tid, set_tid_size, cgroup;
};

#define NT_THREAD_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
			 CLONE_THREAD | CLONE_SYSVSEM)

/*
 * long nt_clone3(struct nt_clone_args *args, size_t size, int (*fn)(void *),
 *                void *arg): clone3(), then in the child call fn(arg) on the
 * new stack and exit the thread with its return value. The parent gets
 * clone3's return value (tid or -errno). No libc involved.
 */
long nt_clone3(struct nt_clone_args *args, size_t size, int (*fn)(void *), void *arg);
__asm__(".text\n"
	".globl nt_clone3\n"
	".type nt_clone3,@function\n"
	"nt_clone3:\n"
	"	mov %rdx, %r8\n"   /* fn and arg survive the syscall in r8, r9 */
	"	mov %rcx, %r9\n"
	"	mov $435, %eax\n"  /* __NR_clone3 */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	xor %ebp, %ebp\n"  /* child: outermost frame */
	"	mov %r9, %rdi\n"
	"	call *%r8\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n"   /* __NR_exit: this thread only */
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size nt_clone3, .-nt_clone3\n");

/* Raw syscalls for raw threads: no errno. */
static inline long nt_sys4(long n, long a, long b, long c, long d)
{
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

int nt_rt_wait(void *flag)
{
	volatile int *f = flag;
	while (!*f)
		nt_sys4(SYS_futex, (long)f, FUTEX_WAIT_PRIVATE, 0, 0);
	return 0;
}

int nt_rt_spin(void *stop)
{
	volatile int *s = stop;
	while (!*s)
		;
	return 0;
}

void nt_wake(volatile int *flag)
{
	*flag = 1;
	nt_sys4(SYS_futex, (long)flag, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0);
}

int nt_raw_start(struct nt_raw *t, uint64_t flags, int (*fn)(void *), void *arg)
{
	struct nt_clone_args ca;
	long r;

	t->own_stack = !t->stack;
	if (t->own_stack) {
		t->stack_size = 64 * 1024;
		t->stack = mmap(NULL, t->stack_size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (t->stack == MAP_FAILED) {
			t->stack = NULL;
			return -errno;
		}
	}
	t->ctid = 1;
	memset(&ca, 0, sizeof(ca));
	ca.flags = NT_THREAD_FLAGS | CLONE_CHILD_CLEARTID | CLONE_PARENT_SETTID | flags;
	ca.child_tid = (uintptr_t)&t->ctid;
	ca.parent_tid = (uintptr_t)&t->tid;
	ca.stack = (uintptr_t)t->stack;
	ca.stack_size = t->stack_size;
	r = nt_clone3(&ca, sizeof(ca), fn, arg);
	if (r < 0) {
		t->ctid = 0;
		if (t->own_stack) {
			munmap(t->stack, t->stack_size);
			t->stack = NULL;
		}
		return (int)r;
	}
	t->tid = (pid_t)r;
	return (int)r;
}

void nt_raw_join(struct nt_raw *t)
{
	int v;

	if (!t->stack)
		return;
	while ((v = t->ctid) != 0)
		syscall(SYS_futex, &t->ctid, FUTEX_WAIT, v, NULL, NULL, 0);
	if (t->own_stack) {
		munmap(t->stack, t->stack_size);
		t->stack = NULL;
	}
}

static int nt_rt_exit(void *arg)
{
	(void)arg;
	return 0;
}

int nt_raw_try(uint64_t flags, int cgroup_fd)
{
	struct nt_clone_args ca;
	struct nt_raw t;
	long r;

	memset(&t, 0, sizeof(t));
	t.stack_size = 64 * 1024;
	t.stack = mmap(NULL, t.stack_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (t.stack == MAP_FAILED)
		return errno;
	t.ctid = 1;
	memset(&ca, 0, sizeof(ca));
	ca.flags = flags | CLONE_CHILD_CLEARTID;
	ca.child_tid = (uintptr_t)&t.ctid;
	ca.stack = (uintptr_t)t.stack;
	ca.stack_size = t.stack_size;
	if (!(flags & CLONE_THREAD))
		ca.exit_signal = SIGCHLD;
	if (cgroup_fd >= 0)
		ca.cgroup = (uint64_t)cgroup_fd;
	r = nt_clone3(&ca, sizeof(ca), nt_rt_exit, NULL);
	if (r < 0) {
		munmap(t.stack, t.stack_size);
		return (int)-r;
	}
	if (flags & CLONE_THREAD) {
		t.tid = (pid_t)r;
		nt_raw_join(&t);
	} else {
		waitpid((pid_t)r, NULL, 0);
		munmap(t.stack, t.stack_size);
	}
	return 0;
}

int nt_rg_read(pid_t pid, pid_t tid, struct nt_rg *rg)
{
	char path[64], buf[256];
	int n;

	if (!pid)
		pid = getpid();
	snprintf(path, sizeof(path), "/proc/%d/task/%d/rgroup", pid, tid);
	n = nt_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	return rgroup__parse_kgroup(buf, rg) < 0 ? -EPROTO : 0;
}

uint64_t nt_rg_id(pid_t tid)
{
	struct nt_rg rg;
	return nt_rg_read(0, tid, &rg) ? (uint64_t)-1 : rg.id;
}

int nt_set_next_new(int on)
{
	return prctl(PR_RGROUP, PR_RGROUP_SET_NEXT_NEW, on, 0, 0);
}

int nt_get_next_new(void)
{
	return prctl(PR_RGROUP, PR_RGROUP_GET_NEXT_NEW, 0, 0, 0);
}

int nt_enter(pid_t tid, unsigned long flags)
{
	return prctl(PR_RGROUP, PR_RGROUP_ENTER, tid, flags, 0);
}

int nt_setprio(pid_t who, int nice)
{
	return setpriority(PRIO_RGRP, who, nice);
}

int nt_getprio(pid_t who)
{
	errno = 0;
	return getpriority(PRIO_RGRP, who);
}

long nt_getprio_raw(pid_t who)
{
	return syscall(SYS_getpriority, PRIO_RGRP, who);
}

pid_t nt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int nt_pthread(pthread_t *t, int new_group, void *(*fn)(void *), void *arg)
{
	int err;

	if (new_group && nt_set_next_new(1))
		return errno;
	err = pthread_create(t, NULL, fn, arg);
	if (new_group && nt_get_next_new() != 0) {
		/* pthread_create failed before clone(): do not leak the request */
		nt_set_next_new(0);
	}
	return err;
}

static void *nt_agent_main(void *p)
{
	struct nt_agent *a = p;

	pthread_mutex_lock(&a->lock);
	a->tid = nt_gettid();
	a->started = 1;
	pthread_cond_broadcast(&a->cond);
	for (;;) {
		while (!a->stop && !a->busy)
			pthread_cond_wait(&a->cond, &a->lock);
		if (a->stop)
			break;
		pthread_mutex_unlock(&a->lock);
		int r = a->job(a->arg);
		pthread_mutex_lock(&a->lock);
		a->result = r;
		a->busy = 0;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

int nt_agent_start(struct nt_agent *a, int new_group)
{
	int err;

	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	err = nt_pthread(&a->thread, new_group, nt_agent_main, a);
	if (err)
		return err;
	pthread_mutex_lock(&a->lock);
	while (!a->started)
		pthread_cond_wait(&a->cond, &a->lock);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

int nt_agent_run(struct nt_agent *a, int (*job)(void *), void *arg)
{
	int r;

	pthread_mutex_lock(&a->lock);
	a->job = job;
	a->arg = arg;
	a->busy = 1;
	pthread_cond_broadcast(&a->cond);
	while (a->busy)
		pthread_cond_wait(&a->cond, &a->lock);
	r = a->result;
	pthread_mutex_unlock(&a->lock);
	return r;
}

void nt_agent_stop(struct nt_agent *a)
{
	if (!a->started)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	a->started = 0;
}

struct start_in {
	struct nt_agent *agent;
	int new_group, err;
};

static int start_in_job(void *p)
{
	struct start_in *s = p;

	s->err = nt_agent_start(s->agent, s->new_group);
	return 0;
}

int nt_agent_start_in(struct nt_agent *from, struct nt_agent *a, int new_group)
{
	struct start_in s = { a, new_group, 0 };

	nt_agent_run(from, start_in_job, &s);
	return s.err;
}

static void *nt_spin_main(void *p)
{
	struct nt_spinner *me = p;
	if (me->set->spread) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		if (nt_pin_cpu((int)((me - me->set->s) % (online > 0 ? online : 1))))
			perror("pin a spinner");
	}
	__atomic_store_n(&me->tid, nt_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&me->set->stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

int nt_spinners_job(void *p)
{
	struct nt_spinners *s = p;
	s->stop = 0;
	for (int i = 0; i < s->n; i++) {
		s->s[i].set = s;
		s->s[i].tid = 0;
		int err = pthread_create(&s->s[i].thread, NULL, nt_spin_main, &s->s[i]);
		if (err) {
			s->n = i;
			nt_spinners_stop(s);
			return err;
		}
	}
	for (int i = 0; i < s->n; i++)
		while (!__atomic_load_n(&s->s[i].tid, __ATOMIC_ACQUIRE))
			sched_yield();
	return 0;
}

void nt_spinners_stop(struct nt_spinners *s)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < s->n; i++)
		pthread_join(s->s[i].thread, NULL);
}

double nt_spinners_cpu(struct nt_spinners *s)
{
	double sum = 0;
	for (int i = 0; i < s->n; i++)
		sum += nt_thread_cpu(s->s[i].tid);
	return sum;
}

int nt_pin_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

double nt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void nt_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

double nt_thread_cpu(pid_t tid)
{
	/* MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) */
	clockid_t c = (clockid_t)((~(unsigned)tid << 3) | 6);
	struct timespec ts;
	if (clock_gettime(c, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double nt_proc_cpu(pid_t pid)
{
	/* MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) */
	clockid_t c = (clockid_t)((~(unsigned)pid << 3) | 2);
	struct timespec ts;
	if (clock_gettime(c, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int nt_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

int nt_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n = 0;
	if (fd < 0)
		return -errno;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	int err = n < 0 ? -errno : 0;
	close(fd);
	buf[len] = 0;
	return err ? err : (int)len;
}

static char nt_made[16][128];
static int nt_nmade;

/* Processes moved out of NT_SG by nt_cg_init() (the VM's init among them). */
static pid_t nt_moved[64];
static int nt_nmoved;

int nt_cg_init(void)
{
	char buf[4096];
	int err;

	if (mkdir(NT_SG "/self", 0755) && errno != EEXIST)
		return -errno;
	/* No internal processes: all of NT_SG's go to NT_SG/self (we too). */
	if ((err = nt_read_file(NT_SG "/cgroup.procs", buf, sizeof(buf))) < 0)
		return err;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		pid_t pid = atoi(l);
		if (nt_cg_move(NT_SG "/self", pid) == 0 && nt_nmoved < 64)
			nt_moved[nt_nmoved++] = pid;
	}
	if ((err = nt_write_file(NT_SG "/cgroup.subtree_control", "+cpu")))
		return err;
	nt_write_file(NT_SG "/cgroup.subtree_control", "+cpuset");
	return 0;
}

int nt_cg_make(const char *name, char *path, size_t size)
{
	snprintf(path, size, NT_SG "/%s", name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	if (nt_nmade < 16)
		snprintf(nt_made[nt_nmade++], sizeof(nt_made[0]), "%s", path);
	return 0;
}

int nt_cg_move(const char *cg, pid_t pid)
{
	char path[256], buf[32];
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(buf, sizeof(buf), "%d", pid);
	return nt_write_file(path, buf);
}

void nt_cg_cleanup(void)
{
	nt_cg_move(NT_SG "/self", getpid());
	/* Children first (made later); a cgroup whose processes are still
	 * exiting is busy for a moment. */
	for (int i = nt_nmade - 1; i >= 0; i--) {
		for (int k = 0; k < 100 && rmdir(nt_made[i]) && errno == EBUSY; k++)
			nt_sleep(0.02);
	}
	nt_nmade = 0;
	/* Back as we found it: no controllers below NT_SG, everyone in it. */
	nt_write_file(NT_SG "/cgroup.subtree_control", "-cpu -cpuset");
	for (int i = 0; i < nt_nmoved; i++)
		nt_cg_move(NT_SG, nt_moved[i]);
	nt_nmoved = 0;
	rmdir(NT_SG "/self");
}

static void nt_list_dir(const char *path, char **out, size_t *len, size_t *cap)
{
	DIR *d = opendir(path);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char sub[512];
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		size_t n = strlen(sub) + 1;
		if (*len + n + 1 > *cap) {
			*cap = (*cap + n + 1) * 2;
			*out = realloc(*out, *cap);
		}
		memcpy(*out + *len, sub, n - 1);
		(*out)[*len + n - 1] = '\n';
		*len += n;
		(*out)[*len] = 0;
		nt_list_dir(sub, out, len, cap);
	}
	closedir(d);
}

char *nt_cg_listing(void)
{
	size_t len = 0, cap = 1024;
	char *out = calloc(1, cap);
	nt_list_dir("/sys/fs/cgroup", &out, &len, &cap);
	return out;
}

pid_t nt_fork(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

int nt_wait(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The other process: its thread's tid up one pipe, then wait for the
 * other pipe to close. */
static int other_main(void *arg)
{
	struct nt_other *o = arg;
	struct nt_agent a;
	char c;

	if (nt_agent_start(&a, 1))
		return 1;
	if (write(o->from_child, &a.tid, sizeof(a.tid)) != sizeof(a.tid))
		return 1;
	while (read(o->to_child, &c, 1) > 0)
		;
	nt_agent_stop(&a);
	return 0;
}

int nt_other_start(struct nt_other *o)
{
	int down[2], up[2];

	if (pipe(down) < 0)
		return -1;
	if (pipe(up) < 0) {
		close(down[0]);
		close(down[1]);
		return -1;
	}
	o->to_child = down[0];
	o->from_child = up[1];
	o->pid = fork();
	if (o->pid == 0) {
		close(down[1]);
		close(up[0]);
		_exit(other_main(o));
	}
	close(down[0]);
	close(up[1]);
	o->to_child = down[1];
	o->from_child = up[0];
	if (o->pid < 0 || read(o->from_child, &o->tid, sizeof(o->tid)) != sizeof(o->tid)) {
		close(o->to_child);
		close(o->from_child);
		if (o->pid > 0)
			nt_wait(o->pid);
		errno = ECHILD;
		return -1;
	}
	return 0;
}

int nt_other_end(struct nt_other *o)
{
	close(o->to_child);
	close(o->from_child);
	return nt_wait(o->pid);
}

int nt_drop_privileges(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	return 0;
}

pid_t nt_spinner(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			;
	}
	return pid;
}

void nt_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

int nt_child_run(int (*fn)(void *), void *arg)
{
	fflush(stderr);
	pid_t pid = nt_fork(fn, arg);
	if (pid < 0) {
		fprintf(stderr, "  fork: %s\n", strerror(errno));
		return -1;
	}
	return nt_wait(pid);
}

long nt_task_groups(void)
{
	static char buf[1 << 17];
	long active = -1;

	nt_write_file("/sys/kernel/slab/task_group/shrink", "1");
	if (nt_read_file("/proc/slabinfo", buf, sizeof(buf)) <= 0)
		return -1;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		if (!strncmp(l, "task_group ", 11))
			active = atol(l + 11);
	return active;
}

int nt_sched_debug(char *buf, size_t size)
{
	mkdir("/sys/kernel/debug", 0755);
	if (access("/sys/kernel/debug/sched", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return nt_read_file("/sys/kernel/debug/sched/debug", buf, size);
}

int nt_group_weights(pid_t tid, long long *w, int ncpu)
{
	static char buf[1 << 20];
	char name[64];
	int n = nt_sched_debug(buf, sizeof(buf)), listed = 0;

	if (n < 0)
		return n;
	for (int c = 0; c < ncpu; c++)
		w[c] = -1;
	snprintf(name, sizeof(name), "/rgroup-%d.%" PRIu64 "\n", (int)getpid(), nt_rg_id(tid));
	/* Each runqueue: "cfs_rq[CPU]:PATH\n", its fields, a blank line. */
	size_t len = strlen(name);
	for (char *p = buf; (p = strstr(p, "\ncfs_rq[")) != NULL; p++) {
		char *nl = strchr(p + 1, '\n'), *end, *f;
		int cpu = atoi(p + 8);

		/* the line p+1..nl ends in name (whose '\n' is nl) */
		if (!nl || (size_t)(nl - p) < len || memcmp(nl + 1 - len, name, len))
			continue;
		end = strstr(nl, "\n\n");
		f = strstr(nl, ".se->load.weight");
		if (!f || (end && f > end) || cpu < 0 || cpu >= ncpu)
			continue;
		f = strchr(f, ':');
		if (f) {
			w[cpu] = strtoll(f + 1, NULL, 10);
			listed++;
		}
	}
	return listed;
}

static const char *const nt_splats[] = {
	"WARNING:", "BUG:", "Oops", "Call Trace:", "general protection fault",
	"possible recursive locking", "possible circular locking",
	"inconsistent lock state", "suspicious RCU usage",
	"sleeping function called from invalid context", "INFO: rcu",
	"rcu_sched self-detected stall", "hung_task", "Kernel panic",
	"lockdep is turned off", "kernel BUG",
	"unreferenced object", "suspected memory leak",
};

int nt_check_kernel_log(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	if (size <= 0) {
		fprintf(stderr, "  FAIL: cannot read the kernel log: %s\n", strerror(errno));
		return -1;
	}
	char *buf = malloc((size_t)size + 1);
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (n < 0) {
		fprintf(stderr, "  FAIL: cannot read the kernel log: %s\n", strerror(errno));
		free(buf);
		return -1;
	}
	buf[n] = 0;
	int bad = 0, context = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		int hit = 0;
		for (size_t i = 0; i < sizeof(nt_splats) / sizeof(nt_splats[0]); i++)
			hit |= strstr(line, nt_splats[i]) != NULL;
		if (hit && !bad++) {
			fprintf(stderr, "  FAIL: the kernel log shows a splat:\n");
			context = 60;   /* the first report whole */
		}
		if (context > 0 || (hit && bad < 60)) {
			fprintf(stderr, "    %s\n", line);
			context--;
		}
	}
	if (!bad)
		fprintf(stderr, "# kernel log: no lockdep, might_sleep, BUG or WARN splat\n");
	free(buf);
	return bad;
}

void nt_require_rgroups(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (prctl(PR_RGROUP, PR_RGROUP_GET_NEXT_NEW, 0, 0, 0) < 0)
		rgt_skip_all("the kernel has no resource groups (PR_RGROUP: %s); "
			     "boot the patched kernel (scripts/kernel.sh)", strerror(errno));
}

#define NT_KMEMLEAK "/sys/kernel/debug/kmemleak"

/* kmemleak (the debug kernel): forget what boot left unreferenced */
static int nt_kmemleak_start(void)
{
	mkdir("/sys/kernel/debug", 0755);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(NT_KMEMLEAK, W_OK))
		return 0;
	nt_write_file(NT_KMEMLEAK, "scan");
	nt_write_file(NT_KMEMLEAK, "clear");
	return 1;
}

/*
 * Scan for objects that nothing references any more and that were
 * allocated during the test: 0 or the number of reports (printed).
 * kmemleak reports an object only when it is a few seconds old.
 */
static int nt_kmemleak_check(void)
{
	static char buf[1 << 16];
	int n, leaks = 0;

	nt_sleep(5.5);
	nt_write_file(NT_KMEMLEAK, "scan");
	n = nt_read_file(NT_KMEMLEAK, buf, sizeof(buf));
	for (char *p = buf; n > 0 && (p = strstr(p, "unreferenced object")); p++)
		leaks++;
	if (leaks)
		fprintf(stderr, "  FAIL: kmemleak reports %d unreferenced objects:\n%.4000s\n",
			leaks, buf);
	else
		fprintf(stderr, "# kmemleak: no unreferenced object\n");
	return leaks;
}

int nt_main(const struct rgt_case *cases, size_t ncases, int argc, char **argv, int cgroups)
{
	int err, rc, kmemleak;

	nt_require_rgroups();
	kmemleak = nt_kmemleak_start();
	if (cgroups && (err = nt_cg_init()))
		rgt_skip_all("cannot set up cgroups below %s: %s", NT_SG, strerror(-err));
	rc = rgt_main(cases, ncases, argc, argv);
	if (cgroups)
		nt_cg_cleanup();
	if (kmemleak && nt_kmemleak_check())
		rgt_failures++;
	if (nt_check_kernel_log())
		rgt_failures++;
	return rgt_failures ? 1 : rc;
}

/* --- scenarios --------------------------------------------------------------- */

/* The kernel's nice-to-weight table (nice 0 = 1024, about 1.25x a step). */
static const double nt_weight[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};

const struct nt_scenario nt_nested_two_cpus = {
	.nprocs = 0, .ngroups = 4, .capacity = 2,
	.g = { { -1, 0, 2, "A" },
	       { 0, -3, 2, "A/N" },
	       { -1, 3, 2, "B" },
	       { 2, 0, 1, "B/M" } },
};

int nt_scn_start(const struct nt_scenario *sc, struct nt_run *r)
{
	int err = 0;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < sc->nprocs; i++)
		if ((r->proc[i] = nt_spinner()) < 0)
			return errno;
	for (int i = 0; i < sc->ngroups && !err; i++) {
		int par = sc->g[i].parent;
		if (par < 0) {
			err = nt_agent_start(&r->agent[i], 1);
		} else {
			err = nt_agent_start_in(&r->agent[par], &r->agent[i], 1);
		}
		if (!err && nt_setprio(r->agent[i].tid, sc->g[i].nice))
			err = errno;
		r->nice[i] = sc->g[i].nice;
		r->spin[i].n = sc->g[i].threads;
		r->spin[i].spread = sc->spread;
		if (!err)
			err = nt_agent_run(&r->agent[i], nt_spinners_job, &r->spin[i]);
	}
	return err;
}

void nt_scn_stop(const struct nt_scenario *sc, struct nt_run *r)
{
	for (int i = 0; i < sc->nprocs; i++)
		nt_kill(r->proc[i]);
	for (int i = sc->ngroups - 1; i >= 0; i--) {
		nt_spinners_stop(&r->spin[i]);
		nt_agent_stop(&r->agent[i]);
	}
}

static double nt_group_cpu(const struct nt_scenario *sc, struct nt_run *r, int i)
{
	double s = nt_spinners_cpu(&r->spin[i]);
	for (int k = i + 1; k < sc->ngroups; k++)
		if (sc->g[k].parent == i)
			s += nt_group_cpu(sc, r, k);
	return s;
}

static void nt_snapshot(const struct nt_scenario *sc, struct nt_run *r, double *v)
{
	for (int i = 0; i < sc->nprocs; i++)
		v[i] = nt_proc_cpu(r->proc[i]);
	for (int i = 0; i < sc->ngroups; i++)
		v[NT_MAXP + i] = nt_group_cpu(sc, r, i);
}

/* The judge's view of a running scenario: the processes, then the groups */
struct nt_judge_ctx {
	const struct nt_scenario *sc;
	struct nt_run *r;
};

static int nt_judge_read(void *ctx, double *cpu, double *base)
{
	struct nt_judge_ctx *c = ctx;
	double v[NT_MAXP + NT_MAXG];
	int k = 0;

	nt_snapshot(c->sc, c->r, v);
	*base = 0;
	for (int i = 0; i < c->sc->nprocs; i++)
		*base += cpu[k++] = v[i];
	for (int i = 0; i < c->sc->ngroups; i++) {
		cpu[k++] = v[NT_MAXP + i];
		if (c->sc->g[i].parent < 0)
			*base += v[NT_MAXP + i];
	}
	return 0;
}

static int nt_judge_all(void *ctx, double *cpu, double *base)
{
	double each[RGT_JUDGE_MAX];

	nt_judge_read(ctx, each, base);
	cpu[0] = *base;
	return 0;
}

int nt_scn_judge(const struct nt_scenario *sc, struct nt_run *r, double warmup)
{
	static char labels[RGT_JUDGE_MAX][64];
	struct nt_judge_ctx c = { sc, r };
	struct rgt_judge j = { .what = "the scenario's split", .read = nt_judge_read, .ctx = &c,
			       .min_cpus = 0.05 };
	int node[NT_MAXP + NT_MAXG], fails;
	struct model m;

	model_init(&m);
	int sg = model_add(&m, -1, 1024, 0);
	for (int i = 0; i < sc->nprocs; i++)
		node[i] = model_add(&m, sg, 1024, 1.0);
	for (int i = 0; i < sc->ngroups; i++) {
		int par = sc->g[i].parent < 0 ? sg : node[NT_MAXP + sc->g[i].parent];
		node[NT_MAXP + i] = model_add(&m, par, nt_weight[r->nice[i] + 20], 0);
		for (int k = 0; k < sc->g[i].threads; k++)
			model_add(&m, node[NT_MAXP + i], 1024, 1.0);
	}
	model_run(&m, sc->capacity);
	for (int i = 0; i < sc->nprocs; i++) {
		snprintf(labels[j.n], sizeof(labels[0]), "process %d", i + 1);
		j.fixed[j.n] = model_fraction(&m, node[i]);
		j.label[j.n] = labels[j.n];
		j.n++;
	}
	for (int i = 0; i < sc->ngroups; i++) {
		snprintf(labels[j.n], sizeof(labels[0]), "%s (nice %d)", sc->g[i].label, r->nice[i]);
		j.fixed[j.n] = model_fraction(&m, node[NT_MAXP + i]);
		j.label[j.n] = labels[j.n];
		j.n++;
	}
	nt_sleep(warmup);
	fails = rgt_judge(&j, NULL);
	if (sc->cpu_max && fails >= 0) {
		struct rgt_judge rate = {
			.what = "CPUs used under cpu.max", .n = 1, .label = { "the scenario" },
			.fixed = { sc->capacity }, .read = nt_judge_all, .ctx = &c, .rate = 1,
			.min_cpus = 0.05,
		};
		int f = rgt_judge(&rate, NULL);
		fails = f < 0 ? f : fails + f;
	}
	return fails;
}
