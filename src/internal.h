/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the core, the backends and the parsers share.
 * Nothing here is exported: internal non-static names start with rgroup__.
 *
 *   core.c            the process's rgroup tree and rules 1-9 (DESIGN.md §2)
 *   exec.c            exec family: collapse the tree for the new program (rule 7)
 *   backend-*.c       one file per backend, behind struct rgroup__backend
 *   cgroupfs.c        cgroupfs file and directory helpers both cgroup backends use
 *   publish.c         the governor's state file, for `rgroup tree` and `top`
 *   stale.c           what dead processes left: owners alive?, old state files
 *   parse.c           pure parsers of kernel text (no I/O; unit-tested, fuzzable)
 *   weight.c          the scheduler's nice-to-weight table
 */
#ifndef RGROUP_INTERNAL_H
#define RGROUP_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rgroup.h"

#define RGROUP__EXPORT __attribute__((visibility("default")))

#define RGROUP__FD_CACHE 256
/* The library's own limits (cgroup v1 has no cgroup.max.depth or
 * cgroup.max.descendants): beyond them RGROUP_NEW fails with ENOSPC. */
#define RGROUP__MAX_DEPTH 32
#define RGROUP__MAX_GROUPS 65536
#define RGROUP__NICE_MIN (-20)
#define RGROUP__NICE_MAX 19

/* ---- The tree (owned by core.c, read by backends) ------------------- */

/* A thread the library tracks: lives in that thread's TLS. */
struct rgroup__thread {
	pid_t tid;
	struct rgroup__node *node;
	int known;                      /* node is known (NULL: in no rgroup) */
	struct rgroup__thread *prev, *next;
};

struct rgroup__node {
	rgroup_id_t id;
	struct rgroup__node *parent;    /* NULL: top-level (parent is the sgroup) */
	struct rgroup__node *children;  /* first child */
	struct rgroup__node *spares;    /* emptied children kept for reuse */
	struct rgroup__node *prev, *next; /* siblings */
	struct rgroup__thread *threads; /* tracked members */
	unsigned int nthreads;          /* tracked members */
	unsigned int nchildren;
	unsigned int pending;           /* threads being started into it */
	unsigned int depth;             /* 1 for top-level */
	int nice;
	uint64_t usage_dead_ns;         /* CPU time of tracked members that exited */
	uint64_t usage_base_ns;         /* backend usage when it was recycled */
	uint64_t throttled_ns;          /* governor: time its threads were paused */
	uint64_t unthrottled;           /* governor: pauses its threads did not take */
	char name[64];                  /* directory name */
	char *path;                     /* directory relative to the sgroup */
	int bound;                      /* its kernel group exists */
	/* Cached descriptors of its thread and weight files, -1 when not
	 * open: at most RGROUP__FD_CACHE in all, so that a process with
	 * thousands of rgroups stays within RLIMIT_NOFILE. */
	int placefd;                    /* tasks / cgroup.threads */
	int weightfd;                   /* cpu.shares / cpu.weight.nice */
};

/* ---- The backend interface ------------------------------------------ */

/*
 * Every callback gets the backend's private state first. All except
 * probe(), fork_child() and place_self() run with the core lock held.
 * Callbacks return 0 or a negative errno and leave nothing half-made behind
 * on failure.
 */
struct rgroup__backend {
	const char *name;
	void *priv;
	/* Can this backend enforce CPU weights for this process here? 0, or a
	 * negative errno with one line "reason; fix" in why. Creates nothing. */
	int (*probe)(void *priv, char *why, size_t len);
	/* Find and open the process's current sgroup; remove directories that
	 * dead rgroup processes left in it. */
	int (*attach)(void *priv);
	/* Close the sgroup's descriptors. */
	void (*detach)(void *priv);
	/* Has the process been moved out of the attached sgroup? 1, 0 or -errno.
	 * The calling thread must be in the sgroup itself. */
	int (*moved)(void *priv);
	/* Make n's group below n->parent (or the sgroup) with weight n->nice,
	 * and open n's descriptors. */
	int (*create)(void *priv, struct rgroup__node *n);
	/* Move thread tid into n (NULL: the sgroup itself). */
	int (*place)(void *priv, struct rgroup__node *n, pid_t tid);
	/* Set n's weight from a nice value. */
	int (*set_nice)(void *priv, struct rgroup__node *n, int nice);
	/* Remove n's group and close its descriptors; -EBUSY (n untouched)
	 * while threads are still inside. */
	int (*destroy)(void *priv, struct rgroup__node *n);
	/* Move every thread inside n itself to the sgroup (exit, exec). */
	int (*evacuate)(void *priv, const struct rgroup__node *n);
	/* CPU time used in n and below, or -ENOTSUP (the core then adds up its
	 * threads' CPU clocks). */
	int (*usage)(void *priv, const struct rgroup__node *n, uint64_t *ns);
	/* Name of the group thread tid is in, if it is a group below the
	 * sgroup: 1 and the name, 0 (sgroup or elsewhere) or -errno. Finds
	 * threads the library has not seen (plain pthread_create). */
	int (*group_of)(void *priv, pid_t tid, char *name, size_t len);
	/* The calling thread leaves the library's lock and owes a pause the
	 * governor asked for while it held it (token from the backend). NULL
	 * for backends that never pause threads. */
	void (*deferred)(void *priv, int token);
	/* In a fork child (async-signal-safe): put the calling process into
	 * the sgroup and close the backend's descriptors. */
	void (*fork_child)(void *priv);
	/* Move the calling thread into n (NULL: the sgroup). For exec, which
	 * may run in a vfork child: async-signal-safe, takes no lock. */
	int (*place_self)(void *priv, const struct rgroup__node *n);
	/* Before exec, after every group is unbound (core lock held): return
	 * only when nothing asynchronous of the backend's can signal the
	 * calling thread any more. NULL when there is nothing to stop. */
	void (*quiesce)(void *priv);
};

extern const struct rgroup__backend rgroup__backend_cgroup2;
extern const struct rgroup__backend rgroup__backend_cgroup1;
extern const struct rgroup__backend rgroup__backend_governor;

/* How deep the calling thread is in the core lock, and a pause it owes
 * (see core_lock() in core.c). */
extern __thread int rgroup__in_lib;
extern __thread int rgroup__pause_token;

/* For the governor: the tree, under the core lock. */
void rgroup__lock(void);
int rgroup__trylock(void);                     /* 0 or an error number */
void rgroup__unlock(void);
struct rgroup__node *rgroup__tree(void);      /* first top-level rgroup */
pid_t rgroup__keeper_tid(void);               /* 0 if none */
/* Start one of the library's own threads (the keeper, the governor):
 * detached, a small stack, every signal blocked. 0 or an error number. */
int rgroup__start_helper(void *(*fn)(void *));

/* ---- core.c services for other library files ------------------------ */

/* Called by the exec wrappers before and after (on failure) an exec. */
void rgroup__exec_prepare(void);
void rgroup__exec_failed(void);

/* The calling process's start time (field 22 of /proc/self/stat), used in
 * directory names so that a reused pid is not mistaken for the owner. */
uint64_t rgroup__self_starttime(void);

/* ---- fault.c: fault injection, only in the test variant ---------------- */

/*
 * Every cgroupfs helper, and the core's allocation and thread creation, ask
 * rgroup__fault() first: in the library it is nothing; in the test variant
 * (built with RGROUP_FAULT_INJECTION, test/system/test-faults.c) the Nth
 * call returns the armed error.
 */
#ifdef RGROUP_FAULT_INJECTION
int rgroup__fault(void);
void rgroup__fault_arm(long nth, int err);   /* nth < 0: disarm */
long rgroup__fault_left(void);               /* < 0: it has fired */
#else
static inline int rgroup__fault(void)
{
	return 0;
}
#endif

/* ---- cgroupfs.c: what both cgroup backends share ------------------- */

/* The state of one cgroup backend: its variant and the attached sgroup. */
struct rgroup__cg {
	const char *ctrl;       /* v1 controller token ("cpu"), NULL for v2 */
	const char *tidsfile;   /* "tasks" (v1) or "cgroup.threads" (v2) */
	char path[PATH_MAX];    /* the sgroup's path in its hierarchy */
	int sgroupfd, placefd, procsfd;
	unsigned int ncached;   /* node descriptors open (RGROUP__FD_CACHE) */
	int weight_nice;        /* v2: weightfd is cpu.weight.nice */
};

/* Where the sgroup of the calling thread is: its directory (absolute) and
 * cgroup path; on failure a reason-and-fix line in why. */
int rgroup__cg_locate(struct rgroup__cg *cg, char *dir, size_t dlen,
		      char *cgpath, size_t plen, char *why, size_t wlen);
/* Generic backend operations (see struct rgroup__backend). */
int rgroup__cg_attach(void *priv);
void rgroup__cg_detach(void *priv);
int rgroup__cg_moved(void *priv);
int rgroup__cg_place(void *priv, struct rgroup__node *n, pid_t tid);
int rgroup__cg_destroy(void *priv, struct rgroup__node *n);
int rgroup__cg_evacuate(void *priv, const struct rgroup__node *n);
int rgroup__cg_group_of(void *priv, pid_t tid, char *name, size_t len);
void rgroup__cg_fork_child(void *priv);
int rgroup__cg_place_self(void *priv, const struct rgroup__node *n);
/* mkdir n below its parent and open its tids file; the caller adds the
 * backend's specifics and calls rgroup__cg_unmake() if they fail. */
int rgroup__cg_make(struct rgroup__cg *cg, struct rgroup__node *n);
void rgroup__cg_unmake(struct rgroup__cg *cg, struct rgroup__node *n);
/* "<n's path>/<file>" (n NULL: the sgroup's own file). */
int rgroup__cg_file(const struct rgroup__node *n, const char *file, char *buf,
		    size_t len);
/* Write val to n's file through the descriptor cached in *cache, opening
 * (and caching, while the cache has room) it when needed. */
int rgroup__cg_node_write(struct rgroup__cg *cg, struct rgroup__node *n,
			  int *cache, const char *file, const char *val);
/* Format a reason-and-fix line into why (returns err). */
int rgroup__why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Plain helpers. All opens use O_CLOEXEC|O_NOFOLLOW; every value is one
 * write(). */
int rgroup__cg_open(int dirfd, const char *file, int flags);
int rgroup__cg_write(int dirfd, const char *file, const char *val);
int rgroup__cg_write_fd(int fd, const char *val);
int rgroup__cg_write_int(int fd, long long val);
/* Reads the whole file (NUL-terminated); returns length or -errno. */
int rgroup__cg_read(int dirfd, const char *file, char *buf, size_t len);
int rgroup__cg_read_fd(int fd, char *buf, size_t len);
/* mkdir path (relative to dirfd) with its parent's permission bits,
 * never wider. */
int rgroup__cg_mkdir(int dirfd, const char *path);
int rgroup__cg_rmdir(int dirfd, const char *path);
/* Open a cgroup directory by absolute path. */
int rgroup__cg_open_dir(const char *path);
/* Remove, bottom-up, every rgroup directory tree directly in sgroupfd
 * whose owning process is gone (name: see rgroup__format_dirname). Never
 * touches a live process's groups or anything not named by rgroup.
 * Returns the number of directories removed or -errno. */
int rgroup__cg_gc(int sgroupfd);
/* Move each thread listed in file `tids` (below dirfd) to placefd. */
int rgroup__cg_move_all(int dirfd, const char *tids, int placefd);
/* Read a whole file by absolute path (for /proc, mountinfo). */
int rgroup__read_path(const char *path, char *buf, size_t len);
/* Is process pid still the one that started at `start` (field 22 of its
 * /proc stat)? 1 also when it cannot tell, so nothing of it is removed. */
int rgroup__owner_alive(pid_t pid, uint64_t start);

/* ---- parse.c: pure parsers, no I/O ----------------------------------- */

struct rgroup__mount {
	char point[PATH_MAX];  /* mount point, octal escapes decoded */
	char root[PATH_MAX];   /* root of the mount within its hierarchy */
	int ro;                /* mounted read-only */
};

/* /proc/<pid>/cgroup text: the path of the v1 hierarchy whose controller
 * list holds `ctrl` as an exact token (ctrl NULL: the v2 "0::" line). */
int rgroup__parse_proc_cgroup(const char *text, const char *ctrl,
			      char *path, size_t len);
/* /proc/self/mountinfo text: the first mount of fstype "cgroup" whose super
 * options hold `ctrl` as an exact token (ctrl NULL: fstype "cgroup2"). */
int rgroup__parse_mountinfo(const char *text, const char *ctrl,
			    struct rgroup__mount *m);
/* Directory of cgroup path `cgpath` under mount m (strips m->root). */
int rgroup__cgroup_dir(const struct rgroup__mount *m, const char *cgpath,
		       char *out, size_t len);
/* Keyed file ("key value" lines, e.g. cpu.stat): value of exact key. */
int rgroup__parse_keyed(const char *text, const char *key, uint64_t *val);
/* Space-separated token list (cgroup.controllers): 1 if tok is in it. */
int rgroup__has_token(const char *text, const char *tok);
/* cgroup.type text. */
enum rgroup__cgtype {
	RGROUP__CG_DOMAIN = 1,
	RGROUP__CG_DOMAIN_THREADED,
	RGROUP__CG_DOMAIN_INVALID,
	RGROUP__CG_THREADED,
};
int rgroup__parse_cgtype(const char *text);
/* Newline-separated tids (tasks, cgroup.threads): count, may exceed max. */
int rgroup__parse_tids(const char *text, pid_t *tids, size_t max);
/* Start time (field 22) from /proc/<pid>/stat text. */
int rgroup__parse_stat_starttime(const char *text, uint64_t *start);
/* rgroup directory names: "rgroup-<pid>-<starttime>-<id>". */
int rgroup__format_dirname(char *out, size_t len, pid_t pid, uint64_t start,
			   uint64_t id);
int rgroup__parse_dirname(const char *name, pid_t *pid, uint64_t *start,
			  uint64_t *id);

/* ---- weight.c ------------------------------------------------------- */

int rgroup__clamp_nice(int nice);
unsigned int rgroup__nice_to_weight(int nice);
/* cgroup v2 cpu.weight (1..10000, 100 = nice 0) nearest a kernel weight. */
unsigned int rgroup__weight_to_cgroup2(unsigned int weight);

/* ---- publish.c: the governor's state file, for the rgroup tool -------- */

/*
 * A kernel backend's groups are visible in cgroupfs; the governor's exist
 * only in the process. So the governor publishes the tree in a small file
 * that `rgroup tree` and `rgroup top` read instead:
 *
 *   /dev/shm/rgroup-<pid>-<starttime>.state    (mode 0600, the process's user)
 *
 * Line-based text; the format, also in rgroup(7) FILES:
 *
 *   rgroup-state 1 pid=P starttime=S backend=NAME realtime_ns=T monotonic_ns=M
 *   group id=I parent=J depth=D nice=N weight=W usage_ns=U dead_ns=X throttled_ns=Z tids=A,B,...
 *   ...                                    (pre-order: parents first)
 *   end                                    (or "truncated": more did not fit)
 *
 * parent 0: a top-level rgroup. usage_ns: CPU time of the group and below,
 * exited threads included (as rgroup_info()); dead_ns: the part of it that
 * exited members and removed children of this group itself used, so a
 * reader can add its live members' CPU times to it and get a figure as
 * fresh as its own reading of /proc. throttled_ns: the time the governor
 * kept the group's threads paused. Keys are "key=value" words; readers
 * ignore keys and line kinds they do not know. The file is replaced
 * whole (rename), never rewritten in place.
 */
#define RGROUP__STATE_DIR "/dev/shm"
#define RGROUP__STATE_VERSION 1
#define RGROUP__STATE_MAX (64 * 1024)   /* bytes, "truncated" included */

/* Write the calling process's tree to its state file, replacing it; no
 * file while no group is bound. For the governor thread, which may run
 * while other threads are paused inside malloc or stdio: no allocation,
 * no stdio stream, no libc lock, and the core lock only tried (the caller
 * must not hold it). 0 or -errno; -EBUSY: the core lock or another publish
 * was busy, the next call catches up. */
int rgroup__publish(const char *backend_name);
/* Remove the file, and make a publish running meanwhile remove what it
 * writes; for when the governor stops. Lock-free, callable with the core
 * lock held; in a fork child it leaves the parent's file alone. At exit
 * publish.c removes the file itself (a destructor) and publishes no more. */
void rgroup__publish_remove(void);
/* Remove the state files in dir that processes which no longer exist left
 * (killed, or ended with _exit() in a fork child), and the .tmp a writer
 * killed mid-write leaves: only the caller's own files, unless any_owner.
 * With dry_run nothing is removed. seen(arg, path, err), if not NULL, is
 * told of each (err 0, or the errno of a failed unlink). Returns how many
 * were (or would be) removed, or -errno if dir cannot be read. */
int rgroup__state_gc(const char *dir, int dry_run, int any_owner,
		     void (*seen)(void *arg, const char *path, int err), void *arg);
/* core.c: CPU time used in n and below, as rgroup_info() reports it.
 * Core lock held. */
uint64_t rgroup__node_usage(const struct rgroup__node *n);

/* parse.c: the file's name and text (pure, like the parsers above). */
struct rgroup__state {
	unsigned int version;
	pid_t pid;
	uint64_t starttime;
	char backend[16];
	uint64_t realtime_ns, monotonic_ns;
	int truncated;                  /* "truncated": groups are missing */
};
struct rgroup__state_group {
	uint64_t id, parent;            /* parent 0: top-level */
	unsigned int depth, weight;
	int nice;
	uint64_t usage_ns, dead_ns, throttled_ns;
	unsigned int ntids;             /* tids listed (may exceed the array) */
};
/* "rgroup-<pid>-<starttime>.state", with tmp ".state.tmp"; and back. */
int rgroup__format_statename(char *out, size_t len, pid_t pid, uint64_t start,
			     int tmp);
int rgroup__parse_statename(const char *name, pid_t *pid, uint64_t *start,
			    int *tmp);
/* One line each, without the tids and newline of a group line: length
 * written, or -ENAMETOOLONG when it does not fit. */
int rgroup__format_state_head(char *out, size_t len, const struct rgroup__state *h);
int rgroup__format_state_group(char *out, size_t len,
			       const struct rgroup__state_group *g);
int rgroup__parse_state(const char *text, struct rgroup__state *h, pid_t *tids,
			size_t max, int (*fn)(void *arg, const struct rgroup__state_group *g),
			void *arg);

#endif /* RGROUP_INTERNAL_H */
