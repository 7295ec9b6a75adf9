/* SPDX-License-Identifier: MIT */
/*
 * governor-publish.c - the governor's state file: the process's rgroup
 * tree where `rgroup tree` and `rgroup top` can read it (format:
 * governor-state.h, rgroup(7)).
 *
 * The governor thread calls rgroup__publish() while other threads of the
 * process may be stopped anywhere, inside malloc or holding a stdio lock.
 * So nothing here allocates, opens a stream or takes a libc lock: the text
 * is formatted with snprintf into a static buffer under the core lock (no
 * paused thread holds that one: the governor defers pauses inside it), and
 * written with open/write/rename after the lock is released. Readers see
 * the old file or the new one, never a part. The lock is only tried, never
 * waited for: a thread may hold it while it waits for the governor to stop
 * (exec); a busy lock skips this publish, the next one catches up.
 *
 * A remove and a publish may overlap (the process exits while the governor
 * is writing). Every remove bumps `gen`; a publish that finds `gen` changed
 * after its rename removes what it wrote, so a remove always wins. One
 * started after the governor stopped finds no bound group and writes
 * nothing. At exit the file goes in a destructor of its own, which also
 * closes publishing for good: exit() does not wait for the governor
 * thread to get round to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "governor-state.h"
#include "locate.h"
#include "tree.h"
#include "weight.h"

#define NAME_MAX_LEN 64
/* Room kept for the last line in any case. */
#define TAIL "truncated\n"

static char buf[RGROUP__STATE_MAX];
/* The pid of the process whose publish is under way (atomic): a fork
 * child may inherit its parent's, which does not hold it back. */
static pid_t busy;
static unsigned int gen;        /* removes so far (atomic) */
static int closed;              /* the process is exiting (atomic) */
/* This process's file names and start time; `owner` is the pid they were
 * made for, set after them (release), so a fork child sees its parent's
 * pid there until it has made its own. */
static char path[sizeof(RGROUP__STATE_DIR) + NAME_MAX_LEN];
static char tmppath[sizeof(RGROUP__STATE_DIR) + NAME_MAX_LEN];
static uint64_t starttime, pidns;
static pid_t owner;

/* The names for the calling process: made once, again in a fork child. */
static int make_names(void)
{
	char name[NAME_MAX_LEN];
	pid_t pid = getpid();
	uint64_t start;
	int r;

	if (__atomic_load_n(&owner, __ATOMIC_ACQUIRE) == pid)
		return 0;
	start = rgroup__starttime(0);
	if (!start)
		return -EIO;
	if ((r = rgroup__format_statename(name, sizeof(name), pid, start, 0)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s", RGROUP__STATE_DIR, name);
	snprintf(tmppath, sizeof(tmppath), "%s.tmp", path);
	starttime = start;
	pidns = rgroup__pidns_self();   /* for a collector in another one */
	__atomic_store_n(&owner, pid, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A group line with its member tids at buf[*off]; -ENOSPC (and *off
 * unchanged) when it does not fit before `end`. */
static int put_group(const struct rgroup__node *n, size_t *off, size_t end)
{
	struct rgroup__state_group g = {
		.id = n->id,
		.parent = n->parent ? n->parent->id : 0,
		.depth = n->depth,
		.weight = rgroup__nice_to_weight(n->nice),
		.nice = n->nice,
		.usage_ns = rgroup__node_usage(n),
		.dead_ns = n->usage_dead_ns,
		.throttled_ns = ((const struct rgroup__gov_node *)rgroup__node_priv(n))->throttled_ns,
	};
	size_t o = *off;
	int r = rgroup__format_state_group(buf + o, end - o, &g);

	if (r < 0)
		return -ENOSPC;
	o += (size_t)r;
	for (const struct rgroup__thread *t = n->threads; t; t = t->next) {
		r = snprintf(buf + o, end - o, "%s%d", t == n->threads ? "" : ",", (int)t->tid);
		if (r < 0 || (size_t)r >= end - o)
			return -ENOSPC;
		o += (size_t)r;
	}
	if (end - o < 2)
		return -ENOSPC;
	buf[o++] = '\n';
	*off = o;
	return 0;
}

/* The bound groups of `list` and below, in pre-order: how many, or
 * -ENOSPC once one did not fit. Core lock held. */
static int put_tree(const struct rgroup__node *list, size_t *off, size_t end)
{
	int count = 0, r;

	for (const struct rgroup__node *n = list; n; n = n->next) {
		if (!n->bound)
			continue;   /* being dismantled (exit, exec): not shown */
		if (put_group(n, off, end) < 0)
			return -ENOSPC;
		if ((r = put_tree(n->children, off, end)) < 0)
			return r;
		count += 1 + r;
	}
	return count;
}

/* The whole text into buf: its length, 0 when there is no bound group,
 * -EBUSY when the core lock is taken. */
static int format_state(const char *backend)
{
	struct rgroup__state h = {
		.pid = owner,
		.starttime = starttime,
		.realtime_ns = clock_ns(CLOCK_REALTIME),
		.monotonic_ns = clock_ns(CLOCK_MONOTONIC),
		.pidns = pidns,
	};
	size_t off, end = sizeof(buf) - sizeof(TAIL);
	int r, n;

	snprintf(h.backend, sizeof(h.backend), "%s", backend);
	if ((r = rgroup__format_state_head(buf, end, &h)) < 0)
		return 0;
	off = (size_t)r;
	if ((r = rgroup__trylock()) != 0)
		return -r;
	n = put_tree(rgroup__core.top, &off, end);
	rgroup__unlock();
	if (n == 0)
		return 0;
	/* What fits, then the marker: a reader knows groups are missing. */
	memcpy(buf + off, n < 0 ? TAIL : "end\n", n < 0 ? sizeof(TAIL) - 1 : 4);
	return (int)(off + (n < 0 ? sizeof(TAIL) - 1 : 4));
}

/* buf[0..len) to the temporary name, then renamed over the file. */
static int write_file(size_t len)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(tmppath, flags, 0600);
	size_t off = 0;
	int r = 0;

	/* Left by a write that failed half-way: the name is ours alone (pid
	 * and start time), so it can go. */
	if (fd < 0 && errno == EEXIST && unlink(tmppath) == 0)
		fd = open(tmppath, flags, 0600);
	if (fd < 0)
		return -errno;
	while (off < len && r == 0) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w > 0)
			off += (size_t)w;
		else if (w == 0 || errno != EINTR)
			r = w == 0 ? -EIO : -errno;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmppath, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmppath);
	return r;
}

int rgroup__publish(const char *backend_name)
{
	pid_t me = getpid(), cur = __atomic_load_n(&busy, __ATOMIC_ACQUIRE);
	unsigned int g0;
	int r, len;

	if (cur == me || !__atomic_compare_exchange_n(&busy, &cur, me, 0, __ATOMIC_ACQUIRE,
						      __ATOMIC_RELAXED))
		return -EBUSY;
	r = make_names();
	/* gen before closed: an exit that closes after this look bumps gen
	 * after it too, and the check below catches the file. */
	g0 = __atomic_load_n(&gen, __ATOMIC_SEQ_CST);
	if (r == 0 && !__atomic_load_n(&closed, __ATOMIC_SEQ_CST)) {
		len = format_state(backend_name ? backend_name : "?");
		r = len > 0 ? write_file((size_t)len) : len;
		/* A remove ran meanwhile: its unlink may have preceded our
		 * rename, so the file goes now. */
		if (len > 0 && r == 0 && __atomic_load_n(&gen, __ATOMIC_SEQ_CST) != g0)
			unlink(path);
	}
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	return r;
}

void rgroup__publish_remove(void)
{
	__atomic_add_fetch(&gen, 1, __ATOMIC_SEQ_CST);
	/* A fork child has its parent's pid here until it publishes itself:
	 * the parent's file is the parent's. */
	if (__atomic_load_n(&owner, __ATOMIC_ACQUIRE) == getpid())
		unlink(path);
}

/* At exit, whatever the governor thread is doing: it may not run again
 * before the process is gone. (In a fork child that never published,
 * rgroup__publish_remove() leaves the parent's file alone.) */
__attribute__((destructor)) static void publish_fini(void)
{
	__atomic_store_n(&closed, 1, __ATOMIC_SEQ_CST);
	rgroup__publish_remove();
}
