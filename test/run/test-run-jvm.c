/* SPDX-License-Identifier: MIT */
/*
 * test-run-jvm.c - `rgroup run` on the JVM (Debian's OpenJDK 17), a real
 * program whose own threads are named ("C2 CompilerThread0" as the kernel
 * keeps it: "C2 CompilerThre", "GC Thread#0", "G1 Conc#0", "VM Thread"),
 * running keytool generating an 8192-bit RSA key (busy for a while, JIT
 * compilers at work). Checks, from /proc/PID/task/TID/cgroup (or the
 * governor's state file), that every compiler thread is in the jit group,
 * the VM's and the collector's threads in the jvm group, and the Java
 * threads that match nothing ("keytool", "Finalizer", ...) outside; and
 * that the JVM keeps working (it is not stopped for its signals).
 *
 * Environment (the build sets it): RGROUP_TEST_RGROUP.
 */
#include <fnmatch.h>

#include "run-util.h"
#include "sgroup.h"

static const char *rgroup_cmd;
static char sg[PATH_MAX], keytool[PATH_MAX], store[PATH_MAX];

static int where(pid_t pid, pid_t tid, char *out, size_t len)
{
	return rt_where(pid, tid, scn_sg.gov, scn_sg.v2 ? NULL : "cpu", sg, out, len);
}

struct expect {
	const char *glob;
	const char *group;      /* "jit", "jvm", or "" (outside) */
};

static void jvm_threads(void)
{
	static const struct expect want[] = {
		{ "C[12] CompilerThre", "jit" },
		{ "VM Thread", "jvm" },
		{ "GC Thread#*", "jvm" },
		{ "G1 *", "jvm" },
		{ "keytool", "" },
		{ "Finalizer", "" },
		{ "Reference Handl", "" },
		{ "Signal Dispatch", "" },
	};
	char *argv[] = { (char *)rgroup_cmd, (char *)"run", (char *)"-g", (char *)"jit=C[12] CompilerThre*",
			 (char *)"-g", (char *)"jvm=GC Thread*,G1 *,VM *", (char *)"--", keytool,
			 (char *)"-genkeypair", (char *)"-keystore", store, (char *)"-storepass",
			 (char *)"secret1", (char *)"-keypass", (char *)"secret1", (char *)"-alias",
			 (char *)"a", (char *)"-dname", (char *)"CN=rgroup-test", (char *)"-keyalg",
			 (char *)"RSA", (char *)"-keysize", (char *)"8192", NULL };
	char groups[2][PATH_MAX] = { "", "" }, err[8192] = "";
	struct rt_proc p;
	double end;
	int ok = 0, seen[sizeof(want) / sizeof(want[0])] = { 0 };

	unlink(store);
	CHECK(rt_spawn(&p, argv, NULL) == 0, "start keytool under rgroup run");
	/* The JVM starts its threads within a second or two; the governor
	 * publishes its state every 250 ms. Poll until every expectation has
	 * a thread and all are where they should be. */
	for (end = rt_now() + 20; rt_now() < end && !ok; rt_sleep(0.2)) {
		pid_t tids[256];
		int n = rt_threads(p.pid, "*", tids, 256), good = 1;

		memset(seen, 0, sizeof(seen));
		groups[0][0] = groups[1][0] = '\0';
		for (int i = 0; i < n && good; i++) {
			char name[64], file[128], w[PATH_MAX];
			snprintf(file, sizeof(file), "/proc/%d/task/%d/comm", (int)p.pid, (int)tids[i]);
			if (rgroup__read_path(file, name, sizeof(name)) < 0)
				continue;
			name[strcspn(name, "\n")] = '\0';
			for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
				if (fnmatch(want[k].glob, name, 0) != 0)
					continue;
				if (where(p.pid, tids[i], w, sizeof(w)) < 0)
					break;
				seen[k]++;
				if (!want[k].group[0]) {
					good &= w[0] == '\0';
				} else {
					char *g = groups[strcmp(want[k].group, "jit") != 0];
					if (!g[0])
						snprintf(g, PATH_MAX, "%s", w);
					good &= w[0] && strcmp(g, w) == 0;
				}
				break;
			}
		}
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			good &= seen[k] > 0;
		ok = good && strcmp(groups[0], groups[1]) != 0;
	}
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		fprintf(stderr, "  %-20s %d thread(s)%s%s\n", want[k].glob, seen[k],
			want[k].group[0] ? " in " : " outside", want[k].group);
	fprintf(stderr, "  jit: '%s', jvm: '%s'\n", groups[0], groups[1]);
	CHECK(ok, "every thread where its name puts it, within 20 s");
	/* Still alive and working: the JVM was not stopped. */
	CHECK(kill(p.pid, 0) == 0, "the JVM runs");
	kill(p.pid, SIGTERM);
	rt_finish(&p, 10);
	rt_stderr(&p, err, sizeof(err));
	close(p.err);
	CHECK(!strstr(err, "rgroup run:"), "the preload had nothing to complain about: %s", err);
	unlink(store);
}

static const struct rgt_case cases[] = {
	{ "jvm_threads", jvm_threads },
};

int main(int argc, char **argv)
{
	rgroup_cmd = getenv("RGROUP_TEST_RGROUP");
	if (!rgroup_cmd)
		rgt_skip_all("RGROUP_TEST_RGROUP names the rgroup command (the build sets it)");
	if (!realpath("/usr/bin/keytool", keytool) || access(keytool, X_OK) < 0)
		rgt_skip_all("no keytool (apt-get install openjdk-17-jre-headless)");
	snprintf(store, sizeof(store), "/tmp/rgtest-jvm-%d.jks", (int)getpid());
	rt_boost_session();
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	fprintf(stderr, "backend %s, system group %s, %s\n", rgroup_backend(), sg, keytool);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
