/* SPDX-License-Identifier: MIT */
/*
 * fault.h - fault injection, only in the test variant of the library.
 *
 * Every cgroupfs helper, and the core's allocation and thread creation, ask
 * rgroup__fault() first: in the library it is nothing; in the test variant
 * (built with RGROUP_FAULT_INJECTION, test/system/test-faults.c) the Nth
 * call returns the armed error.
 */
#ifndef RGROUP_FAULT_H
#define RGROUP_FAULT_H

#ifdef RGROUP_FAULT_INJECTION
int rgroup__fault(void);
void rgroup__fault_arm(long nth, int err);   /* nth < 0: disarm */
long rgroup__fault_left(void);               /* < 0: it has fired */
#else
static inline int rgroup__fault(void)
{
	return 0;
}
#endif

#endif /* RGROUP_FAULT_H */
