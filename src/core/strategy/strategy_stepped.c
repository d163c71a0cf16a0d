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
 *
 * Incremental tiers (tier_mode "incremental", docs/reference.md,
 * Incremental tiers) pay one blended rate instead: each tier earns its
 * value on the part of the threshold value V inside its band,
 * R = sum of r(i) x (min(V, t(i+1)) - t(i)) / V over the tiers met, and
 * every earning transaction gets one row at R, rounded once, under the
 * highest tier met.  Nothing is paid when V <= 0 or below the lowest
 * threshold.
 */
#include <stdio.h>
#include <string.h>

#include "../util/jsonbuf.h"
#include "../calc/pool.h"
#include "strategy.h"

/* Hook kinds (a: the filter's index). */
#define HOOK_EARN		0
#define HOOK_THRESHOLD	1

typedef struct SteppedState
{
	IncIndexList earning;		/* transactions that earn, in id order */
	int			last_earning;	/* last transaction added to earning */
	int			last_threshold; /* last transaction added to the sum */
	IncSum		threshold_sum;	/* aggregated_amount / aggregated_quantity */
	/* the threshold value and tier, once Evaluate has run */
	bool		evaluated;
	bool		has_value;		/* false: a missing property */
	IncRat		value;
	const IncTier *tier;		/* NULL: no tier met */
	IncRat		blended;		/* incremental, when tier: the blended rate R */
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
	inc_sum_init(&st->threshold_sum);
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
			inc_txn_matches(c, offer, filter->period, filter->transaction_type, t))
		{
			inc_index_list_push(&st->earning, txn);
			st->last_earning = txn;
		}
		return;
	}

	filter = &offer->stepped.threshold_filters[hook->a];
	if (st->last_threshold != txn &&
		inc_txn_matches(c, offer, filter->period, filter->transaction_type, t))
	{
		IncRat		value;
		IncQ		q;

		if (offer->stepped.threshold_type == INC_THRESHOLD_QUANTITY)
		{
			if (inc_calc_sku_quantity_q(c, t, &q))
				inc_sum_add_q(&st->threshold_sum, &q);
			else
			{
				inc_calc_sku_quantity(c, t, &value);
				inc_sum_add_rat(&st->threshold_sum, &value);
			}
		}
		else if (!inc_calc_has(c, t, INC_TXN_NULL_AMOUNT))
			;					/* deferred: nothing is added */
		else if (inc_fast() && inc_q_from_dec(&q, &t->amount))
			inc_sum_add_q(&st->threshold_sum, &q);
		else
		{
			inc_rat_from_dec(&value, &t->amount);
			inc_sum_add_rat(&st->threshold_sum, &value);
		}
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
 * BlendedRate: the blended rate of incremental tiers at threshold value
 * v > 0: sum over the tiers with t(i) <= v of r(i) x (min(v, t(i+1)) -
 * t(i)), divided by v.
 */
static void
BlendedRate(const IncStepped *stepped, const IncRat *v, IncRat *rate)
{
	int			i;

	inc_rat_from_int(rate, 0);
	for (i = 0; i < stepped->ntiers; i++)
	{
		IncRat		from,
					to,
					r;

		inc_rat_from_dec(&from, &stepped->tiers[i].threshold);
		if (inc_rat_cmp(&from, v) > 0)
			break;
		to = *v;
		if (i + 1 < stepped->ntiers)
		{
			inc_rat_from_dec(&r, &stepped->tiers[i + 1].threshold);
			if (inc_rat_cmp(&r, v) < 0)
				to = r;
		}
		inc_rat_sub(&to, &to, &from);
		inc_rat_from_dec(&r, &stepped->tiers[i].value);
		inc_rat_mul(&r, &r, &to);
		inc_rat_add(rate, rate, &r);
	}
	inc_rat_div(rate, rate, v);
}

/*
 * Evaluate: the participant's threshold value and tier into the state,
 * once (a missing property: no value, no tier; incremental: no tier at a
 * value <= 0, else the blended rate too).
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
		inc_sum_get(&st->threshold_sum, &st->value);
		st->has_value = true;
	}
	st->tier = st->has_value ? SelectTier(&offer->stepped, &st->value) : NULL;
	if (offer->stepped.tier_mode == INC_TIERS_INCREMENTAL && st->tier)
	{
		if (inc_rat_sign(&st->value) <= 0)
			st->tier = NULL;
		else
			BlendedRate(&offer->stepped, &st->value, &st->blended);
	}
	st->evaluated = true;
}

/*
 * BlendedPayRate: offer_sku_pay_rate of incremental tiers: R / 100
 * (percent) or R (dollars), rounded to 6 places.
 */
static IncDec
BlendedPayRate(const IncOffer *offer, const IncRat *rate)
{
	IncRat		r = *rate;

	if (offer->calculator == INC_PERCENT_OF_AMOUNT)
	{
		IncRat		hundred;

		inc_rat_from_int(&hundred, 100);
		inc_rat_div(&r, &r, &hundred);
	}
	return inc_rat_to_dec(&r, 6);
}

/* IncrementalFinish: every earning transaction at the blended rate. */
static void
IncrementalFinish(IncCalc *c, const IncOffer *offer, SteppedState *st)
{
	IncDec		pay_rate = BlendedPayRate(offer, &st->blended);
	int			i;

	for (i = 0; i < st->earning.n; i++)
	{
		const IncTxn *t = &c->txns[st->earning.items[i]];
		IncRat		quantity,
					base,
					incentive;
		IncRowFigures f;

		inc_calc_at(c, t);
		inc_calc_rate_figures_rat(c, offer, t, &st->blended, &quantity, &base, &incentive);
		f.rate_key = st->tier->key;
		f.rate_measure = st->tier->measure;
		f.rate_value = &st->tier->value;
		f.pay_rate = pay_rate;
		f.incentivized_quantity = &quantity;
		f.incentivized_amount = &base;
		f.incentive_amount = &incentive;
		f.contribution = NULL;
		inc_calc_emit(c, offer, t, &f);
	}
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
	if (offer->stepped.tier_mode == INC_TIERS_INCREMENTAL)
	{
		IncrementalFinish(c, offer, st);
		return;
	}

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
 * TierRate: the rate the earning transactions get at tier: its value, or
 * for incremental tiers the blended rate at max(V, the tier's threshold);
 * false when that is <= 0 (nothing earned).
 */
static bool
TierRate(const IncOffer *offer, const SteppedState *st, const IncTier *tier, IncRat *rate)
{
	IncRat		v;

	if (offer->stepped.tier_mode != INC_TIERS_INCREMENTAL)
	{
		inc_rat_from_dec(rate, &tier->value);
		return true;
	}
	inc_rat_from_dec(&v, &tier->threshold);
	if (st->has_value && inc_rat_cmp(&st->value, &v) > 0)
		v = st->value;
	if (inc_rat_sign(&v) <= 0)
		return false;
	BlendedRate(&offer->stepped, &v, rate);
	return true;
}

/*
 * TierTotal: what the earning transactions would earn in all at tier (the
 * sum of the rounded rows; a fixed pool pays its value when the bases sum
 * to more than 0; incremental tiers at TierRate).
 */
static void
TierTotal(IncCalc *c, const IncOffer *offer, const SteppedState *st,
		  const IncTier *tier, IncRat *total)
{
	IncRat		quantity,
				base,
				incentive,
				sum,
				rate;
	int			i;

	inc_rat_from_int(total, 0);
	inc_rat_from_int(&sum, 0);
	if (!TierRate(offer, st, tier, &rate))
		return;
	for (i = 0; i < st->earning.n; i++)
	{
		const IncTxn *t = &c->txns[st->earning.items[i]];

		inc_calc_at(c, t);
		inc_calc_rate_figures_rat(c, offer, t, &rate, &quantity, &base, &incentive);
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
 * Bands: incremental tiers' "blended_rate" (null when no tier is met),
 * "next_blended_rate" (at the next threshold; null when there is none)
 * and "bands": [{"rate_key", "from", "to" (null: no end), "value",
 * "volume" (the part of the threshold value inside the band)}].
 */
static void
Bands(IncJsonBuf *b, const IncOffer *offer, const SteppedState *st, const IncTier *next)
{
	const IncStepped *stepped = &offer->stepped;
	IncRat		rate;
	int			i;

	inc_json_raw(b, ",\"blended_rate\":");
	inc_json_rat(b, st->tier ? &st->blended : NULL, 6);
	inc_json_raw(b, ",\"next_blended_rate\":");
	inc_json_rat(b, next && TierRate(offer, st, next, &rate) ? &rate : NULL, 6);
	inc_json_raw(b, ",\"bands\":[");
	for (i = 0; i < stepped->ntiers; i++)
	{
		const IncTier *tier = &stepped->tiers[i];
		IncRat		from,
					to,
					volume;
		bool		bounded = i + 1 < stepped->ntiers;

		inc_rat_from_dec(&from, &tier->threshold);
		if (bounded)
			inc_rat_from_dec(&to, &stepped->tiers[i + 1].threshold);
		inc_rat_from_int(&volume, 0);
		if (st->has_value && inc_rat_cmp(&st->value, &from) > 0)
		{
			volume = bounded && inc_rat_cmp(&to, &st->value) < 0 ? to : st->value;
			inc_rat_sub(&volume, &volume, &from);
		}
		inc_json_raw(b, i ? ",{" : "{");
		inc_json_key_string(b, "rate_key", tier->key);
		inc_json_raw(b, ",\"from\":");
		inc_json_dec(b, &tier->threshold);
		inc_json_raw(b, ",\"to\":");
		if (bounded)
			inc_json_dec(b, &stepped->tiers[i + 1].threshold);
		else
			inc_json_raw(b, "null");
		inc_json_raw(b, ",\"value\":");
		inc_json_dec(b, &tier->value);
		inc_json_raw(b, ",\"volume\":");
		inc_json_rat(b, &volume, 6);
		inc_json_raw(b, "}");
	}
	inc_json_raw(b, "]");
}

/*
 * SteppedDiagnose: {"tier_mode", "threshold_type", "property_key",
 * "threshold_value" (null when the property is missing),
 * "earning_transactions", "tiers": [{"rate_key", "threshold", "value",
 * "measure", "met", "incentive_amount"}] ascending, "selected_rate_key",
 * "next_rate_key", "next_threshold", "gap_to_next"}, and for incremental
 * tiers what Bands adds.
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
	inc_json_key_string(&b, "tier_mode", inc_tier_mode_name(stepped->tier_mode));
	inc_json_raw(&b, ",");
	inc_json_key_string(&b, "threshold_type", inc_threshold_type_name(stepped->threshold_type));
	inc_json_raw(&b, ",");
	inc_json_key_string(&b, "property_key", stepped->property_key);
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
			met = inc_rat_cmp(&threshold, value) <= 0 &&
				(stepped->tier_mode != INC_TIERS_INCREMENTAL || inc_rat_sign(value) > 0);
		if (!met && next == NULL)
			next = tier;
		TierTotal(c, offer, st, tier, &total);
		inc_json_raw(&b, i ? ",{" : "{");
		inc_json_key_string(&b, "rate_key", tier->key);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "threshold");
		inc_json_dec(&b, &tier->threshold);
		inc_json_raw(&b, ",");
		inc_json_key(&b, "value");
		inc_json_dec(&b, &tier->value);
		inc_json_raw(&b, ",");
		inc_json_key_string(&b, "measure", tier->measure);
		inc_json_raw(&b, met ? ",\"met\":true," : ",\"met\":false,");
		inc_json_key(&b, "incentive_amount");
		inc_json_rat(&b, &total, 2);
		inc_json_raw(&b, "}");
	}
	inc_json_raw(&b, "],");
	inc_json_key_string(&b, "selected_rate_key", st->tier ? st->tier->key : NULL);
	inc_json_raw(&b, ",");
	inc_json_key_string(&b, "next_rate_key", next ? next->key : NULL);
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
	if (stepped->tier_mode == INC_TIERS_INCREMENTAL)
		Bands(&b, offer, st, next);
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
		const IncTier *tier = &stepped->tiers[i];
		IncRateRow	row = inc_rate_row(offer, tier->key, &tier->value, tier->measure,
									   period, transaction_type);

		row.threshold = &tier->threshold;
		row.threshold_type = inc_threshold_type_name(stepped->threshold_type);
		row.threshold_property_key = stepped->property_key;
		row.tier_mode = inc_tier_mode_name(stepped->tier_mode);
		inc_rate_row_emit(&row, fn, ctx);
	}
}

INC_STRATEGY_OPS(inc_stepped_ops, INC_STEPPED, Stepped);
