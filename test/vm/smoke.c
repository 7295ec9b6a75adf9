/* SPDX-License-Identifier: MIT */
/*
 * smoke - canary for the VM suite's environment, before any rgroup code runs.
 *
 * Checks that the guest gives what the cgroup v2 backend relies on: a
 * cgroup2 mount with the cpu controller available to the test's own cgroup,
 * a threaded child that accepts a single thread through cgroup.threads, and
 * cpu.stat accounting for it. Runs as root (in sg-test) and as a nonroot
 * user in a delegated cgroup (sg-test/user); what it needs is the same.
 * If this fails, the VM setup is wrong, not the library.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "check.h"
#include "parse.h"
#include "util.h"

#define CGROOT "/sys/fs/cgroup"

static char own[4200];	/* this process's cgroup directory */

static void find_own_cgroup(void)
{
	char buf[4096];

	/* Only the unified hierarchy's line, "0::/path", is there on v2. */
	if (rgt_read("/proc/self/cgroup", buf, sizeof(buf)) < 0 ||
	    strncmp(buf, "0::", 3) != 0)
		rgt_skip_all("no cgroup v2 in /proc/self/cgroup (not booted by run-in-vm.sh?)");
	buf[strcspn(buf, "\n")] = '\0';
	/* It writes to its own cgroup: only do that inside run-in-vm.sh's VM. */
	if (strncmp(buf + 3, "/sg-test", 8) != 0)
		rgt_skip_all("cgroup %s is not run-in-vm.sh's /sg-test: not in the VM", buf + 3);
	snprintf(own, sizeof(own), CGROOT "%s", buf + 3);
}

static void test_controllers(void)
{
	char buf[512], path[4400];
	struct utsname u;

	if (uname(&u) == 0)
		fprintf(stderr, "  kernel %s, uid %d, cgroup %s\n", u.release,
			(int)getuid(), own + strlen(CGROOT));
	CHECK(rgt_read(CGROOT "/cgroup.controllers", buf, sizeof(buf)) >= 0,
	      "cannot read the root's cgroup.controllers");
	CHECK(rgroup__has_token(buf, "cpu"), "root controllers: %s", buf);
	snprintf(path, sizeof(path), "%s/cgroup.controllers", own);
	CHECK(rgt_read(path, buf, sizeof(buf)) >= 0, "cannot read %s", path);
	CHECK(rgroup__has_token(buf, "cpu"), "cpu not available in %s: %s", own, buf);
}

struct spinner {
	const char *child;
	pthread_barrier_t moved;
	pid_t tid;
	int move_err;
};

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Moves itself into the threaded child, burns 0.2 s of CPU there. */
static void *spin(void *arg)
{
	struct spinner *s = arg;
	char path[4500], tid[32];
	double t0;

	s->tid = scn_gettid();
	snprintf(path, sizeof(path), "%s/cgroup.threads", s->child);
	snprintf(tid, sizeof(tid), "%d", (int)s->tid);
	s->move_err = scn_write(path, tid);
	t0 = thread_cpu_seconds();
	while (!s->move_err && thread_cpu_seconds() - t0 < 0.2)
		;
	pthread_barrier_wait(&s->moved);	/* main checks us here */
	pthread_barrier_wait(&s->moved);	/* main moved us back */
	return NULL;
}

static void test_threaded_child(void)
{
	char child[4400], path[4500], buf[4096];
	struct spinner s = { .child = child };
	pthread_t th;
	int r;

	snprintf(child, sizeof(child), "%s/smoke.%d", own, (int)getpid());
	if (mkdir(child, 0755)) {
		CHECK(0, "mkdir %s: %s", child, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/cgroup.type", child);
	r = scn_write(path, "threaded");
	CHECK(r == 0, "write threaded to %s: %s", path, strerror(-r));
	CHECK(rgt_read(path, buf, sizeof(buf)) >= 0 && !strcmp(buf, "threaded\n"),
	      "%s reads %s", path, buf);

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", own);
	r = scn_write(path, "+cpu");
	CHECK(r == 0, "write +cpu to %s: %s", path, strerror(-r));
	snprintf(path, sizeof(path), "%s/cpu.weight", child);
	r = scn_write(path, "50");
	CHECK(r == 0, "write 50 to %s: %s", path, strerror(-r));

	pthread_barrier_init(&s.moved, NULL, 2);
	if (pthread_create(&th, NULL, spin, &s)) {
		CHECK(0, "pthread_create failed");
		goto out;
	}
	pthread_barrier_wait(&s.moved);
	CHECK(s.move_err == 0, "move thread %d into %s/cgroup.threads: %s",
	      (int)s.tid, child, strerror(-s.move_err));
	if (!s.move_err) {
		char want[4500];
		long long usage = -1;
		uint64_t u;

		snprintf(path, sizeof(path), "/proc/self/task/%d/cgroup", (int)s.tid);
		snprintf(want, sizeof(want), "0::%s\n", child + strlen(CGROOT));
		CHECK(rgt_read(path, buf, sizeof(buf)) >= 0 && !strcmp(buf, want),
		      "thread's cgroup is %s, want %s", buf, want);
		snprintf(path, sizeof(path), "%s/cgroup.procs", child);
		r = rgt_read(path, buf, sizeof(buf));
		CHECK(r == -EOPNOTSUPP, "cgroup.procs of a threaded cgroup: %d", r);
		snprintf(path, sizeof(path), "%s/cpu.stat", child);
		CHECK(rgt_read(path, buf, sizeof(buf)) >= 0, "cannot read %s", path);
		if (rgroup__parse_keyed(buf, "usage_usec", &u) == 0)
			usage = (long long)u;
		fprintf(stderr, "  %s usage_usec %lld\n", path, usage);
		CHECK(usage >= 100000, "usage_usec %lld, the thread spun 0.2 s", usage);
		/* Back home so that the child is empty and can go. */
		snprintf(path, sizeof(path), "%s/cgroup.threads", own);
		snprintf(buf, sizeof(buf), "%d", (int)s.tid);
		r = scn_write(path, buf);
		CHECK(r == 0, "move thread back: %s", strerror(-r));
	}
	pthread_barrier_wait(&s.moved);
	pthread_join(th, NULL);
out:
	pthread_barrier_destroy(&s.moved);
	CHECK(rmdir(child) == 0, "rmdir %s: %s", child, strerror(errno));
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", own);
	r = scn_write(path, "-cpu");
	CHECK(r == 0, "write -cpu to %s: %s", path, strerror(-r));
}

/* Not a check: how many vCPUs' worth of work two spinning threads get. */
static void *burn(void *arg)
{
	double t0 = thread_cpu_seconds();
	struct timespec now, end = *(struct timespec *)arg;

	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while (now.tv_sec < end.tv_sec ||
	       (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	*(double *)arg = thread_cpu_seconds() - t0;
	return NULL;
}

static void test_parallelism(void)
{
	union { struct timespec ts; double cpu; } a[2];
	pthread_t th[2];
	struct timespec end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 1;
	for (int i = 0; i < 2; i++) {
		a[i].ts = end;
		if (pthread_create(&th[i], NULL, burn, &a[i])) {
			CHECK(0, "pthread_create failed");
			return;
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	fprintf(stderr, "  2 spinning threads for 1 s wall got %.2f CPU-seconds (%ld CPUs online)\n",
		a[0].cpu + a[1].cpu, sysconf(_SC_NPROCESSORS_ONLN));
}

static const struct rgt_case cases[] = {
	{ "controllers", test_controllers },
	{ "threaded_child", test_threaded_child },
	{ "parallelism", test_parallelism },
};

int main(int argc, char **argv)
{
	find_own_cgroup();
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
