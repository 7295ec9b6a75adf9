/* SPDX-License-Identifier: MIT */
/*
 * fault.c - fault injection for the test variant of the library (never in
 * the installed one): the Nth call of rgroup__fault() returns -err.
 */
#include "fault.h"

static long countdown = -1;
static int error;

void rgroup__fault_arm(long nth, int err)
{
	__atomic_store_n(&error, err, __ATOMIC_RELAXED);
	__atomic_store_n(&countdown, nth, __ATOMIC_RELEASE);
}

long rgroup__fault_left(void)
{
	return __atomic_load_n(&countdown, __ATOMIC_ACQUIRE);
}

int rgroup__fault(void)
{
	if (__atomic_load_n(&countdown, __ATOMIC_ACQUIRE) < 0)
		return 0;
	/* Several threads may call at once: exactly one sees zero. */
	if (__atomic_sub_fetch(&countdown, 1, __ATOMIC_ACQ_REL) == 0)
		return -__atomic_load_n(&error, __ATOMIC_RELAXED);
	return 0;
}
