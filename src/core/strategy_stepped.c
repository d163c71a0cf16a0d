/*
 * strategy_stepped.c
 *    The stepped strategy (docs/reference.md, Stepped): one tier, picked by
 *    a threshold value, applies to every earning transaction (not
 *    marginal).
 *
 * While observing, a transaction joins the earning list when it matches
 * at least one earning filter, and the threshold sum when it matches at
 * least one threshold filter (each at most once).  At finish the
 * threshold value is the sum of provided amounts, of quantities in the
 * SKUs' units, or a property; the tier is the highest threshold <= that
 * value.  fixed_amount shares the tier's value as one pool over all the
 * earning transactions.  Diagnostics report the value, every tier (met or
 * not, and what the earning transactions would earn at it) and the gap to
 * the next tier.
 */
#include <stdio.h>
#include <string.h>

#include "jsonbuf.h"
#include "pool.h"
#include "strategy.h"

/* Hook kinds (a: the filter's index). */
#define HOOK_EARN		0
#define HOOK_THRESHOLD	1

typedef struct SteppedState
{
	IncIndexList earning;		/* transactions that earn, in id order */
	int			last_earning;	/* last transaction added to earning */
	int			last_threshold; /* last transaction added to the sum */
	IncRat		threshold_sum;	/* aggregated_amount / aggregated_quantity */
	/* the threshold value and tier, once Evaluate has run */
	bool		evaluated;
	bool		has_value;		/* false: a missing property */
	IncRat		value;
	const IncTier *tier;		/* NULL: no tier met */
} SteppedState;

/* IndexFilters: every SKU of filters[0..n) as hooks of the given kind. */
static void
IndexFilters(const IncIndexSink *sink, int kind, const IncFilter *filters, int n)
{
	int			i,
				j;

	for (i = 0; i < n; i++)
		for (j = 0; j < filters[i].nskus; j++)
			sink->hook(sink->ctx, filters[i].sku_keys[j], kind, i, 0);
}

/* SteppedIndex: earning and threshold filters' SKUs, and the property. */
static void
SteppedIndex(const IncOffer *offer, const IncIndexSink *sink)
{
	IndexFilters(sink, HOOK_EARN, offer->stepped.filters, offer->stepped.nfilters);
	IndexFilters(sink, HOOK_THRESHOLD, offer->stepped.threshold_filters,
				 offer->stepped.nthreshold_filters);
	if (offer->stepped.threshold_type == INC_THRESHOLD_PROPERTY)
		sink->property(sink->ctx, offer->stepped.property_key);
}

/* SteppedBegin: the state of one offer for one participant. */
static void *
SteppedBegin(IncCalc *c, const IncOffer *offer)
{
	SteppedState *st = inc_alloc(sizeof(SteppedState));

	(void) c;
	(void) offer;
	st->last_earning = -1;
	st->last_threshold = -1;
	inc_rat_from_int(&st->threshold_sum, 0);
	return st;
}

/* SteppedObserve: txn's SKU is in earning or threshold filter hook->a. */
static void
SteppedObserve(IncCalc *c, const IncOffer *offer, void *state,
			   const IncHook *hook, int txn)
{
	SteppedState *st = state;
	const IncTxn *t = &c->txns[txn];
	const IncFilter *filter;

	if (hook->kind == HOOK_EARN)
	{
		filter = &offer->stepped.filters[hook->a];
		if (st->last_earning != txn &&
			inc_txn_matches(offer, filter->period, filter->transaction_type, t))
		{
			inc_index_list_push(&st->earning, txn);
			st->last_earning = txn;
		}
		return;
	}

	filter = &offer->stepped.threshold_filters[hook->a];
	if (st->last_threshold != txn &&
		inc_txn_matches(offer, filter->period, filter->transaction_type, t))
	{
		IncRat		value;

		if (offer->stepped.threshold_type == INC_THRESHOLD_QUANTITY)
			inc_calc_sku_quantity(c, t, &value);
		else
			inc_rat_from_dec(&value, &t->amount);
		inc_rat_add(&st->threshold_sum, &st->threshold_sum, &value);
		st->last_threshold = txn;
	}
}

/* SelectTier: the tier with the highest threshold <= value, or NULL. */
static const IncTier *
SelectTier(const IncStepped *stepped, const IncRat *value)
{
	int			i;

	for (i = stepped->ntiers - 1; i >= 0; i--)
	{
		IncRat		threshold;

		inc_rat_from_dec(&threshold, &stepped->tiers[i].threshold);
		if (inc_rat_cmp(&threshold, value) <= 0)
			return &stepped->tiers[i];
	}
	return NULL;
}

/*
 * Evaluate: the participant's threshold value and tier into the state,
 * once (a missing property: no value, no tier).
 */
static void
Evaluate(IncCalc *c, const IncOffer *offer, SteppedState *st)
{
	if (st->evaluated)
		return;
	if (offer->stepped.threshold_type == INC_THRESHOLD_PROPERTY)
		st->has_value = inc_calc_property(c, offer->stepped.property_key, &st->value);
	else
	{
		st->value = st->threshold_sum;
		st->has_value = true;
	}
	st->tier = st->has_value ? SelectTier(&offer->stepped, &st->value) : NULL;
	st->evaluated = true;
}

/* SteppedFinish: pick the tier and emit the earning rows. */
static void
SteppedFinish(IncCalc *c, const IncOffer *offer, void *state)
{
	SteppedState *st = state;
	IncDec		pay_rate;
	int			i;

	if (st->earning.n == 0)
		return;
	Evaluate(c, offer, st);
	if (st->tier == NULL)
		return;

	if (offer->calculator == INC_FIXED_AMOUNT)
	{
		inc_allocate_pool(c, offer, &st->earning, &st->tier->value, st->tier->key,
						  st->tier->measure, NULL);
		return;
	}

	pay_rate = inc_pay_rate(offer->calculator, &st->tier->value);
	for (i = 0; i < st->earning.n; i++)
	{
		const IncTxn *t = &c->txns[st->earning.items[i]];

		inc_calc_at(c, t);
		inc_calc_emit_rate_row(c, offer, t, st->tier->key, st->tier->measure,
							   &st->tier->value, &pay_rate);
	}
}

/*
 * TierTotal: what the earning transactions would earn in all at tier (the
 * sum of the rounded rows; a fixed pool pays its value when the bases sum
 * to more than 0).
 */
static void
TierTotal(IncCalc *c, const IncOffer *offer, const SteppedState *st,
		  const IncTier *tier, IncRat *total)
{
	IncRat		quantity,
				base,
				incentive,
				sum;
	int			i;

	inc_rat_from_int(total, 0);
	inc_rat_from_int(&sum, 0);
	for (i = 0; i < st->earning.n; i++)
	{
		const IncTxn *t = &c->txns[st->earning.items[i]];

		inc_calc_at(c, t);
		inc_calc_rate_figures(c, offer, t, &tier->value, &quantity, &base, &incentive);
		if (offer->calculator == INC_FIXED_AMOUNT)
			inc_rat_add(&sum, &sum, &base);
		else
		{
			inc_rat_round(&incentive, &incentive, 2);
			inc_rat_add(total, total, &incentive);
		}
	}
	if (offer->calculator == INC_FIXED_AMOUNT && st->earning.n > 0 && inc_rat_sign(&sum) > 0)
		inc_rat_from_dec(total, &tier->value);
}

/*
 * SteppedDiagnose: {"threshold_type", "property_key", "threshold_value"
 * (null when the property is missing), "earning_transactions", "tiers":
 * [{"rate_key", "threshold", "value", "measure", "met",
 * "incentive_amount"}] ascending, "selected_rate_key", "next_rate_key",
 * "next_threshold", "gap_to_next"}.
 */
static const char *
SteppedDiagnose(IncCalc *c, const IncOffer *offer, void *state)
{
	SteppedState *st = state;
	const IncStepped *stepped = &offer->stepped;
	const IncRat *value;
	const IncTier *next = NULL;
	IncJsonBuf	b;
	char		count[64];
	int			i;

	Evaluate(c, offer, st);
	value = st->has_value ? &st->value : NULL;
	inc_json_init(&b);
	inc_json_raw(&b, "{");
	inc_json_key(&b, "threshold_type");
	inc_json_string(&b, inc_threshold_type_name(stepped->threshold_type));
	inc_json_raw(&b, ",");
	inc_json_key(&b, "property_key");
	inc_json_string(&b, stepped->property_key);
	inc_json_raw(&b, ",");
	inc_json_key(&b, "threshold_value");
	inc_json_rat(&b, value, 6);
	snprintf(count, sizeof(count), ",\"earning_transactions\":%d,\"tiers\":[", st->earning.n);
	inc_json_raw(&b, count);
	for (i = 0; i < stepped->ntiers; i++)
	{
		const IncTier *tier = &stepped->tiers[i];
		IncRat		threshold,
					total;
		bool		met = false;

		inc_rat_from_dec(&threshold, &tier->threshold);
		if (value)
			met = inc_rat_cmp(&threshold, value) <= 0;
		if (!met && next == NULL)
			next = tier;
		TierTotal(c, offer, st, tier, &total);
		inc_json_raw(&b, i ? ",{" : "{");
		inc_json_key(&b, "rate_key");
		inc_json_string(&b, tier->key);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "threshold");
		inc_json_dec(&b, &tier->threshold);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "value");
		inc_json_dec(&b, &tier->value);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "measure");
		inc_json_string(&b, tier->measure);
		inc_json_raw(&b, met ? ",\"met\":true," : ",\"met\":false,");
		inc_json_key(&b, "incentive_amount");
		inc_json_rat(&b, &total, 2);
		inc_json_raw(&b, "}");
	}
	inc_json_raw(&b, "],");
	inc_json_key(&b, "selected_rate_key");
	inc_json_string(&b, st->tier ? st->tier->key : NULL);
	inc_json_raw(&b, ",");
	inc_json_key(&b, "next_rate_key");
	inc_json_string(&b, next ? next->key : NULL);
	inc_json_raw(&b, ",");
	if (next)
	{
		IncRat		gap;

		inc_json_key(&b, "next_threshold");
		inc_json_dec(&b, &next->threshold);
		inc_json_raw(&b, ",");
		inc_rat_from_dec(&gap, &next->threshold);
		if (value)
			inc_rat_sub(&gap, &gap, value);
		inc_json_key(&b, "gap_to_next");
		inc_json_rat(&b, value ? &gap : NULL, 6);
	}
	else
		inc_json_raw(&b, "\"next_threshold\":null,\"gap_to_next\":null");
	inc_json_raw(&b, "}");
	return b.data;
}

/*
 * SteppedRates: one row per tier (ascending threshold); the period and
 * transaction type are shown when every earning filter has the same.
 */
static void
SteppedRates(const IncOffer *offer, IncRateFn fn, void *ctx)
{
	const IncStepped *stepped = &offer->stepped;
	const IncFilter *first = &stepped->filters[0];
	const IncPeriod *period = &offer->periods[first->period];
	const char *transaction_type = first->transaction_type;
	int			i;

	for (i = 1; i < stepped->nfilters; i++)
	{
		if (stepped->filters[i].period != first->period)
			period = NULL;
		if (strcmp(stepped->filters[i].transaction_type, first->transaction_type) != 0)
			transaction_type = NULL;
	}
	for (i = 0; i < stepped->ntiers; i++)
	{
		IncRateRow	row = {0};

		row.offer = offer;
		row.rate_key = stepped->tiers[i].key;
		row.rate_value = stepped->tiers[i].value;
		row.measure = stepped->tiers[i].measure;
		row.threshold = &stepped->tiers[i].threshold;
		row.threshold_type = inc_threshold_type_name(stepped->threshold_type);
		row.threshold_property_key = stepped->property_key;
		row.period = period;
		row.transaction_type = transaction_type;
		inc_rate_row_emit(&row, fn, ctx);
	}
}

const IncStrategyOps inc_stepped_ops = {
	.strategy = INC_STEPPED,
	.index = SteppedIndex,
	.begin = SteppedBegin,
	.observe = SteppedObserve,
	.finish = SteppedFinish,
	.diagnose = SteppedDiagnose,
	.rates = SteppedRates,
};
