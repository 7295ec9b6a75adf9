/* SPDX-License-Identifier: MIT */
/* model-lib.c - model.c compiled into the library under internal names. */
#include "model-lib.h"
#include "model.c"
