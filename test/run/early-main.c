/* SPDX-License-Identifier: MIT */
/* early-main.c - prints what early.c's constructor got from each call. */
#include <stdio.h>

#include "early.h"

int main(void)
{
	fputs(early_log, stdout);
	return 0;
}
