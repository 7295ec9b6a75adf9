/* SPDX-License-Identifier: MIT */
/* check.c - the test harness: skips, strict mode, the table of cases, and
 * a watchdog that says where a hung program stands. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>

#include "check.h"

int rgt_failures;
int rgt_skipped_case;
static const char *current_case = "(none)";

int rgt_strict(void)
{
	const char *s = getenv("RGROUP_TEST_STRICT");

	return s && *s && strcmp(s, "0") != 0;
}

/* "SKIP: why" (or, in strict mode, the failure it becomes) on stderr. */
static void say_skip(const char *indent, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s%s", indent,
		rgt_strict() ? "FAIL (strict mode, would skip): " : *indent ? "skip: " : "SKIP: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void rgt_skip_all(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_skip("", fmt, ap);
	va_end(ap);
	exit(rgt_strict() ? 1 : 77);
}

void rgt_skip_case(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_skip("  ", fmt, ap);
	va_end(ap);
	if (rgt_strict())
		rgt_failures++;
	else
		rgt_skipped_case = 1;
}

/* ---- The watchdog ---------------------------------------------------------
 * RGROUP_TEST_WATCHDOG=N: a program still running after N seconds prints,
 * for each of its threads, its name, state, wait channel and kernel stack
 * (where /proc shows them), and fails. It runs in a signal handler of a
 * program that may hold any lock, so it uses system calls only. */

static void put(const char *s)
{
	ssize_t r = write(2, s, strlen(s));
	(void)r;
}

static void put_file(const char *path, const char *prefix)
{
	char buf[2048];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	put(prefix);
	put(buf);
	if (buf[n - 1] != '\n')
		put("\n");
}

/* dir/name/file into path (short names only: /proc's). */
static void task_path(char *path, size_t len, const char *tid, const char *file)
{
	const char *parts[] = { "/proc/self/task/", tid, "/", file };
	size_t k = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (const char *c = parts[i]; *c && k + 1 < len; c++)
			path[k++] = *c;
	path[k] = '\0';
}

static void watchdog(int sig)
{
	char dents[4096], path[96];
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	(void)sig;
	put("WATCHDOG: the program did not end in time; case ");
	put(current_case);
	put("; its threads:\n");
	while (fd >= 0 && (n = syscall(SYS_getdents64, fd, dents, sizeof(dents))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(dents + off);
			const char *t = d->d_name;

			off += d->d_reclen;
			if (*t == '.')
				continue;
			task_path(path, sizeof(path), t, "stat");
			put_file(path, "  stat  ");
			task_path(path, sizeof(path), t, "wchan");
			put_file(path, "  wchan ");
			task_path(path, sizeof(path), t, "stack");
			put_file(path, "  stack\n");
		}
	}
	if (fd >= 0)
		close(fd);
	_exit(1);
}

static void arm_watchdog(void)
{
	const char *s = getenv("RGROUP_TEST_WATCHDOG");
	int secs = s ? atoi(s) : 0;

	if (secs > 0) {
		signal(SIGALRM, watchdog);
		alarm((unsigned int)secs);
	}
}

/* Is the case asked for: no filter, or one of the arguments in its name? */
static int selected(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int a = 1; a < argc; a++)
		if (strstr(name, argv[a]))
			return 1;
	return 0;
}

int rgt_main(const struct rgt_case *cases, size_t n, int argc, char **argv)
{
	int ran = 0, any_skipped = 0;

	arm_watchdog();

	for (size_t i = 0; i < n; i++) {
		int before = rgt_failures;

		if (!selected(cases[i].name, argc, argv))
			continue;
		rgt_skipped_case = 0;
		current_case = cases[i].name;
		fprintf(stderr, "# %s\n", cases[i].name);
		cases[i].fn();
		ran++;
		any_skipped |= rgt_skipped_case;
		fprintf(stderr, "%s %s\n",
			rgt_failures > before ? "not ok" :
			rgt_skipped_case ? "skip" : "ok", cases[i].name);
	}
	if (!ran) {
		fprintf(stderr, "no case matched\n");
		return 1;
	}
	if (rgt_failures)
		return 1;
	return any_skipped ? 77 : 0;
}
