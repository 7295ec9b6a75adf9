/* SPDX-License-Identifier: MIT */
/*
 * model-lib.h - the library's own copy of the reference model (model.c),
 * under internal names: the governor divides CPU time by it, and programs
 * that link both the static library and the model (tests, the demo) must
 * not see two definitions of model_solve().
 */
#ifndef RGROUP_MODEL_LIB_H
#define RGROUP_MODEL_LIB_H

#define model_init     rgroup__model_init
#define model_add      rgroup__model_add
#define model_solve    rgroup__model_solve
#define model_run      rgroup__model_run
#define model_fraction rgroup__model_fraction
#define model_print    rgroup__model_print
#include "model.h"

#endif
