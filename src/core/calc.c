/*
 * calc.c
 *    The calculation helpers every strategy shares (see calc.h): matching,
 *    unit conversion, base amounts, rate figures, rounding and emission of
 *    rows, property values, index lists and rate listing rows.
 *
 * Rows are rounded only here, from exact figures, half away from zero
 * (docs/reference.md, Rounding); the effective rate comes from the
 * rounded figures.  Quantities are in the SKU's unit and base amounts use
 * the offer's program price when it has one (docs/reference.md,
 * Quantities and base amounts).
 */
#include <string.h>

#include "calc.h"

/* inc_calc_at: record the transaction being worked on (NULL: none). */
void
inc_calc_at(IncCalc *c, const IncTxn *t)
{
	c->position->txn = t;
}

/* inc_txn_matches: period (inclusive) and transaction type. */
bool
inc_txn_matches(const IncOffer *offer, int period, const char *transaction_type,
				const IncTxn *t)
{
	const IncPeriod *p = &offer->periods[period];

	return t->transaction_date >= p->start_date &&
		t->transaction_date <= p->end_date &&
		strcmp(t->transaction_type, transaction_type) == 0;
}

/* inc_calc_convert: t's quantity expressed in to_uom. */
void
inc_calc_convert(IncCalc *c, const IncTxn *t, const char *to_uom, IncRat *out)
{
	if (!inc_units_convert(c->units, &t->quantity, t->uom_key, to_uom, out))
		inc_fail(INC_ERR_NO_CONVERSION,
				 "no unit conversion from \"%s\" to \"%s\" for transaction \"%s\" (sku \"%s\")",
				 t->uom_key, to_uom, t->transaction_id, t->sku_key);
}

/* inc_calc_sku_quantity: t's quantity in its SKU's unit of measure. */
void
inc_calc_sku_quantity(IncCalc *c, const IncTxn *t, IncRat *out)
{
	const char *uom = inc_units_sku_uom(c->units, t->sku_key);

	if (uom == NULL)
		inc_rat_from_dec(out, &t->quantity);
	else
		inc_calc_convert(c, t, uom, out);
}

/* inc_calc_base_amount: quantity x price when the offer prices the SKU, else amount. */
void
inc_calc_base_amount(IncCalc *c, const IncOffer *offer, const IncTxn *t,
					 const IncRat *sku_quantity, IncRat *out)
{
	const IncDec *price = inc_offer_price(offer, t->sku_key);

	(void) c;
	if (price)
	{
		IncRat		p;

		inc_rat_from_dec(&p, price);
		inc_rat_mul(out, sku_quantity, &p);
	}
	else
		inc_rat_from_dec(out, &t->amount);
}

/* inc_pay_rate: rate / 100 for percent, the rate for dollars, exactly. */
IncDec
inc_pay_rate(IncCalculator calc, const IncDec *rate)
{
	IncDec		d = *rate;

	if (calc == INC_PERCENT_OF_AMOUNT)
		d = inc_dec_div_pow10(rate, 2);
	return inc_dec_trim(&d);
}

/*
 * EffectiveRate: the row's effective rate from its reported (rounded)
 * figures: incentive_amount / incentivized_amount to 4 places, NULL when
 * incentivized_amount is 0.
 */
static void
EffectiveRate(IncRow *row)
{
	row->effective_rate_null = row->incentivized_amount.coef == 0;
	row->effective_rate.coef = 0;
	row->effective_rate.scale = 4;
	if (!row->effective_rate_null)
	{
		IncRat		amount,
					incentive;

		inc_rat_from_dec(&amount, &row->incentivized_amount);
		inc_rat_from_dec(&incentive, &row->incentive_amount);
		inc_rat_div(&incentive, &incentive, &amount);
		row->effective_rate = inc_rat_to_dec(&incentive, 4);
	}
}

/* inc_calc_emit: round a row's figures and hand it over; its incentive_amount. */
IncDec
inc_calc_emit(IncCalc *c, const IncOffer *offer, const IncTxn *t, const IncRowFigures *f)
{
	IncRow		row;

	if (c->tick)
		c->tick();

	row.offer = offer;
	row.txn = t;
	row.rate_key = f->rate_key;
	row.rate_measure = f->rate_measure;
	row.rate_value = inc_dec_trim(f->rate_value);
	row.pay_rate = f->pay_rate;
	row.incentivized_quantity = inc_rat_to_dec(f->incentivized_quantity, 6);
	row.incentivized_amount = inc_rat_to_dec(f->incentivized_amount, 2);
	row.incentive_amount = inc_rat_to_dec(f->incentive_amount, 2);
	if (f->contribution)
		row.contribution = inc_rat_to_dec(f->contribution, 6);
	else
	{
		row.contribution.coef = 1000000;
		row.contribution.scale = 6;
	}
	EffectiveRate(&row);
	if (c->hold)
		c->hold(c->hold_ctx, &row, f->incentive_amount);
	else
		c->emit(c->emit_ctx, &row);
	return row.incentive_amount;
}

/* inc_calc_emit_held: a held row with its final incentive_amount, to the host. */
void
inc_calc_emit_held(IncCalc *c, IncRow *row, const IncDec *incentive_amount)
{
	if (c->tick)
		c->tick();
	row->incentive_amount = *incentive_amount;
	EffectiveRate(row);
	c->emit(c->emit_ctx, row);
}

/* inc_calc_rate_figures: quantity, base and incentive of a rate for t. */
void
inc_calc_rate_figures(IncCalc *c, const IncOffer *offer, const IncTxn *t,
					  const IncDec *rate, IncRat *quantity, IncRat *base, IncRat *incentive)
{
	IncRat		r;

	inc_rat_from_dec(&r, rate);
	inc_calc_rate_figures_rat(c, offer, t, &r, quantity, base, incentive);
}

/*
 * inc_calc_rate_figures_rat: base x rate / 100 (percent_of_amount) or
 * quantity x rate (dollars_per_unit), for an exact rate.
 */
void
inc_calc_rate_figures_rat(IncCalc *c, const IncOffer *offer, const IncTxn *t,
						  const IncRat *rate, IncRat *quantity, IncRat *base,
						  IncRat *incentive)
{
	inc_calc_sku_quantity(c, t, quantity);
	inc_calc_base_amount(c, offer, t, quantity, base);
	if (offer->calculator == INC_PERCENT_OF_AMOUNT)
	{
		IncRat		hundred;

		inc_rat_from_int(&hundred, 100);
		inc_rat_mul(incentive, base, rate);
		inc_rat_div(incentive, incentive, &hundred);
	}
	else
		inc_rat_mul(incentive, quantity, rate);
}

/*
 * inc_calc_emit_rate_row: the row of a percent_of_amount or
 * dollars_per_unit rate: base x rate / 100, or quantity x rate.
 */
IncDec
inc_calc_emit_rate_row(IncCalc *c, const IncOffer *offer, const IncTxn *t,
					   const char *rate_key, const char *rate_measure,
					   const IncDec *rate, const IncDec *pay_rate)
{
	IncRat		quantity,
				base,
				incentive;
	IncRowFigures f;

	inc_calc_rate_figures(c, offer, t, rate, &quantity, &base, &incentive);
	f.rate_key = rate_key;
	f.rate_measure = rate_measure;
	f.rate_value = rate;
	f.pay_rate = *pay_rate;
	f.incentivized_quantity = &quantity;
	f.incentivized_amount = &base;
	f.incentive_amount = &incentive;
	f.contribution = NULL;
	return inc_calc_emit(c, offer, t, &f);
}

/* inc_calc_property: the participant's property value; false when missing. */
bool
inc_calc_property(IncCalc *c, const char *property_key, IncRat *value)
{
	IncDec		prop;
	IncPropStatus status;

	status = c->props ? c->props(c->props_ctx, c->participant_key, property_key, &prop)
		: INC_PROP_MISSING;
	if (status == INC_PROP_NOT_NUMBER)
		inc_fail_about(INC_ERR_PROPERTY_NOT_NUMBER, property_key,
					   "property \"%s\" of participant \"%s\" is not a number",
					   property_key, c->participant_key);
	if (status == INC_PROP_MISSING)
		return false;
	inc_rat_from_dec(value, &prop);
	return true;
}

/* inc_index_list_push: append value, growing the list. */
void
inc_index_list_push(IncIndexList *l, int value)
{
	if (l->n == l->cap)
	{
		int			cap = l->cap ? l->cap * 2 : 8;
		int		   *items = inc_alloc(sizeof(int) * cap);

		if (l->n)
			memcpy(items, l->items, sizeof(int) * l->n);
		l->items = items;
		l->cap = cap;
	}
	l->items[l->n++] = value;
}

/* inc_rate_row_emit: shortest-form numbers and the SKU's price, then fn. */
void
inc_rate_row_emit(IncRateRow *row, IncRateFn fn, void *ctx)
{
	IncDec		threshold,
				price,
				coverage_rate;
	const IncDec *p = row->sku_key ? inc_offer_price(row->offer, row->sku_key) : NULL;

	row->rate_value = inc_dec_trim(&row->rate_value);
	if (row->threshold)
	{
		threshold = inc_dec_trim(row->threshold);
		row->threshold = &threshold;
	}
	row->price = NULL;
	if (p)
	{
		price = inc_dec_trim(p);
		row->price = &price;
	}
	if (row->coverage_rate)
	{
		coverage_rate = inc_dec_trim(row->coverage_rate);
		row->coverage_rate = &coverage_rate;
	}
	fn(ctx, row);
}
