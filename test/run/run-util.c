/* SPDX-License-Identifier: MIT */
/*
 * run-util.c - see run-util.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "governor-state.h"
#include "locate.h"
#include "parse.h"
#include "run-util.h"

extern char **environ;

double rt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void rt_boost_session(void)
{
	int fd;

	if (geteuid() != 0)
		return;
	setsid();   /* fails for a group leader: then its own session it is */
	fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;   /* no sched_autogroup: nothing to raise */
	if (write(fd, "-15", 3) < 0)
		fprintf(stderr, "  (cannot raise the autogroup: %s)\n", strerror(errno));
	close(fd);
}

void rt_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int rt_spawn(struct rt_proc *p, char *const argv[], char *const env[])
{
	int in[2], out[2], err[2];

	memset(p, 0, sizeof(*p));
	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		for (size_t i = 0; env && env[i]; i++) {
			const char *eq = strchr(env[i], '=');
			char key[256];
			if (!eq || (size_t)(eq - env[i]) >= sizeof(key))
				continue;
			snprintf(key, sizeof(key), "%.*s", (int)(eq - env[i]), env[i]);
			if (eq[1])
				setenv(key, eq + 1, 1);
			else
				unsetenv(key);
		}
		execv(argv[0], argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	p->in = in[1];
	p->out = out[0];
	p->err = err[0];
	fcntl(p->err, F_SETFL, O_NONBLOCK);
	return 0;
}

int rt_line(struct rt_proc *p, char *line, size_t len, double timeout)
{
	double end = rt_now() + timeout;

	for (;;) {
		char *nl = memchr(p->buf, '\n', p->nbuf);
		struct pollfd pfd = { p->out, POLLIN, 0 };
		ssize_t n;
		double left;

		if (nl) {
			size_t k = (size_t)(nl - p->buf);
			snprintf(line, len, "%.*s", (int)k, p->buf);
			memmove(p->buf, nl + 1, p->nbuf - k - 1);
			p->nbuf -= k + 1;
			return 0;
		}
		left = end - rt_now();
		if (left <= 0 || p->nbuf == sizeof(p->buf))
			return -1;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		n = read(p->out, p->buf + p->nbuf, sizeof(p->buf) - p->nbuf);
		if (n <= 0)
			return -1;
		p->nbuf += (size_t)n;
	}
}

int rt_until(struct rt_proc *p, const char *prefix, char *all, size_t len, double timeout)
{
	double end = rt_now() + timeout;
	char line[512];
	size_t off = all ? strlen(all) : 0;

	while (rt_line(p, line, sizeof(line), end - rt_now()) == 0) {
		if (all && off < len)
			off += (size_t)snprintf(all + off, len - off, "%s\n", line);
		if (strncmp(line, prefix, strlen(prefix)) == 0)
			return 0;
	}
	return -1;
}

void rt_stderr(struct rt_proc *p, char *out, size_t len)
{
	size_t off = strlen(out);
	ssize_t n;

	while (off + 1 < len && (n = read(p->err, out + off, len - off - 1)) > 0)
		off += (size_t)n;
	out[off] = '\0';
}

int rt_finish(struct rt_proc *p, double timeout)
{
	double end = rt_now() + timeout;
	int st;

	if (p->in >= 0)
		close(p->in);
	p->in = -1;
	for (;;) {
		pid_t r = waitpid(p->pid, &st, WNOHANG);
		if (r == p->pid)
			break;
		if (r < 0)
			return -1;
		if (rt_now() > end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			break;
		}
		rt_sleep(0.01);
	}
	close(p->out);
	/* stderr stays readable for rt_stderr() until the caller is done. */
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- Where threads are ---------------------------------------------------- */

struct gov_find {
	pid_t tid;
	uint64_t ids[64], parents[64];
	int n, found;
	pid_t *tids;
};

static int gov_group(void *arg, const struct rgroup__state_group *g)
{
	struct gov_find *f = arg;

	if (f->n < 64) {
		f->ids[f->n] = g->id;
		f->parents[f->n] = g->parent;
		for (unsigned int i = 0; i < g->ntids && i < 4096; i++)
			if (f->tids[i] == f->tid)
				f->found = f->n;
		f->n++;
	}
	return 0;
}

static int gov_where(pid_t pid, pid_t tid, char *out, size_t len)
{
	static char text[RGROUP__STATE_MAX + 1];
	static pid_t tids[4096];
	struct gov_find f = { .tid = tid, .found = -1, .tids = tids };
	struct rgroup__state h;
	char name[128], path[256], chain[64][24];
	int depth = 0, at, r;
	uint64_t id;

	if (rgroup__format_statename(name, sizeof(name), pid, rgroup__starttime(pid), 0) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", RGROUP__STATE_DIR, name);
	out[0] = '\0';
	r = rgroup__read_path(path, text, sizeof(text));
	if (r == -ENOENT)
		return kill(pid, 0) == 0 ? 0 : -1;   /* no group (yet): outside */
	if (r < 0 || rgroup__parse_state(text, &h, tids, 4096, gov_group, &f) < 0)
		return -1;
	if (f.found < 0)
		return 0;
	/* The chain of ids from the top, as a path. */
	for (id = f.ids[f.found]; id && depth < 64; depth++) {
		snprintf(chain[depth], sizeof(chain[depth]), "g%llu", (unsigned long long)id);
		for (at = 0; at < f.n && f.ids[at] != id; at++)
			;
		id = at < f.n ? f.parents[at] : 0;
	}
	for (size_t off = 0; depth-- > 0;)
		off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "/" : "", chain[depth]);
	return 0;
}

/* On a kernel with native rgroups: the chain of the thread's kernel
 * rgroup ids from the top ("k3/k7"), from /proc/PID/rgroups (parents
 * first). 1 and *out, 0 if the thread is in no kernel rgroup (or the
 * kernel has none), -1 if the files cannot be read. */
static int native_where(pid_t pid, pid_t tid, char *out, size_t len)
{
	static char text[65536];
	char file[64], chain[64][24];
	struct rgroup__kgroup g;
	int depth = 0;

	snprintf(file, sizeof(file), "/proc/%d/task/%d/rgroup", (int)pid, (int)tid);
	if (rgroup__read_path(file, text, sizeof(text)) < 0 || rgroup__parse_kgroup(text, &g) < 0 ||
	    !g.id)
		return 0;
	snprintf(file, sizeof(file), "/proc/%d/rgroups", (int)pid);
	if (rgroup__read_path(file, text, sizeof(text)) < 0)
		return -1;
	for (uint64_t id = g.id; id && depth < 64; depth++) {
		snprintf(chain[depth], sizeof(chain[depth]), "k%llu", (unsigned long long)id);
		id = rgroup__find_kgroup_list(text, id, &g) == 0 ? g.parent : 0;
	}
	out[0] = '\0';
	for (size_t off = 0; depth-- > 0;)
		off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "/" : "", chain[depth]);
	return 1;
}

int rt_where(pid_t pid, pid_t tid, int governor, const char *ctrl, const char *sgroup,
	     char *out, size_t len)
{
	char file[64], text[8192], path[4096];
	size_t n = strlen(sgroup);

	if (governor)
		return gov_where(pid, tid, out, len);
	switch (native_where(pid, tid, out, len)) {
	case 1:
		return 0;
	case -1:
		return -1;
	}
	snprintf(file, sizeof(file), "/proc/%d/task/%d/cgroup", (int)pid, (int)tid);
	if (rgroup__read_path(file, text, sizeof(text)) < 0 ||
	    rgroup__parse_proc_cgroup(text, ctrl, path, sizeof(path)) < 0)
		return -1;
	if (strcmp(sgroup, "/") == 0)
		n = 0;
	else if (strncmp(path, sgroup, n) != 0 || (path[n] && path[n] != '/'))
		return snprintf(out, len, "(outside %s: %s)", sgroup, path), 0;
	snprintf(out, len, "%s", path[n] == '/' ? path + n + 1 : path + n);
	return 0;
}

int rt_threads(pid_t pid, const char *glob, pid_t *tids, int max)
{
	char dir[64], file[128], name[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s/comm", dir, e->d_name);
		if (rgroup__read_path(file, name, sizeof(name)) < 0)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (fnmatch(glob, name, 0) == 0)
			tids[n++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return n;
}

double rt_cpu(pid_t pid, pid_t tid)
{
	char file[64], text[1024];
	unsigned long long ns = 0, ut = 0, stm = 0;
	const char *p;
	int field = 2;

	/* schedstat's first field: nanoseconds on a CPU. */
	snprintf(file, sizeof(file), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	if (rgroup__read_path(file, text, sizeof(text)) >= 0 && sscanf(text, "%llu", &ns) == 1)
		return (double)ns / 1e9;
	snprintf(file, sizeof(file), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (rgroup__read_path(file, text, sizeof(text)) < 0 || !(p = strrchr(text, ')')))
		return 0;
	for (p++; *p && field < 14; p++)
		if (*p == ' ')
			field++;
	if (sscanf(p, "%llu %llu", &ut, &stm) != 2)
		return 0;
	return (double)(ut + stm) / (double)sysconf(_SC_CLK_TCK);
}
