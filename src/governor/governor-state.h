/* SPDX-License-Identifier: MIT */
/*
 * governor-state.h - the governor's state file: its name, its text, the
 * writer (governor-publish.c) and the reader and collector
 * (governor-state.c, also used by the rgroup command and the fuzzers).
 *
 * A kernel backend's groups can be seen in cgroupfs or /proc; the
 * governor's exist only in the process. So the governor publishes the tree
 * in a small file that `rgroup tree` and `rgroup top` read instead:
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
#ifndef RGROUP_GOVERNOR_STATE_H
#define RGROUP_GOVERNOR_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rgroup.h"   /* RGROUP_MAX_DEPTH */

#define RGROUP__STATE_DIR "/dev/shm"
#define RGROUP__STATE_VERSION 1
#define RGROUP__STATE_MAX (64 * 1024)   /* bytes, "truncated" included */
/* The deepest group a file may list is the library's nesting limit,
 * RGROUP_MAX_DEPTH (rgroup.h). */

struct rgroup__state {
	unsigned int version;
	pid_t pid;
	uint64_t starttime;
	char backend[16];
	uint64_t realtime_ns, monotonic_ns;
	uint64_t pidns;                 /* the owner's PID namespace, as names
	                                 * carry it (0: the initial one) */
	int truncated;                  /* "truncated": groups are missing */
};
struct rgroup__state_group {
	uint64_t id, parent;            /* parent 0: top-level */
	unsigned int depth, weight;
	int nice;
	uint64_t usage_ns, dead_ns, throttled_ns;
	unsigned int ntids;             /* tids listed (may exceed the array) */
};

/* ---- governor-state.c: names and text (pure), and the collector ------ */

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
/* Remove the state files in dir that processes which no longer exist left
 * (killed, or ended with _exit() in a fork child), and the .tmp a writer
 * killed mid-write leaves: only the caller's own files, unless any_owner.
 * With dry_run nothing is removed. seen(arg, path, err), if not NULL, is
 * told of each (err 0, or the errno of a failed unlink). Returns how many
 * were (or would be) removed, or -errno if dir cannot be read. */
int rgroup__state_gc(const char *dir, int dry_run, int any_owner,
		     void (*seen)(void *arg, const char *path, int err), void *arg);

/* ---- governor-publish.c: the writer, in the governed process ----------- */

/* The governor's per-node data (backend.h, node_size): what it adds to a
 * group's statistics. */
struct rgroup__gov_node {
	uint64_t throttled_ns;          /* time its threads were paused */
	uint64_t unthrottled;           /* pauses its threads did not take */
};

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
 * the file is removed by a destructor, and nothing is published after. */
void rgroup__publish_remove(void);

#endif /* RGROUP_GOVERNOR_STATE_H */
