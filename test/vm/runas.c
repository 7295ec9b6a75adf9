/* SPDX-License-Identifier: MIT */
/*
 * runas UID GID PROGRAM [ARGS...] - drop to UID:GID and exec PROGRAM.
 *
 * The VM's initramfs has busybox but no user database, and busybox's su
 * needs one; this is the whole of what the nonroot VM tests need. Linked
 * statically because the initramfs holds no libc.
 *
 * Order matters: supplementary groups and the gid can only be changed while
 * still root, so setuid() comes last.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_id(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long uid, gid;

	if (argc < 4 || parse_id(argv[1], &uid) || parse_id(argv[2], &gid)) {
		fprintf(stderr, "usage: runas UID GID PROGRAM [ARGS...]\n");
		return 2;
	}
	if (setgroups(0, NULL) || setgid((gid_t)gid) || setuid((uid_t)uid)) {
		fprintf(stderr, "runas: cannot become %lu:%lu: %s\n", uid, gid,
			strerror(errno));
		return 1;
	}
	execv(argv[3], argv + 3);
	fprintf(stderr, "runas: cannot execute %s: %s\n", argv[3], strerror(errno));
	return 1;
}
