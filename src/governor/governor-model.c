/* SPDX-License-Identifier: MIT */
/* governor-model.c - the reference model (model.c) compiled into the
 * library under internal names, for the governor (governor-model.h). */
#include "governor-model.h"
#include "model.c"
