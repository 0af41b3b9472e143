/* planref: the planner's reference (planref.c says what it is). Same contracts as plan.h's
 * functions of the same names without ref_. */
#ifndef PSI_TEST_RECONCILE_PLANREF_H
#define PSI_TEST_RECONCILE_PLANREF_H

#include "reconcile/move/plan.h"

double ref_target(const struct rebalance_params *p);
bool ref_is_source(const struct rebalance_params *p, const struct rebalance_node *n);
const char *ref_destination_check(const struct rebalance_params *p, const struct rebalance_node *n, char *why,
                                  size_t len);
int ref_plan(const struct rebalance_params *p, const struct rebalance_node *nodes, size_t nnodes,
             const struct rebalance_candidate *cands, size_t ncands, struct rebalance_plan *out);
void ref_plan_free(struct rebalance_plan *plan);

#endif
