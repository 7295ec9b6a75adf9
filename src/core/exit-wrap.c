/* SPDX-License-Identifier: MIT */
/*
 * exit-wrap.c - _exit() and _Exit() for rule 3 (exit.c), in the static
 * library only: a static program linked with the linker's --wrap=_exit
 * and --wrap=_Exit, which `pkg-config --static --libs rgroup` gives,
 * reaches these, and these reach libc's as __real__exit and __real__Exit.
 * Without the options nothing refers to this file and the linker leaves
 * it out.
 */
#include "tree.h"

void __real__exit(int status) __attribute__((noreturn));
void __real__Exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));
void __wrap__Exit(int status) __attribute__((noreturn));

void __wrap__exit(int status)
{
	rgroup__exit_now();
	__real__exit(status);
}

void __wrap__Exit(int status)
{
	rgroup__exit_now();
	__real__Exit(status);
}
