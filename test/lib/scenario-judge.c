/* SPDX-License-Identifier: MIT */
/*
 * scenario-judge.c - the running scenario (src/scenario/scenario.h)
 * judged by the tests' one rule (judge.h): rgt_scn_judge().
 */
#include "judge.h"
#include "scenario.h"
#include "sgroup.h"

struct judge_ctx {
	int node[RGT_JUDGE_MAX];
	double cpus;
};

static int judge_read(void *ctx, double *cpu, double *base)
{
	const struct scn_table *sc = scn_cur.sc;
	struct judge_ctx *jc = ctx;
	double v[SCN_MAX];

	scn_read(v);
	*base = 0;
	for (int i = 1; i < sc->count; i++)
		if (sc->n[i].parent == 0)
			*base += scn_subtree(v, i);
	for (int k = 0; k < RGT_JUDGE_MAX && jc->node[k]; k++)
		cpu[k] = scn_subtree(v, jc->node[k]);
	return 0;
}

static void judge_expect(void *ctx, double cpus, double *want)
{
	struct judge_ctx *jc = ctx;
	struct model m;
	int mi[SCN_MAX];

	scn_model(&m, mi);
	model_run(&m, cpus < jc->cpus ? cpus : jc->cpus);
	for (int k = 0; k < RGT_JUDGE_MAX && jc->node[k]; k++)
		want[k] = model_fraction(&m, mi[jc->node[k]]);
}

int rgt_scn_judge(const char *what, double cpus, double min_cpus, double window_s,
		  double *got_cpus)
{
	const struct scn_table *sc = scn_cur.sc;
	struct judge_ctx jc = { .cpus = cpus };
	struct rgt_judge j = {
		.what = what, .read = judge_read, .expect = judge_expect, .ctx = &jc,
		.min_cpus = min_cpus, .window_s = window_s,
	};

	for (int i = 1; i < sc->count && j.n < RGT_JUDGE_MAX; i++) {
		if (sc->n[i].kind != 'G' && sc->n[i].parent != 0)
			continue;
		jc.node[j.n] = i;
		j.label[j.n++] = sc->n[i].label;
	}
	return rgt_judge(&j, got_cpus);
}
