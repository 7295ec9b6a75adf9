/* SPDX-License-Identifier: MIT */
/*
 * weight.c - the scheduler's nice-to-weight table and the cgroup v2
 * weight scale.
 *
 * A nice value must mean the same for an rgroup as for a task (rule 5), so
 * the table is the kernel's sched_prio_to_weight[] (kernel/sched/core.c):
 * nice 0 is 1024 and each step is about 1.25x, which makes a task ~10%
 * more or less CPU time per nice level against a nice-0 neighbour.
 */
#include <stdint.h>

#include "weight.h"

static const unsigned int prio_to_weight[RGROUP__NICE_MAX - RGROUP__NICE_MIN + 1] = {
	/* -20 */ 88761, 71755, 56483, 46273, 36291,
	/* -15 */ 29154, 23254, 18705, 14949, 11916,
	/* -10 */  9548,  7620,  6100,  4904,  3906,
	/*  -5 */  3121,  2501,  1991,  1586,  1277,
	/*   0 */  1024,   820,   655,   526,   423,
	/*   5 */   335,   272,   215,   172,   137,
	/*  10 */   110,    87,    70,    56,    45,
	/*  15 */    36,    29,    23,    18,    15,
};

/* setpriority(2) clamps out-of-range nice values rather than failing. */
int rgroup__clamp_nice(int nice)
{
	if (nice < RGROUP__NICE_MIN)
		return RGROUP__NICE_MIN;
	if (nice > RGROUP__NICE_MAX)
		return RGROUP__NICE_MAX;
	return nice;
}

unsigned int rgroup__nice_to_weight(int nice)
{
	return prio_to_weight[rgroup__clamp_nice(nice) - RGROUP__NICE_MIN];
}

/*
 * cgroup v2 cpu.weight (1..10000, 100 = nice 0) nearest a kernel weight.
 * The kernel turns cpu.weight w into the weight w * 1024 / 100 rounded to
 * the closest integer (sched_weight_from_cgroup); this is the inverse with
 * the same rounding, so that writing the result gives back the closest
 * weight the cgroup v2 scale can express. Out-of-range results are
 * clamped, as the kernel clamps them.
 */
unsigned int rgroup__weight_to_cgroup2(unsigned int weight)
{
	uint64_t w = ((uint64_t)weight * 100 + 512) / 1024;

	if (w < 1)
		return 1;
	if (w > 10000)
		return 10000;
	return (unsigned int)w;
}
