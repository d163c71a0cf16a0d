/*
 * engine.c
 *    The calculation driver: builds the SKU index of the offers, runs one
 *    participant's transactions through the strategies, and formats rows.
 *
 * A transaction costs only the hooks of its own SKU (SPEC: O(matching
 * offers)).  Offer state is per participant and created on first touch;
 * a generation counter makes "forget the last participant" O(1).  Unit
 * conversion (SPEC 1.3), base amounts (3.2) and row formatting (3.1) live
 * here because every strategy needs them.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

const IncTxn *inc_current_txn;
const char *inc_current_participant;

/* inc_engine_create: an empty engine (in the current allocator). */
IncEngine *
inc_engine_create(void)
{
	IncEngine  *e = inc_alloc(sizeof(IncEngine));

	/* an earlier calculation that failed may have left these set */
	inc_current_txn = NULL;
	inc_current_participant = NULL;
	e->sku_uom = inc_strmap_create();
	e->conversions = inc_strmap_create();
	e->index = inc_strmap_create();
	return e;
}

/* inc_engine_add_offer: add a compiled offer (kept by pointer). */
void
inc_engine_add_offer(IncEngine *e, const IncOffer *offer)
{
	if (e->noffers == e->offers_cap)
	{
		int			cap = e->offers_cap ? e->offers_cap * 2 : 16;
		const IncOffer **offers = inc_alloc(sizeof(IncOffer *) * cap);

		if (e->noffers)
			memcpy(offers, e->offers, sizeof(IncOffer *) * e->noffers);
		e->offers = offers;
		e->offers_cap = cap;
	}
	e->offers[e->noffers++] = offer;
}

/* inc_engine_set_sku_uom: sku_key is measured in uom_key (copied). */
void
inc_engine_set_sku_uom(IncEngine *e, const char *sku_key, const char *uom_key)
{
	*inc_strmap_slot(e->sku_uom, inc_strdup(sku_key)) = inc_strdup(uom_key);
}

/*
 * PairKey: the conversions map key "from<US>to", in buf when it fits (a
 * lookup), else newly allocated.
 */
static char *
PairKey(const char *from, const char *to, char *buf, size_t cap)
{
	size_t		lf = strlen(from),
				lt = strlen(to);
	char	   *key = (buf && lf + lt + 2 <= cap) ? buf : inc_alloc(lf + lt + 2);

	memcpy(key, from, lf);
	key[lf] = '\037';
	memcpy(key + lf + 1, to, lt);
	key[lf + lt + 1] = '\0';
	return key;
}

/* inc_engine_add_conversion: quantity_in_to = quantity_in_from * factor. */
void
inc_engine_add_conversion(IncEngine *e, const char *from_uom, const char *to_uom,
						  const IncDec *factor)
{
	IncDec	   *f = inc_alloc(sizeof(IncDec));

	if (inc_dec_sign(factor) <= 0)
		inc_fail(INC_ERR_INVALID, NULL, NULL,
				 "unit conversion from \"%s\" to \"%s\" has a factor that is not > 0",
				 from_uom, to_uom);
	*f = *factor;
	*inc_strmap_slot(e->conversions, PairKey(from_uom, to_uom, NULL, 0)) = f;
}

/* inc_engine_set_diagnostics: report stepped/stacked diagnostics to fn. */
void
inc_engine_set_diagnostics(IncEngine *e, IncDiagnosticsFn fn, void *ctx)
{
	e->diagnostics = fn;
	e->diagnostics_ctx = ctx;
}

/* inc_engine_set_tick: fn is called between transactions and rows. */
void
inc_engine_set_tick(IncEngine *e, IncTickFn tick)
{
	e->tick = tick;
}

static void
AddHook(IncEngine *e, const char *sku, int offer, IncHookKind kind, int a, int b)
{
	void	  **slot = inc_strmap_slot(e->index, sku);
	IncHookList *l = *slot;

	if (l == NULL)
	{
		l = inc_alloc(sizeof(IncHookList));
		*slot = l;
	}
	if (l->n == l->cap)
	{
		int			cap = l->cap ? l->cap * 2 : 4;
		IncHook    *hooks = inc_alloc(sizeof(IncHook) * cap);

		if (l->n)
			memcpy(hooks, l->hooks, sizeof(IncHook) * l->n);
		l->hooks = hooks;
		l->cap = cap;
	}
	l->hooks[l->n++] = (IncHook)
	{
		offer, kind, a, b
	};
}

static void
IndexFilters(IncEngine *e, int offer, IncHookKind kind, const IncFilter *filters, int n)
{
	int			i,
				j;

	for (i = 0; i < n; i++)
		for (j = 0; j < filters[i].nskus; j++)
			AddHook(e, filters[i].sku_keys[j], offer, kind, i, 0);
}

static void
IndexOffer(IncEngine *e, int idx)
{
	const IncOffer *o = e->offers[idx];
	int			i,
				j;

	switch (o->strategy)
	{
		case INC_STANDARD:
			for (i = 0; i < o->nentries; i++)
				for (j = 0; j < o->entries[i].nrates; j++)
					AddHook(e, o->entries[i].rates[j].sku_key, idx, HOOK_STANDARD_RATE, i, j);
			break;
		case INC_STEPPED:
			IndexFilters(e, idx, HOOK_STEPPED_EARN, o->stepped.filters, o->stepped.nfilters);
			IndexFilters(e, idx, HOOK_STEPPED_THRESHOLD, o->stepped.threshold_filters,
						 o->stepped.nthreshold_filters);
			break;
		case INC_STACKED:
			for (i = 0; i < o->stacked.nsets; i++)
				for (j = 0; j < o->stacked.sets[i].nconversions; j++)
					AddHook(e, o->stacked.sets[i].conversions[j].sku_key, idx,
							HOOK_STACKED_SET, i, j);
			break;
	}
}

static bool
ContainsString(const char **list, int n, const char *s)
{
	int			i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* inc_engine_prepare: build the SKU index and the key lists. */
void
inc_engine_prepare(IncEngine *e)
{
	uint32_t	i;
	int			o;

	for (o = 0; o < e->noffers; o++)
		IndexOffer(e, o);

	e->sku_keys = inc_alloc(sizeof(char *) * (e->index->count + 1));
	for (i = 0; i <= e->index->mask; i++)
		if (e->index->entries[i].key)
			e->sku_keys[e->nsku_keys++] = e->index->entries[i].key;

	e->property_keys = inc_alloc(sizeof(char *) * (e->noffers + 1));
	for (o = 0; o < e->noffers; o++)
	{
		const IncOffer *offer = e->offers[o];

		if (offer->strategy == INC_STEPPED &&
			offer->stepped.threshold_type == INC_THRESHOLD_PROPERTY &&
			!ContainsString(e->property_keys, e->nproperty_keys, offer->stepped.property_key))
			e->property_keys[e->nproperty_keys++] = offer->stepped.property_key;
	}

	e->state_gen = inc_alloc(sizeof(uint64_t) * (e->noffers + 1));
	e->state = inc_alloc(sizeof(void *) * (e->noffers + 1));
}

/* inc_engine_sku_keys: every SKU some offer mentions. */
const char *const *
inc_engine_sku_keys(const IncEngine *e, int *n)
{
	*n = e->nsku_keys;
	return e->sku_keys;
}

/* inc_engine_needs_properties: does a stepped offer use a property? */
bool
inc_engine_needs_properties(const IncEngine *e)
{
	return e->nproperty_keys > 0;
}

/* inc_engine_property_keys: the property keys the offers use. */
const char *const *
inc_engine_property_keys(const IncEngine *e, int *n)
{
	*n = e->nproperty_keys;
	return e->property_keys;
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
	IncRat		factor;
	const IncDec *f;
	char		buf[128];

	inc_rat_from_dec(out, &t->quantity);
	if (strcmp(t->uom_key, to_uom) == 0)
		return;

	f = inc_strmap_get(c->engine->conversions, PairKey(t->uom_key, to_uom, buf, sizeof(buf)));
	if (f)
	{
		inc_rat_from_dec(&factor, f);
		inc_rat_mul(out, out, &factor);
		return;
	}
	f = inc_strmap_get(c->engine->conversions, PairKey(to_uom, t->uom_key, buf, sizeof(buf)));
	if (f)
	{
		inc_rat_from_dec(&factor, f);
		inc_rat_div(out, out, &factor);
		return;
	}
	inc_current_txn = t;		/* the failure names it (also while finishing) */
	inc_fail(INC_ERR_INVALID,
			 NULL,
			 "Add a row to incentives.uom_conversions for this pair of units.",
			 "no unit conversion from \"%s\" to \"%s\" for transaction \"%s\" (sku \"%s\")",
			 t->uom_key, to_uom, t->transaction_id, t->sku_key);
}

/* inc_calc_sku_quantity: t's quantity in its SKU's unit of measure. */
void
inc_calc_sku_quantity(IncCalc *c, const IncTxn *t, IncRat *out)
{
	const char *uom = inc_strmap_get(c->engine->sku_uom, t->sku_key);

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

/* inc_calc_emit: round a row's figures (SPEC 3.1) and hand it over. */
void
inc_calc_emit(IncCalc *c, const IncOffer *offer, const IncTxn *t, const IncRowFigures *f)
{
	IncRow		row;

	if (c->engine->tick)
		c->engine->tick();

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

	/* the effective rate comes from the reported (rounded) figures */
	row.effective_rate_null = row.incentivized_amount.coef == 0;
	row.effective_rate.coef = 0;
	row.effective_rate.scale = 4;
	if (!row.effective_rate_null)
	{
		IncRat		amount,
					incentive;

		inc_rat_from_dec(&amount, &row.incentivized_amount);
		inc_rat_from_dec(&incentive, &row.incentive_amount);
		inc_rat_div(&incentive, &incentive, &amount);
		row.effective_rate = inc_rat_to_dec(&incentive, 4);
	}
	c->emit(c->emit_ctx, &row);
}

/* inc_calc_rate_figures: quantity, base and incentive of a rate for t. */
void
inc_calc_rate_figures(IncCalc *c, const IncOffer *offer, const IncTxn *t,
					  const IncDec *rate, IncRat *quantity, IncRat *base, IncRat *incentive)
{
	IncRat		r;

	inc_calc_sku_quantity(c, t, quantity);
	inc_calc_base_amount(c, offer, t, quantity, base);
	inc_rat_from_dec(&r, rate);
	if (offer->calculator == INC_PERCENT_OF_AMOUNT)
	{
		IncRat		hundred;

		inc_rat_from_int(&hundred, 100);
		inc_rat_mul(incentive, base, &r);
		inc_rat_div(incentive, incentive, &hundred);
	}
	else
		inc_rat_mul(incentive, quantity, &r);
}

/*
 * inc_calc_emit_rate_row: the row of a percent_of_amount or
 * dollars_per_unit rate (SPEC 3.3): base x rate / 100, or quantity x rate.
 */
void
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
	inc_calc_emit(c, offer, t, &f);
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

static void *
OfferState(IncCalc *c, int idx)
{
	IncEngine  *e = c->engine;
	const IncOffer *offer = e->offers[idx];

	if (e->state_gen[idx] == e->gen)
		return e->state[idx];

	switch (offer->strategy)
	{
		case INC_STANDARD:
			e->state[idx] = inc_standard_begin(c, offer);
			break;
		case INC_STEPPED:
			e->state[idx] = inc_stepped_begin(c, offer);
			break;
		case INC_STACKED:
			e->state[idx] = inc_stacked_begin(c, offer);
			break;
	}
	e->state_gen[idx] = e->gen;
	c->touched[c->ntouched++] = idx;
	return e->state[idx];
}

static int
CompareInts(const void *a, const void *b)
{
	int			x = *(const int *) a,
				y = *(const int *) b;

	return (x > y) - (x < y);
}

/* inc_engine_calculate: every earning row of one participant. */
void
inc_engine_calculate(IncEngine *e, const char *participant_key,
					 const IncTxn *txns, int ntxns,
					 IncPropertyFn props, void *props_ctx,
					 IncEmitFn emit, void *emit_ctx)
{
	IncCalc		c;
	int			i,
				h;

	memset(&c, 0, sizeof(c));
	c.engine = e;
	c.participant_key = participant_key;
	c.txns = txns;
	c.ntxns = ntxns;
	c.props = props;
	c.props_ctx = props_ctx;
	c.emit = emit;
	c.emit_ctx = emit_ctx;
	c.touched = inc_alloc(sizeof(int) * (e->noffers + 1));
	e->gen++;
	inc_current_participant = participant_key;

	for (i = 0; i < ntxns; i++)
	{
		const IncTxn *t = &txns[i];
		const IncHookList *hooks = inc_strmap_get(e->index, t->sku_key);

		if (e->tick)
			e->tick();
		if (hooks == NULL)
			continue;
		inc_current_txn = t;
		for (h = 0; h < hooks->n; h++)
		{
			const IncHook *hook = &hooks->hooks[h];
			const IncOffer *offer = e->offers[hook->offer];
			void	   *state = OfferState(&c, hook->offer);

			switch (offer->strategy)
			{
				case INC_STANDARD:
					inc_standard_observe(&c, offer, state, hook, i);
					break;
				case INC_STEPPED:
					inc_stepped_observe(&c, offer, state, hook, i);
					break;
				case INC_STACKED:
					inc_stacked_observe(&c, offer, state, hook, i);
					break;
			}
		}
	}
	inc_current_txn = NULL;

	/* finish offers in offer order, so output order is stable */
	qsort(c.touched, c.ntouched, sizeof(int), CompareInts);
	for (i = 0; i < c.ntouched; i++)
	{
		const IncOffer *offer = e->offers[c.touched[i]];
		void	   *state = e->state[c.touched[i]];

		switch (offer->strategy)
		{
			case INC_STANDARD:
				inc_standard_finish(&c, offer, state);
				break;
			case INC_STEPPED:
				inc_stepped_finish(&c, offer, state);
				break;
			case INC_STACKED:
				inc_stacked_finish(&c, offer, state);
				break;
		}
	}
	inc_current_txn = NULL;
	inc_current_participant = NULL;
}
