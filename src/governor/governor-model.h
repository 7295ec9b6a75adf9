/* SPDX-License-Identifier: MIT */
/*
 * governor-model.h - the library's own copy of the reference model (model.c),
 * under internal names: the governor divides CPU time by it, and programs
 * that link both the static library and the model (tests, the demo) must
 * not see two definitions of model_solve(). Only the solver: the library
 * never prints, and it builds no model of its own.
 */
#ifndef RGROUP_GOVERNOR_MODEL_H
#define RGROUP_GOVERNOR_MODEL_H

#define RGROUP_MODEL_SOLVER_ONLY
#define model_solve    rgroup__model_solve
#include "model.h"

#endif
