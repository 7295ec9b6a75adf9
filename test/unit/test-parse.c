/* SPDX-License-Identifier: MIT */
/*
 * test-parse.c - the pure parsers of src/kernel-text/parse.c against real-world
 * kernel texts (this build machine, systemd hybrid and unified layouts,
 * containers) and against broken ones.
 *
 * Every failing case is named in the message: the tables are long.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "governor-state.h"
#include "locate.h"
#include "parse.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define POISON "\x7f-untouched-\x7f"

/* ---- Fixtures ---------------------------------------------------------- */

/* The build machine (a VM with separate v1 hierarchies, a named systemd
 * one, and v2 at /sys/fs/cgroup/unified), copied from /proc/self. */
static const char mi_buildhost[] =
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	"23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
	"24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334192k,nr_inodes=3083548,mode=755\n"
	"25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683584k\n"
	"26 24 0:24 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000\n"
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
	"37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
	"38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
	"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char cg_buildhost[] =
	"9:name=systemd:/\n"
	"8:pids:/\n"
	"7:blkio:/\n"
	"6:freezer:/\n"
	"5:devices:/\n"
	"4:memory:/process_api/23118620658fe135cb6f0c6aad0f068f\n"
	"3:cpuset:/\n"
	"2:cpuacct:/\n"
	"1:cpu:/\n"
	"0::/\n";

/* systemd "hybrid" (Debian 10, Ubuntu 20.04): cpu and cpuacct co-mounted,
 * optional fields ("shared:N") present, /sys/fs/cgroup itself ro. */
static const char mi_hybrid[] =
	"25 0 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
	"30 25 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
	"31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
	"32 30 0:28 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd\n"
	"33 30 0:29 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,cpuset\n"
	"34 30 0:30 / /sys/fs/cgroup/net_cls,net_prio rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,net_cls,net_prio\n"
	"35 30 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,cpu,cpuacct\n"
	"36 30 0:32 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:18 master:3 - cgroup cgroup rw,memory\n";

static const char cg_hybrid[] =
	"12:cpuset:/\n"
	"11:net_cls,net_prio:/\n"
	"6:memory:/user.slice/user-1000.slice/session-2.scope\n"
	"5:cpu,cpuacct:/user.slice\n"
	"1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n"
	"0::/user.slice/user-1000.slice/session-2.scope\n";

/* systemd "unified" (Debian 11+): only cgroup2, no v1 lines. */
static const char mi_unified[] =
	"21 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
	"24 22 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

static const char cg_unified[] =
	"0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-4242.scope\n";

/* Docker without a cgroup namespace on v1: the mounts show the container's
 * own group (root /docker/<id>) read-only; /proc/self/cgroup the full path. */
static const char mi_docker_v1[] =
	"593 511 0:112 / / rw,relatime master:287 - overlay overlay rw,lowerdir=/var/lib/docker/l/X:/var/lib/docker/l/Y,upperdir=/u,workdir=/w\n"
	"609 593 0:118 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755\n"
	"611 609 0:31 /docker/4f3ae1c0 /sys/fs/cgroup/cpu,cpuacct ro,nosuid,nodev,noexec,relatime master:17 - cgroup cpu,cpuacct rw,cpu,cpuacct\n"
	"612 609 0:28 /docker/4f3ae1c0 /sys/fs/cgroup/systemd ro,nosuid,nodev,noexec,relatime master:11 - cgroup cgroup rw,xattr,name=systemd\n";

static const char cg_docker_v1[] =
	"5:cpu,cpuacct:/docker/4f3ae1c0\n"
	"1:name=systemd:/docker/4f3ae1c0\n"
	"0::/system.slice/containerd.service\n";

/* Escaped mount points and roots: \040 space, \011 tab, \012 newline,
 * \134 backslash, all as the kernel's show_mountinfo writes them. */
static const char mi_escaped[] =
	"100 1 0:50 /a\\134b /mnt/my\\040cgroups/cpu\\011x rw - cgroup cg rw,cpu\n"
	"101 1 0:51 / /mnt/v2\\012line ro,nosuid - cgroup2 none rw\n";

/* ---- /proc/<pid>/cgroup ------------------------------------------------ */

struct proc_cgroup_case {
	const char *name;
	const char *text;
	const char *ctrl;
	int ret;
	const char *path;
};

static const struct proc_cgroup_case proc_cgroup_cases[] = {
	{ "buildhost cpu", cg_buildhost, "cpu", 0, "/" },
	{ "buildhost memory", cg_buildhost, "memory",
	  0, "/process_api/23118620658fe135cb6f0c6aad0f068f" },
	{ "buildhost v2", cg_buildhost, NULL, 0, "/" },
	{ "buildhost named", cg_buildhost, "name=systemd", 0, "/" },
	{ "buildhost no such", cg_buildhost, "rdma", -ENOENT, NULL },
	{ "hybrid cpu co-mounted", cg_hybrid, "cpu", 0, "/user.slice" },
	{ "hybrid cpuacct second token", cg_hybrid, "cpuacct", 0, "/user.slice" },
	{ "hybrid net_prio", cg_hybrid, "net_prio", 0, "/" },
	{ "hybrid v2", cg_hybrid, NULL, 0,
	  "/user.slice/user-1000.slice/session-2.scope" },
	{ "hybrid named", cg_hybrid, "name=systemd", 0,
	  "/user.slice/user-1000.slice/session-2.scope" },
	{ "unified v2", cg_unified, NULL, 0,
	  "/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-4242.scope" },
	{ "unified has no v1", cg_unified, "cpu", -ENOENT, NULL },
	{ "docker v1 cpu", cg_docker_v1, "cpu", 0, "/docker/4f3ae1c0" },
	/* exact tokens: none of these is "cpu" */
	{ "cpu is not cpuacct", "2:cpuacct:/a\n3:cpuset:/b\n", "cpu", -ENOENT, NULL },
	{ "cpu is not a prefix", "2:cpuacct,cpuset:/a\n", "cpu", -ENOENT, NULL },
	{ "cpu last in list", "2:cpuacct,cpu:/a\n", "cpu", 0, "/a" },
	{ "name= is a whole token", "1:name=systemd2:/x\n", "name=systemd", -ENOENT, NULL },
	{ "systemd alone is no name=", "1:name=systemd:/x\n", "systemd", -ENOENT, NULL },
	{ "v2 line is not v1", "0::/x\n", "cpu", -ENOENT, NULL },
	{ "v1 line is not v2", "1:cpu:/x\n", NULL, -ENOENT, NULL },
	{ "first match wins", "1:cpu:/a\n2:cpu:/b\n", "cpu", 0, "/a" },
	{ "colon inside path", "0::/a:b:c\n", NULL, 0, "/a:b:c" },
	{ "no trailing newline", "1:cpu:/p", "cpu", 0, "/p" },
	{ "blank lines skipped", "\n\n1:cpu:/p\n\n", "cpu", 0, "/p" },
	{ "empty text", "", "cpu", -ENOENT, NULL },
	/* malformed: the match is broken, or only broken lines are left */
	{ "truncated after id", "1:cp", "cpu", -EINVAL, NULL },
	{ "truncated before path", "1:cpu:", "cpu", -EINVAL, NULL },
	{ "relative path", "1:cpu:a/b\n", "cpu", -EINVAL, NULL },
	{ "id not a number", "x:cpu:/a\n", "cpu", -EINVAL, NULL },
	{ "empty id", ":cpu:/a\n", "cpu", -EINVAL, NULL },
	{ "no colon at all", "garbage\n", NULL, -EINVAL, NULL },
	{ "broken line then match", "garbage\n1:cpu:/ok\n", "cpu", 0, "/ok" },
	{ "truncated v2 line", "1:cpu:/\n0:", NULL, -EINVAL, NULL },
	/* bad arguments */
	{ "empty ctrl", cg_hybrid, "", -EINVAL, NULL },
	{ "ctrl with comma", cg_hybrid, "cpu,cpuacct", -EINVAL, NULL },
	{ "ctrl with colon", cg_hybrid, "cpu:", -EINVAL, NULL },
};

static void test_proc_cgroup_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(proc_cgroup_cases); i++) {
		const struct proc_cgroup_case *c = &proc_cgroup_cases[i];
		char path[PATH_MAX] = POISON;
		int r = rgroup__parse_proc_cgroup(c->text, c->ctrl, path, sizeof(path));

		if (r != c->ret)
			fail_msg("case \"%s\": returned %d, expected %d", c->name, r, c->ret);
		if (c->path && strcmp(path, c->path) != 0)
			fail_msg("case \"%s\": path \"%s\", expected \"%s\"", c->name, path, c->path);
		if (!c->path && strcmp(path, POISON) != 0)
			fail_msg("case \"%s\": output written on failure", c->name);
	}
}

static void test_proc_cgroup_buffer(void **state)
{
	const char *text = "1:cpu:/abcd\n";
	char buf[8];

	(void)state;
	/* "/abcd" needs 6 bytes with its NUL */
	memcpy(buf, "XXXXXXX", 8);
	assert_int_equal(rgroup__parse_proc_cgroup(text, "cpu", buf, 5), -ENAMETOOLONG);
	assert_string_equal(buf, "XXXXXXX");
	assert_int_equal(rgroup__parse_proc_cgroup(text, "cpu", buf, 0), -ENAMETOOLONG);
	assert_int_equal(rgroup__parse_proc_cgroup(text, "cpu", buf, 6), 0);
	assert_string_equal(buf, "/abcd");
	assert_int_equal(rgroup__parse_proc_cgroup(NULL, "cpu", buf, 6), -EINVAL);
	assert_int_equal(rgroup__parse_proc_cgroup(text, "cpu", NULL, 6), -EINVAL);
}

/* ---- mountinfo ----------------------------------------------------------- */

struct mountinfo_case {
	const char *name;
	const char *text;
	const char *ctrl;
	int ret;
	const char *point, *root;
	int ro;
};

static const struct mountinfo_case mountinfo_cases[] = {
	{ "buildhost cpu", mi_buildhost, "cpu", 0, "/sys/fs/cgroup/cpu", "/", 0 },
	{ "buildhost cpuacct", mi_buildhost, "cpuacct", 0, "/sys/fs/cgroup/cpuacct", "/", 0 },
	{ "buildhost cpuset", mi_buildhost, "cpuset", 0, "/sys/fs/cgroup/cpuset", "/", 0 },
	{ "buildhost named", mi_buildhost, "name=systemd", 0, "/sys/fs/cgroup/systemd", "/", 0 },
	{ "buildhost v2", mi_buildhost, NULL, 0, "/sys/fs/cgroup/unified", "/", 0 },
	{ "buildhost no rdma", mi_buildhost, "rdma", -ENOENT, NULL, NULL, 0 },
	{ "hybrid cpu co-mounted", mi_hybrid, "cpu", 0, "/sys/fs/cgroup/cpu,cpuacct", "/", 0 },
	{ "hybrid cpuacct co-mounted", mi_hybrid, "cpuacct", 0, "/sys/fs/cgroup/cpu,cpuacct", "/", 0 },
	{ "hybrid v2", mi_hybrid, NULL, 0, "/sys/fs/cgroup/unified", "/", 0 },
	{ "hybrid named", mi_hybrid, "name=systemd", 0, "/sys/fs/cgroup/systemd", "/", 0 },
	{ "hybrid two optional fields", mi_hybrid, "memory", 0, "/sys/fs/cgroup/memory", "/", 0 },
	/* xattr is a super option but not a controller: still a token match */
	{ "hybrid no plain systemd", mi_hybrid, "systemd", -ENOENT, NULL, NULL, 0 },
	{ "unified v2", mi_unified, NULL, 0, "/sys/fs/cgroup", "/", 0 },
	{ "unified no v1", mi_unified, "cpu", -ENOENT, NULL, NULL, 0 },
	{ "docker v1 root and ro", mi_docker_v1, "cpu", 0, "/sys/fs/cgroup/cpu,cpuacct", "/docker/4f3ae1c0", 1 },
	{ "docker no v2", mi_docker_v1, NULL, -ENOENT, NULL, NULL, 0 },
	{ "escapes decoded", mi_escaped, "cpu", 0, "/mnt/my cgroups/cpu\tx", "/a\\b", 0 },
	{ "escaped newline, ro", mi_escaped, NULL, 0, "/mnt/v2\nline", "/", 1 },
	/* exact tokens in the super options; the fstype must be cgroup */
	{ "cpu is not cpuset", "1 0 0:1 / /c rw - cgroup c rw,cpuset,cpuacct\n", "cpu", -ENOENT, NULL, NULL, 0 },
	{ "source is not options", "1 0 0:1 / /c rw - cgroup cpu rw,cpuacct\n", "cpu", -ENOENT, NULL, NULL, 0 },
	{ "tmpfs is not cgroup", "1 0 0:1 / /c rw - tmpfs tmpfs rw,cpu\n", "cpu", -ENOENT, NULL, NULL, 0 },
	{ "cgroup is not cgroup2", "1 0 0:1 / /c rw - cgroup cgroup rw\n", NULL, -ENOENT, NULL, NULL, 0 },
	{ "cgroup2 is not cgroup", "1 0 0:1 / /c rw - cgroup2 cgroup2 rw,cpu\n", "cpu", -ENOENT, NULL, NULL, 0 },
	{ "ro only as a token", "1 0 0:1 / /c rw,nosuid,errors=ro - cgroup2 c rw\n", NULL, 0, "/c", "/", 0 },
	{ "ro first token", "1 0 0:1 / /c ro - cgroup2 c rw\n", NULL, 0, "/c", "/", 1 },
	/* superblock ro but mount rw: the mount's flag counts */
	{ "super ro ignored", "1 0 0:1 / /c rw - cgroup2 c ro\n", NULL, 0, "/c", "/", 0 },
	{ "empty source", "1 0 0:1 / /c rw - cgroup2  rw\n", NULL, 0, "/c", "/", 0 },
	{ "dash in optional field", "1 0 0:1 / /c rw -x - cgroup2 c rw\n", NULL, 0, "/c", "/", 0 },
	{ "first match wins", "1 0 0:1 / /a rw - cgroup2 c rw\n2 0 0:2 / /b rw - cgroup2 c rw\n", NULL, 0, "/a", "/", 0 },
	{ "no trailing newline", "1 0 0:1 / /c rw - cgroup2 c rw", NULL, 0, "/c", "/", 0 },
	{ "empty text", "", NULL, -ENOENT, NULL, NULL, 0 },
	/* malformed */
	{ "no separator", "1 0 0:1 / /c rw cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "truncated after separator", "1 0 0:1 / /c rw - cgroup2 c", NULL, -EINVAL, NULL, NULL, 0 },
	{ "truncated mid-line", "1 0 0:1 / /sys/fs/cg", NULL, -EINVAL, NULL, NULL, 0 },
	{ "too few fields", "1 0 / /c - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "id not a number", "x 0 0:1 / /c rw - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "relative mount point", "1 0 0:1 / c rw - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "stray backslash", "1 0 0:1 / /c\\x rw - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "short escape", "1 0 0:1 / /c\\04 rw - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "escape at end", "1 0 0:1 / /c\\ rw - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "escape of NUL", "1 0 0:1 / /c\\000 rw - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "escape too big", "1 0 0:1 / /c\\777 rw - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "non-octal escape", "1 0 0:1 / /c\\089 rw - cgroup2 c rw\n", NULL, -EINVAL, NULL, NULL, 0 },
	{ "broken line then match", "junk\n1 0 0:1 / /c rw - cgroup2 c rw\n", NULL, 0, "/c", "/", 0 },
	{ "empty ctrl", mi_hybrid, "", -EINVAL, NULL, NULL, 0 },
	{ "ctrl with comma", mi_hybrid, "cpu,cpuacct", -EINVAL, NULL, NULL, 0 },
};

static void test_mountinfo_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(mountinfo_cases); i++) {
		const struct mountinfo_case *c = &mountinfo_cases[i];
		struct rgroup__mount m;
		int r;

		memset(&m, 0, sizeof(m));
		strcpy(m.point, POISON);
		strcpy(m.root, POISON);
		m.ro = 42;
		r = rgroup__parse_mountinfo(c->text, c->ctrl, &m);
		if (r != c->ret)
			fail_msg("case \"%s\": returned %d, expected %d", c->name, r, c->ret);
		if (r < 0) {
			if (strcmp(m.point, POISON) || strcmp(m.root, POISON) || m.ro != 42)
				fail_msg("case \"%s\": output written on failure", c->name);
			continue;
		}
		if (strcmp(m.point, c->point) != 0)
			fail_msg("case \"%s\": point \"%s\", expected \"%s\"", c->name, m.point, c->point);
		if (strcmp(m.root, c->root) != 0)
			fail_msg("case \"%s\": root \"%s\", expected \"%s\"", c->name, m.root, c->root);
		if (m.ro != c->ro)
			fail_msg("case \"%s\": ro %d, expected %d", c->name, m.ro, c->ro);
	}
}

/* A matching mount point longer than PATH_MAX is reported, not cut; the
 * limit is on the decoded path, not on the escaped text. */
static void test_mountinfo_too_long(void **state)
{
	static char text[4 * PATH_MAX + 64];
	const char head[] = "1 0 0:1 / /", tail[] = " rw - cgroup2 c rw\n";
	struct rgroup__mount m;

	(void)state;
	memcpy(text, head, sizeof(head) - 1);
	memset(text + sizeof(head) - 1, 'a', PATH_MAX);
	memcpy(text + sizeof(head) - 1 + PATH_MAX, tail, sizeof(tail));
	strcpy(m.point, POISON);
	assert_int_equal(rgroup__parse_mountinfo(text, NULL, &m), -ENAMETOOLONG);
	assert_string_equal(m.point, POISON);

	/* 2000 escapes: 8000 bytes of text, a 2001-byte path */
	strcpy(text, head);
	for (int i = 0; i < 2000; i++)
		strcat(text, "\\040");
	strcat(text, tail);
	assert_int_equal(rgroup__parse_mountinfo(text, NULL, &m), 0);
	assert_int_equal(strlen(m.point), 2001);
}

/* ---- cgroup_dir ----------------------------------------------------------- */

struct dir_case {
	const char *name;
	const char *point, *root, *cgpath;
	int ret;
	const char *dir;
};

static const struct dir_case dir_cases[] = {
	{ "root mount, root group", "/sys/fs/cgroup/cpu", "/", "/", 0, "/sys/fs/cgroup/cpu" },
	{ "root mount", "/sys/fs/cgroup/cpu", "/", "/user.slice", 0, "/sys/fs/cgroup/cpu/user.slice" },
	{ "deep path", "/sys/fs/cgroup", "/", "/a/b/c", 0, "/sys/fs/cgroup/a/b/c" },
	{ "container root stripped", "/sys/fs/cgroup/cpu,cpuacct", "/docker/4f3a", "/docker/4f3a", 0, "/sys/fs/cgroup/cpu,cpuacct" },
	{ "container below root", "/sys/fs/cgroup", "/docker/4f3a", "/docker/4f3a/inner/x", 0, "/sys/fs/cgroup/inner/x" },
	{ "root is a component prefix only", "/sys/fs/cgroup", "/docker/4f3a", "/docker/4f3ab", -ENOENT, NULL },
	{ "not under root", "/sys/fs/cgroup", "/docker/4f3a", "/system.slice", -ENOENT, NULL },
	{ "shorter than root", "/sys/fs/cgroup", "/docker/4f3a", "/docker", -ENOENT, NULL },
	{ "root with trailing slash", "/sys/fs/cgroup", "/a/", "/a/b", 0, "/sys/fs/cgroup/b" },
	{ "point with trailing slash", "/mnt/cg/", "/", "/x", 0, "/mnt/cg/x" },
	{ "no double slashes", "/mnt//cg", "/", "//x//y/", 0, "/mnt/cg/x/y" },
	{ "mounted on /", "/", "/", "/x", 0, "/x" },
	{ "/ on /", "/", "/", "/", 0, "/" },
	{ "spaces kept", "/mnt/my cgroups", "/", "/a b", 0, "/mnt/my cgroups/a b" },
	{ "outside namespace", "/sys/fs/cgroup", "/", "/../..", -ENOENT, NULL },
	{ "dotdot inside", "/sys/fs/cgroup", "/", "/a/../b", -ENOENT, NULL },
	{ "dot component", "/sys/fs/cgroup", "/", "/a/./b", -EINVAL, NULL },
	{ "dots in a name are fine", "/sys/fs/cgroup", "/", "/a.../..b", 0, "/sys/fs/cgroup/a.../..b" },
	{ "relative cgpath", "/sys/fs/cgroup", "/", "a", -EINVAL, NULL },
	{ "empty cgpath", "/sys/fs/cgroup", "/", "", -EINVAL, NULL },
	{ "relative point", "sys/fs/cgroup", "/", "/a", -EINVAL, NULL },
	{ "relative root", "/sys/fs/cgroup", "docker", "/docker", -EINVAL, NULL },
};

static void test_cgroup_dir_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(dir_cases); i++) {
		const struct dir_case *c = &dir_cases[i];
		struct rgroup__mount m = { .ro = 0 };
		char out[PATH_MAX] = POISON;
		int r;

		strcpy(m.point, c->point);
		strcpy(m.root, c->root);
		r = rgroup__cgroup_dir(&m, c->cgpath, out, sizeof(out));
		if (r != c->ret)
			fail_msg("case \"%s\": returned %d, expected %d", c->name, r, c->ret);
		if (c->dir && strcmp(out, c->dir) != 0)
			fail_msg("case \"%s\": \"%s\", expected \"%s\"", c->name, out, c->dir);
		if (!c->dir && strcmp(out, POISON) != 0)
			fail_msg("case \"%s\": output written on failure", c->name);
	}
}

static void test_cgroup_dir_buffer(void **state)
{
	struct rgroup__mount m = { .point = "/cg", .root = "/" };
	char out[16];

	(void)state;
	/* "/cg/ab" is 6 chars: 7 bytes needed */
	strcpy(out, "untouched");
	assert_int_equal(rgroup__cgroup_dir(&m, "/ab", out, 6), -ENAMETOOLONG);
	assert_string_equal(out, "untouched");
	assert_int_equal(rgroup__cgroup_dir(&m, "/ab", out, 7), 0);
	assert_string_equal(out, "/cg/ab");
	assert_int_equal(rgroup__cgroup_dir(&m, "/ab", NULL, 0), -ENAMETOOLONG);
	/* an unterminated struct is rejected, not overrun */
	memset(m.point, 'x', sizeof(m.point));
	m.point[0] = '/';
	assert_int_equal(rgroup__cgroup_dir(&m, "/ab", out, sizeof(out)), -EINVAL);
}

/* The whole chain on each real-world layout: mountinfo + cgroup -> dir. */
struct chain_case {
	const char *name, *mi, *cg, *ctrl;
	const char *dir;
};

static const struct chain_case chain_cases[] = {
	{ "buildhost cpu", mi_buildhost, cg_buildhost, "cpu", "/sys/fs/cgroup/cpu" },
	{ "buildhost v2", mi_buildhost, cg_buildhost, NULL, "/sys/fs/cgroup/unified" },
	{ "hybrid cpu", mi_hybrid, cg_hybrid, "cpu", "/sys/fs/cgroup/cpu,cpuacct/user.slice" },
	{ "hybrid v2", mi_hybrid, cg_hybrid, NULL, "/sys/fs/cgroup/unified/user.slice/user-1000.slice/session-2.scope" },
	{ "unified", mi_unified, cg_unified, NULL,
	  "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-4242.scope" },
	{ "docker v1", mi_docker_v1, cg_docker_v1, "cpu", "/sys/fs/cgroup/cpu,cpuacct" },
};

static void test_chain(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(chain_cases); i++) {
		const struct chain_case *c = &chain_cases[i];
		struct rgroup__mount m;
		char cgpath[PATH_MAX], dir[PATH_MAX];
		int r;

		r = rgroup__parse_mountinfo(c->mi, c->ctrl, &m);
		if (r == 0)
			r = rgroup__parse_proc_cgroup(c->cg, c->ctrl, cgpath, sizeof(cgpath));
		if (r == 0)
			r = rgroup__cgroup_dir(&m, cgpath, dir, sizeof(dir));
		if (r != 0)
			fail_msg("case \"%s\": returned %d", c->name, r);
		if (strcmp(dir, c->dir) != 0)
			fail_msg("case \"%s\": \"%s\", expected \"%s\"", c->name, dir, c->dir);
	}
}

/* ---- keyed files --------------------------------------------------------- */

static const char cpu_stat_v2[] =
	"usage_usec 8373211\n"
	"user_usec 6104212\n"
	"system_usec 2268999\n"
	"nr_periods 0\n"
	"nr_throttled 0\n"
	"throttled_usec 0\n";

struct keyed_case {
	const char *name, *text, *key;
	int ret;
	uint64_t val;
};

static const struct keyed_case keyed_cases[] = {
	{ "first key", cpu_stat_v2, "usage_usec", 0, 8373211 },
	{ "middle key", cpu_stat_v2, "system_usec", 0, 2268999 },
	{ "zero", cpu_stat_v2, "throttled_usec", 0, 0 },
	{ "prefix of a key", cpu_stat_v2, "usage", -ENOENT, 0 },
	{ "suffix of a key", cpu_stat_v2, "_usec", -ENOENT, 0 },
	{ "longer than a key", cpu_stat_v2, "usage_usec2", -ENOENT, 0 },
	{ "user is not user_usec", "user_usec 5\nuser 7\n", "user", 0, 7 },
	{ "v1 cpu.stat", "nr_periods 10\nnr_throttled 2\nthrottled_time 123456789\n", "throttled_time", 0, 123456789 },
	{ "v1 cpuacct.stat", "user 4513\nsystem 1200\n", "system", 0, 1200 },
	{ "tab separated", "a\t42\n", "a", 0, 42 },
	{ "many spaces, trailing space", "a    42  \n", "a", 0, 42 },
	{ "no trailing newline", "a 1\nb 2", "b", 0, 2 },
	{ "u64 max", "a 18446744073709551615\n", "a", 0, UINT64_MAX },
	{ "max", "a max\n", "a", 0, UINT64_MAX },
	{ "maximum is not max", "a maximum\n", "a", -EINVAL, 0 },
	{ "overflow", "a 18446744073709551616\n", "a", -ERANGE, 0 },
	{ "huge overflow", "a 99999999999999999999999\n", "a", -ERANGE, 0 },
	{ "negative", "a -1\n", "a", -EINVAL, 0 },
	{ "plus sign", "a +1\n", "a", -EINVAL, 0 },
	{ "trailing junk", "a 12x\n", "a", -EINVAL, 0 },
	{ "two values", "a 1 2\n", "a", -EINVAL, 0 },
	{ "no value", "a\nb 2\n", "a", -EINVAL, 0 },
	{ "key then space only", "a \n", "a", -EINVAL, 0 },
	{ "truncated line", "a 1\nb", "b", -EINVAL, 0 },
	{ "bad line of another key ignored", "junk junk\na 5\n", "a", 0, 5 },
	{ "first match wins", "a 1\na 2\n", "a", 0, 1 },
	{ "empty text", "", "a", -ENOENT, 0 },
	{ "empty key", cpu_stat_v2, "", -EINVAL, 0 },
	{ "key with space", cpu_stat_v2, "usage usec", -EINVAL, 0 },
};

static void test_keyed_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(keyed_cases); i++) {
		const struct keyed_case *c = &keyed_cases[i];
		uint64_t v = 0xdeadbeef;
		int r = rgroup__parse_keyed(c->text, c->key, &v);

		if (r != c->ret)
			fail_msg("case \"%s\": returned %d, expected %d", c->name, r, c->ret);
		if (r == 0 && v != c->val)
			fail_msg("case \"%s\": %" PRIu64 ", expected %" PRIu64, c->name, v, c->val);
		if (r < 0 && v != 0xdeadbeef)
			fail_msg("case \"%s\": output written on failure", c->name);
	}
}

/* ---- tokens and cgroup.type ---------------------------------------------- */

struct token_case {
	const char *text, *tok;
	int ret;
};

static const struct token_case token_cases[] = {
	{ "cpuset cpu io memory pids\n", "cpu", 1 },
	{ "cpuset cpu io memory pids\n", "cpuset", 1 },
	{ "cpuset cpu io memory pids\n", "pids", 1 },
	{ "cpuset cpu io memory pids\n", "memory", 1 },
	{ "cpuset io memory pids\n", "cpu", 0 },
	{ "cpuacct cpuset\n", "cpu", 0 },
	{ "cpu\n", "cpu", 1 },
	{ "cpu", "cpu", 1 },
	{ "\tcpu\t", "cpu", 1 },
	{ "xcpu cpux", "cpu", 0 },
	{ "", "cpu", 0 },
	{ "\n", "cpu", 0 },
	{ "io  cpu", "cpu", 1 },
	{ "cpu io", "", -EINVAL },
	{ "cpu io", "cpu io", -EINVAL },
	{ "cpu io", "cpu\n", -EINVAL },
};

static void test_has_token(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(token_cases); i++) {
		const struct token_case *c = &token_cases[i];
		int r = rgroup__has_token(c->text, c->tok);

		if (r != c->ret)
			fail_msg("case %zu (\"%s\" in \"%s\"): returned %d, expected %d",
				 i, c->tok, c->text, r, c->ret);
	}
	assert_int_equal(rgroup__has_token(NULL, "cpu"), -EINVAL);
}

static void test_cgtype(void **state)
{
	static const struct {
		const char *text;
		int ret;
	} cases[] = {
		{ "domain\n", RGROUP__CG_DOMAIN },
		{ "domain threaded\n", RGROUP__CG_DOMAIN_THREADED },
		{ "domain invalid\n", RGROUP__CG_DOMAIN_INVALID },
		{ "threaded\n", RGROUP__CG_THREADED },
		{ "domain", RGROUP__CG_DOMAIN },
		{ "threaded", RGROUP__CG_THREADED },
		{ "", -EINVAL },
		{ "\n", -EINVAL },
		{ "domain ", -EINVAL },
		{ " domain\n", -EINVAL },
		{ "domain  threaded\n", -EINVAL },
		{ "domainthreaded\n", -EINVAL },
		{ "Domain\n", -EINVAL },
		{ "domain\nthreaded\n", -EINVAL },
		{ "thread\n", -EINVAL },
		{ "domain invalidx\n", -EINVAL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int r = rgroup__parse_cgtype(cases[i].text);

		if (r != cases[i].ret)
			fail_msg("case %zu (\"%s\"): returned %d, expected %d",
				 i, cases[i].text, r, cases[i].ret);
	}
	assert_int_equal(rgroup__parse_cgtype(NULL), -EINVAL);
}

/* ---- tids ------------------------------------------------------------------ */

static void test_tids(void **state)
{
	pid_t t[4];

	(void)state;
	memset(t, 0, sizeof(t));
	assert_int_equal(rgroup__parse_tids("101\n102\n2147483647\n", t, 4), 3);
	assert_int_equal(t[0], 101);
	assert_int_equal(t[1], 102);
	assert_int_equal(t[2], 2147483647);
	assert_int_equal(t[3], 0);

	/* more than max: count all, store max */
	memset(t, 0, sizeof(t));
	assert_int_equal(rgroup__parse_tids("1\n2\n3\n4\n5\n6\n", t, 2), 6);
	assert_int_equal(t[0], 1);
	assert_int_equal(t[1], 2);
	assert_int_equal(t[2], 0);
	assert_int_equal(rgroup__parse_tids("1\n2\n3\n", NULL, 0), 3);

	assert_int_equal(rgroup__parse_tids("", t, 4), 0);
	assert_int_equal(rgroup__parse_tids("7", t, 4), 1);
	assert_int_equal(t[0], 7);
}

static void test_tids_malformed(void **state)
{
	static const struct {
		const char *text;
		int ret;
	} cases[] = {
		{ "\n", -EINVAL },
		{ "1\n\n2\n", -EINVAL },
		{ "1\n2\n\n", -EINVAL },
		{ "1 2\n", -EINVAL },
		{ "12a\n", -EINVAL },
		{ "-5\n", -EINVAL },
		{ "+5\n", -EINVAL },
		{ "0\n", -EINVAL },
		{ "1\n0\n", -EINVAL },
		{ "2147483648\n", -ERANGE },
		{ "1\n99999999999999999999999\n", -ERANGE },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		pid_t t[4] = { 11, 22, 33, 44 };
		int r = rgroup__parse_tids(cases[i].text, t, 4);

		if (r != cases[i].ret)
			fail_msg("case %zu: returned %d, expected %d", i, r, cases[i].ret);
		/* the valid prefix must not have been stored either */
		if (t[0] != 11 || t[1] != 22)
			fail_msg("case %zu: output written on failure", i);
	}
	assert_int_equal(rgroup__parse_tids(NULL, NULL, 0), -EINVAL);
	assert_int_equal(rgroup__parse_tids("1\n", NULL, 1), -EINVAL);
}

/* ---- /proc/<pid>/stat ------------------------------------------------------ */

/* Fields 3..21 of a real stat line, so each case only varies the comm. */
#define STAT_MID " R 6670 6670 5148 0 -1 4194304 103 0 0 0 0 0 0 0 20 0 1 0 "
#define STAT_TAIL " 3133440 381 18446744073709551615 94614249988096 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

static void test_stat_starttime(void **state)
{
	static const struct {
		const char *name, *text;
		int ret;
		uint64_t start;
	} cases[] = {
		{ "real", "6678 (cat)" STAT_MID "1044555" STAT_TAIL, 0, 1044555 },
		{ "comm with spaces", "1 (a b c)" STAT_MID "77" STAT_TAIL, 0, 77 },
		{ "comm with parens", "1 (x) R 1 (y))" STAT_MID "88" STAT_TAIL, 0, 88 },
		{ "comm is )", "1 ())" STAT_MID "5" STAT_TAIL, 0, 5 },
		{ "comm empty", "1 ()" STAT_MID "6" STAT_TAIL, 0, 6 },
		{ "ends after field 22", "1 (a)" STAT_MID "9", 0, 9 },
		{ "ends with newline", "1 (a)" STAT_MID "9\n", 0, 9 },
		{ "u64 max", "1 (a)" STAT_MID "18446744073709551615" STAT_TAIL, 0, UINT64_MAX },
		{ "overflow", "1 (a)" STAT_MID "18446744073709551616" STAT_TAIL, -ERANGE, 0 },
		{ "truncated before 22", "1 (a)" STAT_MID, -EINVAL, 0 },
		{ "truncated in middle", "1 (a) R 6670 6670 5148", -EINVAL, 0 },
		{ "no close paren", "1 (a R 1 2 3", -EINVAL, 0 },
		{ "no open paren", "1 a) R 1 2 3", -EINVAL, 0 },
		{ "no pid", "(a)" STAT_MID "9" STAT_TAIL, -EINVAL, 0 },
		{ "negative start", "1 (a)" STAT_MID "-9" STAT_TAIL, -EINVAL, 0 },
		{ "junk start", "1 (a)" STAT_MID "9x" STAT_TAIL, -EINVAL, 0 },
		{ "empty field", "1 (a) R  6670 6670 5148 0 -1 4194304 103 0 0 0 0 0 0 0 20 0 1 0 9" STAT_TAIL, -EINVAL, 0 },
		{ "empty", "", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = 0xdeadbeef;
		int r = rgroup__parse_stat_starttime(cases[i].text, &v);

		if (r != cases[i].ret)
			fail_msg("case \"%s\": returned %d, expected %d", cases[i].name, r, cases[i].ret);
		if (r == 0 && v != cases[i].start)
			fail_msg("case \"%s\": %" PRIu64 ", expected %" PRIu64, cases[i].name, v, cases[i].start);
		if (r < 0 && v != 0xdeadbeef)
			fail_msg("case \"%s\": output written on failure", cases[i].name);
	}
}

/* Fields 3..13, then utime, stime, 16..18, nice, and the rest. */
#define STAT_CPU(ut, st, nice) " R 1 1 1 0 -1 4194304 103 0 0 0 " ut " " st " 0 0 20 " nice \
	" 1 0 1044555" STAT_TAIL

static void test_stat_cpu(void **state)
{
	static const struct {
		const char *name, *text;
		int ret;
		uint64_t ticks;
		int nice;
	} cases[] = {
		{ "real", "6678 (cat)" STAT_CPU("12", "3", "0"), 0, 15, 0 },
		{ "negative nice", "1 (a b)" STAT_CPU("0", "0", "-20"), 0, 0, -20 },
		{ "nice 19", "1 (x) y)" STAT_CPU("7", "0", "19"), 0, 7, 19 },
		{ "live stat line", "1 (a)" STAT_MID "9" STAT_TAIL, 0, 0, 0 },
		{ "nice 20", "1 (a)" STAT_CPU("1", "1", "20"), -ERANGE, 0, 0 },
		{ "nice -21", "1 (a)" STAT_CPU("1", "1", "-21"), -ERANGE, 0, 0 },
		{ "ticks overflow", "1 (a)" STAT_CPU("18446744073709551615", "1", "0"), -ERANGE, 0, 0 },
		{ "junk utime", "1 (a)" STAT_CPU("1x", "1", "0"), -EINVAL, 0, 0 },
		{ "negative stime", "1 (a)" STAT_CPU("1", "-1", "0"), -EINVAL, 0, 0 },
		{ "junk nice", "1 (a)" STAT_CPU("1", "1", "-"), -EINVAL, 0, 0 },
		{ "truncated before nice", "1 (a) R 1 1 1 0 -1 4194304 103 0 0 0 1 2 0", -EINVAL, 0, 0 },
		{ "no comm", "1 a R 1", -EINVAL, 0, 0 },
		{ "empty", "", -EINVAL, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t t = 0xdeadbeef;
		int n = 99;
		int r = rgroup__parse_stat_cpu(cases[i].text, &t, &n);

		if (r != cases[i].ret)
			fail_msg("case \"%s\": returned %d, expected %d", cases[i].name, r, cases[i].ret);
		if (r == 0 && (t != cases[i].ticks || n != cases[i].nice))
			fail_msg("case \"%s\": %" PRIu64 " ticks, nice %d, expected %" PRIu64 ", %d",
				 cases[i].name, t, n, cases[i].ticks, cases[i].nice);
		if (r < 0 && (t != 0xdeadbeef || n != 99))
			fail_msg("case \"%s\": output written on failure", cases[i].name);
	}
}

/* ---- the native kernel's /proc/PID/task/TID/rgroup --------------------------- */

static void test_kgroup(void **state)
{
	static const struct {
		const char *name, *text;
		int ret;
		struct rgroup__kgroup g;
	} cases[] = {
		{ "in none", "0 0 0 0 0 0\n", 0, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
		{ "nested", "17 16 2 5 123456789 1\n", 0, { 17, 16, 2, 5, 123456789, 1, 0, 0, 0, 0, 0, 0 } },
		{ "nice -20", "3 0 1 -20 0 1\n", 0, { 3, 0, 1, -20, 0, 1, 0, 0, 0, 0, 0, 0 } },
		{ "nice 19, no newline", "3 0 1 19 0 0", 0, { 3, 0, 1, 19, 0, 0, 0, 0, 0, 0, 0, 0 } },
		{ "no cap fields (an older kernel)", "9 0 1 0 5 1\n", 0, { 9, 0, 1, 0, 5, 1, 0, 0, 0, 0, 0, 0 } },
		{ "cap and throttling", "9 0 1 0 5 1 20000 100000 3 12345\n", 0,
		  { 9, 0, 1, 0, 5, 1, 1, 20000, 100000, 3, 12345, 0 } },
		{ "no cap", "9 0 1 0 5 1 0 0 0 0\n", 0, { 9, 0, 1, 0, 5, 1, 1, 0, 0, 0, 0, 0 } },
		{ "fields appended", "9 0 1 0 5 1 0 0 0 0 77 x\n", 0, { 9, 0, 1, 0, 5, 1, 1, 0, 0, 0, 0, 0 } },
		{ "cap cut short", "9 0 1 0 5 1 20000 100000\n", -EINVAL, { 0 } },
		{ "depth 32", "9 8 32 0 5 1\n", 0, { 9, 8, 32, 0, 5, 1, 0, 0, 0, 0, 0, 0 } },
		{ "depth 33", "9 8 33 0 5 1\n", -EINVAL, { 0 } },
		{ "nice 20", "3 0 1 20 0 1\n", -EINVAL, { 0 } },
		{ "nice -21", "3 0 1 -21 0 1\n", -ERANGE, { 0 } },
		{ "attached 2", "3 0 1 0 0 2\n", -EINVAL, { 0 } },
		{ "five fields", "3 0 1 0 0\n", -EINVAL, { 0 } },
		{ "two spaces", "3  0 1 0 0 1\n", -EINVAL, { 0 } },
		{ "negative id", "-3 0 1 0 0 1\n", -EINVAL, { 0 } },
		{ "id overflow", "18446744073709551616 0 1 0 0 1\n", -ERANGE, { 0 } },
		{ "junk after", "3 0 1 0 0 1x\n", -EINVAL, { 0 } },
		{ "empty", "", -EINVAL, { 0 } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rgroup__kgroup g = { 42, 42, 42, 42, 42, 42, 42, 42, 42, 42, 42, 0 };
		int r = rgroup__parse_kgroup(cases[i].text, &g);

		if (r != cases[i].ret)
			fail_msg("case \"%s\": returned %d, expected %d", cases[i].name, r, cases[i].ret);
		const struct rgroup__kgroup *w = &cases[i].g;

		if (r == 0 && (g.id != w->id || g.parent != w->parent || g.depth != w->depth ||
			       g.nice != w->nice || g.usage_ns != w->usage_ns || g.attached != w->attached ||
			       g.has_cap != w->has_cap || g.cap_quota_us != w->cap_quota_us ||
			       g.cap_period_us != w->cap_period_us || g.nr_throttled != w->nr_throttled ||
			       g.throttled_us != w->throttled_us))
			fail_msg("case \"%s\": id %" PRIu64 " parent %" PRIu64 " depth %u nice %d "
				 "usage %" PRIu64 " attached %d cap %d %" PRIu64 "/%" PRIu64 " throttled %"
				 PRIu64 " %" PRIu64, cases[i].name, g.id, g.parent, g.depth, g.nice,
				 g.usage_ns, g.attached, g.has_cap, g.cap_quota_us, g.cap_period_us,
				 g.nr_throttled, g.throttled_us);
		if (r < 0 && g.id != 42)
			fail_msg("case \"%s\": output written on failure", cases[i].name);
	}
}

/* A /proc/PID/rgroups line: the sixth field counts threads. */
static void test_kgroup_list(void **state)
{
	struct rgroup__kgroup g = { 0 };

	(void)state;
	assert_int_equal(rgroup__parse_kgroup_list("2 1 2 10 49435940 22 0 0 0 0\n", &g), 0);
	assert_true(g.id == 2 && g.parent == 1 && g.depth == 2 && g.nice == 10 && g.threads == 22 &&
		    g.attached == 0 && g.has_cap);
	assert_int_equal(rgroup__parse_kgroup_list("1 0 1 0 5 0 80000 100000 0 0\n2 1 2 0 5 3\n", &g), 0);
	assert_true(g.id == 1 && g.threads == 0 && g.cap_quota_us == 80000);
	/* The per-thread file has no such count: 22 is no "attached". */
	assert_int_equal(rgroup__parse_kgroup("2 1 2 10 49435940 22\n", &g), -EINVAL);
	assert_int_equal(rgroup__parse_kgroup_list("2 1 33 10 49435940 22\n", &g), -EINVAL);
	assert_int_equal(rgroup__parse_kgroup("2 1 2 10 49435940 1\n", &g), 0);
	assert_true(g.attached == 1 && g.threads == 0);

	/* One line after another, a bad one skipped; the last without a
	 * newline. */
	static const char list[] = "1 0 1 0 5 0\nnot a line\n2 1 2 3 5 4\n3 2 3 0 5 1";
	const char *pos = list;
	uint64_t seen[4];
	int n = 0;

	while (n < 4 && rgroup__parse_kgroup_list_next(&pos, &g) == 0)
		seen[n++] = g.id;
	assert_int_equal(n, 3);
	assert_true(seen[0] == 1 && seen[1] == 2 && seen[2] == 3 && *pos == '\0');
	assert_int_equal(rgroup__parse_kgroup_list_next(&pos, &g), -ENOENT);
	assert_int_equal(rgroup__find_kgroup_list(list, 2, &g), 0);
	assert_true(g.parent == 1 && g.nice == 3 && g.threads == 4);
	assert_int_equal(rgroup__find_kgroup_list(list, 9, &g), -ESRCH);
	assert_int_equal(rgroup__find_kgroup_list("", 1, &g), -ESRCH);
}

/* ---- directory names ------------------------------------------------------- */

static void test_dirname_roundtrip(void **state)
{
	static const struct {
		pid_t pid;
		uint64_t start, id;
		const char *name;
	} cases[] = {
		{ 1, 0, 0, "rgroup-1-0-0" },
		{ 4242, 1044555, 7, "rgroup-4242-1044555-7" },
		{ 2147483647, UINT64_MAX, UINT64_MAX,
		  "rgroup-2147483647-18446744073709551615-18446744073709551615" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char buf[64];
		pid_t pid;
		uint64_t start, id;

		assert_int_equal(rgroup__format_dirname(buf, sizeof(buf), cases[i].pid,
							cases[i].start, cases[i].id), 0);
		assert_string_equal(buf, cases[i].name);
		assert_int_equal(rgroup__parse_dirname(buf, &pid, &start, &id), 0);
		assert_int_equal(pid, cases[i].pid);
		assert_true(start == cases[i].start);
		assert_true(id == cases[i].id);
	}
}

static void test_dirname_format_errors(void **state)
{
	char buf[64];

	(void)state;
	/* "rgroup-1-2-3" needs 13 bytes */
	strcpy(buf, "untouched");
	assert_int_equal(rgroup__format_dirname(buf, 12, 1, 2, 3), -ENAMETOOLONG);
	assert_string_equal(buf, "untouched");
	assert_int_equal(rgroup__format_dirname(buf, 13, 1, 2, 3), 0);
	assert_string_equal(buf, "rgroup-1-2-3");
	assert_int_equal(rgroup__format_dirname(buf, sizeof(buf), 0, 2, 3), -EINVAL);
	assert_int_equal(rgroup__format_dirname(buf, sizeof(buf), -1, 2, 3), -EINVAL);
	assert_int_equal(rgroup__format_dirname(NULL, 0, 1, 2, 3), -ENAMETOOLONG);
}

static void test_dirname_parse_rejects(void **state)
{
	static const struct {
		const char *name;
		int ret;
	} cases[] = {
		{ "rgroup-1-2", -EINVAL },
		{ "rgroup-1-2-", -EINVAL },
		{ "rgroup--2-3", -EINVAL },
		{ "rgroup-1--3", -EINVAL },
		{ "rgroup-1-2-3-", -EINVAL },
		{ "rgroup-1-2-3-4", -EINVAL },
		{ "rgroup-1-2-3x", -EINVAL },
		{ "rgroup-1-2-3 ", -EINVAL },
		{ "rgroup-1-2-3\n", -EINVAL },
		{ " rgroup-1-2-3", -EINVAL },
		{ "rgroup-+1-2-3", -EINVAL },
		{ "rgroup--1-2-3", -EINVAL },
		{ "rgroup-1-+2-3", -EINVAL },
		{ "rgroup-1-2--3", -EINVAL },
		{ "rgroup-01-2-3", -EINVAL },
		{ "rgroup-1-02-3", -EINVAL },
		{ "rgroup-1-2-03", -EINVAL },
		{ "rgroup-0-2-3", -EINVAL },
		{ "rgroup-0x1-2-3", -EINVAL },
		{ "Rgroup-1-2-3", -EINVAL },
		{ "rgroup_1_2_3", -EINVAL },
		{ "rgroup-", -EINVAL },
		{ "rgroup", -EINVAL },
		{ "", -EINVAL },
		{ "user.slice", -EINVAL },
		{ "rgroup-2147483648-2-3", -ERANGE },
		{ "rgroup-1-18446744073709551616-3", -ERANGE },
		{ "rgroup-1-2-18446744073709551616", -ERANGE },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		pid_t pid = 99;
		uint64_t start = 99, id = 99;
		int r = rgroup__parse_dirname(cases[i].name, &pid, &start, &id);

		if (r != cases[i].ret)
			fail_msg("case \"%s\": returned %d, expected %d", cases[i].name, r, cases[i].ret);
		if (pid != 99 || start != 99 || id != 99)
			fail_msg("case \"%s\": output written on failure", cases[i].name);
	}
}

/* The form of a process outside the initial PID namespace. */
static void test_dirname_ns(void **state)
{
	static const struct {
		const char *name;
		int ret;
	} rejects[] = {
		{ "rgroup-1-2-3-ns", -EINVAL },
		{ "rgroup-1-2-3-ns0", -EINVAL },
		{ "rgroup-1-2-3-ns01", -EINVAL },
		{ "rgroup-1-2-3-nsx", -EINVAL },
		{ "rgroup-1-2-3-ns5-", -EINVAL },
		{ "rgroup-1-2-3-ns5 ", -EINVAL },
		{ "rgroup-1-2-3-NS5", -EINVAL },
		{ "rgroup-1-2-3ns5", -EINVAL },
		{ "rgroup-1-2-3-ns+5", -EINVAL },
		{ "rgroup-1-2-3-ns18446744073709551616", -ERANGE },
	};
	char buf[96];
	pid_t pid;
	uint64_t start, pidns, id;

	(void)state;
	assert_int_equal(rgroup__format_dirname_ns(buf, sizeof(buf), 1, 2741650, 4026532175u, 7), 0);
	assert_string_equal(buf, "rgroup-1-2741650-7-ns4026532175");
	assert_int_equal(rgroup__parse_dirname_ns(buf, &pid, &start, &pidns, &id), 0);
	assert_int_equal(pid, 1);
	assert_true(start == 2741650 && pidns == 4026532175u && id == 7);
	/* Both forms for the plain parser; 0 for the initial namespace. */
	assert_int_equal(rgroup__parse_dirname(buf, &pid, &start, &id), 0);
	assert_int_equal(rgroup__format_dirname_ns(buf, sizeof(buf), 5, 6, 0, 8), 0);
	assert_string_equal(buf, "rgroup-5-6-8");
	assert_int_equal(rgroup__parse_dirname_ns(buf, &pid, &start, &pidns, &id), 0);
	assert_true(pidns == 0);
	/* Whole or not at all. */
	strcpy(buf, "untouched");
	assert_int_equal(rgroup__format_dirname_ns(buf, 20, 1, 2, 4026532175u, 3), -ENAMETOOLONG);
	assert_string_equal(buf, "untouched");
	for (size_t i = 0; i < ARRAY_SIZE(rejects); i++) {
		pid = 99;
		start = pidns = id = 99;
		int r = rgroup__parse_dirname_ns(rejects[i].name, &pid, &start, &pidns, &id);

		if (r != rejects[i].ret)
			fail_msg("case \"%s\": returned %d, expected %d", rejects[i].name, r,
				 rejects[i].ret);
		if (pid != 99 || start != 99 || pidns != 99 || id != 99)
			fail_msg("case \"%s\": output written on failure", rejects[i].name);
	}
}

static void test_status_nspid(void **state)
{
	pid_t inner = 99;
	int levels = 99;

	(void)state;
	assert_int_equal(rgroup__parse_status_nspid("Name:\tx\nNSpid:\t4115\n", &inner, &levels), 0);
	assert_int_equal(inner, 4115);
	assert_int_equal(levels, 1);
	assert_int_equal(rgroup__parse_status_nspid("Pid:\t9\nNSpid:\t4115\t7\t1\nNSpgid:\t2\n",
						    &inner, &levels), 0);
	assert_int_equal(inner, 1);
	assert_int_equal(levels, 3);
	inner = levels = 99;
	assert_int_equal(rgroup__parse_status_nspid("Name:\tx\nPid:\t5\n", &inner, &levels), -ENOENT);
	assert_int_equal(rgroup__parse_status_nspid("NSpid:\n", &inner, &levels), -EINVAL);
	assert_int_equal(rgroup__parse_status_nspid("NSpid:\t0\n", &inner, &levels), -EINVAL);
	assert_int_equal(rgroup__parse_status_nspid("NSpid:\t12x\n", &inner, &levels), -EINVAL);
	assert_int_equal(rgroup__parse_status_nspid("NSpid:\t2147483648\n", &inner, &levels), -ERANGE);
	assert_int_equal(rgroup__parse_status_nspid("xNSpid:\t5\n", &inner, &levels), -ENOENT);
	assert_true(inner == 99 && levels == 99);
}

/* ---- governor state files ------------------------------------------------- */

static void test_statename(void **state)
{
	static const char *const rejects[] = {
		"rgroup-1-2.stat", "rgroup-1-2.state ", "rgroup-1-2.state.tm",
		"rgroup-1-2.state.tmp.tmp", "rgroup-1-2-3.state", "rgroup-1.state",
		"rgroup-01-2.state", "rgroup-1-02.state", "rgroup-0-2.state",
		"rgroup--1-2.state", "rgroup-1-+2.state", "rgroup-1-2", "Rgroup-1-2.state",
		".rgroup-1-2.state", "rgroup-1-2.statex", "",
	};
	char buf[64];
	pid_t pid = 99;
	uint64_t start = 99;
	int tmp = 99;

	(void)state;
	assert_int_equal(rgroup__format_statename(buf, sizeof(buf), 4242, 1044555, 0), 0);
	assert_string_equal(buf, "rgroup-4242-1044555.state");
	assert_int_equal(rgroup__parse_statename(buf, &pid, &start, &tmp), 0);
	assert_int_equal(pid, 4242);
	assert_true(start == 1044555 && tmp == 0);
	assert_int_equal(rgroup__format_statename(buf, sizeof(buf), 2147483647, UINT64_MAX, 1), 0);
	assert_string_equal(buf, "rgroup-2147483647-18446744073709551615.state.tmp");
	assert_int_equal(rgroup__parse_statename(buf, &pid, &start, &tmp), 0);
	assert_true(pid == 2147483647 && start == UINT64_MAX && tmp == 1);
	/* "rgroup-1-2.state" needs 17 bytes */
	assert_int_equal(rgroup__format_statename(buf, 16, 1, 2, 0), -ENAMETOOLONG);
	assert_int_equal(rgroup__format_statename(buf, 17, 1, 2, 0), 0);
	assert_int_equal(rgroup__format_statename(buf, sizeof(buf), 0, 2, 0), -EINVAL);

	for (size_t i = 0; i < ARRAY_SIZE(rejects); i++) {
		pid = 99, start = 99, tmp = 99;
		if (rgroup__parse_statename(rejects[i], &pid, &start, &tmp) != -EINVAL)
			fail_msg("case \"%s\": accepted", rejects[i]);
		if (pid != 99 || start != 99 || tmp != 99)
			fail_msg("case \"%s\": output written on failure", rejects[i]);
	}
	assert_int_equal(rgroup__parse_statename("rgroup-2147483648-1.state", &pid, &start, &tmp),
			 -ERANGE);
}

/* What rgroup__parse_state() handed over: the groups and their tids. */
static struct {
	int n;
	struct rgroup__state_group g[4];
	pid_t tids[4][4];
	pid_t *scratch;
	int stop_at;          /* return 7 at this group (1-based), 0: never */
} got;

static int collect_group(void *arg, const struct rgroup__state_group *g)
{
	(void)arg;
	if (got.n < 4) {
		got.g[got.n] = *g;
		memcpy(got.tids[got.n], got.scratch, sizeof(got.tids[0]));
	}
	got.n++;
	return got.n == got.stop_at ? 7 : 0;
}

static int parse_state(const char *text, struct rgroup__state *h)
{
	static pid_t scratch[4];

	memset(&got, 0, sizeof(got));
	memset(scratch, 0, sizeof(scratch));
	got.scratch = scratch;
	return rgroup__parse_state(text, h, scratch, 4, collect_group, NULL);
}

static void test_state_roundtrip(void **state)
{
	struct rgroup__state h = {
		.pid = 4242, .starttime = 1044555, .backend = "governor",
		.realtime_ns = 1796289318562031707ull, .monotonic_ns = 18620850317439ull,
		.pidns = 4026532174ull,
	}, back;
	struct rgroup__state_group g[2] = {
		{ .id = 1, .parent = 0, .depth = 1, .nice = -20, .weight = 88761,
		  .usage_ns = 306983894, .dead_ns = 5, .throttled_ns = 79713054 },
		{ .id = 7, .parent = 1, .depth = 2, .nice = 19, .weight = 15,
		  .usage_ns = UINT64_MAX, .dead_ns = 0, .throttled_ns = 0 },
	};
	char text[1024];
	size_t off = 0;
	int r;

	(void)state;
	r = rgroup__format_state_head(text, sizeof(text), &h);
	assert_true(r > 0);
	off += (size_t)r;
	r = rgroup__format_state_group(text + off, sizeof(text) - off, &g[0]);
	assert_true(r > 0);
	off += (size_t)r;
	off += (size_t)snprintf(text + off, sizeof(text) - off, "101,102,2147483647\n");
	r = rgroup__format_state_group(text + off, sizeof(text) - off, &g[1]);
	assert_true(r > 0);
	off += (size_t)r;
	snprintf(text + off, sizeof(text) - off, "\nend\n");   /* no threads */
	{
		char small[20];

		assert_int_equal(rgroup__format_state_group(small, sizeof(small), &g[0]),
				 -ENAMETOOLONG);
	}

	assert_int_equal(parse_state(text, &back), 0);
	assert_int_equal(back.version, RGROUP__STATE_VERSION);
	assert_int_equal(back.pid, 4242);
	assert_true(back.starttime == 1044555);
	assert_string_equal(back.backend, "governor");
	assert_true(back.realtime_ns == h.realtime_ns && back.monotonic_ns == h.monotonic_ns);
	assert_true(back.pidns == h.pidns);
	assert_int_equal(back.truncated, 0);
	assert_int_equal(got.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_true(got.g[i].id == g[i].id && got.g[i].parent == g[i].parent);
		assert_int_equal(got.g[i].depth, g[i].depth);
		assert_int_equal(got.g[i].nice, g[i].nice);
		assert_int_equal(got.g[i].weight, g[i].weight);
		assert_true(got.g[i].usage_ns == g[i].usage_ns);
		assert_true(got.g[i].dead_ns == g[i].dead_ns);
		assert_true(got.g[i].throttled_ns == g[i].throttled_ns);
	}
	assert_int_equal(got.g[0].ntids, 3);
	assert_int_equal(got.tids[0][0], 101);
	assert_int_equal(got.tids[0][2], 2147483647);
	assert_int_equal(got.g[1].ntids, 0);

	/* What the callback returns ends the walk and comes back. */
	memset(&back, 0, sizeof(back));
	got.n = 0;
	got.stop_at = 1;
	assert_int_equal(rgroup__parse_state(text, &back, got.scratch, 4, collect_group, NULL), 7);
	assert_int_equal(back.pid, 0);
}

#define HEAD "rgroup-state 1 pid=5 starttime=9 backend=governor realtime_ns=1 monotonic_ns=2\n"
#define GROUP "group id=1 parent=0 depth=1 nice=0 weight=1024 usage_ns=3 dead_ns=0 throttled_ns=0 tids=6,7\n"

static void test_state_cases(void **state)
{
	static const struct {
		const char *name, *text;
		int ret, groups, truncated;
		unsigned int ntids;
	} cases[] = {
		{ "plain", HEAD GROUP "end\n", 0, 1, 0, 2 },
		{ "no groups", HEAD "end\n", 0, 0, 0, 0 },
		{ "truncated", HEAD GROUP "truncated\n", 0, 1, 1, 2 },
		{ "more tids than the array", HEAD
		  "group id=1 parent=0 depth=1 nice=0 weight=1024 tids=1,2,3,4,5,6\nend\n", 0, 1, 0, 6 },
		{ "optional keys left out", HEAD
		  "group id=1 parent=0 depth=1 nice=-3 weight=1991\nend\n", 0, 1, 0, 0 },
		{ "unknown key and line kind", HEAD "note hello\n"
		  "group id=1 parent=0 depth=1 nice=0 weight=1024 colour=red tids=6\nend\n", 0, 1, 0, 1 },
		{ "keys in another order", HEAD
		  "group weight=1024 nice=0 depth=1 parent=0 id=1\nend\n", 0, 1, 0, 0 },
		{ "header only, times left out",
		  "rgroup-state 1 pid=5 starttime=9 backend=governor\nend\n", 0, 0, 0, 0 },
		{ "no end", HEAD GROUP, -EINVAL, 1, 0, 0 },
		{ "end without newline", HEAD GROUP "end", -EINVAL, 1, 0, 0 },
		{ "text after end", HEAD "end\n" GROUP, -EINVAL, 0, 0, 0 },
		{ "cut group line", HEAD "group id=1 parent=0 dep", -EINVAL, 0, 0, 0 },
		{ "empty", "", -EINVAL, 0, 0, 0 },
		{ "no header", GROUP "end\n", -EINVAL, 0, 0, 0 },
		{ "version 2", "rgroup-state 2 pid=5 starttime=9 backend=x\nend\n", -ENOTSUP, 0, 0, 0 },
		{ "version word", "rgroup-state x pid=5 starttime=9 backend=x\nend\n", -EINVAL, 0, 0, 0 },
		{ "version glued", "rgroup-state 1x pid=5 starttime=9 backend=x\nend\n", -EINVAL, 0, 0, 0 },
		{ "pid 0", "rgroup-state 1 pid=0 starttime=9 backend=x\nend\n", -EINVAL, 0, 0, 0 },
		{ "pid too big", "rgroup-state 1 pid=2147483648 starttime=9 backend=x\nend\n", -ERANGE, 0, 0, 0 },
		{ "no backend", "rgroup-state 1 pid=5 starttime=9\nend\n", -EINVAL, 0, 0, 0 },
		{ "empty backend", "rgroup-state 1 pid=5 starttime=9 backend=\nend\n", -EINVAL, 0, 0, 0 },
		{ "long backend", "rgroup-state 1 pid=5 starttime=9 backend=0123456789abcdef\nend\n", -EINVAL, 0, 0, 0 },
		{ "no starttime", "rgroup-state 1 pid=5 backend=x\nend\n", -EINVAL, 0, 0, 0 },
		{ "signed pid", "rgroup-state 1 pid=+5 starttime=9 backend=x\nend\n", -EINVAL, 0, 0, 0 },
		{ "id 0", HEAD "group id=0 parent=0 depth=1 nice=0 weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "no id", HEAD "group parent=0 depth=1 nice=0 weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "no nice", HEAD "group id=1 parent=0 depth=1 weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "nice 20", HEAD "group id=1 parent=0 depth=1 nice=20 weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "nice -21", HEAD "group id=1 parent=0 depth=1 nice=-21 weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "nice glued", HEAD "group id=1 parent=0 depth=1 nice=5x weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "top-level at depth 2", HEAD "group id=1 parent=0 depth=2 nice=0 weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "nested at depth 1", HEAD "group id=2 parent=1 depth=1 nice=0 weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "depth 0", HEAD "group id=2 parent=1 depth=0 nice=0 weight=1\nend\n", -EINVAL, 0, 0, 0 },
		{ "too deep", HEAD "group id=2 parent=1 depth=33 nice=0 weight=1\nend\n", -ERANGE, 0, 0, 0 },
		{ "weight too big", HEAD "group id=1 parent=0 depth=1 nice=0 weight=4294967296\nend\n", -ERANGE, 0, 0, 0 },
		{ "usage not a number", HEAD "group id=1 parent=0 depth=1 nice=0 weight=1 usage_ns=x\nend\n", -EINVAL, 0, 0, 0 },
		{ "tid 0", HEAD "group id=1 parent=0 depth=1 nice=0 weight=1 tids=0\nend\n", -EINVAL, 0, 0, 0 },
		{ "tids trailing comma", HEAD "group id=1 parent=0 depth=1 nice=0 weight=1 tids=5,\nend\n", -EINVAL, 0, 0, 0 },
		{ "tids double comma", HEAD "group id=1 parent=0 depth=1 nice=0 weight=1 tids=5,,6\nend\n", -EINVAL, 0, 0, 0 },
		{ "tids leading comma", HEAD "group id=1 parent=0 depth=1 nice=0 weight=1 tids=,5\nend\n", -EINVAL, 0, 0, 0 },
		{ "tid too big", HEAD "group id=1 parent=0 depth=1 nice=0 weight=1 tids=2147483648\nend\n", -ERANGE, 0, 0, 0 },
		{ "second group bad", HEAD GROUP "group id=2\nend\n", -EINVAL, 1, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rgroup__state h = { .pid = 99 };
		int r = parse_state(cases[i].text, &h);

		if (r != cases[i].ret)
			fail_msg("case \"%s\": returned %d, expected %d", cases[i].name, r, cases[i].ret);
		if (got.n != cases[i].groups)
			fail_msg("case \"%s\": %d groups, expected %d", cases[i].name, got.n,
				 cases[i].groups);
		if (r < 0 && h.pid != 99)
			fail_msg("case \"%s\": header written on failure", cases[i].name);
		if (r == 0 && (h.pid != 5 || h.truncated != cases[i].truncated))
			fail_msg("case \"%s\": header pid %d truncated %d", cases[i].name, (int)h.pid,
				 h.truncated);
		if (r == 0 && got.n && got.g[0].ntids != cases[i].ntids)
			fail_msg("case \"%s\": %u tids, expected %u", cases[i].name, got.g[0].ntids,
				 cases[i].ntids);
	}
	assert_int_equal(rgroup__parse_state(NULL, &(struct rgroup__state){ 0 }, NULL, 0,
					     collect_group, NULL), -EINVAL);
	assert_int_equal(rgroup__parse_state(HEAD "end\n", NULL, NULL, 0, collect_group, NULL),
			 -EINVAL);
	assert_int_equal(rgroup__parse_state(HEAD "end\n", &(struct rgroup__state){ 0 }, NULL, 1,
					     collect_group, NULL), -EINVAL);
}

/* ---- this machine ---------------------------------------------------------- */

/*
 * The live /proc texts of the machine running the test: whatever its
 * layout, every line must be well-formed to our parsers (no -EINVAL), and
 * the start time must be one this process can have had.
 */
static void test_live_proc(void **state)
{
	static char buf[1 << 20];
	char path[PATH_MAX];
	struct rgroup__mount m;
	uint64_t start;
	struct timespec now;
	int r;

	(void)state;
	assert_true(rgroup__read_path("/proc/self/stat", buf, sizeof(buf)) > 0);
	assert_int_equal(rgroup__parse_stat_starttime(buf, &start), 0);
	assert_int_equal(clock_gettime(CLOCK_BOOTTIME, &now), 0);
	assert_true(start <= (uint64_t)(now.tv_sec + 1) * (uint64_t)sysconf(_SC_CLK_TCK));
	{
		uint64_t flags;

		/* a live thread: not exiting (PF_EXITING, 0x4) */
		assert_int_equal(rgroup__parse_stat_flags(buf, &flags), 0);
		assert_int_equal(flags & 0x4, 0);
		assert_int_equal(rgroup__parse_stat_flags("1 (x) S", &flags), -EINVAL);
	}
	{
		uint64_t ticks;
		int nice;

		assert_int_equal(rgroup__parse_stat_cpu(buf, &ticks, &nice), 0);
		assert_int_equal(nice, getpriority(PRIO_PROCESS, 0));
	}

	assert_true(rgroup__read_path("/proc/self/mountinfo", buf, sizeof(buf)) > 0);
	for (const char *c = "\0cpu\0cpuacct\0memory\0name=systemd\0"; ; c += strlen(c) + 1) {
		const char *ctrl = *c ? c : NULL;

		r = rgroup__parse_mountinfo(buf, ctrl, &m);
		if (r != 0 && r != -ENOENT)
			fail_msg("mountinfo, %s: %d", ctrl ? ctrl : "v2", r);
		if (ctrl && !strcmp(ctrl, "name=systemd"))
			break;
	}

	assert_true(rgroup__read_path("/proc/self/cgroup", buf, sizeof(buf)) > 0);
	r = rgroup__parse_proc_cgroup(buf, NULL, path, sizeof(path));
	if (r != 0 && r != -ENOENT)
		fail_msg("/proc/self/cgroup v2: %d", r);
	r = rgroup__parse_proc_cgroup(buf, "cpu", path, sizeof(path));
	if (r != 0 && r != -ENOENT)
		fail_msg("/proc/self/cgroup cpu: %d", r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_cgroup_table),
		cmocka_unit_test(test_proc_cgroup_buffer),
		cmocka_unit_test(test_mountinfo_table),
		cmocka_unit_test(test_mountinfo_too_long),
		cmocka_unit_test(test_cgroup_dir_table),
		cmocka_unit_test(test_cgroup_dir_buffer),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_keyed_table),
		cmocka_unit_test(test_has_token),
		cmocka_unit_test(test_cgtype),
		cmocka_unit_test(test_tids),
		cmocka_unit_test(test_tids_malformed),
		cmocka_unit_test(test_stat_starttime),
		cmocka_unit_test(test_stat_cpu),
		cmocka_unit_test(test_kgroup),
		cmocka_unit_test(test_kgroup_list),
		cmocka_unit_test(test_dirname_roundtrip),
		cmocka_unit_test(test_dirname_format_errors),
		cmocka_unit_test(test_dirname_parse_rejects),
		cmocka_unit_test(test_dirname_ns),
		cmocka_unit_test(test_status_nspid),
		cmocka_unit_test(test_statename),
		cmocka_unit_test(test_state_roundtrip),
		cmocka_unit_test(test_state_cases),
		cmocka_unit_test(test_live_proc), /* keep last: see below */
	};
	size_t n = ARRAY_SIZE(tests);

	/* cmocka's TAP output reports skip() as "not ok", which the harness
	 * counts as a failure: leave the live case out instead, and say so;
	 * in strict mode (CI) a skip is a failure, so it stays in and fails. */
	const char *strict = getenv("RGROUP_TEST_STRICT");
	if (access("/proc/self/mountinfo", R_OK) != 0 && !(strict && *strict && strcmp(strict, "0"))) {
		printf("# SKIP test_live_proc: /proc is not mounted here\n");
		n--;
	}
	return _cmocka_run_group_tests("parse", tests, n, NULL, NULL);
}
