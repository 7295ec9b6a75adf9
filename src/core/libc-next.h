/* SPDX-License-Identifier: MIT */
/*
 * libc-next.h - libc's own definitions of the functions the shared
 * library defines in front of them (libc-next.c). The shared library
 * only: in a static link these are NULL (weak), and libc's functions are
 * the only ones there, called by their names.
 */
#ifndef RGROUP_LIBC_NEXT_H
#define RGROUP_LIBC_NEXT_H

#include <stdio.h>

#include "tree.h"

/* libc's posix_spawn (search 0) or posix_spawnp (1); NULL if not found. */
extern rgroup__spawn_fn *rgroup__libc_posix_spawn(int search) __attribute__((weak));
/* libc's pclose (fclose if not found). */
extern int rgroup__libc_pclose(FILE *f) __attribute__((weak));

#endif /* RGROUP_LIBC_NEXT_H */
