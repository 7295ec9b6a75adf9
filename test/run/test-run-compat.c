/* SPDX-License-Identifier: MIT */
/*
 * test-run-compat.c - `rgroup run` never changes what a program does. Each
 * program of a corpus of real Debian programs (PAM and libcap-ng tools,
 * systemd's, dbus, interpreters, the JVM, qemu, compressors with threads,
 * a database, ...) runs plainly, then under `rgroup run` with a rule that
 * matches no thread and with one that matches every named thread; the
 * exit status, the output and the error output must be the same. Also
 * early-main, whose library's constructor calls every function the preload
 * stands in for before the preload's own constructor has run, and the
 * exit status of a program that cannot be run (127, 126, as env gives).
 *
 * A program missing here skips its entry (it says which package has it);
 * in strict mode (CI) that fails.
 *
 * Environment (the build sets it): RGROUP_TEST_RGROUP, RGROUP_TEST_EARLY;
 * in the VM, whose image holds only what it is given, also
 * RGROUP_TEST_SHELL (the shell that runs each entry's command, dynamically
 * linked: a static one takes no preload; default /bin/sh) and
 * RGROUP_TEST_CORPUS (the entries given to it, by program name; the
 * others are listed as left out, by name, not counted as missing).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "sgroup.h"
#include "util.h"

static const char *rgroup_cmd, *early_cmd;
static char sg[PATH_MAX], dir[64], data[128];

/* The rules: one that matches no thread, one that matches every named one */
static const char *const rules[] = { "none=no-such-name:nice=5", "all=*:nice=5" };

struct outcome {
	int status;             /* exit status, 128 + signal, -1 timed out */
	char out[8192], err[8192];
};

static void slurp(const char *path, char *buf, size_t len)
{
	int n = rgt_read(path, buf, len);

	if (n < 0)
		snprintf(buf, len, "(%s)", n == -EFBIG ? "too long" : strerror(-n));
}

/* Run argv (under `rgroup run -g RULE --` when rule), stdin from /dev/null */
static void run(const char *const *argv, const char *rule, struct outcome *o)
{
	char out[96], err[96];
	const char *full[32];
	int n = 0, st;

	if (rule) {
		full[n++] = rgroup_cmd;
		full[n++] = "run";
		full[n++] = "-g";
		full[n++] = rule;
		full[n++] = "--";
	}
	for (int i = 0; argv[i] && n < 31; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	pid_t pid = fork();
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (in < 0 || fo < 0 || fe < 0 || dup2(in, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(120);
		execvp(full[0], (char *const *)full);
		_exit(errno == ENOENT ? 127 : 126);
	}
	o->status = -1;
	for (double end = scn_now() + 120; pid > 0;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid) {
			o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			break;
		}
		if (w < 0 || scn_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		scn_sleep(0.01);
	}
	slurp(out, o->out, sizeof(o->out));
	slurp(err, o->err, sizeof(o->err));
	unlink(out);
	unlink(err);
}

/* Take out the lines of rgroup run's report at exit (rgroup-run(1),
 * REPORT), which are rgroup run's and not the program's: "rgroup run:
 * rule N, group 'G': took ..." and "rgroup run: P (pid N) named no
 * thread: ...". Any other line stays, to be compared. */
static void drop_report(char *err)
{
	char *line = err, *out = err;

	while (*line) {
		char *end = strchrnul(line, '\n');
		size_t n = (size_t)(end - line) + (*end == '\n');
		int rule = 0, pos = 0;

		if (sscanf(line, "rgroup run: rule %d, group '%*[^']': took %n", &rule, &pos) == 1 && pos)
			;
		else if (!strncmp(line, "rgroup run: ", 12) &&
			 memmem(line, (size_t)(end - line), ") named no thread: ", 19))
			;
		else {
			memmove(out, line, n);
			out += n;
		}
		line += n;
	}
	*out = '\0';
}

/* The same program, plainly and under each rule: the same outcome (the
 * plain run's exit status in *status, if not NULL) */
static int same_everywhere(const char *what, const char *const *argv, int *status)
{
	static struct outcome plain, ruled;
	int ok = 1;

	run(argv, NULL, &plain);
	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		run(argv, rules[r], &ruled);
		drop_report(ruled.err);
		int same = ruled.status == plain.status && !strcmp(ruled.out, plain.out) &&
			   !strcmp(ruled.err, plain.err);
		CHECK(same, "%s under `rgroup run -g '%s'`: exit %d (plainly %d)%s%s%s%s", what,
		      rules[r], ruled.status, plain.status,
		      strcmp(ruled.out, plain.out) ? "; its output differs:\n" : "",
		      strcmp(ruled.out, plain.out) ? ruled.out : "",
		      strcmp(ruled.err, plain.err) ? "; its error output differs:\n" : "",
		      strcmp(ruled.err, plain.err) ? ruled.err : "");
		ok &= same;
	}
	if (status)
		*status = plain.status;
	return ok;
}

/* --- early-main: the preload's functions called before its constructor --- */

static void constructors(void)
{
	const char *argv[] = { early_cmd, NULL };
	struct outcome o;

	run(argv, NULL, &o);
	CHECK(o.status == 0 && strstr(o.out, "prctl 0\n") && strstr(o.out, "system 768\n"),
	      "early-main runs plainly: exit %d, %s%s", o.status, o.out, o.err);
	same_everywhere("early-main (calls in a constructor before the preload's)", argv, NULL);
}

/* --- a program that cannot be run ----------------------------------------- */

static void exit_codes(void)
{
	char noexec[128];
	const char *missing[] = { "/nonexistent/program", NULL };
	const char *byname[] = { "no-such-program-anywhere", NULL };
	const char *denied[] = { noexec, NULL };
	struct outcome o;

	snprintf(noexec, sizeof(noexec), "%s/not-executable", dir);
	FILE *f = fopen(noexec, "w");
	CHECK(f && fputs("#!/bin/sh\n", f) >= 0 && fclose(f) == 0, "write %s", noexec);
	run(missing, rules[0], &o);
	CHECK(o.status == 127, "a missing program: exit %d, want 127 (%s)", o.status, o.err);
	run(byname, rules[0], &o);
	CHECK(o.status == 127, "a program not on PATH: exit %d, want 127 (%s)", o.status, o.err);
	run(denied, rules[0], &o);
	CHECK(o.status == 126, "a file that is not executable: exit %d, want 126 (%s)", o.status,
	      o.err);
	unlink(noexec);
}

/* --- real programs ---------------------------------------------------------- */

struct prog {
	const char *need;       /* the program that must be there */
	const char *package;    /* the Debian package that has it */
	const char *cmd;        /* sh -c; $D is a 4 MB text file */
};

static const struct prog corpus[] = {
	{ "setpriv", "util-linux", "setpriv --dump" },                       /* libcap-ng */
	{ "runuser", "util-linux", "runuser -u nobody -- id -un" },          /* PAM */
	{ "su", "login", "su -s /bin/sh -c 'id -un' nobody" },               /* PAM */
	{ "journalctl", "systemd", "journalctl --version" },
	{ "systemctl", "systemd", "systemctl --version" },
	{ "busctl", "systemd", "busctl --version" },
	{ "dbus-daemon", "dbus-daemon", "dbus-daemon --version" },
	{ "python3", "python3",
	  "python3 -c 'import threading\nt = [threading.Thread(target=sum, args=(range(200000),)) for _ in range(4)]\n"
	  "[x.start() for x in t]; [x.join() for x in t]; print(\"threads\", len(t))'" },
	{ "perl", "perl-base", "perl -e 'print 6 * 7, qq(\\n)'" },
	{ "java", "openjdk-17-jre-headless", "java -Xshare:off -version" },
	{ "qemu-system-x86_64", "qemu-system-x86", "qemu-system-x86_64 --version" },
	{ "xz", "xz-utils", "xz -T2 -3 -c < $D | xz -dc | sha256sum" },
	{ "zstd", "zstd", "zstd -T2 -q -c < $D | zstd -dq -c | sha256sum" },
	{ "pigz", "pigz", "pigz -p 2 -c < $D | pigz -dc | sha256sum" },
	{ "gzip", "gzip", "gzip -c < $D | gzip -dc | sha256sum" },
	{ "sort", "coreutils", "sort --parallel=2 -S 1M $D | sha256sum" },
	{ "sqlite3", "sqlite3",
	  "sqlite3 :memory: 'create table t(x); insert into t values (1), (2); select sum(x) from t;'" },
	{ "openssl", "openssl", "openssl dgst -sha256 < $D" },
	{ "gpg", "gpg", "gpg --homedir $T/gnupg --batch --quiet --print-md sha256 $D" },
	{ "tar", "tar", "tar -C /usr/share/doc -cf - coreutils | tar -tvf - | sort | sha256sum" },
	{ "bash", "bash", "bash -c 'echo $((6 * 7)); (exit 5); echo $?'" },
	{ "awk", "mawk", "awk 'BEGIN { print 6 * 7 }'" },
	{ "ip", "iproute2", "ip -o link show lo" },
	{ "ps", "procps", "ps -o comm= -p 1 >/dev/null; echo $?" },
	{ "find", "findutils", "find /usr/share/doc/coreutils | sort | sha256sum" },
	{ "false", "coreutils", "false" },
};

static int have(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

static void make_data(void)
{
	FILE *f = fopen(data, "w");

	CHECK(f != NULL, "create %s: %s", data, strerror(errno));
	if (!f)
		return;
	for (unsigned int i = 0, x = 12345; i < 200000; i++) {
		x = x * 1103515245 + 12345;
		fprintf(f, "line %u %08x\n", i, x);
	}
	fclose(f);
}

/* Is program `need` one of RGROUP_TEST_CORPUS's (or is there no list)? */
static int in_corpus(const char *need)
{
	const char *list = getenv("RGROUP_TEST_CORPUS"), *p;
	size_t n = strlen(need);

	if (!list)
		return 1;
	for (p = list; (p = strstr(p, need)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

static void programs(void)
{
	const char *shell = getenv("RGROUP_TEST_SHELL") ? getenv("RGROUP_TEST_SHELL") : "/bin/sh";
	char env[256], out[1024] = "";
	int missing = 0, ran = 0;
	size_t off = 0;

	make_data();
	snprintf(env, sizeof(env), "%s", data);
	setenv("D", env, 1);
	setenv("T", dir, 1);
	snprintf(env, sizeof(env), "%s/gnupg", dir);
	mkdir(env, 0700);
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		const struct prog *p = &corpus[i];
		const char *argv[] = { shell, "-c", p->cmd, NULL };

		if (!in_corpus(p->need)) {
			off += (size_t)snprintf(out + off, sizeof(out) - off, " %s", p->need);
			continue;
		}
		if (!have(p->need)) {
			fprintf(stderr, "  %s: not installed (apt-get install %s)\n", p->need, p->package);
			missing++;
			continue;
		}
		int status;

		ran++;
		if (same_everywhere(p->cmd, argv, &status))
			fprintf(stderr, "  %-20s exit %d, the same plainly and under both rules\n", p->need,
				status);
	}
	unlink(data);
	snprintf(env, sizeof(env), "rm -rf %s/gnupg", dir);
	if (system(env) != 0)
		fprintf(stderr, "  could not remove %s/gnupg\n", dir);
	fprintf(stderr, "  %d programs compared, %d not installed\n", ran, missing);
	if (off)
		fprintf(stderr, "  left out by RGROUP_TEST_CORPUS (not in this image):%s\n", out);
	if (missing && rgt_strict())
		CHECK(0, "%d programs of the corpus are not installed (strict mode)", missing);
	else if (missing)
		fprintf(stderr, "  # SKIP %d programs: not installed here\n", missing);
}

static const struct rgt_case cases[] = {
	{ "exit_codes", exit_codes },
	{ "constructors", constructors },
	{ "programs", programs },
};

int main(int argc, char **argv)
{
	rgroup_cmd = getenv("RGROUP_TEST_RGROUP");
	early_cmd = getenv("RGROUP_TEST_EARLY");
	if (!rgroup_cmd || !early_cmd)
		rgt_skip_all("RGROUP_TEST_RGROUP and RGROUP_TEST_EARLY name the rgroup command and "
			     "early-main (the build sets them)");
	snprintf(dir, sizeof(dir), "/tmp/rgtest-compat-%d", (int)getpid());
	if (mkdir(dir, 0755) < 0)
		rgt_skip_all("cannot make %s: %s", dir, strerror(errno));
	snprintf(data, sizeof(data), "%s/data", dir);
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s\n", rgroup_backend(), sg);
	int r = rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	rmdir(dir);
	return r;
}
