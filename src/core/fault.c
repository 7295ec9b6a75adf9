/* SPDX-License-Identifier: MIT */
/*
 * fault.c - fault injection for the test variant of the library (never in
 * the installed one): the Nth call of rgroup__fault() returns -err; the
 * governor's sites fail from their nth call on.
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

static struct {
	long calls;       /* since armed */
	long from, count; /* from < 0: disarmed */
	long fired;
	int err;
} sites[RGROUP__FAULT_MAX_SITES];

void rgroup__fault_arm_site(int site, long nth, long count, int err)
{
	__atomic_store_n(&sites[site].from, -1, __ATOMIC_RELEASE);
	__atomic_store_n(&sites[site].calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sites[site].fired, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sites[site].count, count, __ATOMIC_RELAXED);
	__atomic_store_n(&sites[site].err, err, __ATOMIC_RELAXED);
	__atomic_store_n(&sites[site].from, nth, __ATOMIC_RELEASE);
}

long rgroup__fault_site_fired(int site)
{
	return __atomic_load_n(&sites[site].fired, __ATOMIC_ACQUIRE);
}

int rgroup__fault_site(int site)
{
	long from = __atomic_load_n(&sites[site].from, __ATOMIC_ACQUIRE), n, count;

	if (from < 0)
		return 0;
	n = __atomic_add_fetch(&sites[site].calls, 1, __ATOMIC_ACQ_REL);
	count = __atomic_load_n(&sites[site].count, __ATOMIC_RELAXED);
	if (n < from || (count >= 0 && n >= from + count))
		return 0;
	__atomic_add_fetch(&sites[site].fired, 1, __ATOMIC_ACQ_REL);
	return -__atomic_load_n(&sites[site].err, __ATOMIC_RELAXED);
}
