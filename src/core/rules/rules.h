/*
 * rules.h
 *    The program rules of an offer for one participant (docs/reference.md,
 *    Program rules): enrollment windows, requirements and limits, applied
 *    around the offer's strategy in the order enrollment -> requirements
 *    -> the strategy -> limits.  (Incremental tiers concern one strategy
 *    and live in strategy_stepped.c.)
 *
 * The engine calls these only for an offer whose rules are not all
 * defaults (IncOffer.rules.any), so an offer without rules costs what it
 * did before they existed:
 *
 *   inc_rules_index    once per offer: the SKUs of the requirements'
 *                      filters (hooks of kind INC_RULES_HOOK) and the
 *                      properties they read;
 *   inc_rules_begin    the offer's rules for one participant (its
 *                      enrollment windows, from the host's IncEnrollmentFn);
 *   inc_rules_admit    does a transaction exist for the offer (inside a
 *                      window of a "required" offer)?  A transaction that
 *                      does not is never shown to the strategy;
 *   inc_rules_observe  a requirement hook;
 *   inc_rules_hold     while the strategy observes and finishes, its rows
 *                      are held (c->hold) when the offer has requirements
 *                      or limits;
 *   inc_rules_finish   after the strategy's finish: the requirements, then
 *                      the limits, then the held rows go to the host;
 *   inc_rules_diagnose the strategy's diagnostics with "rules" added.
 *
 * rules.c knows the calculation helpers and the offer model, never the
 * engine or a strategy.
 */
#ifndef INC_RULES_H
#define INC_RULES_H

#include "../strategy/strategy.h"

/* The kind of a requirement filter's hook (a: requirement, b: filter). */
#define INC_RULES_HOOK (-1)

typedef struct IncRulesState IncRulesState;

extern void inc_rules_index(const IncOffer *offer, const IncIndexSink *sink);
extern IncRulesState *inc_rules_begin(IncCalc *c, const IncOffer *offer);
extern bool inc_rules_admit(IncCalc *c, const IncOffer *offer, IncRulesState *rs, int txn);
extern void inc_rules_observe(IncCalc *c, const IncOffer *offer, IncRulesState *rs,
							  const IncHook *hook, int txn);
extern void inc_rules_hold(IncCalc *c, IncRulesState *rs);
extern void inc_rules_finish(IncCalc *c, const IncOffer *offer, IncRulesState *rs);
extern const char *inc_rules_diagnose(IncCalc *c, const IncOffer *offer, IncRulesState *rs,
									  const char *strategy_json);

/*
 * inc_rules_requirements_json: the offer's requirements as the programs
 * view shows them, a JSON array [{"key", "type", "minimum",
 * "property_key", "filters": [{"period_key", "sku_keys",
 * "transaction_type"}] or null}] (inc_alloc memory).
 */
extern const char *inc_rules_requirements_json(const IncOffer *offer);

#endif							/* INC_RULES_H */
