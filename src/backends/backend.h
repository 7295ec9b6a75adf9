/* SPDX-License-Identifier: MIT */
/*
 * backend.h - the seam between the core (tree.h) and the mechanisms that
 * enforce the tree: one struct of operations per backend, plus per-node
 * data the backend owns (like libbpf's struct bpf_link: ops and the data
 * of its type). Adding a backend is one file, backend-NAME.c, defining a
 * `const struct rgroup__backend`, and one line in rgroup__backends[]
 * (table.c), which is the only list of backends: the library's messages
 * and the rgroup command (rgroup_backend_name()) take their names from it.
 */
#ifndef RGROUP_BACKEND_H
#define RGROUP_BACKEND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tree.h"

/*
 * Every callback gets the backend's private state first. All except
 * probe(), fork_child() and place_self() run with the core lock held.
 * Callbacks return 0 or a negative errno and leave nothing half-made
 * behind on failure. Optional ones may be NULL, as said.
 */
struct rgroup__backend {
	const char *name;
	void *priv;
	/* Bytes of per-node data the backend keeps in each node
	 * (rgroup__node_priv()), zeroed when the node is made. */
	size_t node_size;
	/* Keep emptied groups as spares for the next RGROUP_NEW: when making
	 * a group costs more than a thread (mkdir), not when it is free. */
	unsigned int spares : 1;
	/* The kernel removes emptied groups and follows migrations itself:
	 * the core runs no keeper and frees a node when it empties. */
	unsigned int self_managed : 1;
	/* A process forked by a thread inside a group starts inside it (a
	 * cgroup): rule 7 must move children out (spawn.c). */
	unsigned int forks_inherit : 1;
	/* set_nice applies rule 6 itself (the kernel's PRIO_RGRP): the core
	 * does not read the caller's nice first. */
	unsigned int checks_nice : 1;

	/* Can this backend enforce CPU weights for this process here? 0, or a
	 * negative errno with one line "reason; fix" in why. Creates nothing. */
	int (*probe)(void *priv, char *why, size_t len);
	/* Find the process's current sgroup and hold it; remove what dead
	 * rgroup processes left in it. NULL: nothing to hold (the kernel
	 * keeps the groups). */
	int (*attach)(void *priv);
	/* Let go of the sgroup. NULL: nothing held. */
	void (*detach)(void *priv);
	/* Has the process been moved out of the attached sgroup? 1, 0 or
	 * -errno. NULL: never (the kernel follows). */
	int (*moved)(void *priv);
	/* Make n's group below n->parent (or the sgroup) with weight n->nice.
	 * On success the core marks n bound. NULL: the group comes into being
	 * with its first thread (birth). */
	int (*create)(void *priv, struct rgroup__node *n);
	/*
	 * Start a thread that runs start(arg) and is inside n before it runs
	 * anything of it (rule 1); fresh: n was made for this thread. Returns
	 * pthread_create()'s result (an error number, not negative). The
	 * thread is cloned with rgroup__birth_create() (tree.h), never with
	 * pthread_create() itself. NULL: the core's default, the clone and
	 * then place() from the new thread before start runs, with the
	 * creator waiting for it.
	 */
	int (*birth)(void *priv, struct rgroup__node *n, int fresh, pthread_t *thread,
		     const pthread_attr_t *attr, void *(*start)(void *), void *arg);
	/* Move thread tid into n (NULL: the sgroup itself). */
	int (*place)(void *priv, struct rgroup__node *n, pid_t tid);
	/* Set n's weight from a nice value. */
	int (*set_nice)(void *priv, struct rgroup__node *n, int nice);
	/* Optional (NULL: the core's own record is the truth): n's nice value
	 * as the kernel has it, where code outside the library can change it. */
	int (*get_nice)(void *priv, const struct rgroup__node *n, int *nice);
	/* Remove n's group; -EBUSY (n untouched) while threads are still
	 * inside. Called only for a bound node; the core then unbinds it.
	 * NULL: the group goes with its last thread. */
	int (*destroy)(void *priv, struct rgroup__node *n);
	/* Move every thread inside n itself to the sgroup (exit, exec). NULL:
	 * the kernel does it. */
	int (*evacuate)(void *priv, const struct rgroup__node *n);
	/* CPU time used in n and below, or -ENOTSUP (the core then adds up its
	 * threads' CPU clocks). */
	int (*usage)(void *priv, const struct rgroup__node *n, uint64_t *ns);
	/* The group thread tid is in, if it is one of this process's rgroups:
	 * 1 and the node, 0 (in none) or -errno. Finds threads the library
	 * has not seen (plain pthread_create). */
	int (*group_of)(void *priv, pid_t tid, struct rgroup__node **n);
	/* Does usage() count the CPU time of threads that have exited (the
	 * kernel keeps one counter per group)? 1: yes, and the core reads no
	 * exiting thread's CPU clock (a system call that takes the run
	 * queue's lock, on every tracked thread's exit: 3% of a thread's
	 * create + join). Asked when the sgroup is attached. NULL: no. */
	int (*counts_exited)(void *priv);
	/* The backend's part of rgroup_info(): name, throttled time... NULL:
	 * nothing to add. */
	void (*info)(void *priv, const struct rgroup__node *n, struct rgroup_info *info);
	/* self_managed, optional (NULL: no): does the kernel still hold n for
	 * threads the library does not track (raw clone), leaving out the
	 * tracked member `leaving` (0: none) on its way out? 1, 0, -errno.
	 * fresh: look at the kernel again; else the backend may answer from
	 * what it read at the last fresh call (the core asks about several
	 * nodes at once). The core keeps such a node known (rule 3 is the
	 * kernel's). */
	int (*held)(void *priv, struct rgroup__node *n, pid_t leaving, int fresh);
	/* self_managed, with held: n's last tracked thread, leaving, is on its
	 * way out, still in n; the backend notes what held() will need. */
	void (*emptying)(void *priv, struct rgroup__node *n, pid_t leaving);
	/* The calling thread leaves the library's lock and owes a pause the
	 * governor asked for while it held it (token from the backend). NULL
	 * for backends that never pause threads. */
	void (*deferred)(void *priv, int token);
	/* In a fork child (async-signal-safe, no lock, no allocation): put the
	 * calling process into the sgroup and let go of the backend's and the
	 * nodes' resources (rgroup__for_each_node()). NULL: nothing to do. */
	void (*fork_child)(void *priv);
	/* The process ends without its destructors (_exit; exit.c), with the
	 * core lock held: exit_move puts the whole process into the sgroup,
	 * then exit_remove removes each group's directories (every node,
	 * spares too, children first). Async-signal-safe: no allocation, no
	 * cache, no lock. NULL: nothing would be left behind, or what is
	 * left is collected by the next start (the governor's state file). */
	void (*exit_move)(void *priv);
	void (*exit_remove)(void *priv, const struct rgroup__node *n);
	/* Move the calling thread into n (NULL: the sgroup). For exec, which
	 * may run in a vfork child: async-signal-safe, takes no lock; with n
	 * (a failed exec) the caller may hold the core lock. NULL: the kernel
	 * does it. On a self_managed backend the kernel moves the thread and
	 * this undoes or redoes only the rest (rule 10's CPUs). */
	int (*place_self)(void *priv, const struct rgroup__node *n);
	/* Before exec, after every group is unbound (core lock held): return
	 * only when nothing asynchronous of the backend's can signal the
	 * calling thread any more. NULL when there is nothing to stop. */
	void (*quiesce)(void *priv);

	/*
	 * Rule 10 (limits.c), optional: NULL means -ENOTSUP. The core has
	 * checked the inheritance and stored the setting in n before the
	 * call; on failure it puts the old one back and calls again. create()
	 * also applies what n carries (rebinding after a migration or a
	 * failed exec), including its ancestors' CPUs.
	 */
	/* Make n's CPUs (rgroup__node_cpus()) take effect for the threads
	 * of n and of the descendants that inherit them. */
	int (*set_cpus)(void *priv, struct rgroup__node *n);
	/* Make n's cap (n->quota_us per n->period_us, quota 0: none) take
	 * effect. */
	int (*set_cap)(void *priv, struct rgroup__node *n);
	/* Optional (NULL: the node's record is the truth): n's cap as the
	 * kernel has it, where code outside the library can change it. */
	int (*get_cap)(void *priv, const struct rgroup__node *n, uint64_t *quota_us,
		       uint64_t *period_us);

	/* The signal the backend sends the process's threads (installed, or
	 * the one it would install), which `rgroup run`'s preload keeps the
	 * program from taking; 0 if none would do. NULL: it sends none.
	 * Called without the core lock. */
	int (*signal)(void *priv);
};

/* The core's calls of the optional lifecycle operations. */
static inline int rgroup__be_attach(const struct rgroup__backend *be)
{
	return be->attach ? be->attach(be->priv) : 0;
}

static inline void rgroup__be_detach(const struct rgroup__backend *be)
{
	if (be->detach)
		be->detach(be->priv);
}

static inline int rgroup__be_create(const struct rgroup__backend *be, struct rgroup__node *n)
{
	return be->create ? be->create(be->priv, n) : 0;
}

static inline int rgroup__be_destroy(const struct rgroup__backend *be, struct rgroup__node *n)
{
	return be->destroy ? be->destroy(be->priv, n) : 0;
}

extern const struct rgroup__backend rgroup__backend_native;
extern const struct rgroup__backend rgroup__backend_cgroup2;
extern const struct rgroup__backend rgroup__backend_cgroup1;
extern const struct rgroup__backend rgroup__backend_governor;

/* The backends, best first (table.c), and a lookup by name (NULL: none). */
extern const struct rgroup__backend *const rgroup__backends[];
extern const size_t rgroup__nbackends;
const struct rgroup__backend *rgroup__backend_by_name(const char *name);
/* The first backend that can enforce weights for this process, or the one
 * RGROUP_BACKEND names; NULL with the reason in why. */
const struct rgroup__backend *rgroup__choose_backend(char *why, size_t len);
/* "-ENOENT, no backend named ..." with the list of names, into why. */
int rgroup__unknown_backend(const char *name, char *why, size_t len);

#endif /* RGROUP_BACKEND_H */
