/* SPDX-License-Identifier: MIT */
/*
 * preload.h - what the parts of librgroup-preload.so share:
 *
 *   preload.c          loading, the wrappers, putting named threads into
 *                      their groups, fork and exec, the report at exit
 *   preload-names.c    the names file, the rules' names of the live
 *                      groups for `rgroup tree` and `rgroup top`
 *   preload-control.c  `rgroup set`: the thread that answers on the
 *                      process's control socket (control.h)
 *
 * None of it is exported (the build hides every symbol but the wrappers).
 */
#ifndef RGROUP_PRELOAD_H
#define RGROUP_PRELOAD_H

#include <pthread.h>
#include <stdint.h>

#include "run-spec.h"
#include "tree.h"

/* The rules, and per group its settings and the id of its rgroup while
 * it lives. Read and written only with preload_mu held (entries are
 * serialized); the rules change only through `rgroup set`. */
extern struct rgroup__run_rules preload_rules;
extern struct rgroup__level preload_levels[RGROUP__RUN_MAX_GROUPS];
extern pthread_mutex_t preload_mu;
extern int preload_verbose;     /* -v: say where threads go */

/* One line "rgroup run: ..." on stderr, in one write. */
void preload_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* This process's start time (/proc/self/stat field 22): 0 or -1. */
int preload_self_start(uint64_t *start);

/* Set l's settings from a rule's group g (l's id stays). */
void preload_level_settings(struct rgroup__level *l, const struct rgroup__run_group *g);

/* Why a group refused a setting, for a message: " (...)" or "". */
const char *preload_why(int err);

/* ---- preload-names.c ---- */

/* Write the names of the live groups (preload_mu held); best effort. */
void names_publish(void);
/* Did this process (not a vfork child sharing its memory) write one? */
int names_written(void);
/* Remove this process's names file (before an exec, at exit). */
void names_remove(void);

/* ---- preload-control.c ---- */

/* From the environment, as the preload loads: RGROUP_RUN_CONTROL=0 is
 * --no-control. */
void control_init(void);
/* Start answering, once per process, before its first entry into a
 * group (preload_mu held). */
void control_start(void);
/* In a fork child (preload_mu held): the parent's socket is not its own. */
void control_fork_child(void);

#endif /* RGROUP_PRELOAD_H */
