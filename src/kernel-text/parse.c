/* SPDX-License-Identifier: MIT */
/*
 * parse.c - pure parsers of the kernel's text files (parse.h).
 *
 * No I/O, no allocation, no global state. Every function takes
 * NUL-terminated text, never reads past the NUL, and writes its outputs
 * only on success, so callers keep their old values on failure and the
 * fuzzers (test/fuzz) may throw anything at it.
 *
 * Errors: -EINVAL malformed text or arguments, -ENOENT not found,
 * -ENAMETOOLONG output buffer too small, -ERANGE a number overflows.
 */
#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Start of the line after the one that ends at e ('\n' or the NUL). */
static const char *next_line(const char *e)
{
	return *e ? e + 1 : e;
}

/*
 * Decimal u64 at s: at least one digit, no sign (strtoull would take "-1"
 * and wrap it). Sets *end past the digits. -EINVAL without a digit,
 * -ERANGE on overflow; *v and *end untouched on failure.
 */
int rgroup__parse_u64(const char *s, const char **end, uint64_t *v)
{
	uint64_t x = 0;
	const char *p;

	if (!is_digit(*s))
		return -EINVAL;
	for (p = s; is_digit(*p); p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*end = p;
	*v = x;
	return 0;
}

/* Are all of [s, e) decimal digits, and is there at least one? */
static bool all_digits(const char *s, const char *e)
{
	if (s == e)
		return false;
	for (; s < e; s++)
		if (!is_digit(*s))
			return false;
	return true;
}

/* Does [s, e) hold tok (tlen bytes) as a whole token between seps? */
static bool range_has_token(const char *s, const char *e, const char *tok,
			    size_t tlen, const char *seps)
{
	while (s < e) {
		const char *t = s;

		while (t < e && !strchr(seps, *t))
			t++;
		if ((size_t)(t - s) == tlen && memcmp(s, tok, tlen) == 0)
			return true;
		s = t + 1;
	}
	return false;
}

bool rgroup__range_eq(const char *s, const char *e, const char *str)
{
	size_t n = strlen(str);

	return (size_t)(e - s) == n && memcmp(s, str, n) == 0;
}

/*
 * /proc/<pid>/cgroup: lines "hier-id:controller-list:path". With ctrl, the
 * path of the first line whose comma-separated controller list holds ctrl
 * as a whole token ("cpu" is not "cpuacct"; named hierarchies are listed
 * as "name=systemd", so that is a token too). With ctrl NULL, the path of
 * the cgroup v2 line "0::path".
 *
 * The path is everything after the second ':' (cgroup names may contain
 * ':') and must be absolute. Lines that do not have this shape are
 * skipped: the kernel never writes them, but a truncated read may end in
 * one. If no line matches, that is -EINVAL when some line was malformed
 * (the text is suspect), else -ENOENT. Returns 0 with the path in
 * path[len], or -ENAMETOOLONG if it does not fit.
 */
int rgroup__parse_proc_cgroup(const char *text, const char *ctrl,
			      char *path, size_t len)
{
	bool malformed = false;
	const char *p, *e;

	if (!text || (!path && len))
		return -EINVAL;
	if (ctrl && (!*ctrl || strpbrk(ctrl, ",:\n")))
		return -EINVAL;

	for (p = text; *p; p = next_line(e)) {
		const char *c1, *c2;
		bool match;

		e = strchrnul(p, '\n');
		if (e == p)
			continue;
		c1 = memchr(p, ':', (size_t)(e - p));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
		if (!c2 || !all_digits(p, c1) || c2 + 1 == e || c2[1] != '/') {
			malformed = true;
			continue;
		}
		if (ctrl)
			match = range_has_token(c1 + 1, c2, ctrl, strlen(ctrl), ",");
		else
			match = rgroup__range_eq(p, c1, "0") && c2 == c1 + 1;
		if (!match)
			continue;

		if ((size_t)(e - c2 - 1) >= len)
			return -ENAMETOOLONG;
		memcpy(path, c2 + 1, (size_t)(e - c2 - 1));
		path[e - c2 - 1] = '\0';
		return 0;
	}
	return malformed ? -EINVAL : -ENOENT;
}

/*
 * Decode a mountinfo path field [s, e) into out[len]. The kernel escapes
 * space, tab, newline and backslash as three octal digits ("\040"), so a
 * backslash not followed by three octal digits, or one that would decode
 * to NUL or past a byte, is malformed (-EINVAL). -ENAMETOOLONG if it does
 * not fit.
 */
static int unescape(const char *s, const char *e, char *out, size_t len)
{
	size_t n = 0;

	while (s < e) {
		char c = *s;

		if (c == '\\') {
			unsigned int v = 0;

			if (e - s < 4)
				return -EINVAL;
			for (int i = 1; i <= 3; i++) {
				if (s[i] < '0' || s[i] > '7')
					return -EINVAL;
				v = v * 8 + (unsigned int)(s[i] - '0');
			}
			if (v == 0 || v > 0xff)
				return -EINVAL;
			c = (char)v;
			s += 4;
		} else {
			s++;
		}
		if (n + 1 >= len)
			return -ENAMETOOLONG;
		out[n++] = c;
	}
	out[n] = '\0';
	return 0;
}

/* The fields of one mountinfo line that we use, as [start, end) ranges. */
struct mi_line {
	const char *f[6], *fe[6]; /* id parent maj:min root point options */
	const char *fstype, *fstype_e;
	const char *super, *super_e;
};

/*
 * Split the mountinfo line [p, e) at single spaces: six fixed fields, any
 * number of optional fields ("shared:1"), a lone "-", then fstype, source
 * and super options. The source may be empty (mount "" /x), so empty
 * fields are allowed where the kernel can print them.
 */
static bool mi_split(const char *p, const char *e, struct mi_line *l)
{
	int field = 0, after = -1;

	for (const char *s = p; s <= e;) {
		const char *t = memchr(s, ' ', (size_t)(e - s));

		if (!t)
			t = e;
		if (field < 6) {
			l->f[field] = s;
			l->fe[field] = t;
		} else if (after < 0) {
			if (rgroup__range_eq(s, t, "-"))
				after = 0;
		} else {
			if (after == 0) {
				l->fstype = s;
				l->fstype_e = t;
			} else if (after == 2) {
				l->super = s;
				l->super_e = t;
			}
			after++;
		}
		field++;
		s = t + 1;
	}
	if (field < 10 || after < 3)
		return false;
	if (!all_digits(l->f[0], l->fe[0]) || !all_digits(l->f[1], l->fe[1]))
		return false;
	/* root and mount point are absolute paths; fstype is never empty */
	if (l->f[3] == l->fe[3] || *l->f[3] != '/' ||
	    l->f[4] == l->fe[4] || *l->f[4] != '/' ||
	    l->fstype == l->fstype_e)
		return false;
	return true;
}

int rgroup__parse_mountinfo_next(const char **pos, const char *ctrl,
				 struct rgroup__mount *m)
{
	bool malformed = false;
	const char *p, *e;

	if (!pos || !*pos || !m)
		return -EINVAL;
	if (ctrl && (!*ctrl || strpbrk(ctrl, ", \t\n")))
		return -EINVAL;

	for (p = *pos; *p; p = next_line(e)) {
		struct rgroup__mount tmp;
		struct mi_line l;
		bool match;
		int r;

		e = strchrnul(p, '\n');
		if (e == p)
			continue;
		if (!mi_split(p, e, &l)) {
			malformed = true;
			continue;
		}
		if (ctrl)
			match = rgroup__range_eq(l.fstype, l.fstype_e, "cgroup") &&
				range_has_token(l.super, l.super_e, ctrl,
						strlen(ctrl), ",");
		else
			match = rgroup__range_eq(l.fstype, l.fstype_e, "cgroup2");
		if (!match)
			continue;

		r = unescape(l.f[3], l.fe[3], tmp.root, sizeof(tmp.root));
		if (r == 0)
			r = unescape(l.f[4], l.fe[4], tmp.point, sizeof(tmp.point));
		if (r == -ENAMETOOLONG)
			return r;
		if (r < 0 || (size_t)(l.fe[2] - l.f[2]) >= sizeof(tmp.dev)) {
			malformed = true;
			continue;
		}
		tmp.ro = range_has_token(l.f[5], l.fe[5], "ro", 2, ",");
		memcpy(m->point, tmp.point, strlen(tmp.point) + 1);
		memcpy(m->root, tmp.root, strlen(tmp.root) + 1);
		memcpy(m->dev, l.f[2], (size_t)(l.fe[2] - l.f[2]));
		m->dev[l.fe[2] - l.f[2]] = '\0';
		m->ro = tmp.ro;
		*pos = next_line(e);
		return 0;
	}
	*pos = p;
	return malformed ? -EINVAL : -ENOENT;
}

/*
 * /proc/self/mountinfo: the first mount of fstype "cgroup" whose super
 * options hold ctrl as a whole comma-separated token (a v1 hierarchy; a
 * named one is "name=systemd"), or with ctrl NULL the first "cgroup2".
 * Fills m with the mount point and root (octal escapes decoded), its
 * device and whether the mount itself is read-only (the per-mount
 * options, field 6: a bind mount may be ro on a rw superblock, and that is
 * what writes hit).
 *
 * Malformed lines are skipped (see rgroup__parse_proc_cgroup for why);
 * returns 0, -ENOENT, -EINVAL if nothing matched and some line was
 * malformed, or -ENAMETOOLONG for a matching path longer than PATH_MAX.
 */
int rgroup__parse_mountinfo(const char *text, const char *ctrl,
			    struct rgroup__mount *m)
{
	const char *pos = text;

	return rgroup__parse_mountinfo_next(&pos, ctrl, m);
}

/*
 * Append the components of a and then b, each as "/comp", to out (NULL:
 * only count). Returns the length; "/" when there is no component at all.
 * Collapses repeated slashes and drops trailing ones.
 */
static size_t join_path(char *out, const char *a, const char *b)
{
	const char *parts[2] = { a, b };
	size_t n = 0;

	for (int i = 0; i < 2; i++) {
		const char *s = parts[i];

		for (;;) {
			const char *c;

			while (*s == '/')
				s++;
			if (!*s)
				break;
			for (c = s; *s && *s != '/'; s++)
				;
			if (out) {
				out[n] = '/';
				memcpy(out + n + 1, c, (size_t)(s - c));
			}
			n += 1 + (size_t)(s - c);
		}
	}
	if (n == 0) {
		if (out)
			out[0] = '/';
		n = 1;
	}
	if (out)
		out[n] = '\0';
	return n;
}

/*
 * Directory of cgroup `cgpath` (as /proc/<pid>/cgroup shows it) under mount
 * m: the mount shows the hierarchy from m->root down, so m->root is cut
 * off the front of cgpath as a whole-component prefix and the rest is
 * joined to the mount point. Root "/" cuts nothing.
 *
 * -ENOENT when cgpath is not below m->root, or climbs with ".." (a cgroup
 * outside our cgroup namespace, which the mount cannot reach); -EINVAL for
 * relative paths or "." components; -ENAMETOOLONG if out[len] is too
 * small. The result has no repeated or trailing slash (unless it is "/").
 */
int rgroup__cgroup_dir(const struct rgroup__mount *m, const char *cgpath,
		       char *out, size_t len)
{
	const char *rest = cgpath, *s;
	size_t rl, need;

	if (!m || !cgpath || (!out && len))
		return -EINVAL;
	/* The struct came from somewhere: don't trust its NULs. */
	if (strnlen(m->point, sizeof(m->point)) == sizeof(m->point) ||
	    strnlen(m->root, sizeof(m->root)) == sizeof(m->root))
		return -EINVAL;
	if (m->point[0] != '/' || m->root[0] != '/' || cgpath[0] != '/')
		return -EINVAL;

	rl = strlen(m->root);
	while (rl > 0 && m->root[rl - 1] == '/')
		rl--;
	if (rl > 0) {
		if (strncmp(cgpath, m->root, rl) != 0 ||
		    (cgpath[rl] != '\0' && cgpath[rl] != '/'))
			return -ENOENT;
		rest = cgpath + rl;
	}

	for (s = rest; *s;) {
		const char *c;

		while (*s == '/')
			s++;
		for (c = s; *s && *s != '/'; s++)
			;
		if (s - c == 2 && c[0] == '.' && c[1] == '.')
			return -ENOENT;
		if (s - c == 1 && c[0] == '.')
			return -EINVAL;
	}

	need = join_path(NULL, m->point, rest);
	if (need >= len)
		return -ENAMETOOLONG;
	join_path(out, m->point, rest);
	return 0;
}

/*
 * Keyed file ("key value" lines: cpu.stat, memory.events): the value of
 * the first line whose first word is exactly key. The value is a decimal
 * u64, or "max" (returned as UINT64_MAX, cgroupfs's "no limit").
 * Returns 0, -ENOENT (no such key), -EINVAL (that line's value is not a
 * number), -ERANGE (it overflows).
 */
int rgroup__parse_keyed(const char *text, const char *key, uint64_t *val)
{
	const char *p, *e;
	size_t kl;

	if (!text || !key || !val || !*key || strpbrk(key, " \t\n"))
		return -EINVAL;
	kl = strlen(key);

	for (p = text; *p; p = next_line(e)) {
		const char *v;
		uint64_t x;

		e = strchrnul(p, '\n');
		if ((size_t)(e - p) < kl || memcmp(p, key, kl) != 0 ||
		    (p + kl != e && !is_blank(p[kl])))
			continue;

		for (v = p + kl; is_blank(*v); v++)
			;
		if (strncmp(v, "max", 3) == 0 && (v + 3 == e || is_blank(v[3]))) {
			x = UINT64_MAX;
			v += 3;
		} else {
			int r = rgroup__parse_u64(v, &v, &x);

			if (r < 0)
				return r;
		}
		while (is_blank(*v))
			v++;
		if (v != e)
			return -EINVAL;
		*val = x;
		return 0;
	}
	return -ENOENT;
}

/*
 * Is tok one of the whitespace-separated words of text
 * (cgroup.controllers, cgroup.subtree_control)? 1 or 0; -EINVAL for an
 * empty token or one holding whitespace, which could never match.
 */
int rgroup__has_token(const char *text, const char *tok)
{
	if (!text || !tok || !*tok || strpbrk(tok, " \t\n"))
		return -EINVAL;
	return range_has_token(text, text + strlen(text), tok, strlen(tok),
			       " \t\n");
}

/*
 * cgroup.type: one of the four names the kernel writes, followed by
 * newlines only. Returns the enum value or -EINVAL.
 */
int rgroup__parse_cgtype(const char *text)
{
	static const struct {
		const char *name;
		enum rgroup__cgtype type;
	} types[] = {
		{ "domain", RGROUP__CG_DOMAIN },
		{ "domain threaded", RGROUP__CG_DOMAIN_THREADED },
		{ "domain invalid", RGROUP__CG_DOMAIN_INVALID },
		{ "threaded", RGROUP__CG_THREADED },
	};
	size_t n;

	if (!text)
		return -EINVAL;
	n = strlen(text);
	while (n > 0 && text[n - 1] == '\n')
		n--;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (rgroup__range_eq(text, text + n, types[i].name))
			return (int)types[i].type;
	return -EINVAL;
}

/*
 * tasks / cgroup.threads: one positive decimal tid per line, the last
 * newline optional. Stores the first max tids and returns how many there
 * are (more than max: call again with a bigger array). The whole text is
 * checked before anything is stored, so tids is untouched on failure:
 * -EINVAL (not a tid, empty line), -ERANGE (beyond pid_t).
 */
int rgroup__format_cpulist(const void *set, size_t setsize, char *out, size_t len)
{
	const cpu_set_t *cs = set;
	size_t nbits = setsize * 8, off = 0;

	if (!len)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (size_t c = 0; c < nbits; c++) {
		size_t last = c;
		int n;

		if (!CPU_ISSET_S(c, setsize, cs))
			continue;
		while (last + 1 < nbits && CPU_ISSET_S(last + 1, setsize, cs))
			last++;
		n = last == c ? snprintf(out + off, len - off, "%s%zu", off ? "," : "", c)
			      : snprintf(out + off, len - off, "%s%zu-%zu", off ? "," : "", c, last);
		if (n < 0 || (size_t)n >= len - off)
			return -ENAMETOOLONG;
		off += (size_t)n;
		c = last;
	}
	return (int)off;
}

int rgroup__parse_tids(const char *text, pid_t *tids, size_t max)
{
	if (!text || (!tids && max))
		return -EINVAL;

	for (int pass = 0; pass < 2; pass++) {
		size_t n = 0;

		for (const char *p = text; *p;) {
			uint64_t v;
			int r = rgroup__parse_u64(p, &p, &v);

			if (r < 0)
				return r;
			if (v == 0)
				return -EINVAL;
			if (v > INT_MAX || n >= INT_MAX)
				return -ERANGE;
			if (*p == '\n')
				p++;
			else if (*p)
				return -EINVAL;
			if (pass == 1 && n < max)
				tids[n] = (pid_t)v;
			n++;
		}
		if (pass == 1)
			return (int)n;
	}
	return -EINVAL; /* not reached */
}

/*
 * /proc/<pid>/stat and /proc/<pid>/task/<tid>/stat: where field `want`
 * (3 or more) starts. Field 2 is "(comm)", and comm may hold spaces and
 * ')' itself, so the counting starts after the last ')' in the text: the
 * fields after it are numbers and a state letter, never a ')'. NULL if the
 * text is not such a line up to that field.
 */
static const char *stat_field(const char *text, int want)
{
	const char *p, *close;

	for (p = text; is_digit(*p); p++)
		;
	if (p == text || p[0] != ' ' || p[1] != '(')
		return NULL;
	close = strrchr(p + 2, ')');
	if (!close)
		return NULL;

	p = close + 1;
	/* Fields 3..want-1: one space each, then a non-empty word. */
	for (int field = 3; field < want; field++) {
		if (*p != ' ')
			return NULL;
		p++;
		if (*p == ' ' || *p == '\n' || !*p)
			return NULL;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	return *p == ' ' ? p + 1 : NULL;
}

/* A decimal field at p, ending the field: 0, -EINVAL or -ERANGE. */
static int stat_u64(const char *p, uint64_t *v)
{
	int r = p ? rgroup__parse_u64(p, &p, v) : -EINVAL;

	if (r < 0)
		return r;
	return *p && *p != ' ' && *p != '\n' ? -EINVAL : 0;
}

/* Field 22, the start time in clock ticks after boot. Returns 0, -EINVAL
 * or -ERANGE. */
/* Decimal field `want` of a stat line into *out, written only on success. */
static int stat_number(const char *text, int want, uint64_t *out)
{
	uint64_t v;
	int r;

	if (!text || !out)
		return -EINVAL;
	r = stat_u64(stat_field(text, want), &v);
	if (r < 0)
		return r;
	*out = v;
	return 0;
}

int rgroup__parse_stat_flags(const char *text, uint64_t *flags)
{
	return stat_number(text, 9, flags);
}

int rgroup__parse_stat_starttime(const char *text, uint64_t *start)
{
	return stat_number(text, 22, start);
}

/* Fields 14 and 15 (utime, stime) and 19 (nice, -20..19). */
int rgroup__parse_stat_cpu(const char *text, uint64_t *ticks, int *nice)
{
	uint64_t ut, st, n;
	const char *p;
	int neg, r;

	if (!text || !ticks || !nice)
		return -EINVAL;
	if ((r = stat_u64(stat_field(text, 14), &ut)) < 0 ||
	    (r = stat_u64(stat_field(text, 15), &st)) < 0)
		return r;
	p = stat_field(text, 19);
	neg = p && *p == '-';
	if ((r = stat_u64(p ? p + neg : NULL, &n)) < 0)
		return r;
	if (n > 20 || (!neg && n > 19) || ut > UINT64_MAX - st)
		return -ERANGE;
	*ticks = ut + st;
	*nice = neg ? -(int)n : (int)n;
	return 0;
}

int rgroup__format_name(char *out, size_t len, pid_t pid, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	if (pid <= 0 || (!out && len))
		return -EINVAL;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EINVAL;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	memcpy(out, buf, (size_t)n + 1);
	return 0;
}

/*
 * One line of a native kernel's /proc/<pid>/task/<tid>/rgroup: six
 * space-separated decimals, nice signed and within -20..19, depth within
 * 0..32, attached 0 or 1; then four more (the cap and its throttling)
 * where the kernel has caps, all or none; fields after them ignored (the
 * format may grow); a thread in no rgroup reads all zeros. -EINVAL for
 * anything else.
 */
static int parse_kgroup(const char *text, struct rgroup__kgroup *g, int list)
{
	uint64_t v[10] = { 0 };
	const char *p = text;
	int r, n = 6;

	if (!text || !g)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		int neg;

		if (i && *p++ != ' ')
			return -EINVAL;
		neg = i == 3 && *p == '-';
		if ((r = rgroup__parse_u64(p + neg, &p, &v[i])) < 0)
			return r;
		if (neg && v[i] > 20)
			return -ERANGE;
		if (neg)
			v[i] = (uint64_t)-(int64_t)v[i];
		if (i == 5 && p[0] == ' ' && p[1] >= '0' && p[1] <= '9')
			n = 10;    /* the cap and its throttling follow */
	}
	if (*p && *p != ' ' && *p != '\n')
		return -EINVAL;
	if (v[2] > 32 || (int64_t)v[3] < -20 || (int64_t)v[3] > 19 || (!list && v[5] > 1))
		return -EINVAL;
	g->id = v[0];
	g->parent = v[1];
	g->depth = (unsigned int)v[2];
	g->nice = (int)(int64_t)v[3];
	g->usage_ns = v[4];
	g->attached = list ? 0 : (int)v[5];
	g->threads = list ? v[5] : 0;
	g->has_cap = n == 10;
	g->cap_quota_us = v[6];
	g->cap_period_us = v[7];
	g->nr_throttled = v[8];
	g->throttled_us = v[9];
	return 0;
}

int rgroup__parse_kgroup(const char *text, struct rgroup__kgroup *g)
{
	return parse_kgroup(text, g, 0);
}

int rgroup__parse_kgroup_list(const char *text, struct rgroup__kgroup *g)
{
	return parse_kgroup(text, g, 1);
}

int rgroup__parse_kgroup_list_next(const char **pos, struct rgroup__kgroup *g)
{
	const char *line = *pos, *nl;

	for (; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (parse_kgroup(line, g, 1) == 0) {
			*pos = nl ? nl + 1 : line + strlen(line);
			return 0;
		}
	}
	*pos += strlen(*pos);
	return -ENOENT;
}

int rgroup__find_kgroup_list(const char *text, uint64_t id, struct rgroup__kgroup *g)
{
	struct rgroup__kgroup k;

	while (rgroup__parse_kgroup_list_next(&text, &k) == 0)
		if (k.id == id) {
			*g = k;
			return 0;
		}
	return -ESRCH;
}

/*
 * The name of an rgroup directory: "rgroup-<pid>-<starttime>-<id>", all
 * decimal. pid and start time identify the owning process even after its
 * pid is reused (rgroup__cg_gc relies on that). Returns 0, -EINVAL (pid
 * not positive), -ENAMETOOLONG (out[len] too small; at most 59 bytes plus
 * the NUL are ever needed).
 */
int rgroup__format_dirname(char *out, size_t len, pid_t pid, uint64_t start,
			   uint64_t id)
{
	return rgroup__format_dirname_ns(out, len, pid, start, 0, id);
}

/* pidns 0: the form above; else "-ns<pidns>" follows (at most 82 bytes
 * with the NUL; with real pids, start times and namespace inodes, under
 * the 64 of struct rgroup_info's name). */
int rgroup__format_dirname_ns(char *out, size_t len, pid_t pid, uint64_t start,
			      uint64_t pidns, uint64_t id)
{
	if (!pidns)
		return rgroup__format_name(out, len, pid, "rgroup-%d-%" PRIu64 "-%" PRIu64,
					   (int)pid, start, id);
	return rgroup__format_name(out, len, pid, "rgroup-%d-%" PRIu64 "-%" PRIu64 "-ns%" PRIu64,
				   (int)pid, start, id, pidns);
}

/* A decimal in the form format_dirname writes: no sign, no leading 0. */
static int parse_canonical(const char *s, const char **end, uint64_t *v)
{
	if (s[0] == '0' && is_digit(s[1]))
		return -EINVAL;
	return rgroup__parse_u64(s, end, v);
}

int rgroup__parse_owner(const char *name, const char **rest, pid_t *pid,
		       uint64_t *start)
{
	uint64_t v[2];
	const char *p;
	int r;

	if (strncmp(name, "rgroup-", 7) != 0)
		return -EINVAL;
	p = name + 7;
	if ((r = parse_canonical(p, &p, &v[0])) < 0)
		return r;
	if (*p++ != '-')
		return -EINVAL;
	if ((r = parse_canonical(p, &p, &v[1])) < 0)
		return r;
	if (v[0] == 0)
		return -EINVAL;
	if (v[0] > INT_MAX)
		return -ERANGE;
	*rest = p;
	*pid = (pid_t)v[0];
	*start = v[1];
	return 0;
}

/*
 * The inverse of rgroup__format_dirname, and nothing else: a name that it
 * could not have written (other text, signs, empty or zero-padded numbers,
 * pid 0) is -EINVAL, a number too big is -ERANGE. The garbage collector
 * removes only what this accepts, so it is strict on purpose.
 */
int rgroup__parse_dirname(const char *name, pid_t *pid, uint64_t *start,
			  uint64_t *id)
{
	uint64_t pidns;

	return rgroup__parse_dirname_ns(name, pid, start, &pidns, id);
}

int rgroup__parse_dirname_ns(const char *name, pid_t *pid, uint64_t *start,
			     uint64_t *pidns, uint64_t *id)
{
	const char *p;
	pid_t owner;
	uint64_t t, v, ns = 0;
	int r;

	if (!name || !pid || !start || !pidns || !id)
		return -EINVAL;
	if ((r = rgroup__parse_owner(name, &p, &owner, &t)) < 0)
		return r;
	if (*p++ != '-' || (r = parse_canonical(p, &p, &v)) < 0)
		return r < 0 ? r : -EINVAL;
	if (strncmp(p, "-ns", 3) == 0) {
		if ((r = parse_canonical(p + 3, &p, &ns)) < 0)
			return r;
		if (!ns)
			return -EINVAL;   /* written as the short form */
	}
	if (*p)
		return -EINVAL;
	*pid = owner;
	*start = t;
	*pidns = ns;
	*id = v;
	return 0;
}

/*
 * The "NSpid:" line of /proc/PID/status: the process's pid in each PID
 * namespace from the one of that /proc mount down to its own. *inner is
 * the last (its pid in its own namespace), *levels how many there are.
 * 0, -ENOENT (no such line: a kernel before 4.1), -EINVAL, -ERANGE.
 */
int rgroup__parse_status_nspid(const char *text, pid_t *inner, int *levels)
{
	const char *p;
	uint64_t v = 0;
	int n = 0, r;

	if (!text || !inner || !levels)
		return -EINVAL;
	for (p = text; strncmp(p, "NSpid:", 6) != 0; p++)
		if (!(p = strchr(p, '\n')))
			return -ENOENT;
	p += 6;
	for (;;) {
		while (*p == '\t' || *p == ' ')
			p++;
		if (*p == '\n' || !*p)
			break;
		if ((r = rgroup__parse_u64(p, &p, &v)) < 0)
			return r;
		if (v == 0 || v > INT_MAX)
			return v ? -ERANGE : -EINVAL;
		n++;
	}
	if (!n)
		return -EINVAL;
	*inner = (pid_t)v;
	*levels = n;
	return 0;
}

