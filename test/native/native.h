/* SPDX-License-Identifier: MIT */
/*
 * native.h - shared code of the native-kernel selftests (native.c, compiled
 * once): raw clone3() threads, PR_RGROUP and PRIO_RGRP wrappers, the /proc
 * rgroup file, CPU clocks, cgroup2 helpers, and the kernel log check that
 * fails a test on any lockdep / might_sleep / BUG / WARN splat.
 *
 * The programs call the syscalls directly, as a selftest would: no rgroup
 * library is involved. They run as root in the VM (test/vm/run-in-vm.sh)
 * on the patched kernel, started in the cgroup /sys/fs/cgroup/sg-test.
 */
#ifndef RGROUP_NATIVE_H
#define RGROUP_NATIVE_H

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "check.h"
#include "native-uapi.h"
#include "rgroup.h"       /* RGROUP_MAX_DEPTH: the series' limit too */
#include "parse.h"

/* One line of /proc/PID/task/TID/rgroup. */
/* One line of /proc/PID/task/TID/rgroup (src/kernel-text/parse.h). */
#define nt_rg rgroup__kgroup

/* Read thread tid's rgroup line (pid 0: this process). 0 or -errno. */
int nt_rg_read(pid_t pid, pid_t tid, struct nt_rg *rg);
/* The id of tid's rgroup in this process; 0 for none; (uint64_t)-1 on error. */
uint64_t nt_rg_id(pid_t tid);

/* prctl(PR_RGROUP, ...) and the PRIO_RGRP calls: -1 and errno on error. */
int nt_set_next_new(int on);
int nt_get_next_new(void);
int nt_enter(pid_t tid, unsigned long flags);
int nt_setprio(pid_t who, int nice);
int nt_getprio(pid_t who);     /* glibc's getpriority(): the nice value */
long nt_getprio_raw(pid_t who); /* the raw syscall: 20 - nice */
pid_t nt_gettid(void);
/* Pin the calling thread to one CPU: 0 or -1 and errno. */
int nt_pin_cpu(int cpu);

/*
 * A raw clone3() thread (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
 * CLONE_THREAD | CLONE_SYSVSEM plus `flags`) running fn(arg) on its own
 * stack. fn must not touch libc state that lives in TLS (errno included):
 * it shares the creating thread's TLS. The nt_rt_* functions below are safe.
 */
struct nt_raw {
	pid_t tid;
	volatile int ctid;   /* cleared by the kernel when the thread exits */
	void *stack;
	size_t stack_size;
	int own_stack;       /* nt_raw_start() mapped it */
};

/* Start; returns the tid, or -errno (clone3's error) with nothing left.
 * With t->stack already set (and t->stack_size), that stack is used and
 * kept: nt_raw_join() then only waits. */
int nt_raw_start(struct nt_raw *t, uint64_t flags, int (*fn)(void *), void *arg);
/* Wait for the thread's exit and free its stack. */
void nt_raw_join(struct nt_raw *t);
/* Raw clone3() call with a given struct: the errno value, or 0 (the thread
 * ran fn and exited: joined already). For error cases. */
int nt_raw_try(uint64_t flags, int cgroup_fd);

/* Thread bodies for raw threads: arg points to an int. */
int nt_rt_wait(void *flag);  /* sleep until *flag != 0 (futex) */
int nt_rt_spin(void *stop);  /* spin until *stop != 0 */
void nt_wake(volatile int *flag); /* set *flag = 1 and wake waiters */

/* pthread_create() with PR_RGROUP_SET_NEXT_NEW when new_group: 0 or errno. */
int nt_pthread(pthread_t *t, int new_group, void *(*fn)(void *), void *arg);

/*
 * An agent: a pthread (optionally in a new rgroup) that runs jobs in its own
 * context, so that a test can make a thread inside an rgroup create threads
 * or call PRIO_RGRP. Jobs may use libc.
 */
struct nt_agent {
	pthread_t thread;
	pid_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int (*job)(void *);
	void *arg;
	int result, busy, stop, started;
};

/* Start (new_group: with PR_RGROUP_SET_NEXT_NEW); 0 or an errno value. */
int nt_agent_start(struct nt_agent *a, int new_group);
/* Run job(arg) in the agent's thread and return its result. */
int nt_agent_run(struct nt_agent *a, int (*job)(void *), void *arg);
/* Let the agent exit and join it. */
void nt_agent_stop(struct nt_agent *a);
/* Start a from inside `from` (so in its rgroup, or with new_group in a new
 * one nested under it); 0 or an errno value. */
int nt_agent_start_in(struct nt_agent *from, struct nt_agent *a, int new_group);

/*
 * Busy pthreads, started by the calling thread (so in its rgroup); from
 * another thread, through an agent: nt_agent_run(a, nt_spinners_job, s).
 * Set s->n (at most NT_MAX_SPIN) first.
 */
#define NT_MAX_SPIN 64
struct nt_spinners {
	int n;
	int stop;
	int spread;          /* pin spinner i to CPU i modulo the online CPUs */
	struct nt_spinner {
		pthread_t thread;
		pid_t tid;
		struct nt_spinners *set;
	} s[NT_MAX_SPIN];
};
int nt_spinners_job(void *spinners);   /* start; 0 or an errno value */
void nt_spinners_stop(struct nt_spinners *s);
double nt_spinners_cpu(struct nt_spinners *s); /* their CPU time, seconds */

/*
 * CPU-distribution scenarios against the reference model (src/model/model.h):
 * single-threaded busy processes and a tree of rgroups with busy threads,
 * built in the calling process (whose main thread must sleep meanwhile).
 */
#define NT_MAXG 8
#define NT_MAXP 4
struct nt_scenario {
	int nprocs;                /* single-threaded busy processes */
	int ngroups;
	struct {
		int parent;        /* index of the parent rgroup, -1: top-level */
		int nice;
		int threads;       /* busy threads of its own */
		const char *label;
	} g[NT_MAXG];
	double capacity;           /* CPUs the scenario's cgroup can get */
	int spread;                /* pin each group's thread i to CPU i */
	int cpu_max;               /* also compare the CPUs used with capacity */
};
struct nt_run {
	struct nt_agent agent[NT_MAXG];
	struct nt_spinners spin[NT_MAXG];
	pid_t proc[NT_MAXP];
	int nice[NT_MAXG];
};
/*
 * Nested and flat on two CPUs: top-level A (nice 0) with A/N (nice -3)
 * below it, B (nice 3) with B/M (nice 0), two busy threads in each but
 * B/M's one: every group has a thread on each CPU to judge.
 */
extern const struct nt_scenario nt_nested_two_cpus;

/* Build it: 0 or an errno value (then nt_scn_stop() cleans up). */
int nt_scn_start(const struct nt_scenario *sc, struct nt_run *r);
/* Warm up, then judge each entity's share of the CPU time the scenario got
 * against the model by the one rule (test/lib/judge.h), and with cpu_max
 * the CPUs it used against its capacity. Returns the number of entities
 * off, or -1 when it could not be judged (reported as a skip). */
int nt_scn_judge(const struct nt_scenario *sc, struct nt_run *r, double warmup);
void nt_scn_stop(const struct nt_scenario *sc, struct nt_run *r);

/* Time. */
double nt_now(void);                 /* CLOCK_MONOTONIC, seconds */
void nt_sleep(double s);
double nt_thread_cpu(pid_t tid);     /* a thread of this process, seconds */
double nt_proc_cpu(pid_t pid);       /* any process, seconds */

/*
 * The number of task_group objects in use (one per rgroup, cgroup and
 * autogroup): the cache is shrunk first, which also empties KASAN's
 * quarantine of it. -1 if /proc/slabinfo cannot be read.
 */
long nt_task_groups(void);

/*
 * The scheduler's debug file, /sys/kernel/debug/sched/debug (debugfs is
 * mounted if it is not): its length, or -errno (-ENOENT without
 * CONFIG_SCHED_DEBUG). It lists, per CPU, the group runqueues on the
 * scheduler's leaf list, as "cfs_rq[CPU]:PATH", an rgroup's PATH ending
 * in "/rgroup-TGID.ID".
 */
int nt_sched_debug(char *buf, size_t size);

/*
 * The weight of the group entity of thread TID's rgroup on each CPU where
 * the scheduler lists the group's runqueue (the debug file's
 * "se->load.weight", in the kernel's fixed point): w[cpu] for cpu <
 * ncpu, -1 where it is not listed. Returns the number of CPUs listed, or
 * -errno (no debug file).
 */
#define NT_MAX_CPUS 512
int nt_group_weights(pid_t tid, long long *w, int ncpu);

/* Files. */
int nt_write_file(const char *path, const char *s);   /* 0 or -errno */
int nt_read_file(const char *path, char *buf, size_t size); /* length or -errno */

/*
 * cgroup2: the test's own system group. nt_cg_init() moves the program
 * into SG/self and enables +cpu (+cpuset) for SG's children, so that
 * nt_cg_make() can create sibling cgroups with the cpu controller.
 * nt_cg_cleanup() moves the program back and removes what it made.
 */
#define NT_SG "/sys/fs/cgroup/sg-test"
int nt_cg_init(void);
int nt_cg_make(const char *name, char *path, size_t size); /* NT_SG/name */
int nt_cg_move(const char *cg, pid_t pid);   /* write pid to cgroup.procs */
void nt_cg_cleanup(void);
/* A recursive listing of /sys/fs/cgroup's directories (malloc'ed). */
char *nt_cg_listing(void);

/* fork() a child that runs fn(arg) and _exit()s with its return value. */
pid_t nt_fork(int (*fn)(void *), void *arg);
/* Wait for a child: its exit status, or 128 + signal. */
int nt_wait(pid_t pid);
/*
 * Another process with a thread in an rgroup of its own, for the tests of
 * who may touch whose rgroups: nt_other_start() forks it and returns when
 * that thread's tid is known (0, or -1 and errno); nt_other_end() lets it
 * end and returns its exit status.
 */
struct nt_other {
	pid_t pid, tid;
	int to_child, from_child;
};
int nt_other_start(struct nt_other *o);
int nt_other_end(struct nt_other *o);
/* Become uid (and gid) uid with no supplementary groups and no
 * capabilities: 0 or -1 and errno. */
int nt_drop_privileges(uid_t uid);

/* fork() a single-threaded busy process; kill it with nt_kill(). */
pid_t nt_spinner(void);
void nt_kill(pid_t pid);

/* Cases that need a fresh process (enter once, one rgroup per thread ...):
 * run fn in a fork()ed child and CHECK that it exits 0. */
int nt_child_run(int (*fn)(void *), void *arg);
#define nt_in_child(what, fn, arg)                                           \
	do {                                                                 \
		int rc_ = nt_child_run(fn, arg);                             \
		CHECK(rc_ == 0, "%s: the child exited %d", (what), rc_);     \
	} while (0)

/*
 * The kernel log: the number of lines that show a lockdep report, a
 * sleep-in-atomic report, a BUG, a WARNING, an oops or an RCU stall
 * (printed), -1 if it cannot be read. Every program checks it last
 * (NT_MAIN does) and fails unless it is 0.
 */
int nt_check_kernel_log(void);

/* The kernel has rgroups? Otherwise the program skips (rgt_skip_all). */
void nt_require_rgroups(void);

/*
 * Every program's main: skip without rgroups, set up the cgroups of
 * nt_cg_init() when `cgroups` (and remove them afterwards), run the cases,
 * then fail on any splat in the kernel log. Returns main's exit status.
 */
int nt_main(const struct rgt_case *cases, size_t ncases, int argc, char **argv, int cgroups);

#define NT_MAIN(cases)                                                       \
	int main(int argc, char **argv)                                      \
	{                                                                    \
		return nt_main(cases, sizeof(cases) / sizeof(cases[0]),      \
			       argc, argv, 0);                               \
	}

#endif /* RGROUP_NATIVE_H */
