/* SPDX-License-Identifier: MIT */
/*
 * governor-state.c - the governor's state file as text (governor-state.h):
 * its name, its lines, the parser the rgroup command reads it with, and
 * the collector of files dead processes left.
 *
 * The formatters and the parser are pure, like parse.c (fuzzed by
 * test/fuzz/fuzz-state.c); only rgroup__state_gc() does I/O.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "governor-state.h"
#include "locate.h"
#include "parse.h"
#include "tree.h"

/*
 * "rgroup-<pid>-<starttime>.state", and with ".tmp" appended the name
 * governor-publish.c writes before renaming it into place. pid and start time name
 * the owner as in directory names, so a reused pid never inherits a file.
 */
int rgroup__format_statename(char *out, size_t len, pid_t pid, uint64_t start,
			     int tmp)
{
	return rgroup__format_name(out, len, pid, "rgroup-%d-%" PRIu64 ".state%s", (int)pid,
			   start, tmp ? ".tmp" : "");
}

/* The inverse, as strict as rgroup__parse_dirname (`rgroup gc` removes
 * only what this accepts). *tmp: 1 for the temporary name. */
int rgroup__parse_statename(const char *name, pid_t *pid, uint64_t *start,
			    int *tmp)
{
	const char *p;
	pid_t owner;
	uint64_t t;
	int r;

	if (!name || !pid || !start || !tmp)
		return -EINVAL;
	if ((r = rgroup__parse_owner(name, &p, &owner, &t)) < 0)
		return r;
	if (strcmp(p, ".state") != 0 && strcmp(p, ".state.tmp") != 0)
		return -EINVAL;
	*pid = owner;
	*start = t;
	*tmp = p[6] != '\0';
	return 0;
}

int rgroup__format_state_head(char *out, size_t len, const struct rgroup__state *h)
{
	int n = snprintf(out, len, "rgroup-state %u pid=%d starttime=%" PRIu64
			 " backend=%s realtime_ns=%" PRIu64 " monotonic_ns=%" PRIu64
			 " pidns=%" PRIu64 "\n",
			 RGROUP__STATE_VERSION, (int)h->pid, h->starttime, h->backend,
			 h->realtime_ns, h->monotonic_ns, h->pidns);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

int rgroup__format_state_group(char *out, size_t len,
			       const struct rgroup__state_group *g)
{
	int n = snprintf(out, len, "group id=%" PRIu64 " parent=%" PRIu64
			 " depth=%u nice=%d weight=%u usage_ns=%" PRIu64
			 " dead_ns=%" PRIu64 " throttled_ns=%" PRIu64 " tids=",
			 g->id, g->parent, g->depth, g->nice, g->weight,
			 g->usage_ns, g->dead_ns, g->throttled_ns);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

/* The value of " key=" in the line s..e (the first word is the line's
 * kind, never a key), or NULL; *vend is where the value ends. */
static const char *state_value(const char *s, const char *e, const char *key,
			       const char **vend)
{
	size_t klen = strlen(key);

	for (const char *p = s; p < e; p++) {
		if (*p != ' ' || (size_t)(e - p - 1) <= klen ||
		    strncmp(p + 1, key, klen) != 0 || p[1 + klen] != '=')
			continue;
		p += klen + 2;
		for (*vend = p; *vend < e && **vend != ' '; (*vend)++)
			;
		return p;
	}
	return NULL;
}

/* An unsigned key: -ENOENT when absent and not required (*v stays). */
static int state_u64(const char *s, const char *e, const char *key, int required,
		     uint64_t *v)
{
	const char *end, *p = state_value(s, e, key, &end);
	uint64_t x;
	int r;

	if (!p)
		return required ? -EINVAL : -ENOENT;
	if ((r = rgroup__parse_u64(p, &p, &x)) < 0)
		return r;
	if (p != end)
		return -EINVAL;
	*v = x;
	return 0;
}

static int state_uint(const char *s, const char *e, const char *key, uint64_t max,
		      unsigned int *v)
{
	uint64_t x;
	int r = state_u64(s, e, key, 1, &x);

	if (r < 0)
		return r;
	if (x > max)
		return -ERANGE;
	*v = (unsigned int)x;
	return 0;
}

static int parse_state_head(const char *s, const char *e, struct rgroup__state *h)
{
	static const char magic[] = "rgroup-state ";
	const char *p = s + sizeof(magic) - 1, *b, *bend;
	struct rgroup__state out = { 0 };
	unsigned int pid;
	uint64_t v;
	int r;

	if ((size_t)(e - s) < sizeof(magic) || strncmp(s, magic, sizeof(magic) - 1) != 0)
		return -EINVAL;
	if ((r = rgroup__parse_u64(p, &p, &v)) < 0 || (*p != ' ' && p != e))
		return r < 0 ? r : -EINVAL;
	if (v != RGROUP__STATE_VERSION)
		return -ENOTSUP;   /* a newer writer: its lines may mean more */
	out.version = (unsigned int)v;
	if ((r = state_uint(s, e, "pid", INT_MAX, &pid)) < 0 ||
	    (r = state_u64(s, e, "starttime", 1, &out.starttime)) < 0)
		return r;
	if (pid == 0 || !(b = state_value(s, e, "backend", &bend)) || b == bend ||
	    (size_t)(bend - b) >= sizeof(out.backend))
		return -EINVAL;
	memcpy(out.backend, b, (size_t)(bend - b));
	out.pid = (pid_t)pid;
	if ((r = state_u64(s, e, "realtime_ns", 0, &out.realtime_ns)) < 0 && r != -ENOENT)
		return r;
	if ((r = state_u64(s, e, "monotonic_ns", 0, &out.monotonic_ns)) < 0 && r != -ENOENT)
		return r;
	if ((r = state_u64(s, e, "pidns", 0, &out.pidns)) < 0 && r != -ENOENT)
		return r;
	*h = out;
	return 0;
}

/* "tids=1,2,3" (or empty): count, the first max of them into tids. */
static int parse_state_tids(const char *s, const char *e, pid_t *tids, size_t max)
{
	const char *end, *p = state_value(s, e, "tids", &end);
	size_t n = 0;
	uint64_t v;
	int r;

	if (!p)
		return 0;
	while (p < end) {
		if ((r = rgroup__parse_u64(p, &p, &v)) < 0)
			return r;
		if (v == 0 || v > INT_MAX || n >= INT_MAX)
			return v == 0 ? -EINVAL : -ERANGE;
		if (p < end && *p++ != ',')
			return -EINVAL;
		if (p == end && p[-1] == ',')
			return -EINVAL;
		if (n < max)
			tids[n] = (pid_t)v;
		n++;
	}
	return (int)n;
}

static int parse_state_group(const char *s, const char *e,
			     struct rgroup__state_group *g, pid_t *tids, size_t max)
{
	struct rgroup__state_group out = { 0 };
	const char *p, *end;
	uint64_t mag;
	int r, neg;

	if ((r = state_u64(s, e, "id", 1, &out.id)) < 0 ||
	    (r = state_u64(s, e, "parent", 1, &out.parent)) < 0 ||
	    (r = state_uint(s, e, "depth", RGROUP_MAX_DEPTH, &out.depth)) < 0 ||
	    (r = state_uint(s, e, "weight", UINT_MAX, &out.weight)) < 0)
		return r;
	if (!(p = state_value(s, e, "nice", &end)))
		return -EINVAL;
	neg = *p == '-';
	if ((r = rgroup__parse_u64(p + neg, &p, &mag)) < 0)
		return r;
	if (p != end || mag > 20 || (!neg && mag > 19))
		return -EINVAL;
	out.nice = neg ? -(int)mag : (int)mag;
	if (out.id == 0 || out.depth == 0 || (out.parent == 0) != (out.depth == 1))
		return -EINVAL;
	if (((r = state_u64(s, e, "usage_ns", 0, &out.usage_ns)) < 0 && r != -ENOENT) ||
	    ((r = state_u64(s, e, "dead_ns", 0, &out.dead_ns)) < 0 && r != -ENOENT) ||
	    ((r = state_u64(s, e, "throttled_ns", 0, &out.throttled_ns)) < 0 && r != -ENOENT))
		return r;
	if ((r = parse_state_tids(s, e, tids, max)) < 0)
		return r;
	out.ntids = (unsigned int)r;
	*g = out;
	return 0;
}

/*
 * A whole state file: the header into *h, each group line to fn (its tids,
 * at most max, in tids), in the file's order. The last line must be "end"
 * or "truncated" (h->truncated): a file without it is not one the writer
 * finished. Lines of other kinds are skipped (later versions may add
 * some). Returns 0, what fn returned if not 0, -EINVAL, -ERANGE, or
 * -ENOTSUP for another format version.
 */
int rgroup__parse_state(const char *text, struct rgroup__state *h, pid_t *tids,
			size_t max, int (*fn)(void *arg, const struct rgroup__state_group *g),
			void *arg)
{
	struct rgroup__state head;
	const char *s, *e;
	int r;

	if (!text || !h || !fn || (!tids && max))
		return -EINVAL;
	e = strchr(text, '\n');
	if (!e || (r = parse_state_head(text, e, &head)) < 0)
		return e ? r : -EINVAL;
	for (s = e + 1; *s; s = e + 1) {
		struct rgroup__state_group g;

		if (!(e = strchr(s, '\n')))
			return -EINVAL;
		if (rgroup__range_eq(s, e, "end") || rgroup__range_eq(s, e, "truncated")) {
			if (e[1])
				return -EINVAL;
			head.truncated = rgroup__range_eq(s, e, "truncated");
			*h = head;
			return 0;
		}
		if (strncmp(s, "group ", 6) != 0)
			continue;
		if ((r = parse_state_group(s, e, &g, tids, max)) < 0)
			return r;
		if ((r = fn(arg, &g)) != 0)
			return r;
	}
	return -EINVAL;
}

int rgroup__state_gc(const char *dir, int dry_run, int any_owner,
		     void (*seen)(void *arg, const char *path, int err), void *arg)
{
	return rgroup__sweep_dead_owners(dir, rgroup__parse_statename, dry_run, any_owner,
					 seen, arg);
}
