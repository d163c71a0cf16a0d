/*
 * strategy_stepped.c
 *    The stepped strategy (SPEC 2.2): one tier, picked by a threshold
 *    value, applies to every earning transaction (not marginal).
 *
 * While observing, a transaction joins the earning list when it matches
 * at least one earning filter, and the threshold sum when it matches at
 * least one threshold filter (each at most once).  At finish the
 * threshold value is the sum of provided amounts, of quantities in the
 * SKUs' units, or a property; the tier is the highest threshold <= that
 * value.  fixed_amount shares the tier's value as one pool over all the
 * earning transactions.  With diagnostics on, it also reports the value,
 * every tier (met or not, and what the earning transactions would earn at
 * it) and the gap to the next tier.
 */
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"
#include "jsonbuf.h"

typedef struct SteppedState
{
	IncIndexList earning;		/* transactions that earn, in id order */
	int			last_earning;	/* last transaction added to earning */
	int			last_threshold; /* last transaction added to the sum */
	IncRat		threshold_sum;	/* aggregated_amount / aggregated_quantity */
} SteppedState;

/* inc_stepped_begin: state of one offer for one participant. */
void *
inc_stepped_begin(IncCalc *c, const IncOffer *offer)
{
	SteppedState *st = inc_alloc(sizeof(SteppedState));

	(void) c;
	(void) offer;
	st->last_earning = -1;
	st->last_threshold = -1;
	inc_rat_from_int(&st->threshold_sum, 0);
	return st;
}

/* inc_stepped_observe: txn's SKU is in earning or threshold filter hook->a. */
void
inc_stepped_observe(IncCalc *c, const IncOffer *offer, void *state,
					const IncHook *hook, int txn)
{
	SteppedState *st = state;
	const IncTxn *t = &c->txns[txn];
	const IncFilter *filter;

	if (hook->kind == HOOK_STEPPED_EARN)
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

/*
 * ThresholdValue: the participant's threshold value into *value; false when
 * it has none (a missing property: no tier is met).
 */
static bool
ThresholdValue(IncCalc *c, const IncOffer *offer, const SteppedState *st, IncRat *value)
{
	IncDec		prop;
	IncPropStatus status;

	if (offer->stepped.threshold_type != INC_THRESHOLD_PROPERTY)
	{
		*value = st->threshold_sum;
		return true;
	}
	status = c->props ? c->props(c->props_ctx, c->participant_key,
								 offer->stepped.property_key, &prop)
		: INC_PROP_MISSING;
	if (status == INC_PROP_NOT_NUMBER)
		inc_fail_about(INC_ERR_PROPERTY_NOT_NUMBER, offer->stepped.property_key,
					   "property \"%s\" of participant \"%s\" is not a number",
					   offer->stepped.property_key, c->participant_key);
	if (status == INC_PROP_MISSING)
		return false;
	inc_rat_from_dec(value, &prop);
	return true;
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

static const char *
ThresholdTypeName(IncThresholdType type)
{
	switch (type)
	{
		case INC_THRESHOLD_AMOUNT:
			return "aggregated_amount";
		case INC_THRESHOLD_QUANTITY:
			return "aggregated_quantity";
		case INC_THRESHOLD_PROPERTY:
			return "property";
	}
	return "?";
}

/* Diagnose: the stepped diagnostics JSON of one offer (engine.h). */
static void
Diagnose(IncCalc *c, const IncOffer *offer, const SteppedState *st,
		 const IncRat *value, const IncTier *selected)
{
	const IncStepped *stepped = &offer->stepped;
	const IncTier *next = NULL;
	IncJsonBuf	b;
	char		count[64];
	int			i;

	inc_json_init(&b);
	inc_json_raw(&b, "{");
	inc_json_key(&b, "threshold_type");
	inc_json_string(&b, ThresholdTypeName(stepped->threshold_type));
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
	inc_json_string(&b, selected ? selected->key : NULL);
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
	c->engine->diagnostics(c->engine->diagnostics_ctx, offer, b.data);
}

/* inc_stepped_finish: pick the tier and emit the earning rows. */
void
inc_stepped_finish(IncCalc *c, const IncOffer *offer, void *state)
{
	SteppedState *st = state;
	const IncTier *tier = NULL;
	IncRat		value;
	bool		has_value;
	IncDec		pay_rate;
	int			i;

	if (st->earning.n == 0 && c->engine->diagnostics == NULL)
		return;
	has_value = ThresholdValue(c, offer, st, &value);
	if (has_value)
		tier = SelectTier(&offer->stepped, &value);
	if (c->engine->diagnostics)
		Diagnose(c, offer, st, has_value ? &value : NULL, tier);
	if (tier == NULL || st->earning.n == 0)
		return;

	if (offer->calculator == INC_FIXED_AMOUNT)
	{
		inc_allocate_pool(c, offer, &st->earning, &tier->value, tier->key, tier->measure);
		return;
	}

	pay_rate = inc_pay_rate(offer->calculator, &tier->value);
	for (i = 0; i < st->earning.n; i++)
		inc_calc_emit_rate_row(c, offer, &c->txns[st->earning.items[i]],
							   tier->key, tier->measure, &tier->value, &pay_rate);
}
