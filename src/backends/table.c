/* SPDX-License-Identifier: MIT */
/*
 * table.c - the one list of backends (backend.h), best first, and how one
 * is chosen: by name (RGROUP_BACKEND, `rgroup doctor`), or the first whose
 * probe says it can enforce weights for this process. The library's
 * messages and rgroup_backend_name() take the names from here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "locate.h"

/* Best first: the kernel's own rgroups; the kernel enforcing through
 * cgroups; where the process can write no cgroup, the governor inside
 * the process. */
const struct rgroup__backend *const rgroup__backends[] = {
	&rgroup__backend_native,
	&rgroup__backend_cgroup2,
	&rgroup__backend_cgroup1,
	&rgroup__backend_governor,
};
const size_t rgroup__nbackends = sizeof(rgroup__backends) / sizeof(rgroup__backends[0]);

const struct rgroup__backend *rgroup__backend_by_name(const char *name)
{
	for (size_t i = 0; i < rgroup__nbackends; i++)
		if (strcmp(rgroup__backends[i]->name, name) == 0)
			return rgroup__backends[i];
	return NULL;
}

int rgroup__unknown_backend(const char *name, char *why, size_t len)
{
	char known[128] = "";
	size_t off = 0;

	for (size_t i = 0; i < rgroup__nbackends && off < sizeof(known); i++)
		off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
					i ? ", " : "", rgroup__backends[i]->name);
	return rgroup__why(why, len, -ENOENT, "no backend named '%s' in this build (known: %s)",
			   name, known);
}

/* secure_getenv(): a setuid/setgid program ignores the environment
 * (DESIGN.md §3). */
const struct rgroup__backend *rgroup__choose_backend(char *why, size_t len)
{
	const char *forced = secure_getenv("RGROUP_BACKEND");
	const struct rgroup__backend *be;

	if (forced && *forced) {
		be = rgroup__backend_by_name(forced);
		if (!be) {
			rgroup__unknown_backend(forced, why, len);
			return NULL;
		}
		return be->probe(be->priv, why, len) == 0 ? be : NULL;
	}
	for (size_t i = 0; i < rgroup__nbackends; i++)
		if (rgroup__backends[i]->probe(rgroup__backends[i]->priv, why, len) == 0)
			return rgroup__backends[i];
	return NULL;
}
