/* SPDX-License-Identifier: MIT */
/*
 * where.c - `rgroup doctor`'s "where": the setting this process runs in
 * (a systemd service, a container, a login session, or none of these)
 * and, when the library cannot use cgroup v2 there, what whoever sets
 * that place up must change. The backends' own reasons say what is
 * missing in cgroupfs; this says who can fix it and with which setting.
 *
 * Everything is told from what the process itself can see, as systemd's
 * and the container runtimes' conventions leave it:
 *   - a container: a runtime's mark (/.dockerenv, /run/.containerenv,
 *     $container of systemd's container interface, Kubernetes' service
 *     variables), or a cgroup namespace whose root is not the hierarchy's
 *     root (the "/" it sees has a cgroup.type file, which only the real
 *     root lacks);
 *   - a systemd service: systemd runs (/run/systemd/system) and a
 *     component of the process's cgroup v2 path is a NAME.service unit;
 *     delegated when systemd marked that cgroup (xattr trusted.delegate
 *     or user.delegate, systemd 251 and later);
 *   - a login session: a component session-N.scope (systemd-logind).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <rgroup.h>

#include "locate.h"
#include "tool.h"

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* The last component of `path` that ends in `suffix` (and is more than
 * it) into out; 1 if there is one. The last: a user's service sits
 * below the user manager's user@UID.service, and the unit is the inner
 * one. */
static int component(const char *path, const char *suffix, char *out, size_t len)
{
	size_t sl = strlen(suffix);
	int found = 0;

	for (const char *p = path; *p;) {
		const char *end;

		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		if ((size_t)(end - p) > sl && strncmp(end - sl, suffix, sl) == 0) {
			snprintf(out, len, "%.*s", (int)(end - p), p);
			found = 1;
		}
		p = end;
	}
	return found;
}

/* The directory of the process's cgroup (loc->dir) up to and including
 * its last component `unit`, as component() found it. */
static void unit_dir(const struct rgroup__cgloc *loc, const char *unit, char *out, size_t len)
{
	char comp[300];
	const char *at;
	size_t keep = strlen(loc->dir);

	snprintf(comp, sizeof(comp), "/%s", unit);
	for (at = strstr(loc->dir, comp); at; at = strstr(at + 1, comp))
		if (at[strlen(comp)] == '/' || !at[strlen(comp)])
			keep = (size_t)(at - loc->dir) + strlen(comp);
	snprintf(out, len, "%.*s", (int)keep, loc->dir);
}

/* This process's cgroup v2 path, from /proc/self/cgroup. */
static int own_path(char *path, size_t len)
{
	char text[8192];
	int r = rgroup__read_path("/proc/self/cgroup", text, sizeof(text));

	return r < 0 ? r : rgroup__parse_proc_cgroup(text, NULL, path, len);
}

/* Which runtime marked this as a container, or NULL. */
static const char *container_mark(void)
{
	const char *env = getenv("container");

	if (env && *env)
		return "$container is set (systemd's container interface)";
	if (exists("/run/.containerenv"))
		return "/run/.containerenv (podman)";
	if (exists("/.dockerenv"))
		return "/.dockerenv (docker)";
	if (getenv("KUBERNETES_SERVICE_HOST"))
		return "$KUBERNETES_SERVICE_HOST (a Kubernetes pod)";
	return NULL;
}

/* The best backend that uses the kernel (all but the governor) and works
 * here, or NULL. */
static const char *kernel_backend(void)
{
	const char *name;

	for (unsigned int i = 0; (name = rgroup_backend_name(i)); i++)
		if (strcmp(name, "governor") != 0 && rgroup_probe(name, NULL, 0) == 0)
			return name;
	return NULL;
}

/* "none needed" when a kernel backend works, else NULL. */
static int fine(const char *works)
{
	if (works)
		printf("  fix: none needed, the %s backend works here\n", works);
	return works != NULL;
}

void tool_print_where(void)
{
	struct rgroup__cgloc loc;
	char why[512] = "", unit[256], dir[PATH_MAX + 256], type[PATH_MAX + 64];
	char path[PATH_MAX];
	int located = rgroup__cg_locate(0, NULL, &loc, why, sizeof(why));
	const char *works = kernel_backend();
	const char *mark = container_mark();
	int ns_root = 0;

	/* The mount is known also when it is read-only (-EROFS). */
	if ((located == 0 || located == -EROFS) && own_path(path, sizeof(path)) == 0 &&
	    strcmp(path, "/") == 0 && strcmp(loc.mount.root, "/") == 0) {
		snprintf(type, sizeof(type), "%s/cgroup.type", loc.mount.point);
		ns_root = exists(type);
	}

	printf("\nwhere this process runs:\n");
	if (mark || ns_root) {
		printf("  a container: %s%s%s\n", mark ? mark : "",
		       mark && ns_root ? "; " : "",
		       ns_root ? "its cgroup namespace's root is a delegated cgroup, not the "
				 "hierarchy's root" : "");
		if (fine(works))
			return;
		if (located == -EROFS) {
			printf("  fix: the container runtime mounts the cgroup filesystem at %s "
			       "read-only; run the container with it mounted read-write (the "
			       "container's cgroup namespace still confines it to its own "
			       "cgroup): for example a privileged container (docker or podman "
			       "run --privileged, Kubernetes securityContext.privileged) or "
			       "podman run --systemd=always; until then the library uses the "
			       "governor\n", loc.mount.point);
		} else if (located == 0) {
			printf("  fix: the container's cgroup %s is writable but cgroup v2 cannot "
			       "be used (see cgroup2 above): its parent must enable cpu for it "
			       "(+cpu in the parent's cgroup.subtree_control, which the runtime "
			       "or the kubelet does), and no domain controller (memory, io, "
			       "pids) may be enabled in its own cgroup.subtree_control\n",
			       loc.dir);
		} else {
			printf("  fix: the container has no usable cgroup v2 filesystem (%s); "
			       "the runtime must mount it with a cgroup namespace, as docker and "
			       "podman do with --cgroupns=private\n", why);
		}
		return;
	}
	if (located == 0 && exists("/run/systemd/system") &&
	    component(loc.path, ".service", unit, sizeof(unit))) {
		struct stat st;
		int delegated;

		unit_dir(&loc, unit, dir, sizeof(dir));
		/* Only a privileged reader sees trusted.* attributes; a service
		 * with User= sees its delegation as the ownership systemd gives
		 * it of the cgroup. */
		delegated = getxattr(dir, "trusted.delegate", NULL, 0) >= 0 ||
			    getxattr(dir, "user.delegate", NULL, 0) >= 0 ||
			    (geteuid() != 0 && stat(dir, &st) == 0 && st.st_uid == geteuid());
		printf("  a systemd service: %s (cgroup %s), %s\n", unit, loc.path,
		       delegated ? "delegated (Delegate=yes)" :
				   "not delegated (no Delegate=yes on its cgroup)");
		if (!delegated)
			printf("  fix: add Delegate=yes to the [Service] section of %s (a "
			       "drop-in: systemctl%s edit %s), then restart it; without it "
			       "systemd owns the service's cgroup and may undo the groups made "
			       "below it (an example unit: rgroup(7), SERVICES AND CONTAINERS)\n",
			       unit, strstr(loc.path, "/user@") ? " --user" : "", unit);
		else if (!fine(works))
			printf("  fix: the service is delegated but cgroup v2 cannot be used "
			       "(see cgroup2 above): if its Delegate= lists controllers, add "
			       "cpu to the list (Delegate=yes delegates them all); where the "
			       "cpu controller is bound to cgroup v1, only cgroup1 can work\n");
		return;
	}
	if (located == 0 && component(loc.path, ".scope", unit, sizeof(unit)) &&
	    strncmp(unit, "session-", 8) == 0) {
		printf("  a login session: %s (cgroup %s)\n", unit, loc.path);
		if (!fine(works))
			printf("  fix: a session's scope belongs to systemd-logind; start the "
			       "program in a delegated scope of its own: systemd-run --user "
			       "--scope -p Delegate=yes PROGRAM (as root without --user)\n");
		return;
	}
	printf("  no systemd service, container or login session found (cgroup %s)\n",
	       located == 0 ? loc.path : "unknown");
	if (!fine(works))
		printf("  fix: run the program in a cgroup v2 group delegated to it (its "
		       "directory, cgroup.procs, cgroup.threads and cgroup.subtree_control "
		       "writable, cpu available), or as root on a cgroup v1 cpu hierarchy; "
		       "see the backends above\n");
}
