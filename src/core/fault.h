/* SPDX-License-Identifier: MIT */
/*
 * fault.h - fault injection, only in the test variant of the library.
 *
 * Every cgroupfs helper, and the core's allocation and thread creation, ask
 * rgroup__fault() first: in the library it is nothing; in the test variant
 * (built with RGROUP_FAULT_INJECTION, test/system/test-faults.c) the Nth
 * call returns the armed error.
 *
 * The governor's own failure points are sites of their own, armed one at a
 * time (test/system/test-gov-faults.c): its thread reaches them at times of
 * its own, so one count shared with the caller's calls would not say which
 * call fails.
 */
#ifndef RGROUP_FAULT_H
#define RGROUP_FAULT_H

enum rgroup__fault_site {
	RGROUP__FAULT_GOV_SIGNAL,       /* installing the governor's handler */
	RGROUP__FAULT_GOV_THREAD,       /* starting the governor's thread */
	RGROUP__FAULT_GOV_TIMER,        /* timer_create for a governed thread */
	RGROUP__FAULT_GOV_MMAP,         /* growing one of the governor's arrays */
	RGROUP__FAULT_GOV_SIGQUEUE,     /* sending a thread its pause */
	RGROUP__FAULT_NSITES
};

#ifdef RGROUP_FAULT_INJECTION
int rgroup__fault(void);
void rgroup__fault_arm(long nth, int err);   /* nth < 0: disarm */
long rgroup__fault_left(void);               /* < 0: it has fired */
/* From the nth call at site on, `count` calls fail with err (count < 0:
 * every one until disarmed with nth < 0). */
int rgroup__fault_site(int site);
void rgroup__fault_arm_site(int site, long nth, long count, int err);
long rgroup__fault_site_fired(int site);     /* failures injected there */
#else
static inline int rgroup__fault(void)
{
	return 0;
}

static inline int rgroup__fault_site(int site)
{
	(void)site;
	return 0;
}
#endif

#endif /* RGROUP_FAULT_H */
