/*
 * rules.h
 *    The program rules of an offer for one participant (docs/reference.md,
 *    Program rules): enrollment windows, requirements and limits, applied
 *    around the offer's strategy in the order enrollment -> requirements
 *    -> the strategy -> limits.  (Incremental tiers concern one strategy
 *    and live in strategy_stepped.c.)
 *
 * The rules of an offer wrap its strategy through the strategies' own
 * interface: inc_rules_ops is an operations table (strategy.h) whose
 * operations call those of the offer's strategy (inc_strategy_ops) around
 * the rules' own work.  The engine gives an offer this table instead of its
 * strategy's when its rules are not all defaults (IncOffer.rules.any), so
 * its loop has one dispatch and an offer without rules costs what it did
 * before rules existed:
 *
 *   index    the strategy's hooks and properties, then the SKUs of the
 *            requirements' filters and of distinct_products' listed
 *            products (hooks of the rules' own kinds) and the properties
 *            they read;
 *   begin    the strategy's state and the rules' (the participant's
 *            enrollment windows, from the host's IncEnrollmentFn);
 *   observe  nothing for a transaction outside every window of a
 *            "required" offer; a requirement hook adds to its requirement;
 *            a strategy hook goes to the strategy, its rows held (c->hold)
 *            when the offer has requirements or limits;
 *   finish   the strategy's finish (rows held), then the requirements,
 *            the rows of growers failing theirs removed, then the limits,
 *            then the held rows go to the host;
 *   diagnose the strategy's diagnostics with "rules" added;
 *   rates    the strategy's.
 *
 * rules.c knows the strategies' table, the calculation helpers and the
 * offer model, never the engine.
 */
#ifndef INC_RULES_H
#define INC_RULES_H

#include "../strategy/strategy.h"

/* The operations of an offer with program rules (see above). */
extern const IncStrategyOps inc_rules_ops;

/*
 * inc_rules_requirements_json: the offer's requirements as the programs
 * view shows them, a JSON array [{"key", "type", "minimum",
 * "property_key", "filters": [{"period_key", "sku_keys",
 * "transaction_type"}] or null, and for a growth type "baseline":
 * {"start_date", "end_date"} or {"property_key"}}], with each one's
 * "scope" before its filters in an offer aggregated by group (inc_alloc
 * memory).
 */
extern const char *inc_rules_requirements_json(const IncOffer *offer);

#endif							/* INC_RULES_H */
