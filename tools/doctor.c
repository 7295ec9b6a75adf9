/* SPDX-License-Identifier: MIT */
/*
 * doctor.c - `rgroup doctor`: which backend this process would get, and for
 * every backend whether it would work here, with the library's own reason
 * and fix when it would not. Exit 0 if some backend is usable, else 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rgroup.h>

#include "tool.h"

static const char doctor_usage[] =
	"Usage: rgroup doctor\n"
	"\n"
	"Print the backend this process gets, whether each backend (best first)\n"
	"would work here and, if not, why and how to fix it, the process's\n"
	"cgroups and whether RGROUP_BACKEND is set, and where the process runs\n"
	"(a systemd service, a container, a login session) with what to change\n"
	"there. Exit status 0 if some backend is usable, 1 if none is.\n";

/* What a usable backend cannot do, said where the user chooses. */
static const char *limit_of(const char *name)
{
	if (name && strcmp(name, "governor") == 0)
		return " (inside the process only: an rgroup competes as one entity "
		       "among the process's threads, not against other processes; "
		       "that part of rule 4 needs cgroup2 or cgroup1)";
	return "";
}

/* One line about rgroup_probe(name)'s answer; returns 1 if usable. */
static int report(const char *label, const char *name)
{
	char why[512] = "";
	int ret = rgroup_probe(name, why, sizeof(why));

	if (ret == 0) {
		printf("  %-10s usable%s\n", label, limit_of(name ? name : rgroup_backend()));
		return 1;
	}
	if (!why[0]) {
		/* No reason given: most likely a backend this build lacks. */
		if (ret == -ENOENT || ret == -ENOTSUP)
			snprintf(why, sizeof(why), "not built into this library (yet)");
		else
			snprintf(why, sizeof(why), "%s", strerror(-ret));
	}
	printf("  %-10s not usable: %s\n", label, why);
	return 0;
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env;
	int c, usable = 0;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(doctor_usage, stdout);
			return EXIT_OK;
		}
		return tool_usage_error("doctor", "unknown option '%s'", argv[optind - 1]);
	}
	if (optind < argc)
		return tool_usage_error("doctor", "unexpected argument '%s'", argv[optind]);

	printf("backend for this process: %s\n", rgroup_backend());
	env = getenv("RGROUP_BACKEND");
	if (env)
		printf("RGROUP_BACKEND: set to \"%s\" (forces that backend; ignored "
		       "in setuid/setgid programs)\n", env);
	else
		printf("RGROUP_BACKEND: not set (automatic choice, best first)\n");

	printf("\nbackends, best first:\n");
	/* Best first, as the library chooses (DESIGN.md §3). */
	for (unsigned int i = 0; rgroup_backend_name(i); i++)
		usable |= report(rgroup_backend_name(i), rgroup_backend_name(i));
	report("automatic", NULL);

	tool_print_where();

	printf("\nthis process's cgroups (/proc/self/cgroup):\n");
	tool_print_cgroups("  ");

	if (!usable)
		printf("\nno backend can enforce rgroups here; see the reasons above.\n");
	return usable ? EXIT_OK : EXIT_FAIL;
}
