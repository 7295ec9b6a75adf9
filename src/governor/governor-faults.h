/* SPDX-License-Identifier: MIT */
/*
 * governor-faults.h - the governor's fault injection sites (fault.h), for
 * the test variant of the library and test/system/test-gov-faults.c.
 */
#ifndef RGROUP_GOVERNOR_FAULTS_H
#define RGROUP_GOVERNOR_FAULTS_H

#include "fault.h"

enum rgroup__gov_fault_site {
	RGROUP__FAULT_GOV_SIGNAL,       /* installing the governor's handler */
	RGROUP__FAULT_GOV_THREAD,       /* starting the governor's thread */
	RGROUP__FAULT_GOV_TIMER,        /* timer_create for a governed thread */
	RGROUP__FAULT_GOV_MMAP,         /* growing one of the governor's arrays */
	RGROUP__FAULT_GOV_SIGQUEUE,     /* sending a thread its pause */
	RGROUP__FAULT_GOV_NSITES
};

_Static_assert(RGROUP__FAULT_GOV_NSITES <= RGROUP__FAULT_MAX_SITES,
	       "fault.h has room for every site");

#endif /* RGROUP_GOVERNOR_FAULTS_H */
