/* SPDX-License-Identifier: MIT */
/*
 * model.c - the reference model of the ideal hierarchical weighted share
 * (see model.h for the shape of a model).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "model.h"

/* Relative slack for "fair share covers the demand": without it rounding
 * can leave a child that is exactly at its demand unsaturated for a round,
 * which only costs a round, but equal cases then print as 0.99999. */
#define MODEL_EPS 1e-12

/* The library's copy (governor-model.c) takes only the solver: the rest
 * builds and prints models for tests, the demo and the benchmarks, and a
 * library never prints. */
#ifndef RGROUP_MODEL_SOLVER_ONLY

void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
}

int model_add(struct model *m, int parent, double weight, double demand)
{
	struct model_node *node;

	if (m->n >= MODEL_MAX_NODES || parent < -1 || parent >= m->n ||
	    !isfinite(weight) || weight <= 0 ||
	    !isfinite(demand) || demand < 0)
		return -1;
	node = &m->nodes[m->n];
	memset(node, 0, sizeof(*node));
	node->parent = parent;
	node->weight = weight;
	node->demand = demand;
	return m->n++;
}

/*
 * Water-fill `capacity` CPUs among the siblings listed from `first` (the
 * children of one node, or the top-level nodes). Assumes capacity <= the children's total demand. Every child
 * gets capacity in proportion to its weight, but never more than it
 * wants; what a saturated child leaves goes to the others by weight.
 * Each round settles every child whose demand is within its fair share
 * at that round's level (settling them only raises the others' level, so
 * settling them together is exact), and the last round gives the rest
 * their proportional part. At most one round per child.
 */
#endif /* RGROUP_MODEL_SOLVER_ONLY */

static void distribute(struct model_node *nodes, int first, double capacity)
{
	const double total = capacity;

	for (int i = first; i >= 0; i = nodes[i].next_sibling) {
		nodes[i].share = 0;
		/* A child that wants nothing gets nothing, whatever its weight. */
		nodes[i].settled = nodes[i].total_demand <= 0;
	}

	for (;;) {
		double w = 0, level;
		int saturated = 0;

		for (int i = first; i >= 0; i = nodes[i].next_sibling)
			if (!nodes[i].settled)
				w += nodes[i].weight;
		if (w <= 0)
			return;
		level = capacity / w;

		for (int i = first; i >= 0; i = nodes[i].next_sibling) {
			struct model_node *c = &nodes[i];

			if (c->settled)
				continue;
			if (c->total_demand <= level * c->weight * (1 + MODEL_EPS)) {
				c->share = c->total_demand;
				c->settled = 1;
				saturated = 1;
			}
		}
		if (!saturated) {
			for (int i = first; i >= 0; i = nodes[i].next_sibling) {
				struct model_node *c = &nodes[i];

				if (c->settled)
					continue;
				c->share = level * c->weight;
				c->settled = 1;
			}
			return;
		}
		/* What is left, from scratch rather than subtracted per
		 * round, so rounding does not accumulate. */
		capacity = total;
		for (int i = first; i >= 0; i = nodes[i].next_sibling)
			if (nodes[i].settled)
				capacity -= nodes[i].share;
		if (capacity < 0)
			capacity = 0;
	}
}

/*
 * The ideal hierarchical weighted share, what a perfect CFS with group
 * scheduling would give: the pool's capacity is min(capacity, total
 * demand); each node divides what it got among its children by weight,
 * capped at each child's total demand, the excess going to the unsaturated
 * children by weight (water-filling); recursively down to the leaves.
 *
 * Assumes parent < child index, so one pass from the end adds demands up
 * (and links each node's children, in index order) and one pass from the
 * front hands shares down. Each water-filling round of a parent walks its
 * children only: linear in n times the rounds, so the governor can run it
 * every round over thousands of threads.
 */
int model_solve(struct model_node *nodes, int n, double capacity)
{
	double top_demand = 0;
	int top = -1;

	if (n < 0 || (n > 0 && !nodes) || !isfinite(capacity) || capacity < 0)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		const struct model_node *c = &nodes[i];

		if (c->parent < -1 || c->parent >= i ||
		    !isfinite(c->weight) || c->weight <= 0 ||
		    !isfinite(c->demand) || c->demand < 0)
			return -EINVAL;
	}

	for (int i = 0; i < n; i++) {
		nodes[i].nchildren = 0;
		nodes[i].total_demand = 0;
		nodes[i].share = 0;
		nodes[i].first_child = -1;
		nodes[i].next_sibling = -1;
	}
	for (int i = 0; i < n; i++)
		if (nodes[i].parent >= 0)
			nodes[nodes[i].parent].nchildren++;
	/* Children come after their parent: going backwards, a node's total
	 * is complete before it is added to its parent's; linking each at the
	 * head of its parent's list leaves the lists in index order. */
	for (int i = n - 1; i >= 0; i--) {
		struct model_node *c = &nodes[i];
		int *head = c->parent >= 0 ? &nodes[c->parent].first_child : &top;

		if (c->nchildren == 0)
			c->total_demand = c->demand;
		if (c->parent >= 0)
			nodes[c->parent].total_demand += c->total_demand;
		else
			top_demand += c->total_demand;
		c->next_sibling = *head;
		*head = i;
	}

	if (top >= 0)
		distribute(nodes, top, fmin(capacity, top_demand));
	for (int i = 0; i < n; i++)
		if (nodes[i].nchildren > 0)
			distribute(nodes, nodes[i].first_child, nodes[i].share);
	return 0;
}

#ifndef RGROUP_MODEL_SOLVER_ONLY
int model_run(struct model *m, double capacity)
{
	return model_solve(m->nodes, m->n, capacity);
}

double model_fraction(const struct model *m, int i)
{
	double pool = 0;

	if (i < 0 || i >= m->n)
		return 0;
	for (int j = 0; j < m->n; j++)
		if (m->nodes[j].parent == -1)
			pool += m->nodes[j].share;
	return pool > 0 ? m->nodes[i].share / pool : 0;
}

static void print_subtree(const struct model *m, FILE *f, int p, int depth)
{
	for (int i = p + 1; i < m->n; i++) {
		const struct model_node *c = &m->nodes[i];

		if (c->parent != p)
			continue;
		fprintf(f, "%*s[%d] weight %-6g demand %-5g share %.4f CPUs (%.1f%%)\n",
			2 * depth, "", i, c->weight, c->total_demand, c->share,
			100 * model_fraction(m, i));
		print_subtree(m, f, i, depth + 1);
	}
}

void model_print(const struct model *m, FILE *f)
{
	print_subtree(m, f, -1, 0);
}
#endif /* RGROUP_MODEL_SOLVER_ONLY */
