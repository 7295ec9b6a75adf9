/* SPDX-License-Identifier: MIT */
/*
 * run-spec.c - the rules of `rgroup run`: parse, check, match, format.
 * See run-spec.h for the syntax. Pure: no I/O, no allocation.
 *
 * Messages name the rule and what to do, for a person who typed it:
 * "rule 2 (bg/x=...): unknown setting 'nise' (known: nice, cpus, max)".
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "run-spec.h"

static int fail(char *err, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

void rgroup__run_init(struct rgroup__run_rules *r)
{
	memset(r, 0, sizeof(*r));
}

/* ---- Globs ------------------------------------------------------------- */

/* Characters a backslash keeps for fnmatch (they mean something there);
 * before any other character the spec's backslash only protects it from
 * the spec's own syntax (',' ':' and blanks) and is dropped. */
static int glob_meta(char c)
{
	return c == '*' || c == '?' || c == '[' || c == ']' || c == '\\';
}

static int valid_class(const char *s, size_t n)
{
	static const char *const classes[] = { "alnum", "alpha", "blank", "cntrl", "digit",
		"graph", "lower", "print", "punct", "space", "upper", "xdigit" };

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strlen(classes[i]) == n && memcmp(classes[i], s, n) == 0)
			return 1;
	return 0;
}

/*
 * The ']' that closes the bracket expression opening at p ('['), or NULL
 * if none does (fnmatch would then take the '[' literally, which is never
 * what a person meant). *bad_class is set for an unknown [:class:].
 */
static const char *bracket_end(const char *p, const char *end, int *bad_class)
{
	const char *q = p + 1;

	if (q < end && (*q == '!' || *q == '^'))
		q++;
	if (q < end && *q == ']')
		q++;            /* a ']' first is a member */
	while (q < end) {
		if (*q == '[' && q + 1 < end && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
			char kind = q[1];
			const char *c = q + 2;
			while (c + 1 < end && !(c[0] == kind && c[1] == ']'))
				c++;
			if (c + 1 >= end)
				return NULL;
			if (kind == ':' && !valid_class(q + 2, (size_t)(c - (q + 2))))
				*bad_class = 1;
			q = c + 2;
		} else if (*q == '\\' && q + 1 < end) {
			q += 2;
		} else if (*q == ']') {
			return q;
		} else {
			q++;
		}
	}
	return NULL;
}

int rgroup__run_check_glob(const char *pat, char *err, size_t len)
{
	const char *end = pat + strlen(pat);
	unsigned int least = 0;

	if (!*pat)
		return fail(err, len, -EINVAL, "empty pattern");
	for (const char *p = pat; p < end; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return fail(err, len, -EINVAL, "pattern '%s' holds a control character", pat);
	for (const char *p = pat; p < end;) {
		int bad = 0;
		const char *b;

		switch (*p) {
		case '*':
			p++;
			break;
		case '\\':
			if (p + 1 >= end)
				return fail(err, len, -EINVAL, "pattern '%s' ends in a lone '\\'", pat);
			least++;
			p += 2;
			break;
		case '[':
			b = bracket_end(p, end, &bad);
			if (!b)
				return fail(err, len, -EINVAL, "pattern '%s' has a '[' that no ']' closes (for a literal '[' write '\\[')", pat);
			if (bad)
				return fail(err, len, -EINVAL, "pattern '%s' names an unknown character class (known: alnum alpha blank cntrl digit graph lower print punct space upper xdigit)", pat);
			least++;
			p = b + 1;
			break;
		default:
			least++;
			p++;
			break;
		}
	}
	if (least > RGROUP__RUN_NAME_LEN)
		return fail(err, len, -EINVAL, "pattern '%s' can never match: it needs %u characters and a thread's name has at most %d", pat, least, RGROUP__RUN_NAME_LEN);
	return 0;
}

/* ---- CPU lists ------------------------------------------------------------ */

static int parse_uint(const char **p, const char *end, unsigned long long max,
		      unsigned long long *out)
{
	unsigned long long v = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	while (s < end && *s >= '0' && *s <= '9') {
		v = v * 10 + (unsigned long long)(*s - '0');
		if (v > max)
			return -ERANGE;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

int rgroup__run_parse_cpus(const char *s, const char *end, cpu_set_t *set, char *err,
			   size_t len)
{
	cpu_set_t out;
	const char *p = s;

	CPU_ZERO(&out);
	if (p >= end)
		return fail(err, len, -EINVAL, "empty CPU list");
	while (p < end) {
		unsigned long long a, b;
		int r = parse_uint(&p, end, RGROUP__RUN_MAX_CPUS - 1, &a);

		if (r < 0)
			return fail(err, len, -EINVAL, r == -ERANGE ?
				    "CPU list '%.*s': CPU numbers go up to %d" :
				    "CPU list '%.*s': a CPU number or a range (2-5) expected", (int)(end - s), s,
				    RGROUP__RUN_MAX_CPUS - 1);
		b = a;
		if (p < end && *p == '-') {
			p++;
			r = parse_uint(&p, end, RGROUP__RUN_MAX_CPUS - 1, &b);
			if (r < 0 || b < a)
				return fail(err, len, -EINVAL, "CPU list '%.*s': a range is FIRST-LAST with FIRST <= LAST < %d",
					    (int)(end - s), s, RGROUP__RUN_MAX_CPUS);
		}
		for (unsigned long long c = a; c <= b; c++)
			CPU_SET((size_t)c, &out);
		if (p < end) {
			if (*p != ',' || p + 1 == end)
				return fail(err, len, -EINVAL, "CPU list '%.*s': numbers and ranges are separated by ','",
					    (int)(end - s), s);
			p++;
		}
	}
	*set = out;
	return 0;
}

int rgroup__run_format_cpus(const cpu_set_t *set, char *out, size_t len)
{
	return rgroup__format_cpulist(set, sizeof(*set), out, len);
}

/* ---- One rule ---------------------------------------------------------------- */

static const char *const setting_names[] = { "nice", "cpus", "max" };
enum { S_NICE, S_CPUS, S_MAX, S_NONE = -1 };

/* Does s start with "NAME=" for a setting? Its index, S_NONE if it is no
 * word followed by '=' at all, -2 for an unknown word followed by '='. */
static int setting_at(const char *s, const char *end)
{
	const char *w = s;

	while (w < end && *w >= 'a' && *w <= 'z')
		w++;
	if (w == s || w >= end || *w != '=')
		return S_NONE;
	for (int i = 0; i < 3; i++)
		if (strlen(setting_names[i]) == (size_t)(w - s) &&
		    memcmp(setting_names[i], s, (size_t)(w - s)) == 0)
			return i;
	return -2;
}

static int path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '/';
}

/* A rule being parsed: what it says, before it changes the rules. */
struct parsed {
	char path[RGROUP__RUN_PATH_LEN];
	unsigned int npatterns;
	const char *settings, *settings_end;   /* NULL: none */
	struct rgroup__run_group g;            /* the settings */
	int change;                            /* a change: "none" lifts cpus= or max= */
	unsigned int seen;                     /* 1 << S_...: the settings given */
	unsigned int lifted;                   /* 1 << S_...: given as "none" */
};

static int check_path(const char *path, char *err, size_t len, const char *ctx)
{
	const char *p = path;
	unsigned int depth = 0;

	if (!*p)
		return fail(err, len, -EINVAL, "%s: a group name comes first (GROUP=PATTERN,...:SETTING,...)", ctx);
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 0)
			return fail(err, len, -EINVAL, "%s: group '%s' has an empty name between '/'", ctx, path);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return fail(err, len, -EINVAL, "%s: group '%s': '.' and '..' are not names", ctx, path);
		if (++depth > RGROUP__RUN_MAX_DEPTH)
			return fail(err, len, -EINVAL, "%s: group '%s' is nested deeper than %d", ctx, path, RGROUP__RUN_MAX_DEPTH);
		p += n;
		if (*p == '/' && !*++p)
			return fail(err, len, -EINVAL, "%s: group '%s' ends in '/'", ctx, path);
	}
	return 0;
}

static int parse_setting(struct rgroup__run_group *g, int which, const char *v, const char *end,
			 char *err, size_t len, const char *ctx)
{
	char sub[200];
	unsigned long long a, b;
	const char *p = v;
	int neg = 0, r;

	switch (which) {
	case S_NICE:
		if (p < end && (*p == '-' || *p == '+'))
			neg = *p++ == '-';
		if (parse_uint(&p, end, 100, &a) < 0 || p != end || (neg ? a > 20 : a > 19))
			return fail(err, len, -EINVAL, "%s: nice=%.*s: a nice value is a whole number from -20 to 19", ctx, (int)(end - v), v);
		g->has_nice = 1;
		g->nice = neg ? -(int)a : (int)a;
		return 0;
	case S_CPUS:
		r = rgroup__run_parse_cpus(v, end, &g->cpus, sub, sizeof(sub));
		if (r < 0)
			return fail(err, len, r, "%s: cpus=: %s", ctx, sub);
		g->has_cpus = 1;
		return 0;
	default:
		break;
	}
	/* max=P% or max=QUOTA/PERIOD */
	if (parse_uint(&p, end, 1000000000ull, &a) < 0)
		goto bad_max;
	if (p < end && *p == '/') {
		p++;
		if (parse_uint(&p, end, 1000000ull, &b) < 0 || p != end)
			goto bad_max;
	} else {
		unsigned long long milli = a * 1000;  /* thousandths of a percent */
		if (p < end && *p == '.') {
			unsigned long long scale = 100;
			p++;
			if (p >= end || *p < '0' || *p > '9')
				goto bad_max;
			while (p < end && *p >= '0' && *p <= '9') {
				if (!scale)
					return fail(err, len, -EINVAL, "%s: max=%.*s: at most three decimals", ctx, (int)(end - v), v);
				milli += (unsigned long long)(*p++ - '0') * scale;
				scale /= 10;
			}
		}
		if (p + 1 != end || *p != '%')
			goto bad_max;
		/* P% of a 100 ms period: 0.001% is 1 us. */
		b = RGROUP__RUN_PERIOD_US;
		a = milli * RGROUP__RUN_PERIOD_US / 100000;
	}
	if (b < 1000 || b > 1000000)
		return fail(err, len, -EINVAL, "%s: max=%.*s: the period must be 1000 to 1000000 microseconds", ctx, (int)(end - v), v);
	if (a < 1000)
		return fail(err, len, -EINVAL, "%s: max=%.*s: the kernel's smallest quota is 1 ms per period (1%% of 100 ms)", ctx, (int)(end - v), v);
	if (a > b * RGROUP__RUN_MAX_CPUS)
		return fail(err, len, -EINVAL, "%s: max=%.*s: more than %d CPUs", ctx, (int)(end - v), v, RGROUP__RUN_MAX_CPUS);
	g->quota_us = a;
	g->period_us = b;
	return 0;
bad_max:
	return fail(err, len, -EINVAL, "%s: max=%.*s: a cap is a percentage of one CPU (max=50%%, max=150%%) or QUOTA/PERIOD in microseconds (max=20000/100000)",
		    ctx, (int)(end - v), v);
}

static int parse_settings(struct parsed *ps, char *err, size_t len, const char *ctx)
{
	const char *p = ps->settings, *end = ps->settings_end;
	int seen[3] = { 0, 0, 0 };

	if (p >= end)
		return fail(err, len, -EINVAL, "%s: nothing after ':' (settings: nice=N, cpus=LIST, max=P%%)", ctx);
	while (p < end) {
		int which = setting_at(p, end);
		const char *v, *e;
		int r;

		if (which == -2 || which == S_NONE) {
			const char *w = p;
			while (w < end && *w != '=' && *w != ',')
				w++;
			return fail(err, len, -EINVAL, "%s: unknown setting '%.*s' (known: nice=N, cpus=LIST, max=P%%)", ctx, (int)(w - p), p);
		}
		if (seen[which]++)
			return fail(err, len, -EINVAL, "%s: %s is given twice", ctx, setting_names[which]);
		v = p + strlen(setting_names[which]) + 1;
		/* The value ends at the next ',' that starts a setting: a CPU
		 * list has commas of its own. */
		e = v;
		for (;;) {
			while (e < end && *e != ',')
				e++;
			if (e >= end || which != S_CPUS || setting_at(e + 1, end) != S_NONE)
				break;
			e++;
		}
		ps->seen |= 1u << which;
		if (ps->change && which != S_NICE && e - v == 4 && memcmp(v, "none", 4) == 0)
			ps->lifted |= 1u << which;
		else if ((r = parse_setting(&ps->g, which, v, e, err, len, ctx)) < 0)
			return r;
		p = e < end ? e + 1 : e;
		if (e < end && p == end)
			return fail(err, len, -EINVAL, "%s: a ',' ends the settings", ctx);
	}
	return 0;
}

/*
 * Patterns start at p; each is unescaped into the rules' free pattern
 * slots (committed only if the whole rule is good). Stops at the end or
 * at the ':' that starts the settings.
 */
static int parse_patterns(struct rgroup__run_rules *r, struct parsed *ps, const char *p,
			  const char *end, char *err, size_t len, const char *ctx)
{
	char buf[RGROUP__RUN_PATTERN_LEN];
	size_t n = 0;

	for (;;) {
		int stop = p >= end, settings = 0;

		if (!stop && *p == ':') {
			int which = setting_at(p + 1, end);
			if (p + 1 == end)
				return fail(err, len, -EINVAL, "%s: nothing after ':' (settings: nice=N, cpus=LIST, max=P%%); to match a name ending in ':' write '\\:'", ctx);
			if (which == -2) {
				const char *w = p + 1;
				while (w < end && *w != '=')
					w++;
				return fail(err, len, -EINVAL, "%s: unknown setting '%.*s' (known: nice, cpus, max); to match ':' followed by '=' in a name, write '\\:'",
					    ctx, (int)(w - p - 1), p + 1);
			}
			settings = stop = which >= 0;
		}
		if (stop || *p == ',') {
			struct rgroup__run_pattern *slot;
			char sub[300];
			int rr;

			if (!n)
				return fail(err, len, -EINVAL, "%s: empty pattern%s", ctx,
					    stop && !settings && p >= end && ps->npatterns == 0 ? " after '='" : "");
			buf[n] = '\0';
			rr = rgroup__run_check_glob(buf, sub, sizeof(sub));
			if (rr < 0)
				return fail(err, len, rr, "%s: %s", ctx, sub);
			if (r->npatterns + ps->npatterns >= RGROUP__RUN_MAX_PATTERNS)
				return fail(err, len, -ENOSPC, "%s: more than %d patterns in all", ctx, RGROUP__RUN_MAX_PATTERNS);
			slot = &r->patterns[r->npatterns + ps->npatterns++];
			memcpy(slot->glob, buf, n + 1);
			n = 0;
			if (settings) {
				ps->settings = p + 1;
				ps->settings_end = end;
			}
			if (stop)
				return 0;
			p++;
			continue;
		}
		if (*p == '[') {
			int bad = 0;
			const char *b = bracket_end(p, end, &bad);
			if (!b)
				return fail(err, len, -EINVAL, "%s: a '[' that no ']' closes (for a literal '[' write '\\[')", ctx);
			for (; p <= b; p++) {
				if (*p == '\\' && p + 1 < b && !glob_meta(p[1]))
					continue;   /* "\," inside brackets: a plain ',' */
				if (n + 1 >= sizeof(buf))
					goto too_long;
				buf[n++] = *p;
				if (*p == '\\' && p + 1 < b) {
					buf[n++] = *++p;
					if (n >= sizeof(buf))
						goto too_long;
				}
			}
			continue;
		}
		if (*p == '\\') {
			if (p + 1 >= end)
				return fail(err, len, -EINVAL, "%s: the rule ends in a lone '\\'", ctx);
			if (glob_meta(p[1])) {
				if (n + 2 >= sizeof(buf))
					goto too_long;
				buf[n++] = '\\';
			}
			p++;
		}
		if (n + 1 >= sizeof(buf))
			goto too_long;
		buf[n++] = *p++;
	}
too_long:
	return fail(err, len, -EINVAL, "%s: a pattern longer than %d characters", ctx, RGROUP__RUN_PATTERN_LEN - 1);
}

static int find_group(const struct rgroup__run_rules *r, const char *path, size_t n)
{
	for (unsigned int i = 0; i < r->ngroups; i++)
		if (strlen(r->groups[i].path) == n && memcmp(r->groups[i].path, path, n) == 0)
			return (int)i;
	return -1;
}

/* Trim blanks at both ends; a blank after a backslash stays. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t' || **s == '\r'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r')) {
		size_t bs = 0;
		while (*e - 1 - (ptrdiff_t)bs - 1 >= *s && (*e)[-2 - (ptrdiff_t)bs] == '\\')
			bs++;
		if (bs % 2)
			break;   /* escaped */
		(*e)--;
	}
}

static int add_range(struct rgroup__run_rules *r, const char *s, const char *end, char *err,
		     size_t len, const char *where)
{
	struct parsed ps;
	char ctx[200];
	const char *p;
	unsigned int need = 0, depth = 0;
	int gi, parent = -1, rr;

	trim(&s, &end);
	memset(&ps, 0, sizeof(ps));
	snprintf(ctx, sizeof(ctx), "%s%srule %u (%.*s%s)", where ? where : "", where ? ": " : "",
		 r->nrules + 1, (int)(end - s > 60 ? 60 : end - s), s, end - s > 60 ? "..." : "");
	for (p = s; p < end && path_char(*p); p++)
		;
	if (p < end && *p != '=' && *p != ':')
		return fail(err, len, -EINVAL, "%s: a group name holds only letters, digits, '_', '.', '-' and '/', then '=' and the patterns (got '%c')",
			    ctx, *p);
	if ((size_t)(p - s) >= sizeof(ps.path))
		return fail(err, len, -EINVAL, "%s: group name longer than %d characters", ctx, RGROUP__RUN_PATH_LEN - 1);
	memcpy(ps.path, s, (size_t)(p - s));
	ps.path[p - s] = '\0';
	rr = check_path(ps.path, err, len, ctx);
	if (rr < 0)
		return rr;
	if (p < end && *p == '=') {
		rr = parse_patterns(r, &ps, p + 1, end, err, len, ctx);
		if (rr < 0)
			return rr;
	} else if (p < end) {
		ps.settings = p + 1;
		ps.settings_end = end;
	}
	if (ps.settings) {
		rr = parse_settings(&ps, err, len, ctx);
		if (rr < 0)
			return rr;
	}
	if (!ps.npatterns && !ps.settings)
		return fail(err, len, -EINVAL, "%s: gives neither patterns (GROUP=PATTERN) nor settings (GROUP:nice=N)", ctx);

	/* The group and its missing parents. */
	gi = find_group(r, ps.path, strlen(ps.path));
	if (gi >= 0 && r->groups[gi].origin)
		return fail(err, len, -EEXIST, "%s: group '%s' is already defined by rule %u", ctx, ps.path,
			    r->groups[gi].origin);
	for (const char *c = ps.path; c; c = strchr(c + 1, '/')) {
		size_t n = (size_t)(c - ps.path);
		if (c != ps.path && find_group(r, ps.path, n) < 0)
			need++;
	}
	if (gi < 0)
		need++;
	if (r->ngroups + need > RGROUP__RUN_MAX_GROUPS)
		return fail(err, len, -ENOSPC, "%s: more than %d groups in all", ctx, RGROUP__RUN_MAX_GROUPS);

	/* Commit: nothing fails from here on. */
	for (const char *c = ps.path;; c = strchr(c + 1, '/')) {
		size_t n = c ? (size_t)(c - ps.path) : strlen(ps.path);
		int at;

		if (c == ps.path)
			continue;
		depth++;
		at = find_group(r, ps.path, n);
		if (at < 0) {
			struct rgroup__run_group *g = &r->groups[r->ngroups];
			memset(g, 0, sizeof(*g));
			memcpy(g->path, ps.path, n);
			g->path[n] = '\0';
			g->parent = parent;
			g->depth = depth;
			at = (int)r->ngroups++;
		}
		parent = at;
		if (!c)
			break;
	}
	gi = parent;
	r->nrules++;
	{
		struct rgroup__run_group *g = &r->groups[gi];
		g->origin = r->nrules;
		g->npatterns = ps.npatterns;
		g->has_nice = ps.g.has_nice;
		g->nice = ps.g.nice;
		g->has_cpus = ps.g.has_cpus;
		g->cpus = ps.g.cpus;
		g->quota_us = ps.g.quota_us;
		g->period_us = ps.g.period_us;
	}
	for (unsigned int i = 0; i < ps.npatterns; i++)
		r->patterns[r->npatterns++].group = gi;
	return 0;
}

int rgroup__run_add(struct rgroup__run_rules *r, const char *spec, char *err, size_t len)
{
	/* The pattern slots past npatterns are scratch until committed; a
	 * failed rule leaves stale text there, never counted. */
	return add_range(r, spec, spec + strlen(spec), err, len, NULL);
}

int rgroup__run_add_text(struct rgroup__run_rules *r, const char *text, const char *name,
			 char *err, size_t len)
{
	unsigned int line = 0;

	for (const char *s = text; *s;) {
		const char *e = strchr(s, '\n'), *b = s;
		char where[200];
		int rr;

		if (!e)
			e = s + strlen(s);
		line++;
		while (b < e && (*b == ' ' || *b == '\t' || *b == '\r'))
			b++;
		/* A comment runs from a '#' after a blank to the end of the
		 * line ("\\#" in a pattern is a literal one after a blank). */
		for (const char *c = b + 1; c < e; c++)
			if (*c == '#' && (c[-1] == ' ' || c[-1] == '\t')) {
				e = c;
				while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
					e--;
				break;
			}
		if (b < e && *b != '#') {
			snprintf(where, sizeof(where), "%s:%u", name ? name : "(text)", line);
			rr = add_range(r, s, e, err, len, where);
			if (rr < 0)
				return rr;
		}
		e = strchr(e, '\n');
		s = e ? e + 1 : s + strlen(s);
	}
	return 0;
}

/* ---- The whole set -------------------------------------------------------- */

static int has_threads(const struct rgroup__run_rules *r, int gi)
{
	if (r->groups[gi].npatterns)
		return 1;
	for (unsigned int i = (unsigned int)gi + 1; i < r->ngroups; i++)
		if (r->groups[i].parent == gi && has_threads(r, (int)i))
			return 1;
	return 0;
}

int rgroup__run_check(const struct rgroup__run_rules *r, char *err, size_t len)
{
	char a[256], b[256];

	for (unsigned int i = 0; i < r->ngroups; i++) {
		const struct rgroup__run_group *g = &r->groups[i];
		int p;

		if (!has_threads(r, (int)i))
			return fail(err, len, -EINVAL, "group '%s' would never get a thread: it has no patterns and no child group with patterns", g->path);
		if (g->has_cpus) {
			for (p = g->parent; p >= 0 && !r->groups[p].has_cpus; p = r->groups[p].parent)
				;
			if (p >= 0) {
				cpu_set_t both;
				CPU_AND(&both, &g->cpus, &r->groups[p].cpus);
				if (!CPU_EQUAL(&both, &g->cpus)) {
					rgroup__run_format_cpus(&g->cpus, a, sizeof(a));
					rgroup__run_format_cpus(&r->groups[p].cpus, b, sizeof(b));
					return fail(err, len, -EINVAL, "group '%s': cpus=%s is not within cpus=%s of '%s' (a child group can only narrow its parent)",
						    g->path, a, b, r->groups[p].path);
				}
			}
		}
		if (g->quota_us) {
			for (p = g->parent; p >= 0 && !r->groups[p].quota_us; p = r->groups[p].parent)
				;
			/* q/p <= Q/P, in integers (q, Q < 2^30; p, P <= 10^6). */
			if (p >= 0 && g->quota_us * r->groups[p].period_us >
				      r->groups[p].quota_us * g->period_us) {
				rgroup__run_format_settings(g, a, sizeof(a));
				rgroup__run_format_settings(&r->groups[p], b, sizeof(b));
				return fail(err, len, -EINVAL, "group '%s': its cap (%s) is above the cap of '%s' (%s); a child group can only narrow its parent",
					    g->path, a, r->groups[p].path, b);
			}
		}
	}
	return 0;
}

int rgroup__run_match(const struct rgroup__run_rules *r, const char *name)
{
	for (unsigned int i = 0; i < r->npatterns; i++)
		if (fnmatch(r->patterns[i].glob, name, 0) == 0)
			return r->patterns[i].group;
	return -1;
}

/* ---- A change while the program runs -------------------------------------- */

int rgroup__run_change(const struct rgroup__run_rules *r, struct rgroup__run_rules *out,
		       const char *path, const char *settings, unsigned int *what, char *err,
		       size_t len)
{
	struct rgroup__run_group *g;
	struct parsed ps;
	char ctx[RGROUP__RUN_PATH_LEN + 16];
	int gi, rr;

	gi = find_group(r, path, strlen(path));
	if (gi < 0)
		return fail(err, len, -ENOENT, "no group '%s' in the program's rules", path);
	memset(&ps, 0, sizeof(ps));
	ps.change = 1;
	ps.settings = settings;
	ps.settings_end = settings + strlen(settings);
	snprintf(ctx, sizeof(ctx), "group '%s'", path);
	rr = parse_settings(&ps, err, len, ctx);
	if (rr < 0)
		return rr;
	*out = *r;
	g = &out->groups[gi];
	if (ps.seen & (1u << S_NICE)) {
		g->has_nice = 1;
		g->nice = ps.g.nice;
	}
	if (ps.seen & (1u << S_CPUS)) {
		g->has_cpus = !(ps.lifted & (1u << S_CPUS));
		if (g->has_cpus)
			g->cpus = ps.g.cpus;
		else
			CPU_ZERO(&g->cpus);
	}
	if (ps.seen & (1u << S_MAX)) {
		g->quota_us = ps.lifted & (1u << S_MAX) ? 0 : ps.g.quota_us;
		g->period_us = ps.lifted & (1u << S_MAX) ? 0 : ps.g.period_us;
	}
	rr = rgroup__run_check(out, err, len);
	if (rr < 0)
		return rr;
	*what = (ps.seen & (1u << S_NICE) ? RGROUP__RUN_NICE : 0) |
		(ps.seen & (1u << S_CPUS) ? RGROUP__RUN_CPUS : 0) |
		(ps.seen & (1u << S_MAX) ? RGROUP__RUN_MAX : 0);
	return gi;
}

/* ---- Back to text --------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, off;
	int full;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->off, o->len - o->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->off)
		o->full = 1;
	else
		o->off += (size_t)n;
}

int rgroup__run_format_settings(const struct rgroup__run_group *g, char *buf, size_t len)
{
	struct out o = { buf, len, 0, len == 0 };
	char cpus[512];

	if (len)
		buf[0] = '\0';
	if (g->has_nice)
		put(&o, "nice=%d", g->nice);
	if (g->has_cpus) {
		if (rgroup__run_format_cpus(&g->cpus, cpus, sizeof(cpus)) < 0)
			return -ENAMETOOLONG;
		put(&o, "%scpus=%s", o.off ? "," : "", cpus);
	}
	if (g->quota_us) {
		if (g->period_us == RGROUP__RUN_PERIOD_US && g->quota_us % 1000 == 0)
			put(&o, "%smax=%llu%%", o.off ? "," : "", (unsigned long long)g->quota_us / 1000);
		else
			put(&o, "%smax=%llu/%llu", o.off ? "," : "", (unsigned long long)g->quota_us,
			    (unsigned long long)g->period_us);
	}
	return o.full ? -ENAMETOOLONG : (int)o.off;
}

/* A stored glob back into a rule's text: ',' ':' '#' and a last blank
 * get the spec's backslash; fnmatch's own escapes and bracket expressions
 * (where ',' and ':' need none, and "[:digit:]" must stay as it is) pass
 * as they are, but for the '#' that could start a comment. */
static void put_glob(struct out *o, const char *glob)
{
	const char *end = glob + strlen(glob);

	for (const char *p = glob; *p; p++) {
		int bad = 0;
		const char *b = *p == '[' ? bracket_end(p, end, &bad) : NULL;

		if (b) {
			/* A '#' after a blank would start a comment even here;
			 * inside brackets "\\#" reads back as a plain '#'. */
			for (; p < b; p++)
				if (*p == '#')
					put(o, "\\#");
				else
					put(o, "%c", *p);
			put(o, "]");
		} else if (*p == '\\' && p[1]) {
			put(o, "\\%c", p[1]);
			p++;
		} else if (*p == ',' || *p == ':' || *p == '#' || ((*p == ' ' || *p == '\t') && !p[1])) {
			put(o, "\\%c", *p);
		} else {
			put(o, "%c", *p);
		}
	}
}

int rgroup__run_format(const struct rgroup__run_rules *r, char *buf, size_t len)
{
	struct out o = { buf, len, 0, len == 0 };
	char set[600];

	if (len)
		buf[0] = '\0';
	for (unsigned int rule = 1; rule <= r->nrules; rule++) {
		for (unsigned int gi = 0; gi < r->ngroups; gi++) {
			const struct rgroup__run_group *g = &r->groups[gi];
			int first = 1;

			if (g->origin != rule)
				continue;
			put(&o, "%s", g->path);
			for (unsigned int i = 0; i < r->npatterns; i++) {
				if (r->patterns[i].group != (int)gi)
					continue;
				put(&o, "%s", first ? "=" : ",");
				put_glob(&o, r->patterns[i].glob);
				first = 0;
			}
			if (rgroup__run_format_settings(g, set, sizeof(set)) < 0)
				return -ENAMETOOLONG;
			if (*set)
				put(&o, ":%s", set);
			put(&o, "\n");
		}
	}
	return o.full ? -ENAMETOOLONG : (int)o.off;
}

int rgroup__run_names_name(char *out, size_t len, pid_t pid, uint64_t start, int tmp)
{
	int w = snprintf(out, len, "rgroup-%d-%llu.names%s", (int)pid, (unsigned long long)start,
			 tmp ? ".tmp" : "");

	if (pid <= 0)
		return -EINVAL;
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

int rgroup__run_parse_names_name(const char *name, pid_t *pid, uint64_t *start, int *tmp)
{
	char back[64];
	unsigned long long s;
	int p, n = 0;

	if (strncmp(name, "rgroup-", 7) != 0 || !isdigit((unsigned char)name[7]) ||
	    sscanf(name, "rgroup-%d-%llu.names%n", &p, &s, &n) != 2 || !n || p <= 0)
		return -EINVAL;
	*tmp = strcmp(name + n, ".tmp") == 0;
	if (name[n] && !*tmp)
		return -EINVAL;
	/* Only the exact form the writer makes (no "+1", "007", spaces). */
	if (rgroup__run_names_name(back, sizeof(back), p, s, *tmp) < 0 || strcmp(back, name) != 0)
		return -EINVAL;
	*pid = p;
	*start = s;
	return 0;
}
