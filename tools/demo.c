/* SPDX-License-Identifier: MIT */
/*
 * demo.c - `rgroup demo`: the article's scenarios on the real kernel.
 *
 * The scenarios are tables run by the scenario engine
 * (src/scenario/scenario.h): the system test test-share.c asserts the very
 * splits printed here. Every group's CPU time is measured from the outside
 * (per-thread and per-process CPU clocks, not the library's own
 * accounting), as a share of all the CPU time the demo's busy threads got,
 * and compared with the ideal hierarchical weighted share computed by the
 * reference model (src/model/model.h) for the same tree, weights and demands.
 *
 * As root the demo measures in a system group of its own
 * (src/scenario/sysgroup.h, rgroup-demo-PID), entered before the library's first group,
 * so that the article's split is among exactly the demo's processes.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rgroup.h>

#include "locate.h"
#include "plot.h"
#include "scenario.h"
#include "tool.h"

#define TOLERANCE 0.10          /* relative error allowed per group */
#define WARMUP_MS 500
#define SAMPLE_MS 250           /* --plot: one share per group this often */
#define MAX_SAMPLES 4096

static const char demo_usage[] =
	"Usage: rgroup demo [--seconds N] [--no-sgroup] [--plot FILE.png]\n"
	"\n"
	"Run the article's scenarios with busy threads and print, per group, the\n"
	"measured share of the demo's CPU time next to the ideal share:\n"
	"  (a) one system group holding two single-threaded processes and one\n"
	"      rgroup of four threads: thirds;\n"
	"  (b) nested rgroups with different PRIO_RGRP nice values.\n"
	"\n"
	"  -s, --seconds N   measure each scenario for N seconds (default 4)\n"
	"      --no-sgroup   do not make a system group of its own (as root, the\n"
	"                    demo otherwise runs in a group of its own on the cpu\n"
	"                    hierarchy, rgroup-demo-PID, removed at the end)\n"
	"  -p, --plot FILE.png  also sample each group's share every 0.25 s and\n"
	"                    draw it over time with the ideal (gnuplot): scenario\n"
	"                    (a) into FILE.png, (b) into FILE-nested.png\n"
	"  -h, --help        show this help\n"
	"\n"
	"Exit status 0 if every group is within 10% of its ideal share, else 1.\n"
	"When other tasks keep the demo from the CPUs, (a) is shown and then\n"
	"counted as measured on one CPU (a busy machine skews a split over\n"
	"several CPUs).\n";

/* One scenario as the demo shows it; the tree is an engine table. */
struct demo_scenario {
	const char *title;
	const char *quote;
	const char *result;     /* "<result> within N% of ideal" */
	const char *plot;       /* appended to the --plot file's stem */
	int one_cpu;            /* run pinned to one CPU, the model divides one */
	int governor;           /* 1: on the governor only, 0: never there, -1: both */
	void (*build)(struct scn_table *s, int base);
};

static void article_processes(struct scn_table *s, int base)
{
	scn_article(s, 'P', base);
}

static void article_threads(struct scn_table *s, int base)
{
	scn_article(s, 'T', base);
}

static const struct demo_scenario scenarios[] = {
	{
		.title = "(a) one system group: two single-threaded busy processes and "
			 "one rgroup of four busy threads",
		.quote = "article: \"the CPU time given to the system group will ... be "
			 "divided in three\"",
		.result = "article split", .plot = "", .governor = 0,
		.build = article_processes,
	},
	{
		/* The governor divides the process's own time only: the same
		 * split with the demo's own plain threads in place of the
		 * processes. */
		.title = "(a) in this process: two plain busy threads and one rgroup of "
			 "four busy threads",
		.quote = "the governor divides the process's own CPU time: the rgroup competes\n"
			 "  like one thread of the process (against other processes, rule 4\n"
			 "  needs a kernel backend)",
		.result = "article split", .plot = "", .governor = 1,
		.build = article_threads,
	},
	{
		.title = "(b) nested rgroups with different PRIO_RGRP nice values, on one CPU",
		.quote = "A and B are top-level; A1 and A2 divide A's share by their weights.\n"
			 "  On several CPUs the kernel spreads a group's weight over the CPUs by\n"
			 "  load, and a nested split lands well off the fluid ideal from run to\n"
			 "  run; on one CPU it is the weights alone",
		.result = "nested split", .plot = "-nested", .one_cpu = 1, .governor = -1,
		.build = scn_nested_weights,
	},
};

static volatile sig_atomic_t interrupted;
static const char *plot_png;
/* --plot: each compared group's share of the demo's CPU per sample. */
static double sample_t[MAX_SAMPLES];
static double sample_share[SCN_MAX * MAX_SAMPLES];
static size_t nsamples;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* Sleep `ms`, in slices, until done or interrupted. 0, or -1 if interrupted. */
static int nap(long ms)
{
	for (; ms > 0 && !interrupted; ms -= 50)
		nanosleep(&(struct timespec){ .tv_nsec = (ms < 50 ? ms : 50) * 1000000L }, NULL);
	return interrupted ? -1 : 0;
}

/* Measure the running scenario for `seconds` from reading v0 into v1;
 * with --plot, also each group's share every SAMPLE_MS. The seconds it
 * took, or -1 if interrupted. */
static double measure(int seconds, double cpus, const double *v0, double *v1)
{
	struct scn_share sh[SCN_MAX];
	double prev[SCN_MAX], t0 = scn_now(), t = t0, got;
	size_t n = (size_t)seconds * 1000 / SAMPLE_MS;

	nsamples = 0;
	if (!plot_png) {
		if (nap(1000L * seconds) < 0)
			return -1;
		scn_read(v1);
		return scn_now() - t0;
	}
	memcpy(prev, v0, sizeof(prev));
	for (size_t i = 0; i < n && i < MAX_SAMPLES; i++) {
		double now;
		int k;

		if (nap(SAMPLE_MS) < 0)
			return -1;
		scn_read(v1);
		now = scn_now();
		k = scn_compare(prev, v1, now - t, cpus, sh, &got);
		for (int e = 0; e < k; e++)
			sample_share[e * MAX_SAMPLES + i] = sh[e].got;
		sample_t[i] = now - t0;
		nsamples = i + 1;
		memcpy(prev, v1, sizeof(prev));
		t = now;
	}
	return t - t0;
}

/* How deep node i is below the system group. */
static int depth(const struct scn_table *sc, int i)
{
	return sc->n[i].parent ? 1 + depth(sc, sc->n[i].parent) : 0;
}

/* "4", "1" or "1 idle": the busy threads directly in a compared entity. */
static void threads_of(const struct scn_table *sc, int i, char *out, size_t len)
{
	int busy = sc->n[i].demand > 0;

	if (sc->n[i].kind == 'G')
		for (int j = i + 1; j < sc->count; j++)
			busy += sc->n[j].parent == i && sc->n[j].kind == 'T';
	snprintf(out, len, busy ? "%d" : "1 idle", busy);
}

/* Print the table; returns the worst relative error. */
static double print_table(const struct scn_table *sc, const struct scn_share *sh, int n)
{
	double worst = 0;

	printf("  %-16s %-8s %4s %6s %9s %7s %7s\n",
	       "group", "threads", "nice", "weight", "measured", "ideal", "error");
	for (int e = 0; e < n; e++) {
		int i = sh[e].node, nice = scn_cur.n[i].nice;
		double err = sh[e].want > 0 ? (sh[e].got - sh[e].want) / sh[e].want : 0;
		char label[40], threads[16];

		if (fabs(err) > worst)
			worst = fabs(err);
		snprintf(label, sizeof(label), "%*s%s", 2 * depth(sc, i), "", sh[e].label);
		threads_of(sc, i, threads, sizeof(threads));
		printf("  %-16s %-8s %4d %6u %8.1f%% %6.1f%% %+6.1f%%%s\n",
		       label, threads, nice, rgroup_nice_to_weight(nice),
		       100 * sh[e].got, 100 * sh[e].want, 100 * err,
		       sc->n[i].kind == 'G' && nice != sc->n[i].nice ? "  (nice not as set!)" : "");
	}
	return worst;
}

/* Draw the samples with their ideal shares into FILE<suffix>.png. */
static void draw(const struct demo_scenario *d, const struct scn_share *sh, int n)
{
	static double share[SCN_MAX * MAX_SAMPLES];
	const char *names[SCN_MAX], *dot = strrchr(plot_png, '.');
	size_t stem = dot && strcmp(dot, ".png") == 0 ? (size_t)(dot - plot_png) : strlen(plot_png);
	double ideal[SCN_MAX];
	char png[PATH_MAX];
	int r;

	if (!*d->plot)
		snprintf(png, sizeof(png), "%s", plot_png);
	else
		snprintf(png, sizeof(png), "%.*s%s.png", (int)stem, plot_png, d->plot);
	for (int e = 0; e < n; e++) {
		names[e] = sh[e].label;
		ideal[e] = sh[e].want;
		memcpy(share + e * nsamples, sample_share + e * MAX_SAMPLES,
		       nsamples * sizeof(double));
	}
	r = plot_shares(png, d->title, &(struct plot_data){
		.npoints = nsamples, .ngroups = (size_t)n, .t = sample_t,
		.names = names, .share = share, .ideal = ideal });
	if (r < 0)
		fprintf(stderr, "rgroup demo: cannot draw %s: %s%s\n", png, strerror(-r),
			r == -ENOENT ? " (install gnuplot-nox)" : "");
	else
		printf("  plot: %s\n", png);
}

/*
 * Run scenario sc (shown as d), on one CPU if asked: start its processes
 * and threads, warm up, measure, stop and reap everything, print the
 * table. 0 with the worst error in *worst and the CPUs its groups got in
 * *got, ENOTSUP (no backend), or -1 (another failure, or interrupted;
 * reported).
 */
static int run(const struct scn_table *sc, const struct demo_scenario *d, int one_cpu,
	       int seconds, double cpus, double *worst, double *got)
{
	struct scn_share sh[SCN_MAX];
	double v0[SCN_MAX], v1[SCN_MAX], took = -1;
	cpu_set_t saved;
	int pinned = 0, err, n;

	/* Its threads and processes inherit the affinity. */
	if (one_cpu && scn_pin_one_cpu(&saved) == 0) {
		pinned = 1;
		cpus = 1;
	}
	err = scn_start(sc);
	if (!err) {
		if (nap(WARMUP_MS) == 0) {      /* let the scheduler settle */
			scn_read(v0);
			took = measure(seconds, cpus, v0, v1);
		}
		scn_stop();
	}
	if (pinned)
		sched_setaffinity(0, sizeof(saved), &saved);

	if (interrupted) {
		printf("  interrupted\n");
		return -1;
	}
	if (err == ENOTSUP) {
		fprintf(stderr, "rgroup: no backend here: run `rgroup doctor`\n");
		return ENOTSUP;
	}
	if (err) {
		fprintf(stderr, "rgroup demo: %s failed: %s\n", scn_cur.what, strerror(err));
		return -1;
	}
	n = scn_compare(v0, v1, took, cpus, sh, got);
	*worst = print_table(sc, sh, n);
	if (plot_png && nsamples)
		draw(d, sh, n);
	/* Outside load shows here: on several CPUs it also skews the split. */
	printf("  (the demo's groups used %.2f of %g CPU%s)\n", *got, cpus, cpus == 1 ? "" : "s");
	return 0;
}

/* The CPUs scenario sc can use at most: its busy threads, or the CPUs. */
static double wanted(const struct scn_table *sc, double cpus)
{
	double demand = 0;

	for (int i = 1; i < sc->count; i++)
		demand += sc->n[i].demand;
	return demand < cpus ? demand : cpus;
}

/*
 * Show one scenario. One that runs on every CPU is only a fair test of
 * the weights when the demo's groups got (nearly) all of them: other busy
 * tasks on some CPUs and not others skew a split over several CPUs,
 * whatever the weights say. When they took more than a tenth, the
 * scenario runs again on one CPU, where it is the weights alone, and that
 * run is the one counted. 0 and the worst error, or as run().
 */
static int show(const struct demo_scenario *d, int base, int seconds, double cpus,
		double *worst)
{
	struct scn_table sc;
	double got = 0;
	int r;

	d->build(&sc, base);
	printf("\n%s\n", d->title);
	if (d->quote)
		printf("  %s\n", d->quote);
	fflush(stdout);
	r = run(&sc, d, d->one_cpu, seconds, cpus, worst, &got);
	if (r || d->one_cpu || cpus == 1 || got >= 0.9 * wanted(&sc, cpus))
		return r;
	printf("  the machine is busy: other tasks took %.2f of the %g CPUs the demo's\n"
	       "  groups wanted, and where they run skews a split over several CPUs.\n"
	       "  Not counted; the same on one CPU, where it is the weights alone:\n",
	       wanted(&sc, cpus) - got, wanted(&sc, cpus));
	fflush(stdout);
	return run(&sc, d, 1, seconds, cpus, worst, &got);
}

static int autogroup_enabled(void)
{
	char buf[16];

	return rgroup__read_path("/proc/sys/kernel/sched_autogroup_enabled", buf, sizeof(buf)) > 0 &&
	       atoi(buf) != 0;
}

/* Is the process in the root group of the hierarchy backend `be` uses? */
static int in_root_group(const char *be)
{
	struct rgroup__cgloc loc;
	int v2 = strcmp(be, "cgroup2") == 0;

	if (!v2 && strcmp(be, "cgroup1") != 0)
		return 0;
	return rgroup__cg_locate(0, v2 ? NULL : "cpu", &loc, NULL, 0) == 0 &&
	       strcmp(loc.path, "/") == 0;
}

/*
 * As root, make the demo's own system group next to the process's group
 * and move in: before the library's first group, which attaches to the
 * sgroup it finds then. 1 if entered; else it says why and the demo runs
 * where it is.
 */
static int enter_sgroup(int use_sgroup, const char *backend)
{
	char why[PATH_MAX + 256], cg[PATH_MAX], dir[PATH_MAX], name[64];

	if (strcmp(backend, "governor") == 0) {
		printf("system group: the process's own group (the governor divides only "
		       "the process's own time)\n");
		return 0;
	}
	if (!use_sgroup || geteuid() != 0) {
		printf("system group: the process's own group (%s; other busy tasks "
		       "there would skew the figures)\n", use_sgroup ? "not root" : "--no-sgroup");
		return 0;
	}
	snprintf(name, sizeof(name), "rgroup-demo-%d", (int)getpid());
	if (scn_sg_open(backend, why, sizeof(why)) < 0 ||
	    scn_sg_join(name, cg, sizeof(cg), why, sizeof(why)) < 0) {
		printf("system group: %s;\n  using the process's own group "
		       "(other busy tasks there would skew the figures)\n", why);
		return 0;
	}
	scn_cg_dir(cg, dir, sizeof(dir));
	printf("system group: made %s (cgroup %s) for this demo, so the shares\n"
	       "  are measured among the demo's own processes only\n",
	       dir, scn_sg.v2 ? "v2" : "v1");
	return 1;
}

/* Wait for the library to remove the (now empty) rgroups, then move back
 * and remove the system group. EXIT_OK or EXIT_FAIL. */
static int leave_sgroup(int entered)
{
	char why[PATH_MAX + 128], home[PATH_MAX], made[PATH_MAX];

	if (scn_wait_no_groups(3.0) < 0)
		fprintf(stderr, "rgroup demo: the library still reports %d rgroup(s) "
			"3 s after their threads exited\n", rgroup_list(NULL, 0));
	if (!entered)
		return EXIT_OK;
	scn_cg_dir(scn_sg.home, home, sizeof(home));
	scn_cg_dir(scn_sg.made[0], made, sizeof(made));
	if (scn_sg_leave(why, sizeof(why)) < 0) {
		fprintf(stderr, "rgroup demo: %s\n", why);
		return EXIT_FAIL;
	}
	printf("system group: moved back to %s and removed %s\n", home, made);
	return EXIT_OK;
}

/* Run the scenarios for this backend; print the verdict. */
static int run_all(const char *backend, int base, int seconds, double capacity)
{
	int gov = strcmp(backend, "governor") == 0;
	double worst = 0;

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const struct demo_scenario *d = &scenarios[i];
		double w = 0;

		if (d->governor >= 0 && d->governor != gov)
			continue;
		if (show(d, base, seconds, capacity, &w) != 0)
			return EXIT_FAIL;
		printf("  %s within %.1f%% of ideal\n", d->result, 100 * w);
		if (w > worst)
			worst = w;
	}
	if (worst <= TOLERANCE) {
		printf("\nresult: every group within %.0f%% of its ideal share (worst %.1f%%)\n",
		       100 * TOLERANCE, 100 * worst);
		return EXIT_OK;
	}
	printf("\nresult: FAIL: some group is %.1f%% off its ideal share (allowed %.0f%%)\n",
	       100 * worst, 100 * TOLERANCE);
	printf("other busy tasks on the machine skew a split over several CPUs;\n"
	       "  on one CPU it depends on the weights alone: taskset -c 0 rgroup demo\n");
	return EXIT_FAIL;
}

int cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "no-sgroup", no_argument, NULL, 'S' },
		{ "plot", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	int c, seconds = 4, use_sgroup = 1, ret, base, entered, left;
	const char *backend;
	double capacity;
	cpu_set_t cpus;

	while ((c = getopt_long(argc, argv, "+:s:p:h", opts, NULL)) != -1) {
		char *end;
		long v;

		switch (c) {
		case 's':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > 3600)
				return tool_usage_error("demo", "--seconds wants a whole "
							"number from 1 to 3600, not '%s'", optarg);
			seconds = (int)v;
			break;
		case 'S':
			use_sgroup = 0;
			break;
		case 'p':
			plot_png = optarg;
			break;
		case 'h':
			fputs(demo_usage, stdout);
			return EXIT_OK;
		case ':':
			return tool_usage_error("demo", "option '%s' needs a value", argv[optind - 1]);
		default:
			return tool_usage_error("demo", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tool_usage_error("demo", "unexpected argument '%s'", argv[optind]);

	/* Top-level rgroups start at the caller's nice (rule 6): the tables
	 * keep them there or lower in priority, never higher (no privilege). */
	base = getpriority(PRIO_PROCESS, 0);
	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0) {
		perror("rgroup demo: sched_getaffinity");
		return EXIT_FAIL;
	}
	capacity = CPU_COUNT(&cpus);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* The library picks its backend here, but attaches to the sgroup
	 * only at its first group: the system group is entered after. */
	backend = rgroup_backend();
	entered = strcmp(backend, "none") != 0 && enter_sgroup(use_sgroup, backend);
	if (!entered && in_root_group(backend) && autogroup_enabled())
		printf("note: this process is in the root cpu cgroup, where autogroup\n"
		       "  (kernel.sched_autogroup_enabled) schedules the processes of one\n"
		       "  session as one entity: processes 1 and 2 will compete together,\n"
		       "  as one group, against the rgroup (expect 1/4, 1/4, 1/2)\n");
	printf("backend: %s; %g CPUs; %d s per scenario after %g s warm-up\n",
	       backend, capacity, seconds, WARMUP_MS / 1000.0);
	if (strcmp(backend, "none") == 0) {
		fprintf(stderr, "rgroup: no backend here: run `rgroup doctor`\n");
		ret = EXIT_FAIL;
	} else {
		if (capacity >= 6)
			printf("note: %g CPUs are more than the 6 busy threads of each scenario,\n"
			       "  so there is no contention and the ideal split follows demand,\n"
			       "  not the article's thirds (run with fewer CPUs: taskset -c 0,1)\n",
			       capacity);
		ret = run_all(backend, base, seconds, capacity);
	}
	left = leave_sgroup(entered);
	return ret == EXIT_OK ? left : ret;
}
