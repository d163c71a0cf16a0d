/*
 * engine.h
 *    The calculation: offers indexed by SKU, one participant at a time.
 *
 * A host builds an IncEngine once per call (offers, SKU units, unit
 * conversions), then feeds it each participant's transactions, sorted by
 * transaction_id in byte order, and receives earning rows through a
 * callback.  A participant's earnings depend only on its own transactions
 * and properties (SPEC 2), so the host needs to hold one participant's
 * transactions at a time.  Everything is allocated with inc_alloc: the
 * engine in the host's long-lived context, a participant's working data in
 * whatever context is current during inc_engine_calculate (the host resets
 * it after each participant).
 */
#ifndef INC_ENGINE_H
#define INC_ENGINE_H

#include "core.h"
#include "offer.h"

/* One transaction (SPEC 1.2).  Strings are NUL-terminated. */
typedef struct IncTxn
{
	const char *transaction_id;
	const char *transaction_type;
	int32_t		transaction_date;	/* days since 2000-01-01 */
	const char *sku_key;
	IncDec		quantity;
	const char *uom_key;
	IncDec		amount;
} IncTxn;

/*
 * One earning row (SPEC 4.1).  The numbers are exact decimals already
 * rounded and scaled as SPEC 3.1 reports them (incentive_amount scale 2,
 * incentivized_quantity scale 6, ...; rate_value and a percent/dollars
 * pay_rate in their shortest form).
 */
typedef struct IncRow
{
	const IncOffer *offer;
	const IncTxn *txn;
	const char *rate_key;		/* incentive_rate_key */
	const char *rate_measure;	/* incentive_rate_measure */
	IncDec		rate_value;		/* incentive_rate_value */
	IncDec		pay_rate;		/* offer_sku_pay_rate */
	IncDec		incentivized_quantity;
	IncDec		incentivized_amount;
	IncDec		incentive_amount;
	IncDec		contribution;	/* incentive_contribution_percent */
	IncDec		effective_rate; /* incentive_effective_rate */
	bool		effective_rate_null;	/* incentivized_amount rounds to 0 */
} IncRow;

typedef void (*IncEmitFn) (void *ctx, const IncRow *row);

/* Result of a property lookup. */
typedef enum IncPropStatus
{
	INC_PROP_MISSING = 0,
	INC_PROP_FOUND,
	INC_PROP_NOT_NUMBER
} IncPropStatus;

/*
 * IncPropertyFn: look up property key for participant; on INC_PROP_FOUND
 * fill *value.  The host checks the call's properties first, then stored
 * ones (SPEC 2.2).
 */
typedef IncPropStatus (*IncPropertyFn) (void *ctx, const char *participant_key,
										const char *property_key, IncDec *value);

/*
 * IncDiagnosticsFn: why a participant earns what it does under one stepped
 * or stacked offer, as a JSON object (see inc_engine_set_diagnostics).
 */
typedef void (*IncDiagnosticsFn) (void *ctx, const IncOffer *offer, const char *json);

/* Called between transactions and rows, e.g. to honour cancellation. */
typedef void (*IncTickFn) (void);

typedef struct IncEngine IncEngine;

extern IncEngine *inc_engine_create(void);
extern void inc_engine_add_offer(IncEngine *e, const IncOffer *offer);
/* The SKU catalog (incentives.skus): sku_key's unit of measure. */
extern void inc_engine_set_sku_uom(IncEngine *e, const char *sku_key, const char *uom_key);
/* incentives.uom_conversions: quantity_in_to = quantity_in_from * factor (> 0). */
extern void inc_engine_add_conversion(IncEngine *e, const char *from_uom, const char *to_uom,
									  const IncDec *factor);
extern void inc_engine_set_tick(IncEngine *e, IncTickFn tick);

/*
 * inc_engine_set_diagnostics: after each participant, report every stepped
 * and stacked offer its transactions touched to fn as JSON:
 *   stepped: {"threshold_type", "property_key", "threshold_value" (null when
 *     the property is missing), "earning_transactions", "tiers": [{"rate_key",
 *     "threshold", "value", "measure", "met", "incentive_amount"}] ascending,
 *     "selected_rate_key", "next_rate_key", "next_threshold", "gap_to_next"}
 *   stacked: {"sets": [{"key", "coverage_unit", "coverage", "transactions"}],
 *     "stacks": [{"rate_key", "sku_set_keys", "overlap", "earns", "factors":
 *     {set key: f}}]}
 * Numbers are exact to 6 decimal places (amounts to 2), trailing zeros
 * dropped.
 */
extern void inc_engine_set_diagnostics(IncEngine *e, IncDiagnosticsFn fn, void *ctx);

/*
 * inc_engine_prepare: index the offers by SKU; call after the last
 * add/set and before the first calculate.
 */
extern void inc_engine_prepare(IncEngine *e);

/*
 * inc_engine_sku_keys: every SKU any offer mentions (earning, threshold,
 * set member); a transaction with another SKU can never matter, so the
 * host may skip it.  Sets *n; the array belongs to the engine.
 */
extern const char *const *inc_engine_sku_keys(const IncEngine *e, int *n);

/* inc_engine_needs_properties: true when some stepped offer uses a property. */
extern bool inc_engine_needs_properties(const IncEngine *e);
/* The property keys the offers use; sets *n. */
extern const char *const *inc_engine_property_keys(const IncEngine *e, int *n);

/*
 * inc_engine_calculate: all earning rows of one participant.  txns are its
 * transactions sorted by transaction_id (byte order); rows are passed to
 * emit as they are made (row and its strings are valid during the call
 * only).  Errors (missing unit conversion, non-numeric property, overflow)
 * go through inc_fail and name the transaction or property.
 */
extern void inc_engine_calculate(IncEngine *e, const char *participant_key,
								 const IncTxn *txns, int ntxns,
								 IncPropertyFn props, void *props_ctx,
								 IncEmitFn emit, void *emit_ctx);

#endif							/* INC_ENGINE_H */
