/* SPDX-License-Identifier: MIT */
/*
 * plot.c - CPU shares over time as a PNG through gnuplot. See plot.h.
 *
 * The samples go to a temporary data file (gnuplot reads it twice per
 * group); the script goes to gnuplot's stdin, so no shell sees any name.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"

/* A gnuplot string literal in double quotes: escape " and \. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if (*s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static int write_data(FILE *f, const struct plot_data *d)
{
	for (size_t i = 0; i < d->npoints; i++) {
		fprintf(f, "%.6f", d->t[i]);
		for (size_t g = 0; g < d->ngroups; g++) {
			double v = d->share[g * d->npoints + i];

			if (isfinite(v))
				fprintf(f, " %.6f", 100 * v);
			else
				fputs(" NaN", f);
		}
		fputc('\n', f);
	}
	return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

static void write_script(FILE *f, const char *png, const char *title,
			 const char *datafile, const struct plot_data *d)
{
	fputs("set terminal pngcairo size 1000,600 font 'sans,10'\nset output ", f);
	put_quoted(f, png);
	fputs("\n", f);
	if (title) {
		fputs("set title ", f);
		put_quoted(f, title);
		fputs(" noenhanced\n", f);
	}
	fputs("set xlabel 'time (s)'\nset ylabel 'share of CPU time (%)'\n"
	      "set yrange [0:*]\nset grid\nset key outside right top noenhanced\n"
	      "set datafile missing 'NaN'\nplot ", f);
	for (size_t g = 0; g < d->ngroups; g++) {
		fprintf(f, "%s", g ? ", \\\n     " : "");
		put_quoted(f, datafile);
		fprintf(f, " using 1:%zu with lines linewidth 2 linecolor %zu title ", g + 2, g + 1);
		put_quoted(f, d->names && d->names[g] ? d->names[g] : "?");
		if (d->ideal && d->ideal[g] >= 0 && isfinite(d->ideal[g])) {
			fprintf(f, ", \\\n     %.6f with lines dashtype 2 linewidth 1.5 "
				"linecolor %zu title ", 100 * d->ideal[g], g + 1);
			{
				char t[160];

				snprintf(t, sizeof(t), "%s ideal",
					 d->names && d->names[g] ? d->names[g] : "?");
				put_quoted(f, t);
			}
		}
	}
	fputs("\n", f);
}

int plot_shares(const char *png, const char *title, const struct plot_data *d)
{
	char datafile[] = "/tmp/rgroup-plot-XXXXXX";
	int fds[2] = { -1, -1 }, dfd, status, ret = 0;
	FILE *data = NULL, *script = NULL;
	void (*old_pipe)(int);
	pid_t child;

	if (!png || !*png || !d || !d->npoints || !d->ngroups || !d->t || !d->share)
		return -EINVAL;
	dfd = mkstemp(datafile);
	if (dfd < 0)
		return -errno;
	if (!(data = fdopen(dfd, "w"))) {
		ret = -errno;
		close(dfd);
		goto out;
	}
	if ((ret = write_data(data, d)) < 0)
		goto out;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		ret = -errno;
		goto out;
	}
	child = fork();
	if (child < 0) {
		ret = -errno;
		goto out;
	}
	if (child == 0) {
		dup2(fds[0], STDIN_FILENO);
		dup2(STDERR_FILENO, STDOUT_FILENO);  /* the caller's stdout stays clean */
		execlp("gnuplot", "gnuplot", (char *)NULL);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(fds[0]);
	fds[0] = -1;
	old_pipe = signal(SIGPIPE, SIG_IGN);  /* gnuplot missing: EPIPE, not death */
	script = fdopen(fds[1], "w");
	if (script) {
		fds[1] = -1;
		write_script(script, png, title, datafile, d);
		fclose(script);
	}
	signal(SIGPIPE, old_pipe);
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			goto out;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		ret = -ENOENT;
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		ret = -EIO;
	else if (access(png, F_OK) < 0)
		ret = -EIO;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	if (data)
		fclose(data);
	unlink(datafile);
	return ret;
}
