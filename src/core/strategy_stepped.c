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
 * earning transactions.
 */
#include "engine_internal.h"

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
		inc_fail(INC_ERR_INVALID, NULL,
				 "Pass the property as a JSON number in properties, e.g. {\"%s\": 90}.",
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

/* inc_stepped_finish: pick the tier and emit the earning rows. */
void
inc_stepped_finish(IncCalc *c, const IncOffer *offer, void *state)
{
	SteppedState *st = state;
	const IncTier *tier;
	IncRat		value;
	char		pay_rate[INC_NUM_BUF];
	int			i;

	if (st->earning.n == 0 || !ThresholdValue(c, offer, st, &value))
		return;
	tier = SelectTier(&offer->stepped, &value);
	if (tier == NULL)
		return;

	if (offer->calculator == INC_FIXED_AMOUNT)
	{
		inc_allocate_pool(c, offer, &st->earning, &tier->value, tier->key, tier->measure);
		return;
	}

	inc_pay_rate_text(offer->calculator, &tier->value, pay_rate, sizeof(pay_rate));
	for (i = 0; i < st->earning.n; i++)
		inc_calc_emit_rate_row(c, offer, &c->txns[st->earning.items[i]],
							   tier->key, tier->measure, &tier->value, pay_rate);
}
