/* SPDX-License-Identifier: MIT */
/*
 * top.c - rgroup top PID [-d SECONDS] [-s weight|share|used|name]: a live
 * view of a process's rgroup tree.
 *
 * Every interval it reads the tree again (view.c) and shows, per group:
 * nice, weight, threads, the ideal share of the process's CPU (reference
 * model; a thread's demand is 1 if it used CPU during the last interval,
 * else 0, and the capacity is the CPU the process got in that interval,
 * so that the ideal is the fair split of what it actually got), the share it actually used (its CPU time over the interval
 * divided by the CPU time all the process's threads used), and CPUs used
 * (its CPU time over the wall-clock interval).
 *
 * Drawing writes at most COLS characters per line and LINES lines, so a
 * terminal of any size gets what fits. When the process goes away the
 * view ends with a message and exit status 0.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <ncurses.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"
#include "view.h"

static const char top_usage[] =
	"Usage: rgroup top [PID] [-d SECONDS] [-s weight|share|used|name]\n"
	"\n"
	"Live view of the rgroup tree of process PID (without PID: of the one\n"
	"process that uses rgroups; 'rgroup tree' lists them): per group nice, weight,\n"
	"threads, IDEAL (the reference model's share of the process's CPU, a\n"
	"thread counted busy if it used CPU in the last interval), USED (its\n"
	"share of the CPU time the process used in the last interval) and CPU\n"
	"(CPUs it used over the interval).\n"
	"\n"
	"  -d SECONDS    refresh interval (default 1, at least 0.1)\n"
	"  -s KEY        sort siblings by weight, share, used or name\n"
	"  -h, --help    show this help\n"
	"\n"
	"Keys: q quit, s next sort key, + / - longer / shorter interval.\n";

enum sort_key { SORT_WEIGHT, SORT_SHARE, SORT_USED, SORT_NAME, SORT_N };
static const char *const sort_names[SORT_N] = { "weight", "share", "used", "name" };

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* One displayed group: its index in the current view and measurements. */
struct row {
	int g;
	double used;            /* fraction of the process's CPU, -1 unknown */
	double cpus;            /* CPUs over the interval, -1 unknown */
};

static struct {
	struct view *cur, *prev;
	int have_prev;
	double dwall;
	double proc_dcpu;       /* seconds all the process's threads used */
	int busy;
	struct row rows[VIEW_MAX_GROUPS];
	int order[VIEW_MAX_GROUPS];
	int norder;
	double plain_used, plain_cpus;
	enum sort_key sort;
	double interval;
	int no_groups;          /* the process is alive but has no rgroup now */
} st;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct view_thread *find_thread(const struct view *v, pid_t tid)
{
	for (int i = 0; i < v->nthreads; i++)
		if (v->threads[i].tid == tid)
			return &v->threads[i];
	return NULL;
}

static const struct view_group *find_group(const struct view *v, const char *name)
{
	for (int i = 0; i < v->ngroups; i++)
		if (strcmp(v->groups[i].name, name) == 0)
			return &v->groups[i];
	return NULL;
}

/* Demands and measurements of st.cur against st.prev. */
static void measure(void)
{
	struct view *c = st.cur, *p = st.prev;
	double tick = view_tick();
	uint64_t dticks = 0, plain_dticks = 0;

	st.busy = 0;
	for (int t = 0; t < c->nthreads; t++) {
		struct view_thread *th = &c->threads[t];
		const struct view_thread *old = st.have_prev ? find_thread(p, th->tid) : NULL;
		uint64_t d;

		if (!st.have_prev) {
			th->demand = 1;  /* no interval yet: like `tree` */
			continue;
		}
		d = old ? (th->ticks > old->ticks ? th->ticks - old->ticks : 0) : th->ticks;
		th->demand = d > 0 ? 1 : 0;
		st.busy += d > 0;
		dticks += d;
		if (th->group < 0)
			plain_dticks += d;
	}
	st.proc_dcpu = (double)dticks * tick;
	/* Divide the CPU time the process actually got: with other load on
	 * the machine that is less than all CPUs, and the ideal split of
	 * what it got is what the measured shares can be compared with. */
	c->capacity = st.have_prev && st.dwall > 0 && st.proc_dcpu > 0 ?
		st.proc_dcpu / st.dwall : 0;
	view_model(c);
	for (int i = 0; i < c->ngroups; i++) {
		const struct view_group *g = &c->groups[i];
		const struct view_group *old = st.have_prev ? find_group(p, g->name) : NULL;
		double du;

		st.rows[i].g = i;
		st.rows[i].used = st.rows[i].cpus = -1;
		if (!st.have_prev)
			continue;
		du = g->usage_s - (old ? old->usage_s : 0);
		if (du < 0)
			du = 0;  /* v1: a member exited and took its CPU time along */
		st.rows[i].cpus = st.dwall > 0 ? du / st.dwall : 0;
		st.rows[i].used = st.proc_dcpu > 0 ? du / st.proc_dcpu : 0;
	}
	st.plain_used = st.plain_cpus = -1;
	if (st.have_prev) {
		double du = (double)plain_dticks * tick;

		st.plain_cpus = st.dwall > 0 ? du / st.dwall : 0;
		st.plain_used = st.proc_dcpu > 0 ? du / st.proc_dcpu : 0;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = &st.rows[*(const int *)a], *y = &st.rows[*(const int *)b];
	const struct view_group *gx = &st.cur->groups[x->g], *gy = &st.cur->groups[y->g];
	double dx = 0, dy = 0;

	switch (st.sort) {
	case SORT_WEIGHT: dx = gx->weight; dy = gy->weight; break;
	case SORT_SHARE: dx = gx->ideal; dy = gy->ideal; break;
	case SORT_USED: dx = x->used; dy = y->used; break;
	case SORT_NAME: case SORT_N: break;
	}
	if (dx != dy)
		return dx < dy ? 1 : -1;   /* larger first */
	return strcmp(gx->name, gy->name);
}

/* Pre-order with siblings sorted: the tree stays a tree. */
static void order_children(int parent)
{
	int kids[VIEW_MAX_GROUPS], n = 0;

	for (int i = 0; i < st.cur->ngroups; i++)
		if (st.cur->groups[i].parent == parent)
			kids[n++] = i;
	qsort(kids, (size_t)n, sizeof(kids[0]), cmp_rows);
	for (int i = 0; i < n; i++) {
		st.order[st.norder++] = kids[i];
		order_children(kids[i]);
	}
}

/* One line at row y, cut to the screen's width. */
static void put_line(int y, int attr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put_line(int y, int attr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (y < 0 || y >= LINES || COLS <= 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (attr)
		attron(attr);
	mvaddnstr(y, 0, buf, COLS);
	if (attr)
		attroff(attr);
}

static void fmt_pct(char *out, size_t len, double v)
{
	if (v < 0)
		snprintf(out, len, "%6s", "-");
	else
		snprintf(out, len, "%5.1f%%", 100 * v);
}

static void fmt_cpus(char *out, size_t len, double v)
{
	if (v < 0)
		snprintf(out, len, "%5s", "-");
	else
		snprintf(out, len, "%5.2f", v);
}

static void draw(void)
{
	const struct view *v = st.cur;
	char ideal[16], used[16], cpus[16], cap[32];
	int y = 0, width = 15;

	erase();
	for (int i = 0; i < v->ngroups; i++) {
		const struct view_group *g = &v->groups[i];
		int w = 2 * (g->depth - 1) + (int)strlen(view_group_name(g));
		if (w > width)
			width = w;
	}
	put_line(y++, A_BOLD, "rgroup top - pid %d (%s), backend %s, every %.1fs, sort: %s",
		 (int)v->pid, v->comm, v->backend, st.interval, sort_names[st.sort]);
	if (st.have_prev)
		put_line(y++, 0, "%d threads, %d busy; process CPU %.2f of %d  (q quit, s sort, +/- interval)",
			 v->nthreads, st.busy, st.dwall > 0 ? st.proc_dcpu / st.dwall : 0,
			 v->ncpus);
	else
		put_line(y++, 0, "%d threads; measuring...  (q quit, s sort, +/- interval)",
			 v->nthreads);
	y++;
	put_line(y++, A_REVERSE, "%-*s %5s %6s %4s %6s %6s %5s %-9s %5s", width, "GROUP", "NICE",
		 "WEIGHT", "THR", "IDEAL", "USED", "CPU", "CPUS", "CAP");
	if (st.no_groups) {
		put_line(y++, 0, "process %d has no rgroup at the moment", (int)v->pid);
		refresh();
		return;
	}
	fmt_pct(ideal, sizeof(ideal), v->plain_ideal);
	fmt_pct(used, sizeof(used), st.plain_used);
	fmt_cpus(cpus, sizeof(cpus), st.plain_cpus);
	put_line(y++, 0, "%-*s %5s %6s %4d %6s %6s %5s", width, "(plain threads)", "-", "-",
		 v->plain_threads, ideal, used, cpus);
	for (int k = 0; k < st.norder && y < LINES; k++) {
		const struct row *r = &st.rows[st.order[k]];
		const struct view_group *g = &v->groups[r->g];
		int indent = 2 * (g->depth - 1);

		fmt_pct(ideal, sizeof(ideal), g->ideal);
		fmt_pct(used, sizeof(used), r->used);
		fmt_cpus(cpus, sizeof(cpus), r->cpus);
		put_line(y++, 0, "%*s%-*s %5d %6u %4d %6s %6s %5s %-9s %5s", indent, "",
			 width - indent, view_group_name(g), g->nice, g->weight, g->nthreads, ideal,
			 used, cpus, g->cpus[0] ? g->cpus : "-", view_cap_text(g, cap, sizeof(cap)));
	}
	refresh();
}

static void relayout(void)
{
	st.norder = 0;
	if (!st.no_groups)
		order_children(-1);
}

static int parse_sort(const char *s)
{
	for (int i = 0; i < SORT_N; i++)
		if (strcmp(s, sort_names[i]) == 0)
			return i;
	return -1;
}

struct users { int n; pid_t first; };

static int count_user(struct view *v, void *arg)
{
	struct users *u = arg;

	if (!u->n++)
		u->first = v->pid;
	return 0;
}

/* Without a PID: the one process that uses rgroups (-1, *pid set), or
 * the exit status after saying why there is none to choose. */
static int the_only_user(pid_t *pid)
{
	static struct view v;
	struct users u = { 0, 0 };

	if (view_each(&v, count_user, &u) < 0) {
		fprintf(stderr, "%s top: cannot read /proc: %s\n", tool_name, strerror(errno));
		return EXIT_FAIL;
	}
	if (u.n == 1) {
		*pid = u.first;
		return -1;
	}
	if (!u.n)
		fprintf(stderr, "%s top: no process that you may inspect uses rgroups\n", tool_name);
	else
		fprintf(stderr, "%s top: %d processes use rgroups; give a PID "
			"('%s tree' lists them)\n", tool_name, u.n, tool_name);
	return EXIT_FAIL;
}

/* The options and the PID: -1 to go on with *pid set, else the exit
 * status. */
static int top_options(int argc, char **argv, pid_t *pid)
{
	static const struct option opts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "sort", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c, r;

	st.interval = 1.0;
	st.sort = SORT_WEIGHT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			st.interval = strtod(optarg, &end);
			if (*end || !(st.interval >= 0.1) || st.interval > 3600)
				return tool_usage_error("top", "bad interval '%s' (0.1 to 3600 seconds)", optarg);
			break;
		case 's':
			if ((r = parse_sort(optarg)) < 0)
				return tool_usage_error("top", "bad sort key '%s' (weight, share, used or name)", optarg);
			st.sort = (enum sort_key)r;
			break;
		case 'h':
			fputs(top_usage, stdout);
			return EXIT_OK;
		default:
			if (optopt == 'd' || optopt == 's')
				return tool_usage_error("top", "option '-%c' needs a value", optopt);
			if (optopt)
				return tool_usage_error("top", "unknown option '-%c'", optopt);
			return tool_usage_error("top", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return the_only_user(pid);
	if (optind + 1 < argc)
		return tool_usage_error("top", "too many arguments");
	if (view_parse_pid(argv[optind], pid) < 0) {
		fprintf(stderr, "%s top: '%s' is not a process ID\n", tool_name, argv[optind]);
		return EXIT_FAIL;
	}
	return -1;
}

/* One key: 1 to quit; *redraw set when the screen must change. */
static int on_key(int key, int *redraw)
{
	switch (key) {
	case 'q':
	case 'Q':
		return 1;
	case 's':
		st.sort = (enum sort_key)((st.sort + 1) % SORT_N);
		*redraw = 1;
		break;
	case '+':
	case '=':
		st.interval += st.interval < 1 ? 0.1 : 0.5;
		if (st.interval > 3600)
			st.interval = 3600;
		*redraw = 1;
		break;
	case '-':
	case '_':
		st.interval -= st.interval <= 1 ? 0.1 : 0.5;
		if (st.interval < 0.1)
			st.interval = 0.1;
		*redraw = 1;
		break;
	case KEY_RESIZE:
		*redraw = 1;
		break;
	default:
		break;
	}
	return 0;
}

/* A new sample of pid's tree, the previous one kept for the deltas: -1 to
 * go on, else the exit status (the screen is closed then). */
static int sample(pid_t pid, double *last)
{
	struct view *tmp = st.prev;
	double t = now();
	char why[512];
	int r;

	st.prev = st.cur;
	st.cur = tmp;
	r = view_read(st.cur, pid, why, sizeof(why));
	/* Whatever a read that raced with the exit says, the process is gone */
	if (r != 0 && r != VIEW_ENOPROC && st.prev->starttime &&
	    !view_alive(pid, st.prev->starttime))
		r = VIEW_ENOPROC;
	if (r == VIEW_ENOPROC) {
		endwin();
		printf("%s top: process %d has exited\n", tool_name, (int)pid);
		return EXIT_OK;
	}
	if (r != 0 && r != VIEW_ENORGROUP) {
		endwin();
		fprintf(stderr, "%s top: %s\n", tool_name, why);
		return EXIT_FAIL;
	}
	st.no_groups = r == VIEW_ENORGROUP;
	st.dwall = t - *last;
	*last = t;
	/* The previous sample is usable when it had a tree. */
	st.have_prev = !st.no_groups && st.prev->ngroups > 0;
	if (!st.no_groups)
		measure();
	return -1;
}

int cmd_top(int argc, char **argv)
{
	static struct view views[2];
	struct sigaction sa = { .sa_handler = on_signal };
	char why[512];
	double last;
	int r;
	pid_t pid;

	if ((r = top_options(argc, argv, &pid)) >= 0)
		return r;
	st.cur = &views[0];
	st.prev = &views[1];
	/* Bad PIDs are refused before the screen is taken over. */
	if (view_read(st.cur, pid, why, sizeof(why)) != 0) {
		fprintf(stderr, "%s top: %s\n", tool_name, why);
		return EXIT_FAIL;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "%s top: needs a terminal (for scripts: rgroup tree PID --json)\n",
			tool_name);
		return EXIT_FAIL;
	}
	last = now();
	measure();

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!initscr()) {
		fprintf(stderr, "%s top: cannot initialise the terminal\n", tool_name);
		return EXIT_FAIL;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(100);   /* short slices: keys and signals are seen promptly */
	relayout();
	draw();

	while (!stop_signal) {
		int redraw = 0;

		if (on_key(getch(), &redraw))
			break;
		if (now() - last >= st.interval) {
			if ((r = sample(pid, &last)) >= 0)
				return r;
			redraw = 1;
		}
		if (redraw) {
			relayout();
			draw();
		}
	}
	endwin();
	return EXIT_OK;
}
