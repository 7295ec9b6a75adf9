/* SPDX-License-Identifier: MIT */
/*
 * bench.h - figures of the benchmark suite: paired A/B blocks, medians and
 * spread, printed as a table row and as one machine-readable line.
 *
 * Every figure is a ratio (or a value) measured side by side in one run:
 * blocks of A and B alternate (A B B A A B ...) so that the noise of this
 * shared machine falls on both; the per-block ratios A_i/B_i are sorted and
 * reported as median, p25..p75 and min..max.
 *
 * Each figure is printed twice on stdout: as a table row for people, and as
 * a line "RGBENCH {json}" that scripts/bench.sh collects into the JSON file.
 */
#ifndef RGROUP_BENCH_H
#define RGROUP_BENCH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *bench_backend = "?";
static const char *bench_mode = "";

static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct bench_stats {
	double median, p25, p75, min, max, mean;
	int n;
};

/* Sorts v in place. */
static inline struct bench_stats bench_stats(double *v, int n)
{
	struct bench_stats s = { 0 };
	if (n <= 0)
		return s;
	qsort(v, n, sizeof(*v), bench_cmp);
	s.n = n;
	s.min = v[0];
	s.max = v[n - 1];
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.p25 = v[(n - 1) / 4];
	s.p75 = v[(3 * (n - 1) + 3) / 4];
	for (int i = 0; i < n; i++)
		s.mean += v[i];
	s.mean /= n;
	return s;
}

/* Target check: "le" met when value <= target, "ge" when >=, "" none. */
static inline int bench_met(const char *cmp, double value, double target)
{
	if (!strcmp(cmp, "le"))
		return value <= target;
	if (!strcmp(cmp, "ge"))
		return value >= target;
	return -1;
}

static inline void bench_header(const char *title)
{
	printf("\n== %s [backend %s] ==\n", title, bench_backend);
	printf("%-44s %10s %21s %21s %8s %s\n", "figure", "median", "spread p25..p75",
	       "min..max", "target", "met");
}

/*
 * One figure. `section` and `name` identify it; `unit` says what the value
 * is ("ratio", "us", "%", "threads/s", "bytes", "s"); `extra` is a JSON
 * fragment (without braces) with the raw inputs, or NULL.
 */
static inline void bench_emit(const char *section, const char *name, const char *unit,
			      struct bench_stats s, const char *cmp, double target,
			      const char *extra)
{
	int met = bench_met(cmp, s.median, target);
	char tg[32] = "-", sp[48], mm[48];

	if (met >= 0)
		snprintf(tg, sizeof(tg), "%s%g", !strcmp(cmp, "le") ? "<=" : ">=", target);
	snprintf(sp, sizeof(sp), "%.3g..%.3g", s.p25, s.p75);
	snprintf(mm, sizeof(mm), "%.3g..%.3g", s.min, s.max);
	printf("%-44s %10.4g %21s %21s %8s %s\n", name, s.median, s.n > 1 ? sp : "-",
	       s.n > 1 ? mm : "-", tg, met < 0 ? "" : met ? "yes" : "NO");
	printf("RGBENCH {\"backend\":\"%s\",\"section\":\"%s\",\"name\":\"%s\",\"unit\":\"%s\","
	       "\"median\":%.6g,\"p25\":%.6g,\"p75\":%.6g,\"min\":%.6g,\"max\":%.6g,\"mean\":%.6g,\"n\":%d",
	       bench_backend, section, name, unit, s.median, s.p25, s.p75, s.min, s.max, s.mean, s.n);
	if (met >= 0)
		printf(",\"target\":\"%s\",\"met\":%s", tg, met ? "true" : "false");
	if (extra && *extra)
		printf(",%s", extra);
	printf("}\n");
	fflush(stdout);
}

/* A single value (no spread). */
static inline void bench_emit1(const char *section, const char *name, const char *unit,
			       double v, const char *cmp, double target, const char *extra)
{
	struct bench_stats s = { v, v, v, v, v, v, 1 };
	bench_emit(section, name, unit, s, cmp, target, extra);
}

#endif /* RGROUP_BENCH_H */
