/* SPDX-License-Identifier: MIT */
/*
 * fuzz-spec.c - the rules of `rgroup run` (src/run/run-spec.c), which the
 * preload reads from its environment: a failed rule changes nothing;
 * whatever is accepted is well-formed (parents before children, every
 * glob checkable, CPU sets and caps in range) and survives the round trip
 * through rgroup__run_format(). The first byte picks one rule or a file.
 */
#include <stdio.h>

#include "fuzz.h"
#include "run-spec.h"

static struct rgroup__run_rules rules, back;

static void check_well_formed(const struct rgroup__run_rules *r)
{
	FUZZ_ASSERT(r->ngroups <= RGROUP__RUN_MAX_GROUPS);
	FUZZ_ASSERT(r->npatterns <= RGROUP__RUN_MAX_PATTERNS);
	for (unsigned int i = 0; i < r->ngroups; i++) {
		const struct rgroup__run_group *g = &r->groups[i];
		FUZZ_ASSERT(g->parent < (int)i);
		FUZZ_ASSERT(g->depth >= 1 && g->depth <= RGROUP__RUN_MAX_DEPTH);
		FUZZ_ASSERT((g->parent < 0) == (g->depth == 1));
		FUZZ_ASSERT(g->parent < 0 || r->groups[g->parent].depth + 1 == g->depth);
		FUZZ_ASSERT(memchr(g->path, '\0', sizeof(g->path)) && g->path[0]);
		FUZZ_ASSERT(!g->has_nice || (g->nice >= -20 && g->nice <= 19));
		FUZZ_ASSERT(!g->has_cpus || CPU_COUNT(&g->cpus) > 0);
		FUZZ_ASSERT(!g->quota_us || (g->quota_us >= 1000 && g->period_us >= 1000 &&
					     g->period_us <= 1000000));
		FUZZ_ASSERT(g->origin <= r->nrules);
	}
	for (unsigned int i = 0; i < r->npatterns; i++) {
		FUZZ_ASSERT(r->patterns[i].group >= 0 && (unsigned int)r->patterns[i].group < r->ngroups);
		FUZZ_ASSERT(rgroup__run_check_glob(r->patterns[i].glob, NULL, 0) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[1 << 16];
	char err[512], *text;
	unsigned int ng, np, nr;
	int r;

	if (size < 1)
		return 0;
	text = fuzz_text(data + 1, size - 1);
	rgroup__run_init(&rules);
	if (data[0] & 1) {
		r = rgroup__run_add_text(&rules, text, "fuzz", err, sizeof(err));
	} else {
		/* Two rules, so that the second meets the first's groups. */
		char *nl = strchr(text, '\n');
		if (nl)
			*nl = '\0';
		r = rgroup__run_add(&rules, text, err, sizeof(err));
		ng = rules.ngroups, np = rules.npatterns, nr = rules.nrules;
		if (nl) {
			int r2 = rgroup__run_add(&rules, nl + 1, err, sizeof(err));
			FUZZ_ASSERT(r2 == 0 || r2 == -EINVAL || r2 == -EEXIST || r2 == -ENOSPC);
			if (r2 < 0)  /* a failed rule changes nothing */
				FUZZ_ASSERT(rules.ngroups == ng && rules.npatterns == np &&
					    rules.nrules == nr);
		}
	}
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -EEXIST || r == -ENOSPC);
	check_well_formed(&rules);
	rgroup__run_check(&rules, err, sizeof(err));
	rgroup__run_match(&rules, "CPU 0/TCG");
	if (rgroup__run_format(&rules, out, sizeof(out)) >= 0) {
		rgroup__run_init(&back);
		FUZZ_ASSERT(rgroup__run_add_text(&back, out, "again", err, sizeof(err)) == 0);
		FUZZ_ASSERT(back.npatterns == rules.npatterns);
		for (unsigned int i = 0; i < back.npatterns; i++)
			FUZZ_ASSERT(strcmp(back.patterns[i].glob, rules.patterns[i].glob) == 0);
	}
	free(text);
	return 0;
}
