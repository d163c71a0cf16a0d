/*
 * calc_io.h
 *    What a calculation exchanges with its host: transactions in,
 *    property values looked up, earning rows out, and an offer's rates
 *    listed as flat rows.
 *
 * These are plain data types and callback signatures, shared by the
 * engine's public API (engine.h) and the calculation layers below it
 * (calc.h, the strategies), so that neither has to include the other's
 * header.  Strings are NUL-terminated; numbers are exact decimals.
 */
#ifndef INC_CALC_IO_H
#define INC_CALC_IO_H

#include "../numbers/core.h"
#include "../offer/offer.h"

/*
 * One transaction (docs/reference.md, Transactions).  sku_id and uom_id
 * are optional: 0 means the engine finds the SKU and unit by name; a host
 * that reads many transactions resolves them once instead
 * (inc_engine_sku_id, inc_engine_uom_id), so the calculation looks nothing
 * up by name.  The strings must then be the engine's own
 * (inc_engine_sku_key, inc_engine_uom_key) or equal to them.
 *
 * nulls: the columns the host read as NULL (INC_TXN_NULL_*); such a
 * field holds "" or 0 and is never used for a figure.  A NULL is a data
 * error only where a figure that reaches a result needs the column
 * (docs/reference.md, Program rules, and Errors): the engine raises it
 * then (INC_ERR_NULL), naming the column, the transaction and the
 * participant.  transaction_id, participant_key and sku_key are never
 * NULL (the host refuses those rows itself).
 *
 * grower_key, currency: the optional columns of docs/reference.md,
 * Growers and Currencies (NULL when the relation has no such column or
 * the row NULL there).  matched, matching_date: a return whose
 * original_transaction_id the host matched to a sale of the same
 * participant and SKU dated on or before it (docs/reference.md, Returns
 * against their sale); the host matches, the engine asks inc_txn_date.
 *
 * participant and aggregation are keys of the calculation unit (IncUnit,
 * by index): the transaction's participant, and its aggregation key in an
 * offer aggregated by group without a group_type (docs/reference.md,
 * Participant groups and Participant hierarchies: the participant itself
 * when it is a group on any date, else the group of its window containing
 * the transaction's date, else the participant itself).  An offer with a
 * group_type asks the unit (inc_txn_key).  A calculation of one
 * participant (inc_engine_calculate) has both 0.
 */
#define INC_TXN_NULL_TYPE		0x01	/* transaction_type */
#define INC_TXN_NULL_DATE		0x02	/* transaction_date */
#define INC_TXN_NULL_QUANTITY	0x04	/* quantity */
#define INC_TXN_NULL_UOM		0x08	/* uom_key */
#define INC_TXN_NULL_AMOUNT		0x10	/* amount */

typedef struct IncTxn
{
	const char *transaction_id;
	const char *transaction_type;
	int32_t		transaction_date;	/* days since 2000-01-01 */
	uint8_t		nulls;			/* INC_TXN_NULL_*, 0 when none */
	const char *sku_key;
	IncDec		quantity;
	const char *uom_key;
	IncDec		amount;
	int32_t		sku_id;			/* 0: by name */
	int32_t		uom_id;			/* 0: by name */
	int32_t		participant;	/* IncUnit.keys index of its participant */
	int32_t		aggregation;	/* IncUnit.keys index of its aggregation key */
	const char *grower_key;		/* the end customer; NULL: none */
	const char *currency;		/* the currency of amount; NULL: none */
	bool		matched;		/* a return matched to its original sale */
	int32_t		matching_date;	/* matched: the original sale's date */
} IncTxn;

/*
 * inc_txn_date: the date every "which date" question of a transaction
 * asks (docs/reference.md, Returns against their sale): a matched
 * return's original sale's date, else its own.  Its own date
 * (transaction_date) decides only what asks when it happened: the
 * host's through_date and statements, and a forecast's projection.
 */
static inline int32_t
inc_txn_date(const IncTxn *t)
{
	return t->matched ? t->matching_date : t->transaction_date;
}

/*
 * IncAggregateFn: the aggregation key of t (an index among its unit's
 * keys) in an offer aggregated at groups of type group_type.
 */
typedef int32_t (*IncAggregateFn) (const void *ctx, const IncTxn *t, const char *group_type);

/*
 * A calculation unit (inc_engine_calculate_unit): every transaction that
 * may share an aggregation key -- the members of a group, with all their
 * transactions, and the groups connected through a member that moves
 * between them -- and the keys they name (participants and groups), by
 * index.  flags per key:
 *   INC_KEY_GROUP    a group_key of the participant groups (a row under it
 *                    carries it as its group_key);
 *   INC_KEY_REPORT   the host wants this participant's rows and
 *                    diagnostics (others' transactions only count in their
 *                    groups' figures; their own offers are not calculated);
 *   INC_KEY_VISIBLE  its contribution may be shown in the diagnostics of
 *                    a group it belongs to (a participant the caller may
 *                    see).
 * The strings stay put for the whole calculation.
 */
#define INC_KEY_GROUP	0x01
#define INC_KEY_REPORT	0x02
#define INC_KEY_VISIBLE	0x04

/*
 * IncTxnPages: a unit's transactions kept by the host outside memory (a
 * temporary file, once they pass its memory limit), read a page at a
 * time: page p holds transactions p * per_page .. p * per_page +
 * per_page - 1 (the last page fewer).  load fills out with the
 * transactions of page p; their strings stay valid until load is next
 * called with the same slot (0 .. nslots - 1).  A transaction_id is
 * preceded by id_prefix bytes that belong to it (a host's length word):
 * a copy the engine keeps (a row held for the program rules, a noted
 * error) copies them too.
 */
typedef void (*IncTxnLoadFn) (void *ctx, int page, int slot, IncTxn *out);

typedef struct IncTxnPages
{
	int			ntxns;
	int			per_page;
	int			nslots;			/* at least 2 */
	int			id_prefix;
	IncTxnLoadFn load;
	void	   *ctx;
} IncTxnPages;

typedef struct IncUnit
{
	int			nkeys;
	const char *const *keys;
	const uint8_t *flags;
	const IncTxnPages *pages;	/* NULL: the transactions are in memory,
								 * else they are in these pages (and the
								 * engine is passed no array) */

	/*
	 * aggregate: the aggregation key (index) of a transaction in an offer
	 * with a group_type (docs/reference.md, Participant hierarchies);
	 * NULL: none of the unit's keys is in a group, every key is its own.
	 */
	IncAggregateFn aggregate;
	const void *aggregate_ctx;
} IncUnit;

/*
 * inc_txn_key: the index among unit's keys of the aggregation key of t in
 * an offer aggregated by group whose group_type is group_type (NULL: the
 * untyped key the host put in t->aggregation).
 */
static inline int32_t
inc_txn_key(const IncUnit *unit, const char *group_type, const IncTxn *t)
{
	if (group_type == NULL || unit == NULL || unit->aggregate == NULL)
		return t->aggregation;
	return unit->aggregate(unit->aggregate_ctx, t, group_type);
}

/*
 * One earning row (docs/reference.md, Earning rows).  The numbers are
 * exact decimals already rounded and scaled as reported (docs/reference.md,
 * Rounding): incentive_amount scale 2, incentivized_quantity scale 6, ...;
 * rate_value and a percent/dollars pay_rate in their shortest form.  The
 * strings (rate_key, rate_measure, and those of the offer and the
 * transaction) stay put, unchanged, for the whole calculation -- they are
 * the offer's and the host's, never made per row -- so a host may cache
 * what it derives from them by address.
 */
typedef struct IncRow
{
	const IncOffer *offer;
	const IncTxn *txn;
	const char *participant_key;	/* the transaction's participant */
	const char *group_key;		/* a group offer's row under a group, else NULL */
	const char *product_key;	/* the product whose standard rate applied, else NULL */
	const char *grower_key;		/* the transaction's grower_key, else NULL */
	const char *currency;		/* the offer's currency, else NULL */
	bool		has_exchange_rate;	/* the transaction's currency differs */
	IncDec		exchange_rate;	/* then: the rate to the offer's currency,
								 * exact or rounded to 12 places */
	int32_t		group_index;	/* group_key's index among the unit's keys */
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
 * ones (docs/reference.md, Stepped).  In an offer aggregated by group,
 * participant is the aggregation key (a group's properties are stored
 * under its group_key).
 */
typedef IncPropStatus (*IncPropertyFn) (void *ctx, const char *participant_key,
										const char *property_key, IncDec *value);

/*
 * An enrollment window of a participant in an offer (docs/reference.md,
 * Enrollment): both ends inclusive, days since 2000-01-01; open_ended
 * when it has no end_date.
 */
typedef struct IncWindow
{
	int32_t		start_date;
	int32_t		end_date;		/* unused when open_ended */
	bool		open_ended;
} IncWindow;

/*
 * IncEnrollmentFn: the windows of participant_key in offer_key (an offer
 * whose enrollment is "required"), in start_date order, into *windows;
 * returns how many (0: not enrolled).  The array stays valid while the
 * participant is calculated.
 */
typedef int (*IncEnrollmentFn) (void *ctx, const char *participant_key,
								const char *offer_key, const IncWindow **windows);

/* Called between transactions and rows, e.g. to honour cancellation. */
typedef void (*IncTickFn) (void);

/*
 * One rate of an offer as a flat record, as incentives.program_rates shows
 * it: standard, one per entry and SKU rate; stepped, one per tier;
 * stacked, one per stack, set of the stack and SKU of the set's
 * conversion.  NULL pointers are absent values (SQL NULL).  Numbers are in
 * their shortest form (trailing fraction zeros dropped).
 */
typedef struct IncRateRow
{
	const IncOffer *offer;		/* offer_key, strategy_key, calculator_key */
	const char *rate_key;		/* the incentive_rate_key rows carry */
	const char *sku_key;		/* NULL for a stepped tier and a product's rate */
	const char *product_key;	/* a standard entry's rate of a product, else NULL */
	IncDec		rate_value;		/* the rate, tier value or pool; 0 for a
								 * stacked SKU that only anchors coverage */
	const char *measure;
	const IncDec *threshold;	/* stepped: the tier's threshold */
	const char *threshold_type; /* stepped */
	const IncPeriod *period;	/* NULL for stepped filters of several periods */
	const char *transaction_type;	/* NULL for stepped filters of several types */
	const char *sku_set_key;	/* stacked */
	const char *stack_key;		/* stacked */
	const char *threshold_property_key; /* stepped by property */
	const IncDec *price;		/* the offer's program price of sku_key */
	const char *coverage_unit;	/* stacked */
	const IncDec *coverage_rate;	/* stacked: from-units per coverage unit */
	const char *coverage_uom_key;	/* stacked: the conversion's "from" */
	const char *tier_mode;		/* stepped: all_volume or incremental */
	const char *pays_on;		/* stepped: all_volume or growth */
	const IncBaseline *baseline;	/* stepped growth types: the baseline */
} IncRateRow;

typedef void (*IncRateFn) (void *ctx, const IncRateRow *row);

/*
 * IncBasis: what a stepped offer's tier was chosen by for a participant
 * (docs/reference.md, Forecast): the threshold value (the growth
 * percentage for growth types), rounded to 6 places, and the tier it
 * meets (NULL: none), whether or not rows follow.  has_value is false
 * when there is no value (a missing property, no growth value).
 */
typedef struct IncBasis
{
	bool		has_value;
	IncDec		value;			/* scale 6 */
	const char *rate_key;
} IncBasis;

#endif							/* INC_CALC_IO_H */
