/*
 * calc.h
 *    What every strategy shares: one participant's calculation in progress
 *    (IncCalc) and the figures of docs/reference.md computed the same way
 *    for every strategy -- transaction matching, quantities in a unit and
 *    in the SKU's unit, base amounts, rate figures, pay rates, row rounding
 *    and emission, property values -- plus small helpers (index lists,
 *    rate listing rows).
 *
 * This layer sits below the strategies and above the offer model, the
 * numbers and the unit tables: it knows neither the engine nor any
 * strategy.  The engine fills an IncCalc per participant and hands it to
 * the strategies' ops (strategy.h).  Every figure is exact (IncRat) until
 * inc_calc_emit rounds it for the host.
 */
#ifndef INC_CALC_H
#define INC_CALC_H

#include "calc_io.h"
#include "../numbers/fixed.h"
#include "../numbers/rational.h"
#include "units.h"

/*
 * Where a calculation is, for the host's error context
 * (inc_engine_position): the participant being calculated and the
 * transaction being worked on (NULL between transactions).  It lives in
 * the engine; the calculation updates it as it goes.
 */
typedef struct IncPosition
{
	const char *participant_key;	/* NULL outside a calculation */
	const IncTxn *txn;
	const IncUnit *unit;		/* the calculation unit whose keys the
								 * transactions name */
	int			key;			/* the aggregation key (index in unit) of
								 * txn in the offer being worked on */
} IncPosition;

/*
 * IncFault: a data error noted instead of raised (IncCalc.defer): a
 * missing unit conversion, a property that is not a number, a NULL
 * column.  kind 0: none yet.  txn is the transaction it is about (NULL:
 * the participant's), the position when it is raised later.
 */
typedef struct IncFault
{
	IncErrKind	kind;
	const char *subject;
	const char *message;
	const IncTxn *txn;
} IncFault;

/*
 * IncProjection: the projection of one offer in a forecast
 * (docs/reference.md, Forecast): the quantity and amount of every
 * transaction dated from..to (both inclusive, days since 2000-01-01) are
 * multiplied by k = span_days / elapsed_days wherever a figure uses them
 * (the calculation helpers below apply it); other transactions, a
 * baseline's for instance, are as they are.
 */
typedef struct IncProjection
{
	int32_t		from;
	int32_t		to;
	int32_t		span_days;
	int32_t		elapsed_days;
	int32_t		end;			/* the span's last day: the projected part of
								 * a transaction is valued at the rate
								 * schedule's rates over to + 1 .. end */
} IncProjection;

/*
 * IncHoldFn: where rows go instead of the host while an offer with
 * requirements or limits is calculated (rules.c keeps them until the
 * participant's total is known): the row as rounded, and its exact
 * incentive amount.
 */
typedef void (*IncHoldFn) (void *ctx, const IncRow *row, const IncRat *exact_amount);

/*
 * IncReplayFn: a second look at transaction txn through one hook of the
 * offer being finished (IncCalc.replay); the hook is the strategy's own
 * (strategy.h).
 */
struct IncHook;
typedef void (*IncReplayFn) (void *ctx, const struct IncHook *hook, int txn);

/*
 * Exchange rates (docs/reference.md, Currencies), as the engine resolves
 * them once (inc_engine_prepare) for the currency of an offer: per
 * currency a transaction may carry (a pair), the rate from it to the
 * offer's currency as a step function of the date.  A step applies from
 * its date until the next one's: the direct pair's row of that date, else
 * the inverse pair's (used as 1 / rate), so that of the direct pair's
 * latest row and the inverse pair's latest row on or before a date the
 * later one applies, the direct one on the same date.  Nothing is
 * allocated when a rate is looked up.
 */
typedef struct IncExchangeStep
{
	int32_t		from;			/* the first day it applies (days since 2000-01-01) */
	bool		inverse;		/* the rate is 1 / rate */
	bool		fast;			/* q holds the rate applied (fixed.h) */
	IncDec		rate;			/* the row's rate, as stored (> 0) */
	IncQ		q;				/* rate, or 1 / rate */
	bool		reported_ok;	/* reported holds inc_calc_exchange_reported */
	IncDec		reported;
} IncExchangeStep;

typedef struct IncExchangePair
{
	const char *from;			/* a transaction's currency */
	int			nsteps;
	const IncExchangeStep *steps;	/* ascending from */
} IncExchangePair;

/*
 * What the engine resolved once for an offer (inc_engine_prepare), for the
 * calculation of that offer: its program prices by SKU id, and the
 * exchange rates to its currency.
 */
typedef struct IncOfferIds
{
	const IncOffer *offer;
	const IncDec *const *prices;	/* by IncTxn.sku_id: the price, or NULL;
									 * NULL when the offer has no prices */
	int			npairs;			/* the offer has a currency: the pairs */
	const IncExchangePair *pairs;	/* converting to it; NULL: none */
} IncOfferIds;

/*
 * IncTxnCache: the pages of a unit's transactions in memory
 * (IncTxnPages): nslots of them, the least recently used one reloaded
 * when another page is wanted.
 */
typedef struct IncTxnCache
{
	const IncTxnPages *pages;
	IncTxn	   *txns;			/* nslots * per_page, slot by slot */
	int		   *page_of;		/* per slot: its page, or -1 */
	uint64_t   *used;			/* per slot: when it was last wanted */
	uint64_t	clock;
	int			last;			/* the slot last wanted */
} IncTxnCache;

/* inc_txn_cache_create: an empty cache of pages' slots. */
extern IncTxnCache *inc_txn_cache_create(const IncTxnPages *pages);

/* inc_txn_cache_load: inc_txn_cache_get of a page other than the last one. */
extern const IncTxn *inc_txn_cache_load(IncTxnCache *cache, int i);

/*
 * inc_txn_cache_get: transaction i, its page loaded when it is not in
 * memory.  The pointer stays valid while fewer than nslots - 1 other
 * pages are wanted; what must outlive that is copied (inc_calc_keep).
 */

static inline const IncTxn *
inc_txn_cache_get(IncTxnCache *cache, int i)
{
	int			page = i / cache->pages->per_page;

	if (cache->page_of[cache->last] == page)
		return &cache->txns[cache->last * cache->pages->per_page +
							i % cache->pages->per_page];
	return inc_txn_cache_load(cache, i);
}

/*
 * One key's calculation in progress: a participant's (its own offers), or
 * an aggregation key's (the offers aggregated by group: a group's, or a
 * participant's outside every group window).  participant_key is the key
 * (the one properties are read under); the transactions name their own
 * participants (IncTxn.participant, in unit).
 */
typedef struct IncCalc
{
	const IncUnits *units;		/* the units of measure (uoms), units.h */
	const int32_t *sku_uom_ids; /* by IncTxn.sku_id: the SKU's uom id, or 0 */
	const char *participant_key;
	const IncUnit *unit;		/* the calculation unit: keys and flags */
	int			key;			/* participant_key's index in unit */
	const char *group_key;		/* participant_key when it is a group, else NULL */
	const char *product_key;	/* the product whose standard rate the rows
								 * emitted now take (docs/reference.md,
								 * Products); NULL otherwise */
	const bool *carriers;		/* diagnostics: by unit key, whether that
								 * participant's diagnostics are reported
								 * under this key (NULL otherwise) */
	const IncTxn *txns;			/* in any order; NULL: in pages (cache) */
	IncTxnCache *cache;			/* the pages in memory, when txns is NULL */

	/*
	 * replay: with the transactions in pages, the engine's walk over
	 * transactions first..last again, calling visit for each hook of the
	 * offer being finished under this key, in the order observe saw them:
	 * a strategy that looks at its transactions again at finish keeps
	 * their range instead of a list of them, so that its memory does not
	 * grow with the transactions.
	 */
	void		(*replay) (struct IncCalc *c, int first, int last, IncReplayFn visit, void *ctx);
	void	   *replay_ctx;
	IncPropertyFn props;		/* may be NULL: every property is missing */
	void	   *props_ctx;
	IncEmitFn	emit;
	void	   *emit_ctx;
	IncTickFn	tick;			/* may be NULL */
	bool		diagnostics;	/* strategies keep what their diagnose reports */
	IncPosition *position;
	IncHoldFn	hold;			/* NULL, or where inc_calc_emit hands rows */
	void	   *hold_ctx;
	IncEnrollmentFn enrollments;	/* may be NULL: nobody is enrolled */
	void	   *enrollments_ctx;
	const IncProjection *projection;	/* NULL, or the projection of the
										 * offer being calculated */
	const IncOfferIds *ids;		/* NULL, or the offer being calculated's */

	/*
	 * defer: NULL, and a data error fails at once (inc_fail); else the
	 * first one is noted there and the figure goes on with a stand-in
	 * (zero, "not matched", "missing"), for the program rules to decide
	 * whether it reaches a result (rules.c).
	 */
	IncFault   *defer;
} IncCalc;

/* inc_calc_txn: transaction i of the unit (see inc_txn_cache_get). */
static inline const IncTxn *
inc_calc_txn(const IncCalc *c, int i)
{
	if (c->txns)
		return &c->txns[i];
	return inc_txn_cache_get(c->cache, i);
}

/*
 * inc_calc_keep: t, or where its transactions are in pages a copy of t
 * that stays valid for the whole calculation (its transaction_id copied
 * with the host's prefix bytes, its grower_key and currency copied), for
 * what is kept past the transaction's turn: a held row, a noted error, a
 * pool's sort.
 */
extern const IncTxn *inc_calc_keep(const IncCalc *c, const IncTxn *t);

/* inc_calc_member: the key of t's own participant. */
static inline const char *
inc_calc_member(const IncCalc *c, const IncTxn *t)
{
	return c->unit->keys[t->participant];
}

/*
 * inc_calc_hidden: is t a transaction of a participant the host may not
 * show (a member of a group the caller cannot see: its unit key has
 * neither INC_KEY_REPORT nor INC_KEY_VISIBLE)?  Errors about it do not
 * name it (inc_calc_data_error).
 */
extern bool inc_calc_hidden(const IncCalc *c, const IncTxn *t);

/* inc_calc_at: the calculation is now working on transaction t (NULL: none). */
extern void inc_calc_at(IncCalc *c, const IncTxn *t);

/*
 * inc_calc_data_error: a data error about transaction t (NULL: about the
 * participant): fails (inc_fail_about) unless c->defer is set, which keeps
 * the earliest one (the participant's, then by transaction_id: the same
 * whatever the order of the transactions) and returns.
 */
extern void inc_calc_data_error(IncCalc *c, const IncTxn *t, IncErrKind kind,
								const char *subject, const char *fmt,...) INC_PRINTF(5, 6);

/* inc_calc_null: the data error of t's first NULL among columns; false. */
extern bool inc_calc_null(IncCalc *c, const IncTxn *t, uint8_t columns);

/*
 * inc_calc_has: true when none of t's columns (INC_TXN_NULL_*) is NULL;
 * else the data error naming the column, t and the participant (false
 * when it is deferred).
 */
static inline bool
inc_calc_has(IncCalc *c, const IncTxn *t, uint8_t columns)
{
	return (t->nulls & columns) == 0 || inc_calc_null(c, t, columns);
}

/*
 * True when t lies in the offer's period (inclusive) and has the type;
 * a NULL date or type is a data error (not matched when deferred).
 */
extern bool inc_txn_matches(IncCalc *c, const IncOffer *offer, int period,
							const char *transaction_type, const IncTxn *t);

/*
 * t's quantity in the unit of id to (units.h, >= 1; docs/reference.md,
 * Unit conversions); a data error INC_ERR_NO_CONVERSION naming t, its SKU
 * and both units, or a NULL quantity or uom_key (0 when deferred).
 */
extern void inc_calc_convert(IncCalc *c, const IncTxn *t, int to, IncRat *out);

/* Incentivized quantity: t's quantity in its SKU's unit. */
extern void inc_calc_sku_quantity(IncCalc *c, const IncTxn *t, IncRat *out);

/*
 * Base amount: quantity x the offer's price of the SKU, else the amount (a
 * NULL amount: a data error, 0 when deferred).
 */
extern void inc_calc_base_amount(IncCalc *c, const IncOffer *offer, const IncTxn *t,
								 const IncRat *sku_quantity, IncRat *out);

/*
 * inc_calc_exchange: the exchange rate t's amount is converted at in the
 * offer being calculated (c->ids; docs/reference.md, Currencies): NULL
 * when it is taken as it is (no currency on the offer or on t, or the
 * same one); else the step of t's matching date.  No rate on that date
 * is a data error INC_ERR_NO_EXCHANGE_RATE naming t, both currencies and
 * the date (a NULL date: the NULL's), *missing set and NULL returned
 * when it is deferred.  inc_calc_exchange_rate: the step's rate as
 * exact rational.
 */
extern const IncExchangeStep *inc_calc_exchange(IncCalc *c, const IncTxn *t, bool *missing);
extern void inc_calc_exchange_rate(const IncExchangeStep *step, IncRat *out);

/*
 * inc_calc_exchange_reported: the step's rate as rows report it
 * (exchange_rate): the direct rate in shortest form; an inverse one
 * exactly when it has at most 12 decimal places, else rounded to 12.
 * The engine computes it once per step (reported) where it fits.
 */
extern IncDec inc_calc_exchange_reported(const IncExchangeStep *step);

/*
 * The provided amount of t (projected, c->projection), in the currency of
 * the offer being calculated (inc_calc_exchange): every figure that reads
 * a transaction's amount reads it here.  A NULL amount is a data error (0
 * when deferred), so is a missing exchange rate.  inc_calc_amount_q: the same on the fast
 * path (false when it does not fit, or the fast path is off).
 */
extern void inc_calc_amount(IncCalc *c, const IncTxn *t, IncRat *out);
extern bool inc_calc_amount_q(IncCalc *c, const IncTxn *t, IncQ *out);

/*
 * inc_calc_add_volume: add t's volume to sum, as a stepped threshold sums
 * it (docs/reference.md, Stepped): its quantity in its SKU's unit
 * (quantity) or its provided amount; a data error adds nothing when
 * deferred.
 */
extern void inc_calc_add_volume(IncCalc *c, const IncTxn *t, bool quantity, IncSum *sum);

/* The figures of one row before rounding. */
typedef struct IncRowFigures
{
	const char *rate_key;
	const char *rate_measure;
	const IncDec *rate_value;
	IncDec		pay_rate;		/* as reported */
	const IncRat *incentivized_quantity;
	const IncRat *incentivized_amount;
	const IncRat *incentive_amount;
	const IncRat *contribution; /* NULL means 1 */
} IncRowFigures;

/*
 * inc_calc_emit: round a row's figures (docs/reference.md, Rounding) and
 * pass it to the host (to c->hold when set); returns the incentive_amount
 * as reported.  A row shows its transaction's quantity, uom_key and
 * amount: a NULL among them is a data error.
 */
extern IncDec inc_calc_emit(IncCalc *c, const IncOffer *offer, const IncTxn *t,
							const IncRowFigures *f);

/* The figures of one row, already rounded as reported. */
typedef struct IncRowValues
{
	const char *rate_key;
	const char *rate_measure;
	const IncDec *rate_value;
	IncDec		pay_rate;
	IncDec		incentivized_quantity;	/* scale 6 */
	IncDec		incentivized_amount;	/* scale 2 */
	IncDec		incentive_amount;	/* scale 2 */
	const IncDec *contribution; /* scale 6; NULL means 1 */
} IncRowValues;

/*
 * inc_calc_emit_values: the row of figures rounded already by the fast
 * path; exact is its incentive amount before rounding (what c->hold gets,
 * for the program rules' limits).  Returns its incentive_amount.
 */
extern IncDec inc_calc_emit_values(IncCalc *c, const IncOffer *offer, const IncTxn *t,
								   const IncRowValues *v, const IncQ *exact);

/*
 * The fast path (fixed.h) of the figures above: each returns false when a
 * value does not fit 128 bits or the fast path is off (inc_fast), and the
 * caller then computes the same with the IncRat functions.  A missing
 * unit conversion fails as in those.
 */
extern bool inc_calc_convert_q(IncCalc *c, const IncTxn *t, int to, IncQ *out);
extern bool inc_calc_sku_quantity_q(IncCalc *c, const IncTxn *t, IncQ *out);
extern bool inc_calc_base_amount_q(IncCalc *c, const IncOffer *offer, const IncTxn *t,
								   const IncQ *sku_quantity, IncQ *out);
extern bool inc_calc_rate_figures_q(IncCalc *c, const IncOffer *offer, const IncTxn *t,
									const IncDec *rate, IncQ *quantity, IncQ *base,
									IncQ *incentive);

/*
 * inc_calc_emit_held: pass a held row to the host with a new reported
 * incentive_amount (scale 2), its effective rate computed again from the
 * reported figures (rules.c, after the limits).
 */
extern void inc_calc_emit_held(IncCalc *c, IncRow *row, const IncDec *incentive_amount);

/*
 * The figures of a percent_of_amount or dollars_per_unit rate for t:
 * incentivized quantity, base amount and incentive.
 */
extern void inc_calc_rate_figures(IncCalc *c, const IncOffer *offer, const IncTxn *t,
								  const IncDec *rate, IncRat *quantity, IncRat *base,
								  IncRat *incentive);

/*
 * inc_calc_rate_figures_rat: the same for an exact rational rate (the
 * blended rate of incremental tiers).
 */
extern void inc_calc_rate_figures_rat(IncCalc *c, const IncOffer *offer, const IncTxn *t,
									  const IncRat *rate, IncRat *quantity, IncRat *base,
									  IncRat *incentive);

/*
 * The row of a percent_of_amount or dollars_per_unit rate for t; returns
 * its incentive_amount as reported.
 */
extern IncDec inc_calc_emit_rate_row(IncCalc *c, const IncOffer *offer, const IncTxn *t,
									 const char *rate_key, const char *rate_measure,
									 const IncDec *rate, const IncDec *pay_rate);

/*
 * Rate schedules (docs/lifecycle.md, Prospective rate changes): an offer
 * with a schedule (IncOffer.nschedule > 0) pays each transaction the rate
 * values of the version that applies on its date; the strategies take
 * each rate from inc_calc_version and, in a forecast's projection, blend
 * them with inc_calc_schedule_rate.
 *
 * inc_calc_version_index: the index into offer->schedule of the version
 * whose rates apply to t (its date; the current, last, version for a
 * NULL date); 0 without a schedule.  inc_calc_version: that version (the
 * offer itself without a schedule).
 */
extern int	inc_calc_version_index(const IncOffer *offer, const IncTxn *t);
extern const IncOffer *inc_calc_version(const IncOffer *offer, const IncTxn *t);

/*
 * inc_calc_schedule_projecting: does the projection of the calculation
 * value a projected part at the schedule's rates (an offer with a
 * schedule, c->projection with days left after its as-of date, k > 1)?
 * inc_calc_schedule_projected: the same, and t is projected.
 */
extern bool inc_calc_schedule_projecting(const IncCalc *c, const IncOffer *offer);
extern bool inc_calc_schedule_projected(const IncCalc *c, const IncOffer *offer,
										const IncTxn *t);

/*
 * inc_calc_schedule_mean: the rate of the projected part of a transaction
 * (inc_calc_schedule_projecting must hold): with rates[s] the rate of
 * version s (offer->nschedule of them), sum of rates[s] x days(s) / R,
 * where R is the number of days as_of_date + 1 .. span end and days(s)
 * how many of them version s applies on.
 */
extern void inc_calc_schedule_mean(const IncCalc *c, const IncOffer *offer,
								   const IncRat *rates, IncRat *mean);

/*
 * inc_calc_schedule_rate: the rate t pays on its projected figures (its
 * quantity and amount x k), with own the rate of its date's version and
 * mean the projected part's (inc_calc_schedule_mean): (own + (k - 1) x
 * mean) / k, so that its own part earns at own and the projected part at
 * mean.  When t is not projected (inc_calc_schedule_projected false), own.
 */
extern void inc_calc_schedule_rate(const IncCalc *c, const IncOffer *offer, const IncTxn *t,
								   const IncRat *own, const IncRat *mean, IncRat *out);

/*
 * inc_calc_emit_rate_row_rat: inc_calc_emit_rate_row at an exact rate
 * (a blended one: incremental tiers, a schedule in a projection), the
 * row reporting rate_value and pay_rate; exact path only.
 */
extern IncDec inc_calc_emit_rate_row_rat(IncCalc *c, const IncOffer *offer, const IncTxn *t,
										 const char *rate_key, const char *rate_measure,
										 const IncDec *rate_value, const IncDec *pay_rate,
										 const IncRat *rate);

/*
 * inc_calc_property: the value of property_key into *value, of the key
 * being calculated (the participant, or in a group offer the aggregation
 * key);
 * false when it has none.  A value that is not a number is a data error
 * INC_ERR_PROPERTY_NOT_NUMBER naming the property and the participant
 * (false when deferred).
 */
extern bool inc_calc_property(IncCalc *c, const char *property_key, IncRat *value);

/*
 * inc_calc_property_of: the same for another key of the unit (a member's
 * own property in a group offer).
 */
extern bool inc_calc_property_of(IncCalc *c, const char *key, const char *property_key,
								 IncRat *value);

/*
 * inc_row_order: rows in (transaction_id, incentive_rate_key) byte order,
 * the order of re-rounding by running sums (docs/reference.md, Limits).
 */
extern int	inc_row_order(const IncRow *a, const IncRow *b);

/*
 * IncRunning: re-rounding scaled rows by running sums (docs/reference.md,
 * Limits; Growth over a baseline): with the rows' exact amounts e(i) in
 * inc_row_order and the factor f = num / den, row i gets
 * round(S(i), 2) - round(S(i-1), 2), S(i) = f x (e(1) + ... + e(i)), so
 * the rows add up to round(f x the exact total, 2).
 */
typedef struct IncRunning
{
	IncRat		num;
	IncRat		den;
	IncRat		sum;			/* e(1) + ... + e(i) */
	IncRat		previous;		/* round(S(i), 2) */
} IncRunning;

extern void inc_running_init(IncRunning *r, const IncRat *num, const IncRat *den);

/*
 * inc_running_next: the reported amount of the next row, whose exact
 * amount is exact; its scaled exact amount f x exact into *scaled unless
 * NULL.
 */
extern IncDec inc_running_next(IncRunning *r, const IncRat *exact, IncRat *scaled);

/*
 * IncGrowers: the grower keys of a calculation (docs/reference.md,
 * Growers) numbered 0, 1, ... as they are first met, for what is kept per
 * grower (a stacked offer's coverage matched by grower, a requirement of
 * scope grower).  Each key is copied once (a transaction's strings may
 * not outlive its page); memory grows with the growers, never with the
 * transactions.
 */
typedef struct IncGrowers
{
	struct IncStrMap *map;		/* key -> index + 1 */
	int			n;
	int			cap;
	const char **keys;			/* by index: the copies */
} IncGrowers;

/* inc_growers_init: no grower yet. */
extern void inc_growers_init(IncGrowers *g);

/* inc_growers_add: the index of grower key, numbered when first met. */
extern int	inc_growers_add(IncGrowers *g, const char *key);

/* inc_growers_find: the index of grower key, or -1 when not met. */
extern int	inc_growers_find(const IncGrowers *g, const char *key);

/* A growable array of transaction indexes. */
typedef struct IncIndexList
{
	int			n;
	int			cap;
	int		   *items;
} IncIndexList;

extern void inc_index_list_push(IncIndexList *l, int value);

/*
 * inc_rate_row_emit: pass row to fn with its numbers in shortest form and
 * price set to the offer's price of row->sku_key (the strategies' rates
 * op fills the rest; see IncRateRow).
 */
extern void inc_rate_row_emit(IncRateRow *row, IncRateFn fn, void *ctx);

/*
 * inc_rate_row: a row of offer's rates with the fields every strategy
 * fills: rate key, rate value and measure, period and transaction type
 * (NULL: not shown); the rest is zero for the strategy to set.
 */
extern IncRateRow inc_rate_row(const IncOffer *offer, const char *rate_key,
							   const IncDec *value, const char *measure,
							   const IncPeriod *period, const char *transaction_type);

#endif							/* INC_CALC_H */
