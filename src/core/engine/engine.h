/*
 * engine.h
 *    The calculation: offers indexed by SKU, one participant (or one unit
 *    of participants that share groups) at a time; the host API of the
 *    engine core.
 *
 * A host builds an IncEngine once per call (offers, SKU units, unit
 * conversions), then feeds it each participant's transactions, in any
 * order, and receives earning rows through a callback (the types are in
 * calc_io.h).  A participant's earnings depend only on its own
 * transactions and properties, and, in offers aggregated by group, on
 * those of the groups it belongs to: so the host holds one participant's
 * transactions at a time, or one unit's (every participant that shares an
 * aggregation key with another, through a group; calc_io.h, IncUnit).
 * Everything is allocated with
 * inc_alloc: the engine in the host's long-lived context, a participant's
 * working data in whatever context is current during inc_engine_calculate
 * (the host resets it after each participant).
 */
#ifndef INC_ENGINE_H
#define INC_ENGINE_H

#include "../calc/calc_io.h"
#include "../products/products.h"
#include "groups.h"

/*
 * IncDiagnosticsFn: why a participant earns what it does under one offer,
 * as a JSON object (see inc_engine_set_diagnostics).
 */
typedef void (*IncDiagnosticsFn) (void *ctx, const IncOffer *offer,
								  const char *participant_key, const char *group_key,
								  const char *json);

typedef struct IncEngine IncEngine;

extern IncEngine *inc_engine_create(void);
extern void inc_engine_set_products(IncEngine *e, IncProducts *products);
extern const char *const *inc_engine_product_keys(const IncEngine *e, int *n);
extern void inc_engine_add_offer(IncEngine *e, const IncOffer *offer);

/*
 * inc_engine_add_offer_schedule: as inc_engine_add_offer, for an offer with a
 * rate schedule: nversions (>= 2) versions, effective_from ascending
 * (effective_from[0] is ignored: the first version applies before every
 * other), versions[i] compiled from each version's document (the last is the
 * current version, with offer's structure).  Copies what it keeps (in the
 * current allocator); the offer and versions must outlive the engine.
 */
extern void inc_engine_add_offer_schedule(IncEngine *e, const IncOffer *offer, int nversions,
										  const int32_t *effective_from,
										  const IncOffer *const *versions);
/* The SKU catalog (incentives.skus): sku_key's unit of measure. */
extern void inc_engine_set_sku_uom(IncEngine *e, const char *sku_key, const char *uom_key);
/* incentives.uom_conversions: quantity_in_to = quantity_in_from * factor (> 0). */
extern void inc_engine_add_conversion(IncEngine *e, const char *from_uom, const char *to_uom,
									  const IncDec *factor);
extern void inc_engine_set_tick(IncEngine *e, IncTickFn tick);

/*
 * inc_engine_add_exchange_rate: a row of incentives.exchange_rates
 * (docs/reference.md, Currencies): one unit of from is rate units of to
 * from rate_date (days since 2000-01-01) on.  Call before
 * inc_engine_prepare, in the allocator the engine lives in (the strings
 * are copied).  A rate <= 0 fails (INC_ERR_INVALID: the table refuses
 * it).  inc_engine_prepare makes, for each offer's currency, the rate
 * from every other currency as dated steps (calc.h, IncExchangeStep).
 */
extern void inc_engine_add_exchange_rate(IncEngine *e, const char *from, const char *to,
										 int32_t rate_date, IncDec rate);

/*
 * inc_engine_set_enrollments: where the enrollment windows of offers whose
 * enrollment is "required" come from (docs/reference.md, Enrollment): fn
 * is called at most once per participant and such offer.  Without it,
 * nobody is enrolled.
 */
extern void inc_engine_set_enrollments(IncEngine *e, IncEnrollmentFn fn, void *ctx);

/*
 * inc_engine_set_diagnostics: after each unit, report every offer of the
 * engine to fn as JSON for each participant the host wants (IncUnit,
 * INC_KEY_REPORT), in the order the offers were added, whether the
 * participant's transactions touched it or not (an untouched offer is
 * reported from an empty state: no coverage, a threshold value of 0 or
 * the participant's property).  An offer aggregated by group is reported
 * once per aggregation key the participant's transactions carry (its own
 * key when it has none), from that key's state, group_key set when the key
 * is a group, with "aggregation": {"key", "group_key", "members":
 * [{"participant_key", "transactions", "incentive_amount"}]} added (the
 * members with transactions under the key that the host lets show,
 * INC_KEY_VISIBLE or INC_KEY_REPORT; transactions is how many the offer
 * saw, incentive_amount what their rows pay):
 *   standard: {"entries": [{"rate_key", "label", "period_key",
 *     "period_start_date", "period_end_date", "transaction_type", "rates":
 *     [{"sku_key", "rate", "measure"}], "transactions" (matched),
 *     "incentive_amount" (what the entry's rows pay)}]}
 *   stepped: {"tier_mode", "threshold_type", "property_key",
 *     "threshold_value" (null when the property is missing),
 *     "earning_transactions", "tiers": [{"rate_key", "threshold", "value",
 *     "measure", "met", "incentive_amount"}] ascending, "selected_rate_key",
 *     "next_rate_key", "next_threshold", "gap_to_next"}; incremental tiers
 *     add "blended_rate", "next_blended_rate" and "bands": [{"rate_key",
 *     "from", "to", "value", "volume"}]
 *   stacked: {"sets": [{"key", "coverage_unit", "coverage", "transactions"}],
 *     "stacks": [{"rate_key", "sku_set_keys", "overlap", "earns", "factors":
 *     {set key: f}}]}
 *   and, for an offer with program rules, "rules" (rules.c,
 *   RulesDiagnose): enrollment windows, requirements, limits.
 * Numbers are exact to 6 decimal places (amounts to 2), trailing zeros
 * dropped; rates, thresholds and values as written, in shortest form.
 */
extern void inc_engine_set_diagnostics(IncEngine *e, IncDiagnosticsFn fn, void *ctx);

/*
 * IncBasisFn: a forecast's basis of one offer for key (the index, among
 * the unit's keys, of the participant or aggregation key whose state it
 * is) just calculated (see inc_engine_set_basis); basis is NULL for an
 * offer without tiers.
 */
typedef void (*IncBasisFn) (void *ctx, const IncOffer *offer, int key, const IncBasis *basis);

/*
 * inc_engine_set_basis: after each participant, report the basis of every
 * offer its transactions touched to fn (NULL: none), after the offer's
 * rows: the stepped threshold value and the tier it meets, whether or not
 * rows follow (an offer whose requirements are not met is calculated as
 * with diagnostics, its rows dropped).
 */
extern void inc_engine_set_basis(IncEngine *e, IncBasisFn fn, void *ctx);

/*
 * inc_engine_set_projection: project every later calculation to the end
 * of each offer's span as of *as_of_date (days since 2000-01-01; NULL:
 * no projection, the default) (docs/reference.md, Forecast): in an offer
 * whose span starts on or before it, every transaction dated from the
 * span's start to as_of_date has its quantity and amount multiplied by
 * span_days / elapsed_days wherever a figure uses them (elapsed_days
 * counts as_of_date and stops at span_days).  Call after
 * inc_engine_prepare.
 */
extern void inc_engine_set_projection(IncEngine *e, const int32_t *as_of_date);

/*
 * inc_engine_prepare: index the offers by SKU; call after the last
 * add/set and before the first calculate.
 */
extern void inc_engine_prepare(IncEngine *e);

/* The offers, in the order they were added (0 .. inc_engine_noffers - 1). */
extern int	inc_engine_noffers(const IncEngine *e);
extern const IncOffer *inc_engine_offer(const IncEngine *e, int i);

/*
 * inc_engine_sku_keys: every SKU any offer mentions (earning, threshold,
 * set member); a transaction with another SKU can never matter, so the
 * host may skip it.  Sets *n; the array belongs to the engine.
 */
extern const char *const *inc_engine_sku_keys(const IncEngine *e, int *n);

/*
 * Ids of SKUs and units, so that a host that reads many transactions
 * resolves each name once (IncTxn.sku_id, uom_id) and the calculation
 * looks nothing up by name.  Names are given as len bytes (no NUL needed).
 *
 * inc_engine_sku_id: the id (from 1) of a SKU some offer mentions, or 0
 * when none does (such a transaction can never matter); after
 * inc_engine_prepare.  inc_engine_sku_key: the engine's copy of its name.
 *
 * inc_engine_uom_id: the id (from 1) of a unit, given one when it is new:
 * it allocates, so call it outside inc_engine_calculate, in the allocator
 * the engine lives in.  inc_engine_uom_key: the engine's copy of its name.
 */
extern int	inc_engine_sku_id(const IncEngine *e, const char *sku, size_t len);
extern const char *inc_engine_sku_key(const IncEngine *e, int id);
extern int	inc_engine_uom_id(IncEngine *e, const char *uom, size_t len);
extern const char *inc_engine_uom_key(const IncEngine *e, int id);

/*
 * inc_engine_enrollment_offer_keys: the offers whose enrollment is
 * "required" (the host loads their windows only); sets *n.
 */
extern const char *const *inc_engine_enrollment_offer_keys(const IncEngine *e, int *n);

/*
 * inc_engine_aggregates_groups: true when some offer is aggregated by
 * group (the host then needs the participant groups' units).
 */
extern bool inc_engine_aggregates_groups(const IncEngine *e);

/*
 * inc_engine_group_levels: the levels the offers aggregated by group
 * aggregate at (groups.h), valid while the engine is; after
 * inc_engine_prepare.
 */
extern void inc_engine_group_levels(const IncEngine *e, IncGroupLevels *levels);

/* inc_engine_needs_properties: true when some offer reads a property. */
extern bool inc_engine_needs_properties(const IncEngine *e);
/* The property keys the offers use; sets *n. */
extern const char *const *inc_engine_property_keys(const IncEngine *e, int *n);

/*
 * inc_engine_calculate_unit: all earning rows of a calculation unit
 * (calc_io.h, IncUnit): txns are every transaction of its participants,
 * in any order, each transaction_id at most once, each naming its
 * participant and aggregation key by index into unit->keys.  An offer
 * aggregated by participant is calculated per participant over its own
 * transactions, one aggregated by group per aggregation key over every
 * transaction that carries it (docs/reference.md, Participant groups);
 * each row keeps its transaction's participant (IncRow.participant_key)
 * and, in a group offer under a group, carries the group_key.  Only rows
 * of participants flagged INC_KEY_REPORT reach emit, and offers by
 * participant are calculated only for them (by group, only for the keys
 * their transactions carry).  Errors as for inc_engine_calculate.
 */
extern void inc_engine_calculate_unit(IncEngine *e, const IncUnit *unit,
									  const IncTxn *txns, int ntxns,
									  IncPropertyFn props, void *props_ctx,
									  IncEmitFn emit, void *emit_ctx);

/*
 * inc_engine_calculate: all earning rows of one participant (a unit of
 * one key, reported, whose transactions have participant and aggregation
 * 0: an offer aggregated by group is its own aggregate).  txns are its
 * transactions, in any order, each transaction_id at most once (what
 * depends on transaction_id order, a fixed pool's cents, sorts its own
 * transactions); rows are passed to emit as they are made (row and its
 * strings are valid during the call only).  Errors (missing unit conversion, non-numeric property, overflow)
 * go through inc_fail and name the transaction or property.
 */
extern void inc_engine_calculate(IncEngine *e, const char *participant_key,
								 const IncTxn *txns, int ntxns,
								 IncPropertyFn props, void *props_ctx,
								 IncEmitFn emit, void *emit_ctx);

/*
 * inc_engine_position: where the engine is, for a host's error context:
 * true during inc_engine_calculate (the fail hook included), with the
 * participant's key in *participant (the transaction's own participant
 * while a transaction is worked on, else the key being finished: a
 * participant, or a group) and the transaction being worked on
 * in *transaction_id (NULL between transactions, e.g. while a participant's
 * tiers or overlaps are computed; a transaction of a member the host does
 * not show, neither INC_KEY_REPORT nor INC_KEY_VISIBLE, is named by the
 * group it counts under, with no transaction_id); false outside a
 * calculation, with both
 * set to NULL.  The strings belong to the caller of inc_engine_calculate
 * (and, for inc_engine_calculate_unit, so does the unit, which must stay
 * valid while the position is read).
 */
extern bool inc_engine_position(const IncEngine *e, const char **participant,
								const char **transaction_id);

/*
 * inc_engine_position_key: while a transaction is worked on (see
 * inc_engine_position), the key it counts under: its group's, or its
 * participant's outside every group; else NULL.
 */
extern const char *inc_engine_position_key(const IncEngine *e);

/*
 * inc_engine_clear_position: forget where a failed calculation was, and a
 * failed forecast's basis report and projection (inc_engine_forecast sets
 * them while it runs): a host reusing an engine after a failure calls it.
 */
extern void inc_engine_clear_position(IncEngine *e);

/*
 * inc_offer_rates: the offer's rates as flat records (IncRateRow), as
 * incentives.program_rates shows them; no calculation involved.
 */
extern void inc_offer_rates(const IncOffer *offer, IncRateFn fn, void *ctx);

#endif							/* INC_ENGINE_H */
