/* SPDX-License-Identifier: MIT */
/*
 * fault.h - fault injection, only in the test variant of the library.
 *
 * Every cgroupfs helper, and the core's allocation and thread creation, ask
 * rgroup__fault() first: in the library it is nothing; in the test variant
 * (built with RGROUP_FAULT_INJECTION, test/system/test-faults.c) the Nth
 * call returns the armed error.
 *
 * A backend's own failure points are sites of their own, armed one at a
 * time: a backend's thread (the governor's) reaches them at times of its
 * own, so one count shared with the caller's calls would not say which
 * call fails. The backend numbers its sites 0..RGROUP__FAULT_MAX_SITES-1
 * in a header of its own (governor-faults.h).
 */
#ifndef RGROUP_FAULT_H
#define RGROUP_FAULT_H

#define RGROUP__FAULT_MAX_SITES 8

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
