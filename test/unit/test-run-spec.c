/* SPDX-License-Identifier: MIT */
/*
 * test-run-spec.c - the rules of `rgroup run` (src/run/run-spec.c): the
 * syntax a person types, every error a person can make (with the words
 * of its message), matching real programs' thread names, the
 * inheritance check, and the round trip through the environment.
 */
#include <errno.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run-spec.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct rgroup__run_rules R;   /* 60 KB: not on the test's stack */

static int add_all(struct rgroup__run_rules *r, const char *const *specs, size_t n,
		   char *err, size_t len)
{
	rgroup__run_init(r);
	for (size_t i = 0; i < n; i++) {
		int e = rgroup__run_add(r, specs[i], err, len);
		if (e < 0)
			return e;
	}
	return rgroup__run_check(r, err, len);
}

static const struct rgroup__run_group *group(const char *path)
{
	for (unsigned int i = 0; i < R.ngroups; i++)
		if (strcmp(R.groups[i].path, path) == 0)
			return &R.groups[i];
	return NULL;
}

/* ---- The syntax -------------------------------------------------------- */

static void test_brief_example(void **state)
{
	/* The issue's own example: a colon in the pattern, a CPU list, a cap. */
	const char *spec = "bg/compaction=rocksdb:low*,compact*:nice=10,cpus=1,max=50%";
	char err[256] = "";
	const struct rgroup__run_group *g;

	assert_int_equal(add_all(&R, &spec, 1, err, sizeof(err)), 0);
	assert_int_equal(R.ngroups, 2);
	assert_non_null(g = group("bg"));
	assert_int_equal(g->parent, -1);
	assert_int_equal(g->origin, 0);     /* implied */
	assert_non_null(g = group("bg/compaction"));
	assert_int_equal(g->depth, 2);
	assert_string_equal(R.groups[g->parent].path, "bg");
	assert_int_equal(R.npatterns, 2);
	assert_string_equal(R.patterns[0].glob, "rocksdb:low*");
	assert_string_equal(R.patterns[1].glob, "compact*");
	assert_true(g->has_nice);
	assert_int_equal(g->nice, 10);
	assert_true(g->has_cpus);
	assert_int_equal(CPU_COUNT(&g->cpus), 1);
	assert_true(CPU_ISSET(1, &g->cpus));
	assert_int_equal(g->quota_us, 50000);
	assert_int_equal(g->period_us, 100000);
}

static void test_forms(void **state)
{
	static const struct {
		const char *spec, *path, *first_glob;
		int npat, nice, ncpus;
		unsigned long long quota, period;
	} cases[] = {
		{ "vcpu=CPU */TCG", "vcpu", "CPU */TCG", 1, 0, 0, 0, 0 },
		{ "gc=GC Thread#*,G1 Conc#*:nice=5", "gc", "GC Thread#*", 2, 5, 0, 0, 0 },
		{ "io=io_thd_[0-9]*", "io", "io_thd_[0-9]*", 1, 0, 0, 0, 0 },
		{ "cls=[[:alpha:]]*[[:digit:]]", "cls", "[[:alpha:]]*[[:digit:]]", 1, 0, 0, 0, 0 },
		{ "br=x[,:]y", "br", "x[,:]y", 1, 0, 0, 0, 0 },      /* ',' ':' inside [...] */
		{ "esc=a\\,b\\:c", "esc", "a,b:c", 1, 0, 0, 0, 0 },
		{ "star=lit\\*", "star", "lit\\*", 1, 0, 0, 0, 0 },  /* fnmatch's escape kept */
		{ "bg:nice=-5,cpus=0-3,6,max=150%", "bg", NULL, 0, -5, 5, 150000, 100000 },
		{ "  padded=x*  ", "padded", "x*", 1, 0, 0, 0, 0 },
		{ "tail=x\\ ", "tail", "x ", 1, 0, 0, 0, 0 },        /* an escaped last blank */
		{ "q=w:max=20000/50000", "q", "w", 1, 0, 0, 20000, 50000 },
		{ "frac=w:max=12.5%", "frac", "w", 1, 0, 0, 12500, 100000 },
		{ "n=w:nice=+3", "n", "w", 1, 3, 0, 0, 0 },
		{ "a.b-c_d/e=w", "a.b-c_d/e", "w", 1, 0, 0, 0, 0 },
		{ "colon=a:b:c", "colon", "a:b:c", 1, 0, 0, 0, 0 },  /* no setting follows */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char err[256] = "";
		const struct rgroup__run_group *g;
		int r;

		rgroup__run_init(&R);
		r = rgroup__run_add(&R, cases[i].spec, err, sizeof(err));
		if (r != 0)
			fail_msg("'%s': %d %s", cases[i].spec, r, err);
		g = group(cases[i].path);
		if (!g)
			fail_msg("'%s': no group %s", cases[i].spec, cases[i].path);
		assert_int_equal(g->npatterns, cases[i].npat);
		if (cases[i].first_glob)
			assert_string_equal(R.patterns[0].glob, cases[i].first_glob);
		assert_int_equal(g->nice, cases[i].nice);
		assert_int_equal(g->has_cpus ? CPU_COUNT(&g->cpus) : 0, cases[i].ncpus);
		assert_int_equal(g->quota_us, cases[i].quota);
		assert_int_equal(g->period_us, cases[i].period);
	}
}

/* ---- Every mistake gets a message that says what is wrong ------------------ */

static void test_errors(void **state)
{
	static const struct {
		const char *spec;
		int err;
		const char *words;   /* part of the message */
	} cases[] = {
		{ "", -EINVAL, "group name comes first" },
		{ "=x*", -EINVAL, "group name comes first" },
		{ "bg", -EINVAL, "neither patterns" },
		{ "bg=", -EINVAL, "empty pattern" },
		{ "bg=a,,b", -EINVAL, "empty pattern" },
		{ "bg=a,", -EINVAL, "empty pattern" },
		{ "b g=x", -EINVAL, "only letters" },
		{ "bg//x=y", -EINVAL, "empty name" },
		{ "bg/=y", -EINVAL, "ends in '/'" },
		{ "/bg=y", -EINVAL, "empty name" },
		{ "bg/../x=y", -EINVAL, "'.' and '..'" },
		{ "a/b/c/d/e/f/g/h/i=y", -EINVAL, "deeper than 8" },
		{ "bg=x[ab", -EINVAL, "no ']' closes" },
		{ "bg=x[[:digti:]]", -EINVAL, "unknown character class" },
		{ "bg=x\\", -EINVAL, "lone '\\'" },
		{ "bg=0123456789abcdef", -EINVAL, "can never match" },
		{ "bg=0123456789abcd?*e", -EINVAL, "needs 16 characters" },
		{ "bg=x:nise=5", -EINVAL, "unknown setting 'nise'" },
		{ "bg=x:nice=5,foo=1", -EINVAL, "unknown setting 'foo'" },
		{ "bg=x:", -EINVAL, "nothing after ':'" },
		{ "bg:", -EINVAL, "nothing after ':'" },
		{ "bg=x:nice=20", -EINVAL, "-20 to 19" },
		{ "bg=x:nice=-21", -EINVAL, "-20 to 19" },
		{ "bg=x:nice=ten", -EINVAL, "-20 to 19" },
		{ "bg=x:nice=5,nice=6", -EINVAL, "given twice" },
		{ "bg=x:nice=5,", -EINVAL, "',' ends" },
		{ "bg=x:cpus=", -EINVAL, "empty CPU list" },
		{ "bg=x:cpus=3-1", -EINVAL, "FIRST <= LAST" },
		{ "bg=x:cpus=1024", -EINVAL, "go up to 1023" },
		{ "bg=x:cpus=0,,1", -EINVAL, "CPU number or a range" },
		{ "bg=x:cpus=a", -EINVAL, "CPU number or a range" },
		{ "bg=x:max=0.5%", -EINVAL, "smallest quota" },
		{ "bg=x:max=50", -EINVAL, "percentage of one CPU" },
		{ "bg=x:max=50%%", -EINVAL, "percentage of one CPU" },
		{ "bg=x:max=1.2345%", -EINVAL, "three decimals" },
		{ "bg=x:max=5000/500", -EINVAL, "1000 to 1000000" },
		{ "bg=x:max=500/5000", -EINVAL, "smallest quota" },
		{ "bg=x:max=200000000/100000", -EINVAL, "more than 1024 CPUs" },
		{ "bg=a\001b", -EINVAL, "control character" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char err[512] = "";
		int r;

		rgroup__run_init(&R);
		r = rgroup__run_add(&R, cases[i].spec, err, sizeof(err));
		if (r != cases[i].err || !strstr(err, cases[i].words))
			fail_msg("'%s': got %d '%s', want %d with '%s'", cases[i].spec, r, err,
				 cases[i].err, cases[i].words);
		/* A failed rule changes nothing. */
		assert_int_equal(R.ngroups, 0);
		assert_int_equal(R.npatterns, 0);
		assert_int_equal(R.nrules, 0);
	}
}

static void test_duplicates_and_limits(void **state)
{
	char err[512], spec[64];
	unsigned int i;

	rgroup__run_init(&R);
	assert_int_equal(rgroup__run_add(&R, "bg/x=a*", err, sizeof(err)), 0);
	/* An implied parent may be defined once later... */
	assert_int_equal(rgroup__run_add(&R, "bg:nice=5", err, sizeof(err)), 0);
	/* ...but no group twice. */
	assert_int_equal(rgroup__run_add(&R, "bg=b*", err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "already defined by rule 2"));
	assert_int_equal(rgroup__run_add(&R, "bg/x=c*", err, sizeof(err)), -EEXIST);

	rgroup__run_init(&R);
	for (i = 0; i < RGROUP__RUN_MAX_GROUPS; i++) {
		snprintf(spec, sizeof(spec), "g%u=n%u", i, i);
		assert_int_equal(rgroup__run_add(&R, spec, err, sizeof(err)), 0);
	}
	assert_int_equal(rgroup__run_add(&R, "one/more=x", err, sizeof(err)), -ENOSPC);
	assert_int_equal(R.ngroups, RGROUP__RUN_MAX_GROUPS);
}

/* ---- Inheritance (rule 10): a child only narrows its parent ---------------- */

static void test_check(void **state)
{
	static const struct {
		const char *specs[3];
		int ok;
		const char *words;
	} cases[] = {
		{ { "bg:cpus=0-1", "bg/x=a*:cpus=1" }, 1, NULL },
		{ { "bg:cpus=1", "bg/x=a*:cpus=0-1" }, 0, "not within cpus=1 of 'bg'" },
		{ { "bg:cpus=2", "bg/x/y=a*:cpus=3" }, 0, "not within" },  /* nearest ancestor with cpus */
		{ { "bg:max=50%", "bg/x=a*:max=20%" }, 1, NULL },
		{ { "bg:max=50%", "bg/x=a*:max=60%" }, 0, "above the cap of 'bg'" },
		{ { "bg:max=50%", "bg/x=a*:max=40000/50000" }, 0, "above the cap" }, /* 80% */
		{ { "bg:max=50%", "bg/x=a*:max=25000/50000" }, 1, NULL },             /* exactly 50% */
		{ { "bg:nice=3" }, 0, "would never get a thread" },
		{ { "bg=a*", "bg/x:nice=1" }, 0, "'bg/x' would never get a thread" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = 0;
		char err[512] = "";
		int r;

		while (n < 3 && cases[i].specs[n])
			n++;
		r = add_all(&R, cases[i].specs, n, err, sizeof(err));
		if (cases[i].ok ? r != 0 : (r != -EINVAL || !strstr(err, cases[i].words)))
			fail_msg("case %zu (%s ...): got %d '%s'", i, cases[i].specs[0], r, err);
	}
}

/* ---- A change while the program runs (rgroup set) ------------------------- */

static struct rgroup__run_rules C;

static void test_change(void **state)
{
	static const char *const specs[] = { "bg=a*:cpus=0-1,max=50%", "bg/x=b*:nice=3,cpus=1", "fg=c*" };
	static const struct {
		const char *path, *settings;
		int ok;                 /* 1, or the negative errno */
		unsigned int what;
		const char *words;      /* in err (failures) or the settings (success) */
	} cases[] = {
		{ "fg", "nice=5", 1, RGROUP__RUN_NICE, "nice=5" },
		{ "bg/x", "nice=-2", 1, RGROUP__RUN_NICE, "nice=-2,cpus=1" },
		{ "bg", "max=none", 1, RGROUP__RUN_MAX, "cpus=0-1" },
		{ "bg/x", "cpus=none,max=20%", 1, RGROUP__RUN_CPUS | RGROUP__RUN_MAX, "nice=3,max=20%" },
		{ "fg", "cpus=0,max=150%,nice=1", 1, RGROUP__RUN_NICE | RGROUP__RUN_CPUS | RGROUP__RUN_MAX,
		  "nice=1,cpus=0,max=150%" },
		{ "bg", "cpus=0", -EINVAL, 0, "not within cpus=0 of 'bg'" },   /* its child has 1 */
		{ "bg/x", "max=60%", -EINVAL, 0, "above the cap of 'bg'" },
		{ "bg/x", "nice=none", -EINVAL, 0, "whole number" },
		{ "bg", "nise=1", -EINVAL, 0, "unknown setting 'nise'" },
		{ "bg", "nice=1,nice=2", -EINVAL, 0, "given twice" },
		{ "nosuch", "nice=1", -ENOENT, 0, "no group 'nosuch'" },
		{ "bg/", "nice=1", -ENOENT, 0, "no group" },
	};
	char err[512], set[256];

	(void)state;
	assert_int_equal(add_all(&R, specs, ARRAY_SIZE(specs), err, sizeof(err)), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned int what = 0;
		int r, g;

		err[0] = set[0] = '\0';
		memset(&C, 0xa5, sizeof(C));
		r = rgroup__run_change(&R, &C, cases[i].path, cases[i].settings, &what, err, sizeof(err));
		if (cases[i].ok == 1) {
			if (r < 0)
				fail_msg("case %zu (%s %s): got %d '%s'", i, cases[i].path, cases[i].settings, r, err);
			g = r;
			assert_string_equal(C.groups[g].path, cases[i].path);
			assert_int_equal(what, cases[i].what);
			rgroup__run_format_settings(&C.groups[g], set, sizeof(set));
			if (strcmp(set, cases[i].words) != 0)
				fail_msg("case %zu (%s %s): settings '%s', want '%s'", i, cases[i].path,
					 cases[i].settings, set, cases[i].words);
			/* Only that group changed. */
			for (unsigned int k = 0; k < R.ngroups; k++)
				if ((int)k != g && memcmp(&C.groups[k], &R.groups[k], sizeof(C.groups[k])) != 0)
					fail_msg("case %zu: group %u changed too", i, k);
		} else if (r != cases[i].ok || !strstr(err, cases[i].words)) {
			fail_msg("case %zu (%s %s): got %d '%s', want %d '%s'", i, cases[i].path,
				 cases[i].settings, r, err, cases[i].ok, cases[i].words);
		}
	}
	/* The rules themselves never change. */
	rgroup__run_format_settings(&R.groups[0], set, sizeof(set));
	assert_string_equal(set, "cpus=0-1,max=50%");
}

/* ---- Matching: thread names of real programs ------------------------------- */

static void test_match(void **state)
{
	const char *specs[] = {
		"vcpu/even=CPU [02468]/TCG",
		"vcpu/odd=CPU */TCG",         /* after even: the first match wins */
		"jit=C[12] CompilerThre*",
		"gc=GC Thread#*,G1 Conc#*",
		"db/low=rocksdb:low*",
	};
	static const struct { const char *name, *group; } cases[] = {
		{ "CPU 0/TCG", "vcpu/even" },
		{ "CPU 1/TCG", "vcpu/odd" },
		{ "CPU 12/TCG", "vcpu/odd" },
		{ "C2 CompilerThre", "jit" },     /* "C2 CompilerThread0" as the kernel keeps it */
		{ "C1 CompilerThre", "jit" },
		{ "GC Thread#0", "gc" },
		{ "G1 Conc#0", "gc" },
		{ "rocksdb:low", "db/low" },
		{ "rocksdb:high", NULL },
		{ "qemu-system-x86", NULL },
		{ "", NULL },
	};
	char err[256];

	assert_int_equal(add_all(&R, specs, ARRAY_SIZE(specs), err, sizeof(err)), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int g = rgroup__run_match(&R, cases[i].name);
		if (cases[i].group ? g < 0 || strcmp(R.groups[g].path, cases[i].group) : g >= 0)
			fail_msg("'%s' matched %s, want %s", cases[i].name, g < 0 ? "nothing" : R.groups[g].path,
				 cases[i].group ? cases[i].group : "nothing");
	}
}

/* ---- A config file, and the round trip through the environment ------------ */

static void test_text_and_roundtrip(void **state)
{
	static struct rgroup__run_rules back;
	static const char file[] =
		"# rgroup run rules for a database\n"
		"\n"
		"  # indented comment\n"
		"fg=query*:nice=-0\n"
		"bg/compaction=rocksdb:low*, compact*  :nice=10,cpus=1,max=50%\n"
		"bg:cpus=0-1,max=150%\n"
		"odd=a\\,b,c\\:d,e\\*f,sp\\ ,x[,:],[[:digit:]][]:]\n"
		"bg/flush=rocksdb:high:max=12500/100000\r\n"
		"gc=GC Thread#*, worker \\#*:nice=5   # a comment after a rule\n";
	char err[256], text[4096], again[4096];
	int n;

	rgroup__run_init(&R);
	assert_int_equal(rgroup__run_add_text(&R, file, "db.conf", err, sizeof(err)), 0);
	assert_int_equal(rgroup__run_check(&R, err, sizeof(err)), 0);
	assert_int_equal(R.nrules, 6);
	/* A blank before ':' or after ',' belongs to the pattern. */
	assert_string_equal(R.patterns[1].glob, "rocksdb:low*");
	assert_string_equal(R.patterns[2].glob, " compact*  ");
	/* '#' after a blank starts a comment, unless escaped */
	assert_string_equal(R.patterns[R.npatterns - 2].glob, "GC Thread#*");
	assert_int_equal(fnmatch(R.patterns[R.npatterns - 1].glob, " worker #1", 0), 0);
	assert_int_equal(R.groups[R.ngroups - 1].nice, 5);
	n = rgroup__run_format(&R, text, sizeof(text));
	assert_true(n > 0);
	rgroup__run_init(&back);
	if (rgroup__run_add_text(&back, text, "env", err, sizeof(err)) < 0)
		fail_msg("reading back:\n%s\n-> %s", text, err);
	assert_int_equal(back.ngroups, R.ngroups);
	assert_int_equal(back.npatterns, R.npatterns);
	for (unsigned int i = 0; i < R.npatterns; i++) {
		assert_string_equal(back.patterns[i].glob, R.patterns[i].glob);
		assert_string_equal(back.groups[back.patterns[i].group].path,
				    R.groups[R.patterns[i].group].path);
	}
	for (unsigned int i = 0; i < R.ngroups; i++) {
		const struct rgroup__run_group *a = &R.groups[i], *b = group(a->path);
		assert_int_equal(rgroup__run_format_settings(a, text, sizeof(text)) >= 0, 1);
		assert_int_equal(rgroup__run_format_settings(&back.groups[i], again, sizeof(again)) >= 0, 1);
		assert_string_equal(back.groups[i].path, a->path);
		assert_string_equal(text, again);
		(void)b;
	}
	/* Too small a buffer says so. */
	assert_int_equal(rgroup__run_format(&R, text, 10), -ENAMETOOLONG);

	/* An error names the file and the line. */
	rgroup__run_init(&R);
	assert_int_equal(rgroup__run_add_text(&R, "# x\nok=a\nbad=[\n", "f.conf", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "f.conf:3: rule 2"));
}

static void test_cpus_format(void **state)
{
	static const char *const lists[] = { "0", "0-3", "0,2-3,7", "1023", "0-1023" };
	char err[128], out[4096];
	cpu_set_t s;

	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		assert_int_equal(rgroup__run_parse_cpus(lists[i], lists[i] + strlen(lists[i]), &s, err, sizeof(err)), 0);
		assert_true(rgroup__run_format_cpus(&s, out, sizeof(out)) > 0);
		assert_string_equal(out, lists[i]);
	}
	assert_int_equal(rgroup__run_parse_cpus("0-3", "0-3" + 3, &s, err, sizeof(err)), 0);
	assert_int_equal(rgroup__run_format_cpus(&s, out, 3), -ENAMETOOLONG);
}

/* The names file's name: the exact form the preload writes, nothing else. */
static void test_names_name(void **state)
{
	static const char *const bad[] = {
		"rgroup-12-34.state", "rgroup-12-34.names.x", "rgroup-012-34.names",
		"rgroup--12-34.names", "rgroup-+12-34.names", "rgroup-12-34.names ", "rgroup-12.names",
		"rgroup-0-34.names", "rgroup-12-034.names", "xrgroup-12-34.names", "rgroup-12-34",
	};
	char out[64];
	pid_t pid;
	uint64_t start;
	int tmp;

	assert_int_equal(rgroup__run_names_name(out, sizeof(out), 12, 34, 0), 0);
	assert_string_equal(out, "rgroup-12-34.names");
	assert_int_equal(rgroup__run_parse_names_name(out, &pid, &start, &tmp), 0);
	assert_true(pid == 12 && start == 34 && !tmp);
	assert_int_equal(rgroup__run_names_name(out, sizeof(out), 12, 34, 1), 0);
	assert_string_equal(out, "rgroup-12-34.names.tmp");
	assert_int_equal(rgroup__run_parse_names_name(out, &pid, &start, &tmp), 0);
	assert_true(tmp);
	assert_int_equal(rgroup__run_names_name(out, 10, 12, 34, 0), -ENAMETOOLONG);
	assert_int_equal(rgroup__run_names_name(out, sizeof(out), 0, 34, 0), -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rgroup__run_parse_names_name(bad[i], &pid, &start, &tmp), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_brief_example),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_duplicates_and_limits),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_change),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_text_and_roundtrip),
		cmocka_unit_test(test_cpus_format),
		cmocka_unit_test(test_names_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
