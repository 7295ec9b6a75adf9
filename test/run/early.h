/* SPDX-License-Identifier: MIT */
/* early.h - what early.c's constructor did, one "call result" per line. */
#ifndef RGROUP_TEST_EARLY_H
#define RGROUP_TEST_EARLY_H
extern char early_log[4096];
#endif
