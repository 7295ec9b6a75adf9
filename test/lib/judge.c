/* SPDX-License-Identifier: MIT */
/* judge.c - the one rule for CPU-share tests (judge.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "judge.h"
#include "util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[RGT_JUDGE_WINDOWS];

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int rgt_judge_within(double got, double want)
{
	return fabs(got - want) <= RGT_JUDGE_POINTS + RGT_JUDGE_REL * fabs(want);
}

int rgt_judge(const struct rgt_judge *j, double *cpus_out)
{
	double window = j->window_s > 0 ? j->window_s : RGT_JUDGE_WINDOW_S;
	double deadline = scn_now() + (j->deadline_s > 0 ? j->deadline_s : RGT_JUDGE_DEADLINE_S);
	double got[RGT_JUDGE_MAX][RGT_JUDGE_WINDOWS], want[RGT_JUDGE_MAX][RGT_JUDGE_WINDOWS];
	double cpus[RGT_JUDGE_WINDOWS], c0[RGT_JUDGE_MAX], c1[RGT_JUDGE_MAX], b0, b1, t0, t1;
	int kept = 0, windows = 0, off = 0;

	if (j->read(j->ctx, c0, &b0) < 0)
		b0 = -1;
	t0 = scn_now();
	while (kept < RGT_JUDGE_WINDOWS && scn_now() < deadline) {
		double w[RGT_JUDGE_MAX], dt, dbase, set_cpus = 0;
		int ok;

		scn_sleep(window);
		ok = j->read(j->ctx, c1, &b1) == 0 && b0 >= 0;
		t1 = scn_now();
		windows++;
		dt = t1 - t0;
		dbase = b1 - b0;
		if (ok && !j->rate) {
			set_cpus = dbase / dt;
			ok = dbase > 0 && set_cpus >= j->min_cpus;
		} else if (ok) {
			for (int i = 0; i < j->n; i++)
				set_cpus += (c1[i] - c0[i]) / dt;
			ok = set_cpus >= j->min_cpus;
		}
		if (ok) {
			if (j->expect)
				j->expect(j->ctx, set_cpus, w);
			else
				memcpy(w, j->fixed, sizeof(double) * (size_t)j->n);
			for (int i = 0; i < j->n; i++) {
				double d = c1[i] - c0[i];

				got[i][kept] = j->rate ? d / dt : d / dbase;
				want[i][kept] = w[i];
			}
			cpus[kept++] = set_cpus;
		}
		memcpy(c0, c1, sizeof(c0));
		b0 = b1;
		t0 = t1;
	}

	fprintf(stderr, "  %s: %d of %d windows of %.1f s kept (the set got at least %.2f CPUs)\n",
		j->what, kept, windows, window, j->min_cpus);
	if (kept < RGT_JUDGE_WINDOWS) {
		rgt_skip_case("%s: the measured set got %.2f CPUs or more in only %d of %d windows "
			      "before the deadline: too little CPU to judge a split",
			      j->what, j->min_cpus, kept, windows);
		return -1;
	}
	for (int i = 0; i < j->n; i++) {
		double g = median(got[i], kept), e = median(want[i], kept);
		double tol = RGT_JUDGE_POINTS + RGT_JUDGE_REL * fabs(e);
		int bad = !rgt_judge_within(g, e);
		char list[128] = "";

		for (int k = 0; k < kept; k++) {
			size_t l = strlen(list);
			snprintf(list + l, sizeof(list) - l, "%s%.3f", k ? " " : "", got[i][k]);
		}
		fprintf(stderr, "  %-26s median %.4f expected %.4f: off %.4f, tolerance %.4f "
			"(windows %s)%s\n", j->label[i], g, e, fabs(g - e), tol, list,
			bad ? "  <-- FAIL" : "");
		off += bad;
	}
	CHECK(off == 0, "%s: %d of %d entities off the expected split", j->what, off, j->n);
	if (cpus_out)
		*cpus_out = median(cpus, kept);
	return off;
}
