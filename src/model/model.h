/* SPDX-License-Identifier: MIT */
/*
 * model.h - the reference model of the ideal hierarchical weighted share.
 *
 * One model for everything that predicts CPU distribution: the
 * CPU-distribution tests compare measured usage with it, and the demo and
 * the benchmarks print it beside their figures. Not part of the library.
 *
 * A model is a forest of nodes in an array. A node with parent -1 is a
 * top-level node: the top-level nodes share the CPU pool (normally there
 * is one, the system group). A node without children is a leaf, a thread
 * or a single-threaded process, with a demand in CPUs (1.0 busy, 0 idle,
 * in between for a thread that sleeps part of the time). The demand of an
 * inner node is ignored: it wants what its leaves want.
 *
 * Rule: parent < child index (a parent is added before its children).
 *
 *	struct model m;
 *	model_init(&m);
 *	int sg = model_add(&m, -1, 1024, 0);
 *	int p1 = model_add(&m, sg, 1024, 1.0);
 *	int rg = model_add(&m, sg, 1024, 0);
 *	for (int i = 0; i < 4; i++)
 *		model_add(&m, rg, 1024, 1.0);
 *	model_run(&m, 2.0);
 *	model_fraction(&m, rg);	-> 0.5: p1 is capped at 1 CPU
 */
#ifndef RGROUP_MODEL_H
#define RGROUP_MODEL_H

#include <stdio.h>

#define MODEL_MAX_NODES 256

struct model_node {
	int parent;          /* index of the parent, -1 for a top-level node */
	double weight;       /* > 0: a kernel weight, e.g. 1024 for nice 0 */
	double demand;       /* leaves: CPUs it would use if unconstrained */
	/* Filled by model_solve(): */
	double total_demand; /* leaves: demand; inner nodes: sum of children */
	double share;        /* CPUs it gets */
	/* Scratch for model_solve(). */
	int nchildren;
	int settled;
	int first_child, next_sibling;  /* -1: none; children in index order */
};

struct model {
	int n;
	struct model_node nodes[MODEL_MAX_NODES];
};

void model_init(struct model *m);

/* Add a node; returns its index, or -1 if the model is full or an argument
 * is invalid (parent not an existing node or -1, weight not > 0, demand
 * negative). */
int model_add(struct model *m, int parent, double weight, double demand);

/*
 * Fill share (and total_demand) of nodes[0..n-1] for `capacity` CPUs by
 * hierarchical water-filling. Returns 0, or -EINVAL (nothing written) if
 * a parent index is not below its child's, a weight is not > 0, a demand
 * or the capacity is negative or not finite.
 */
int model_solve(struct model_node *nodes, int n, double capacity);

/* model_solve() on the whole model. */
int model_run(struct model *m, double capacity);

/* Node i's share divided by the pool's share (the sum of the top-level
 * nodes' shares): the fraction of the used CPU time it gets. 0 if the
 * pool got nothing. */
double model_fraction(const struct model *m, int i);

/* Print the tree with weights, demands, shares and fractions. */
void model_print(const struct model *m, FILE *f);

#endif /* RGROUP_MODEL_H */
