/* SPDX-License-Identifier: MIT */
/*
 * rgroup-run-bench.c - what `rgroup run` buys an unmodified program, and
 * what its preload costs (docs/BENCHMARKS.md, "rgroup run").
 *
 * The same binary is the workload (a plain pthread program that knows
 * nothing of rgroups) and the driver that starts it in each configuration
 * and prints the figures:
 *
 *   latency   a foreground thread "fg" serves requests (50 us of work,
 *             500 per second from a thread "client") while N busy
 *             background threads "bg-0".."bg-N-1" spin: request latency
 *             (from the request's sending to the end of its work) p50,
 *             p99, p99.9 and max, and fg's CPU share, with no control,
 *             with the background threads reniced one by one (each sets
 *             nice 19 on itself, what a program changed for it would do),
 *             and with the background pool in one rgroup by `rgroup run`
 *             (at nice 0, at nice 19, capped at 50% of a CPU).
 *   create    thread creation and naming: a thread is created, names
 *             itself "w-<i>", exits and is joined, 2,000 times per block;
 *             the time per thread without the preload (A) and under
 *             `rgroup run` (B) with rules that match no name (the cost of
 *             the interposition alone) and with a rule every name matches
 *             (each thread enters the one group), in ABBA blocks; the
 *             median ratio B/A of 11 blocks, with the p25..p75 spread.
 *
 *   rgroup-run-bench [--rgroup PATH] [--backend NAME] [--seconds S]
 *                    [--bg N] [--only latency|create] [--blocks N] [--threads N]
 *   rgroup-run-bench serve N SECONDS [renice]      (the workload)
 *   rgroup-run-bench create N                      (the workload)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RGROUP_CMD_DEFAULT
#define RGROUP_CMD_DEFAULT "rgroup"
#endif

#define WORK_NS    50000L      /* one request's work */
#define PERIOD_NS  2000000L    /* a request every 2 ms */
#define MAXREQ     100000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double thread_cpu(clockid_t c)
{
	struct timespec ts;

	return clock_gettime(c, &ts) == 0 ? ts.tv_sec + ts.tv_nsec / 1e9 : 0;
}

/* ---- The workload: serve ------------------------------------------------ */

static int req_pipe[2];
static volatile int stop;
static uint64_t lat[MAXREQ];
static int nlat;
static clockid_t fg_clock, bg_clock[64];
static int renice;

static void *fg_main(void *arg)
{
	uint64_t sent;

	pthread_setname_np(pthread_self(), "fg");
	while (read(req_pipe[0], &sent, sizeof(sent)) == sizeof(sent)) {
		uint64_t t0 = now_ns();
		while (now_ns() - t0 < WORK_NS)
			;
		if (nlat < MAXREQ)
			lat[nlat++] = now_ns() - sent;
	}
	return arg;
}

static void *client_main(void *arg)
{
	struct timespec next;

	pthread_setname_np(pthread_self(), "client");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		uint64_t t = now_ns();
		if (write(req_pipe[1], &t, sizeof(t)) < 0)
			break;
		next.tv_nsec += PERIOD_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	close(req_pipe[1]);
	return arg;
}

static void *bg_main(void *arg)
{
	char name[16];
	int i = (int)(intptr_t)arg;

	snprintf(name, sizeof(name), "bg-%d", i);
	pthread_setname_np(pthread_self(), name);
	if (renice)
		setpriority(PRIO_PROCESS, 0, 19);   /* itself: a thread on Linux */
	while (!stop)
		;
	return arg;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int serve(int nbg, double secs)
{
	pthread_t fg, client, bg[64];
	double t0, fg0, fg1, bg0 = 0, bg1 = 0, wall;

	if (nbg > 64 || pipe(req_pipe) < 0)
		return 2;
	/* The clocks from here: a thread a busy machine has not run yet
	 * could not say its own. */
	for (int i = 0; i < nbg; i++) {
		pthread_create(&bg[i], NULL, bg_main, (void *)(intptr_t)i);
		pthread_getcpuclockid(bg[i], &bg_clock[i]);
	}
	pthread_create(&fg, NULL, fg_main, NULL);
	pthread_getcpuclockid(fg, &fg_clock);
	usleep(300000);   /* everyone named and placed */
	for (int i = 0; i < nbg; i++)
		bg0 += thread_cpu(bg_clock[i]);
	fg0 = thread_cpu(fg_clock);
	t0 = now_s();
	pthread_create(&client, NULL, client_main, NULL);
	usleep((useconds_t)(secs * 1e6));
	/* The clocks while the threads live. */
	wall = now_s() - t0;
	fg1 = thread_cpu(fg_clock);
	for (int i = 0; i < nbg; i++)
		bg1 += thread_cpu(bg_clock[i]);
	stop = 1;
	pthread_join(client, NULL);
	pthread_join(fg, NULL);
	for (int i = 0; i < nbg; i++)
		pthread_join(bg[i], NULL);
	qsort(lat, (size_t)nlat, sizeof(lat[0]), cmp_u64);
	if (!nlat)
		return 1;
	printf("requests %d p50 %.1f p99 %.1f p999 %.1f max %.1f fg_cpu %.3f bg_cpu %.3f\n", nlat,
	       lat[nlat / 2] / 1e3, lat[nlat * 99 / 100] / 1e3, lat[nlat * 999 / 1000] / 1e3,
	       lat[nlat - 1] / 1e3, (fg1 - fg0) / wall, (bg1 - bg0) / wall);
	return 0;
}

/* ---- The workload: create ------------------------------------------------ */

static void *named(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "w-%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	return NULL;
}

/* Per thread: the wall time, and the CPU time of the whole process (the
 * creator's and the thread's own, user and kernel), which other load on
 * the machine disturbs much less. */
static int create(int n)
{
	double t0 = now_s(), c0 = thread_cpu(CLOCK_PROCESS_CPUTIME_ID);

	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, named, (void *)(intptr_t)i) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	printf("us_per_thread %.3f cpu_us_per_thread %.3f\n", (now_s() - t0) * 1e6 / n,
	       (thread_cpu(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6 / n);
	return 0;
}

/* ---- The driver ---------------------------------------------------------- */

static const char *rgroup_cmd = RGROUP_CMD_DEFAULT, *backend, *self_exe;

/* Run argv, its stdout's first line into out; exit status or -1. */
static int run(char *const argv[], char *out, size_t len)
{
	int p[2], st;
	ssize_t n;
	pid_t pid;

	out[0] = '\0';
	if (pipe(p) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* argv: [rgroup run [-b B] RULES... --] self WORKLOAD... */
static int workload(const char *const *rules, const char *const *args, char *out, size_t len)
{
	char *argv[32];
	int n = 0;

	if (rules) {
		argv[n++] = (char *)rgroup_cmd;
		argv[n++] = (char *)"run";
		if (backend) {
			argv[n++] = (char *)"-b";
			argv[n++] = (char *)backend;
		}
		while (*rules)
			argv[n++] = (char *)*rules++;
		argv[n++] = (char *)"--";
	}
	argv[n++] = (char *)self_exe;
	while (*args)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	return run(argv, out, len);
}

static void latency(int nbg, double secs)
{
	static const struct {
		const char *what;
		const char *rules[4];
		int renice;
	} cfg[] = {
		{ "no control", { NULL }, 0 },
		{ "reniced one by one (nice 19)", { NULL }, 1 },
		{ "rgroup run -g 'bg=bg-*'", { "-g", "bg=bg-*", NULL }, 0 },
		{ "rgroup run -g 'bg=bg-*:nice=19'", { "-g", "bg=bg-*:nice=19", NULL }, 0 },
		{ "rgroup run -g 'bg=bg-*:max=50%'", { "-g", "bg=bg-*:max=50%", NULL }, 0 },
	};
	char n[16], s[16], out[512];

	snprintf(n, sizeof(n), "%d", nbg);
	snprintf(s, sizeof(s), "%g", secs);
	printf("\nlatency: one request of 50 us every 2 ms to thread fg, %d busy threads bg-*, %g s each\n",
	       nbg, secs);
	printf("| configuration | requests | p50 (us) | p99 (us) | p99.9 (us) | max (us) | fg CPU | bg CPU |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		const char *args[] = { "serve", n, s, cfg[i].renice ? "renice" : NULL, NULL };
		int req = 0;
		double p50 = 0, p99 = 0, p999 = 0, max = 0, fg = 0, bg = 0;
		int st = workload(cfg[i].rules[0] ? cfg[i].rules : NULL, args, out, sizeof(out));

		if (st != 0 || sscanf(out, "requests %d p50 %lf p99 %lf p999 %lf max %lf fg_cpu %lf bg_cpu %lf",
				      &req, &p50, &p99, &p999, &max, &fg, &bg) != 7) {
			printf("| %s | failed (exit %d: %s) | | | | | | |\n", cfg[i].what, st, out);
			continue;
		}
		printf("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |\n", cfg[i].what, req, p50, p99,
		       p999, max, fg, bg);
		fflush(stdout);
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void summary(const char *what, double *a, double *b, double *r, int n, const char *unit)
{
	qsort(r, (size_t)n, sizeof(double), cmp_d);
	qsort(a, (size_t)n, sizeof(double), cmp_d);
	qsort(b, (size_t)n, sizeof(double), cmp_d);
	printf("| %s | %s | %.2f | %.2f | %.3f | %.3f..%.3f |\n", what, unit, a[n / 2], b[n / 2],
	       r[n / 2], r[n / 4], r[(3 * n) / 4]);
}

static void creation(int blocks, int per_block)
{
	static const struct {
		const char *what;
		const char *rules[4];
	} cfg[] = {
		{ "preload, no name matches", { "-g", "x=nomatch-*", NULL } },
		{ "preload, every name matches one group", { "-g", "w=w-*", NULL } },
	};
	char k[16], out[256];
	const char *args[] = { "create", k, NULL };

	snprintf(k, sizeof(k), "%d", per_block);
	printf("\ncreate: pthread_create + the thread names itself + join, %d per block, %d ABBA blocks\n",
	       per_block, blocks);
	printf("| B, against A = the same program without the preload | per thread | A (us) | B (us) | B/A median | p25..p75 |\n");
	printf("| --- | --- | --- | --- | --- | --- |\n");
	for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		double r[2][64], a[2][64], b[2][64];
		int n = 0;

		for (int blk = 0; blk < blocks && blk < 64; blk++) {
			double v[2][2] = { { NAN, NAN }, { NAN, NAN } };   /* [with][wall, cpu] */
			for (int half = 0; half < 2; half++) {
				int with = (blk % 2) ^ half;   /* ABBA */
				if (workload(with ? cfg[c].rules : NULL, args, out, sizeof(out)) != 0 ||
				    sscanf(out, "us_per_thread %lf cpu_us_per_thread %lf", &v[with][0],
					   &v[with][1]) != 2)
					v[with][0] = NAN;
			}
			if (isnan(v[0][0]) || isnan(v[1][0]))
				continue;
			for (int m = 0; m < 2; m++) {
				a[m][n] = v[0][m];
				b[m][n] = v[1][m];
				r[m][n] = v[1][m] / v[0][m];
			}
			n++;
		}
		if (!n) {
			printf("| %s | failed | | | | |\n", cfg[c].what);
			continue;
		}
		summary(cfg[c].what, a[1], b[1], r[1], n, "CPU time");
		summary(cfg[c].what, a[0], b[0], r[0], n, "wall time");
		fflush(stdout);
	}
}

/*
 * As root, the driver takes a session of its own with its autogroup at
 * nice -15 (a shared machine's other sessions then hold it back less),
 * and on the cgroup v1 cpu hierarchy a group of its own (rgbench-<pid>,
 * the most shares): there every configuration's threads compete with
 * each other only, as a program's would in its own service's group,
 * whether or not rgroup run puts some into rgroups. Removed at the end.
 */
static char own_group[256], home_procs[256];

static void leave_group(void)
{
	char pid[16];
	int fd;

	if (!own_group[0])
		return;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if ((fd = open(home_procs, O_WRONLY)) >= 0) {
		(void)!write(fd, pid, strlen(pid));
		close(fd);
	}
	rmdir(own_group);
}

static void settle_in(void)
{
	char path[512], pid[16], line[512];
	FILE *f;
	int fd;

	if (geteuid() != 0)
		return;
	setsid();
	if ((fd = open("/proc/self/autogroup", O_WRONLY)) >= 0) {
		(void)!write(fd, "-15", 3);
		close(fd);
	}
	if (backend && strcmp(backend, "cgroup1") != 0)
		return;
	if (!(f = fopen("/proc/self/cgroup", "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, ":cpu:");
		if (!p)
			continue;
		p += 5;
		p[strcspn(p, "\n")] = '\0';
		snprintf(home_procs, sizeof(home_procs), "/sys/fs/cgroup/cpu%s/cgroup.procs",
			 strcmp(p, "/") ? p : "");
		snprintf(own_group, sizeof(own_group), "/sys/fs/cgroup/cpu%s/rgbench-%d",
			 strcmp(p, "/") ? p : "", (int)getpid());
	}
	fclose(f);
	if (!own_group[0] || mkdir(own_group, 0755) < 0) {
		own_group[0] = '\0';
		return;
	}
	snprintf(path, sizeof(path), "%s/cpu.shares", own_group);
	if ((fd = open(path, O_WRONLY)) >= 0) {
		(void)!write(fd, "262144", 6);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", own_group);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if ((fd = open(path, O_WRONLY)) < 0 || write(fd, pid, strlen(pid)) < 0) {
		rmdir(own_group);
		own_group[0] = '\0';
	}
	if (fd >= 0)
		close(fd);
	atexit(leave_group);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rgroup", required_argument, NULL, 'r' },
		{ "backend", required_argument, NULL, 'b' },
		{ "seconds", required_argument, NULL, 's' },
		{ "bg", required_argument, NULL, 'n' },
		{ "only", required_argument, NULL, 'o' },
		{ "blocks", required_argument, NULL, 'k' },
		{ "threads", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = NULL;
	double secs = 5;
	int nbg = 4, blocks = 11, per_block = 2000, c;

	if (argc >= 2 && strcmp(argv[1], "serve") == 0) {
		renice = argc >= 5 && strcmp(argv[4], "renice") == 0;
		return serve(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atof(argv[3]) : 5);
	}
	if (argc >= 2 && strcmp(argv[1], "create") == 0)
		return create(argc > 2 ? atoi(argv[2]) : 2000);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': rgroup_cmd = optarg; break;
		case 'b': backend = optarg; break;
		case 's': secs = atof(optarg); break;
		case 'n': nbg = atoi(optarg); break;
		case 'o': only = optarg; break;
		case 'k': blocks = atoi(optarg); break;
		case 't': per_block = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [--rgroup PATH] [--backend NAME] [--seconds S] [--bg N] [--only latency|create] [--blocks N] [--threads N]\n", argv[0]);
			return 2;
		}
	}
	/* The workload is this very program (a dynamic one: the preload
	 * needs a dynamic loader); RGROUP_RUN_BENCH_SELF names another copy. */
	self_exe = getenv("RGROUP_RUN_BENCH_SELF") ? getenv("RGROUP_RUN_BENCH_SELF") : "/proc/self/exe";
	{
		static char real[4096];
		ssize_t n = readlink(self_exe, real, sizeof(real) - 1);
		if (n > 0) {
			real[n] = '\0';
			self_exe = real;
		}
	}
	settle_in();
	printf("rgroup run benchmark: backend %s, %ld CPUs%s%s, load ", backend ? backend : "(automatic)",
	       sysconf(_SC_NPROCESSORS_ONLN), own_group[0] ? ", in " : "", own_group);
	{
		char l[128] = "?";
		FILE *f = fopen("/proc/loadavg", "r");
		if (f) {
			if (fgets(l, sizeof(l), f))
				l[strcspn(l, "\n")] = '\0';
			fclose(f);
		}
		printf("%s\n", l);
	}
	if (!only || strcmp(only, "latency") == 0)
		latency(nbg, secs);
	if (!only || strcmp(only, "create") == 0)
		creation(blocks, per_block);
	return 0;
}
