/* SPDX-License-Identifier: MIT */
/*
 * sgroup.c - the demo's own system group. The article's split ("two
 * processes and one rgroup: thirds") is about the members of one sgroup, so
 * the demo measures among exactly its own processes: it makes a child of
 * its current cgroup on the hierarchy that carries the cpu controller,
 * moves itself in before the library's first use (the library attaches to
 * the sgroup it finds then), and at the end moves back and removes it.
 * It never writes to a cgroup it did not make, except to move itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

/* Read a small file into buf (NUL-terminated). 0 or -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		ret = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return ret;
}

/* One write() per value, as cgroupfs wants. 0 or -errno. */
static int write_value(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(val))
		ret = -EIO;
	close(fd);
	return ret;
}

/* Is `tok` one of the words of `list`, separated by any of `seps`? */
static int has_token(const char *list, const char *tok, const char *seps)
{
	size_t n = strlen(tok);

	for (const char *p = list; *p; ) {
		size_t w = strcspn(p, seps);

		if (w == n && strncmp(p, tok, n) == 0)
			return 1;
		p += w;
		p += strspn(p, seps);
	}
	return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/*
 * The directory of the process's cgroup on the cpu hierarchy: cgroup v2 if
 * the unified group lists "cpu" in cgroup.controllers, else the v1 mount
 * whose super options name "cpu". 0, or -ENOENT with `why`.
 */
static int find_cpu_group(struct demo_sgroup *sg, char *why, size_t len)
{
	char v2path[PATH_MAX] = "", v1path[PATH_MAX] = "";
	char line[8192];
	int have_v2 = 0, have_v1 = 0, ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/cgroup", "re");
	if (!f) {
		ret = -errno;
		snprintf(why, len, "cannot read /proc/self/cgroup: %s", strerror(-ret));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*c2 = '\0';
		if (strcmp(line, "0") == 0 && c1 + 1 == c2) {
			snprintf(v2path, sizeof(v2path), "%s", c2 + 1);
			have_v2 = 1;
		} else if (has_token(c1 + 1, "cpu", ",")) {
			snprintf(v1path, sizeof(v1path), "%s", c2 + 1);
			have_v1 = 1;
		}
	}
	fclose(f);

	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		ret = -errno;
		snprintf(why, len, "cannot read /proc/self/mountinfo: %s", strerror(-ret));
		return ret;
	}
	snprintf(why, len, "no cgroup hierarchy with the cpu controller holds this process");
	for (int pass = 0; pass < 2 && ret; pass++) {
		/* pass 0: cgroup v2, pass 1: cgroup v1 */
		const char *path = pass == 0 ? v2path : v1path;

		if (!(pass == 0 ? have_v2 : have_v1))
			continue;
		rewind(f);
		while (ret && fgets(line, sizeof(line), f)) {
			char *field[6], *sep, *fstype, *superopts, *save = NULL;
			char dir[PATH_MAX], probe[PATH_MAX + 32], buf[512];
			size_t rootlen;
			int i;

			sep = strstr(line, " - ");
			if (!sep)
				continue;
			*sep = '\0';
			fstype = strtok_r(sep + 3, " \n", &save);
			strtok_r(NULL, " \n", &save);           /* source */
			superopts = strtok_r(NULL, " \n", &save);
			if (!fstype || !superopts)
				continue;
			if (strcmp(fstype, pass == 0 ? "cgroup2" : "cgroup") != 0)
				continue;
			if (pass == 1 && !has_token(superopts, "cpu", ","))
				continue;
			save = NULL;
			for (i = 0; i < 6; i++)
				if (!(field[i] = strtok_r(i ? NULL : line, " ", &save)))
					break;
			if (i < 6)
				continue;
			unescape(field[3]);              /* root of the mount */
			unescape(field[4]);              /* mount point */
			/* The mount must show our group: its root is a prefix. */
			rootlen = strcmp(field[3], "/") == 0 ? 0 : strlen(field[3]);
			if (rootlen && (strncmp(path, field[3], rootlen) != 0 ||
					(path[rootlen] && path[rootlen] != '/')))
				continue;
			if ((size_t)snprintf(dir, sizeof(dir), "%s%s", field[4],
					     strcmp(path + rootlen, "/") ? path + rootlen : "")
			    >= sizeof(dir))
				continue;
			if (pass == 0) {
				snprintf(probe, sizeof(probe), "%s/cgroup.controllers", dir);
				if (read_small(probe, buf, sizeof(buf)) < 0 ||
				    !has_token(buf, "cpu", " \n"))
					break;   /* v2 without cpu: try v1 */
				snprintf(sg->kind, sizeof(sg->kind), "cgroup v2");
			} else {
				snprintf(sg->kind, sizeof(sg->kind), "cgroup v1");
			}
			snprintf(sg->orig, sizeof(sg->orig), "%s", dir);
			sg->at_root = strcmp(path, "/") == 0;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

int demo_cpu_group_is_root(void)
{
	struct demo_sgroup sg = { 0 };
	char why[256];
	int ret = find_cpu_group(&sg, why, sizeof(why));

	return ret < 0 ? ret : sg.at_root;
}

int demo_sgroup_enter(struct demo_sgroup *sg, char *why, size_t len)
{
	char path[PATH_MAX + 32], buf[512], pid[32];
	int ret;

	memset(sg, 0, sizeof(*sg));
	ret = find_cpu_group(sg, why, len);
	if (ret < 0)
		goto out;

	if (strcmp(sg->kind, "cgroup v2") == 0) {
		/* Enabling cpu in a group that is not ours would change what
		 * the administrator configured: only use it if it is on. */
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", sg->orig);
		if (read_small(path, buf, sizeof(buf)) < 0 || !has_token(buf, "cpu", " \n")) {
			snprintf(why, len, "cgroup v2: cpu is not enabled in %s, "
				 "so a child group would not get its own CPU share", path);
			ret = -ENOTSUP;
			goto out;
		}
	}

	if ((size_t)snprintf(sg->dir, sizeof(sg->dir), "%s/rgroup-demo-%d",
			     sg->orig, (int)getpid()) >= sizeof(sg->dir)) {
		snprintf(why, len, "cgroup path too long");
		ret = -ENAMETOOLONG;
		goto out;
	}
	if (mkdir(sg->dir, 0755) < 0) {
		ret = -errno;
		snprintf(why, len, "cannot make %s: %s", sg->dir, strerror(-ret));
		goto out;
	}
	sg->made = 1;

	snprintf(path, sizeof(path), "%s/cgroup.procs", sg->dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	ret = write_value(path, pid);
	if (ret < 0) {
		snprintf(why, len, "cannot move this process into %s: %s",
			 sg->dir, strerror(-ret));
		goto out;
	}
	sg->entered = 1;

out:
	if (ret < 0 && sg->made) {
		rmdir(sg->dir);
		sg->made = 0;
	}
	return ret;
}

int demo_sgroup_leave(struct demo_sgroup *sg, char *why, size_t len)
{
	char path[PATH_MAX + 32], pid[32];
	int ret = 0;

	if (sg->entered) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", sg->orig);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		ret = write_value(path, pid);
		if (ret < 0) {
			snprintf(why, len, "cannot move this process back to %s: %s",
				 sg->orig, strerror(-ret));
			goto out;
		}
		sg->entered = 0;
	}
	if (sg->made) {
		/* Exited threads leave the group a moment later; EBUSY
		 * from rmdir means "not yet": retry for up to 3 s. */
		for (int i = 0; ; i++) {
			if (rmdir(sg->dir) == 0 || errno == ENOENT) {
				sg->made = 0;
				break;
			}
			ret = -errno;
			if (ret != -EBUSY || i >= 60) {
				snprintf(why, len, "cannot remove %s: %s (left behind)",
					 sg->dir, strerror(-ret));
				goto out;
			}
			nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
		}
		ret = 0;
	}
out:
	return ret;
}
