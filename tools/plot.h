/* SPDX-License-Identifier: MIT */
/*
 * plot.h - CPU shares over time as a PNG, drawn by gnuplot (Debian:
 * gnuplot-nox), for `rgroup demo --plot FILE.png`.
 */
#ifndef RGROUP_PLOT_H
#define RGROUP_PLOT_H

#include <stddef.h>

/* Time series of several groups, as arrays (struct of arrays). */
struct plot_data {
	size_t npoints;            /* samples per group */
	size_t ngroups;
	const double *t;           /* [npoints] seconds since the start */
	const char *const *names;  /* [ngroups] legend entries */
	const double *share;       /* [ngroups * npoints]: group g's share at
	                            * t[i] is share[g * npoints + i], 0..1 */
	const double *ideal;       /* [ngroups] ideal share, drawn dashed in
	                            * the group's colour; NULL: none; < 0: none
	                            * for that group */
};

/*
 * Draw the shares (in percent) over time into `png` with `title` (may be
 * NULL), one solid line per group and its ideal as a dashed line of the
 * same colour. Runs gnuplot from PATH; the caller's stdout is untouched.
 * Returns 0, -EINVAL (bad data), -ENOENT (gnuplot not installed), or
 * another -errno / -EIO (gnuplot failed; its messages go to stderr).
 */
int plot_shares(const char *png, const char *title, const struct plot_data *d);

#endif /* RGROUP_PLOT_H */
