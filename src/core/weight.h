/* SPDX-License-Identifier: MIT */
/* weight.h - the scheduler's nice-to-weight table (weight.c). */
#ifndef RGROUP_WEIGHT_H
#define RGROUP_WEIGHT_H

#define RGROUP__NICE_MIN (-20)
#define RGROUP__NICE_MAX 19

int rgroup__clamp_nice(int nice);
unsigned int rgroup__nice_to_weight(int nice);
/* cgroup v2 cpu.weight (1..10000, 100 = nice 0) nearest a kernel weight. */
unsigned int rgroup__weight_to_cgroup2(unsigned int weight);

#endif /* RGROUP_WEIGHT_H */
