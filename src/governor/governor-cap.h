/* SPDX-License-Identifier: MIT */
/*
 * governor-cap.h - rule 10's CPU cap on the governor backend
 * (governor-cap.c): the governor's rounds divide CPU time, they do not
 * bound it in wall time, so a cap keeps its own periods. The governor
 * thread calls rgroup__gov_cap_poll() every time it wakes (every 2 to 8
 * ms); the threads of a group that has used its quota for the period get
 * the governor's signal with a negative value and wait in the handler
 * until the period ends. What backend-governor.c calls:
 */
#ifndef RGROUP_GOVERNOR_CAP_H
#define RGROUP_GOVERNOR_CAP_H

#include <stdint.h>
#include <sys/types.h>

#include "rgroup.h"

/* The governor thread, every wake-up; takes the core lock only with
 * trylock, allocates nothing. A group at its cap gets its pauses through
 * send(tid, value): the governor's signal, with a value < 0. */
void rgroup__gov_cap_poll(void (*send)(pid_t tid, int value));
/* A cap changed (core lock held): re-read the tree at the next poll. */
void rgroup__gov_cap_changed(void);
/* The signal handler, for a value < 0 (async-signal-safe): pause now, or
 * leave a token while the thread holds the library's lock. */
void rgroup__gov_cap_signal(int value);
/* A thread leaving the library's lock with a token < 0 from above. */
void rgroup__gov_cap_pause(int value);
/* The time group id's members waited at its cap since the last call
 * (summed over the members), for its throttled time. */
uint64_t rgroup__gov_cap_take_paused(rgroup_id_t id);
/* The governor stops: every paused thread goes on, nothing is kept. */
void rgroup__gov_cap_stop(void);
/* Fork child (async-signal-safe): no cap state. */
void rgroup__gov_cap_fork_child(void);

#endif /* RGROUP_GOVERNOR_CAP_H */
