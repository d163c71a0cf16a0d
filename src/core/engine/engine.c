/*
 * engine.c
 *    The calculation driver: builds the SKU index of the offers, runs one
 *    participant's transactions past the strategies, finishes and
 *    diagnoses the offers, and keeps the position for error context.
 *
 * The driver knows no strategy: every step goes through the operations
 * table of the offer's strategy (strategy.h).  A transaction costs only
 * the hooks of its own SKU, so a calculation is O(transactions x offers
 * that mention their SKU).  Offer state is per participant and created on
 * first touch; a generation counter makes "forget the last participant"
 * O(1).  The shared figures (quantities in a unit of measure, base
 * amounts, rounding) are in calc.c, the unit-of-measure tables in units.c.
 *
 * Two kinds of unit meet here: a unit of measure is a uom (IncCalc.units
 * holds their tables), a calculation unit (IncUnit: the participants
 * calculated together; IncCalc.unit, IncPosition.unit) a calc_unit.
 *
 * A forecast's projection (inc_engine_set_projection) is one pointer per
 * offer, handed to the calculation helpers (IncCalc.projection) before
 * each operation of that offer; without one nothing changes.
 *
 * An offer with program rules (IncOffer.rules.any) gets the rules'
 * operations table instead of its strategy's (rules.h): they call the
 * strategy's around their own, so the driver never branches on rules and
 * an offer without rules never reaches them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "../rules/rules.h"
#include "../strategy/strategy.h"
#include "../products/select.h"
#include "../util/jsonbuf.h"
#include "../util/strmap.h"

typedef struct IncHookList
{
	int			id;				/* the SKU's id, from 1 */
	int			n;
	int			cap;
	IncHook    *hooks;
} IncHookList;

struct IncEngine
{
	int			noffers;
	int			offers_cap;
	const IncOffer **offers;
	const IncStrategyOps **ops;	/* per offer, set by inc_engine_prepare: the
								 * rules' for an offer with rules, else its
								 * strategy's */
	IncUnits   *uoms;			/* units of measure and their conversions */
	IncProducts *products;		/* the product catalog, or NULL */
	IncStrMap  *index;			/* sku_key -> IncHookList * */
	const char **sku_keys;		/* by id - 1 */
	int			nsku_keys;
	IncHookList **hook_lists;	/* by SKU id; [0] unused */
	int32_t    *sku_uom_ids;	/* by SKU id: its uom's id, 0 for none */
	bool		sku_uoms_stale; /* a SKU's uom was set since they were made */
	const char **property_keys;
	int			nproperty_keys;
	int			property_keys_cap;
	IncTickFn	tick;
	IncDiagnosticsFn diagnostics;
	void	   *diagnostics_ctx;
	IncEnrollmentFn enrollments;
	void	   *enrollments_ctx;
	IncBasisFn	basis;
	void	   *basis_ctx;
	IncOfferIds *offer_ids;		/* per offer, made by inc_engine_prepare */
	/* incentives.exchange_rates, as added; currencies interned */
	int			nrates;
	int			rates_cap;
	struct ExchangeRow *rates;
	int			ncurrencies;
	int			currencies_cap;
	const char **currencies;
	IncProjection *projections; /* per offer, made by inc_engine_prepare */
	const IncProjection **projected;	/* per offer: its projection, or NULL */
	bool		projecting;		/* inc_engine_set_projection is on */
	const char **enrollment_offer_keys;	/* offers with enrollment "required" */
	int			nenrollment_offer_keys;
	IncPosition position;		/* see inc_engine_position */
	/* the distinct group_types of offers aggregated by group */
	int			ngroup_types;
	const char **group_types;
	int		   *type_slot;		/* per offer: 0 (no group_type) or 1 +
								 * its index in group_types */
	/* per-participant state, valid while state_gen[i] == gen */
	uint64_t	gen;
	uint64_t   *state_gen;
	void	  **state;
};

/* What the index sink's callbacks need: the engine and the offer indexed. */
typedef struct Indexing
{
	IncEngine  *engine;
	int			offer;
} Indexing;

/* inc_engine_create: an empty engine (in the current allocator). */
IncEngine *
inc_engine_create(void)
{
	IncEngine  *e = inc_alloc(sizeof(IncEngine));

	e->uoms = inc_units_create();
	e->index = inc_strmap_create();
	return e;
}

/*
 * inc_engine_set_products: the product catalog the offers' products are
 * read in (kept by pointer), before inc_engine_prepare; without one a
 * product reaches no SKU.
 */
void
inc_engine_set_products(IncEngine *e, IncProducts *products)
{
	e->products = products;
}

/* What inc_engine_product_keys collects: each product key once. */
typedef struct ProductKeys
{
	IncStrMap  *seen;
	const char **keys;
	int			n;
	int			cap;
} ProductKeys;

static void
CollectProduct(void *ctx, const IncOfferRef *ref)
{
	ProductKeys *pk = ctx;
	void	  **slot;

	if (ref->product_key == NULL)
		return;
	inc_check_interrupts();
	slot = inc_strmap_slot(pk->seen, ref->product_key);
	if (*slot != NULL)
		return;
	*slot = (void *) ref->product_key;
	if (pk->n == pk->cap)
		pk->keys = inc_grow(pk->keys, pk->n, &pk->cap, sizeof(char *), 8);
	pk->keys[pk->n++] = ref->product_key;
}

/*
 * inc_engine_product_keys: every product the offers added so far name
 * (listed or excluded), each once: the catalog the host loads for them
 * is these products and their descendants.
 */
const char *const *
inc_engine_product_keys(const IncEngine *e, int *n)
{
	ProductKeys pk = {inc_strmap_create(), NULL, 0, 0};
	int			o;

	for (o = 0; o < e->noffers; o++)
		inc_offer_references(e->offers[o], CollectProduct, &pk);
	*n = pk.n;
	return pk.keys;
}

/* inc_engine_add_offer: add a compiled offer (kept by pointer). */
void
inc_engine_add_offer(IncEngine *e, const IncOffer *offer)
{
	if (e->noffers == e->offers_cap)
		e->offers = inc_grow(e->offers, e->noffers, &e->offers_cap,
							 sizeof(IncOffer *), 16);
	e->offers[e->noffers++] = offer;
}

/*
 * inc_engine_add_offer_schedule: a shallow copy of offer with its rate
 * schedule (docs/lifecycle.md, Prospective rate changes), added as any
 * offer: offer and versions may be shared (a host's cache) and are never
 * written to.  The rows of the offer name the copy (IncRow.offer), as
 * inc_engine_offer does.  A fixed_amount offer keeps no schedule: its
 * pools never change prospectively, so every version pays the same.
 */
void
inc_engine_add_offer_schedule(IncEngine *e, const IncOffer *offer, int nversions,
							  const int32_t *effective_from,
							  const IncOffer *const *versions)
{
	IncOffer   *copy;
	IncRateVersion *schedule;
	int			i;

	if (nversions < 2 || offer->calculator == INC_FIXED_AMOUNT)
	{
		inc_engine_add_offer(e, offer);
		return;
	}
	copy = inc_alloc(sizeof(IncOffer));
	*copy = *offer;
	schedule = inc_alloc(sizeof(IncRateVersion) * nversions);
	for (i = 0; i < nversions; i++)
	{
		schedule[i].effective_from = i == 0 ? INT32_MIN : effective_from[i];
		schedule[i].offer = versions[i];
	}
	copy->nschedule = nversions;
	copy->schedule = schedule;
	inc_engine_add_offer(e, copy);
}

/* inc_engine_set_sku_uom: sku_key is measured in uom_key (copied). */
void
inc_engine_set_sku_uom(IncEngine *e, const char *sku_key, const char *uom_key)
{
	inc_units_set_sku_uom(e->uoms, sku_key, uom_key);
	e->sku_uoms_stale = true;
}

/* inc_engine_add_conversion: quantity_in_to = quantity_in_from * factor. */
void
inc_engine_add_conversion(IncEngine *e, const char *from_uom, const char *to_uom,
						  const IncDec *factor)
{
	inc_units_add_conversion(e->uoms, from_uom, to_uom, factor);
}

/* One row of incentives.exchange_rates: one from is rate to from date on. */
typedef struct ExchangeRow
{
	const char *from;			/* interned (IncEngine.currencies) */
	const char *to;
	int32_t		date;
	IncDec		rate;
} ExchangeRow;

/* Currency: the engine's copy of code, one per distinct code. */
static const char *
Currency(IncEngine *e, const char *code)
{
	int			i;

	for (i = 0; i < e->ncurrencies; i++)
		if (strcmp(e->currencies[i], code) == 0)
			return e->currencies[i];
	if (e->ncurrencies == e->currencies_cap)
		e->currencies = inc_grow(e->currencies, e->ncurrencies, &e->currencies_cap,
								 sizeof(char *), 8);
	return e->currencies[e->ncurrencies++] = inc_strdup(code);
}

/*
 * inc_engine_add_exchange_rate: keep the row (currencies interned); the
 * pairs are made by inc_engine_prepare.
 */
void
inc_engine_add_exchange_rate(IncEngine *e, const char *from, const char *to,
							 int32_t rate_date, IncDec rate)
{
	ExchangeRow *row;

	if (inc_dec_sign(&rate) <= 0)
	{
		char		day[16];

		inc_date_format(rate_date, day, sizeof(day));
		inc_fail(INC_ERR_INVALID, "exchange rate from \"%s\" to \"%s\" on %s must be > 0",
				 from, to, day);
	}
	if (e->nrates == e->rates_cap)
		e->rates = inc_grow(e->rates, e->nrates, &e->rates_cap, sizeof(ExchangeRow), 16);
	row = &e->rates[e->nrates++];
	row->from = Currency(e, from);
	row->to = Currency(e, to);
	row->date = rate_date;
	row->rate = rate;
}

/* CompareExchangeRows: by from, to (interned: by address), then date. */
static int
CompareExchangeRows(const void *a, const void *b)
{
	const ExchangeRow *x = a,
			   *y = b;

	if (x->from != y->from)
		return (uintptr_t) x->from < (uintptr_t) y->from ? -1 : 1;
	if (x->to != y->to)
		return (uintptr_t) x->to < (uintptr_t) y->to ? -1 : 1;
	return (x->date > y->date) - (x->date < y->date);
}

/* PairRows: the rows from -> to (sorted), as rows[*first .. *first + n). */
static int
PairRows(const IncEngine *e, const char *from, const char *to, int *first)
{
	int			lo = 0,
				hi = e->nrates;
	int			end;

	/* the first row not before (from, to) */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		const ExchangeRow *r = &e->rates[mid];

		if (r->from != from ? (uintptr_t) r->from < (uintptr_t) from :
			(uintptr_t) r->to < (uintptr_t) to)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	for (end = lo; end < e->nrates && e->rates[end].from == from && e->rates[end].to == to; end++)
		;
	return end - lo;
}

/*
 * ExchangePair: the steps from -> to: the dates of the direct pair's rows
 * and the inverse pair's, merged; on each, the direct row when there is
 * one, else the inverse row (calc.h, IncExchangeStep).
 */
static void
ExchangePair(const IncEngine *e, const char *from, const char *to, IncExchangePair *pair)
{
	int			d0,
				i0,
				nd = PairRows(e, from, to, &d0),
				ni = PairRows(e, to, from, &i0),
				d = 0,
				i = 0,
				n = 0;
	IncExchangeStep *steps = inc_alloc(sizeof(IncExchangeStep) * (size_t) (nd + ni + 1));

	while (d < nd || i < ni)
	{
		const ExchangeRow *direct = d < nd ? &e->rates[d0 + d] : NULL;
		const ExchangeRow *inverse = i < ni ? &e->rates[i0 + i] : NULL;
		IncExchangeStep *step = &steps[n++];

		if (direct && (inverse == NULL || direct->date <= inverse->date))
		{
			step->from = direct->date;
			step->inverse = false;
			step->rate = direct->rate;
			step->fast = inc_q_from_dec(&step->q, &direct->rate);
			/* an inverse row of the same date gives way */
			if (inverse && inverse->date == direct->date)
				i++;
			d++;
		}
		else
		{
			IncQ		q;

			step->from = inverse->date;
			step->inverse = true;
			step->rate = inverse->rate;
			step->fast = inc_q_from_dec(&q, &inverse->rate);
			step->q.num = q.den;
			step->q.den = q.num;
			i++;
		}
		/* what rows report, once: an inverse rate only where it fits */
		if (!step->inverse || (step->fast && inc_q_round(&step->q, 12, &step->reported)))
		{
			step->reported = inc_calc_exchange_reported(step);
			step->reported_ok = true;
		}
	}
	pair->from = from;
	pair->nsteps = n;
	pair->steps = steps;
}

/*
 * ExchangeTo: the pairs converting to currency to: one per other currency
 * that some row links to it, either way.
 */
static void
ExchangeTo(const IncEngine *e, const char *to, IncOfferIds *ids)
{
	IncExchangePair *pairs = inc_alloc(sizeof(IncExchangePair) * (size_t) (e->ncurrencies + 1));
	int			c;

	ids->npairs = 0;
	for (c = 0; c < e->ncurrencies; c++)
	{
		const char *from = e->currencies[c];
		int			first;

		if (from == to || (PairRows(e, from, to, &first) == 0 && PairRows(e, to, from, &first) == 0))
			continue;
		ExchangePair(e, from, to, &pairs[ids->npairs++]);
	}
	ids->pairs = pairs;
}

/*
 * PrepareExchange: each offer with a currency gets the pairs to it (made
 * once per currency, shared by the offers that have it).
 */
static void
PrepareExchange(IncEngine *e)
{
	int			o,
				k;

	if (e->nrates == 0)
		return;
	qsort(e->rates, (size_t) e->nrates, sizeof(ExchangeRow), CompareExchangeRows);
	for (o = 0; o < e->noffers; o++)
	{
		const char *currency = e->offers[o]->currency;

		if (currency == NULL)
			continue;
		currency = Currency(e, currency);
		for (k = 0; k < o; k++)
			if (e->offers[k]->currency && strcmp(e->offers[k]->currency, currency) == 0)
				break;
		if (k < o)
		{
			e->offer_ids[o].npairs = e->offer_ids[k].npairs;
			e->offer_ids[o].pairs = e->offer_ids[k].pairs;
		}
		else
			ExchangeTo(e, currency, &e->offer_ids[o]);
	}
}

/* inc_engine_set_diagnostics: report every offer's diagnostics to fn. */
void
inc_engine_set_diagnostics(IncEngine *e, IncDiagnosticsFn fn, void *ctx)
{
	e->diagnostics = fn;
	e->diagnostics_ctx = ctx;
}

/* inc_engine_set_enrollments: where the windows of "required" offers come from. */
void
inc_engine_set_enrollments(IncEngine *e, IncEnrollmentFn fn, void *ctx)
{
	e->enrollments = fn;
	e->enrollments_ctx = ctx;
}

/* inc_engine_set_basis: report every touched offer's basis to fn. */
void
inc_engine_set_basis(IncEngine *e, IncBasisFn fn, void *ctx)
{
	e->basis = fn;
	e->basis_ctx = ctx;
}

/*
 * inc_engine_set_projection: each offer's projection as of *as_of_date
 * (none for an offer whose span starts after it), or none at all.
 */
void
inc_engine_set_projection(IncEngine *e, const int32_t *as_of_date)
{
	int			o;

	e->projecting = as_of_date != NULL;
	if (as_of_date == NULL)
		return;
	for (o = 0; o < e->noffers; o++)
	{
		IncProjection *p = &e->projections[o];
		int32_t		end;

		inc_offer_span(e->offers[o], &p->from, &end);
		p->to = *as_of_date;
		p->end = end;
		inc_offer_span_days(e->offers[o], *as_of_date, &p->span_days, &p->elapsed_days);
		e->projected[o] = p->elapsed_days > 0 ? p : NULL;
	}
}

/* inc_engine_set_tick: fn is called between transactions and rows. */
void
inc_engine_set_tick(IncEngine *e, IncTickFn tick)
{
	e->tick = tick;
}

/* AddHookDates: sku_key dated from..to leads to the offer being indexed. */
static void
AddHookDates(Indexing *ix, const char *sku_key, int kind, int a, int b, int uom_id,
			 int32_t from, int32_t to)
{
	IncEngine  *e = ix->engine;
	void	  **slot = inc_strmap_slot(e->index, sku_key);
	IncHookList *l = *slot;

	if (l == NULL)
	{
		l = inc_alloc(sizeof(IncHookList));
		*slot = l;
	}
	if (l->n == l->cap)
		l->hooks = inc_grow(l->hooks, l->n, &l->cap, sizeof(IncHook), 4);
	l->hooks[l->n++] = (IncHook)
	{
		ix->offer, kind, a, b, uom_id, from, to
	};
}

/* AddHookUom: the index sink's hook_uom: AddHook, with the id of uom_key. */
static void
AddHookUom(void *ctx, const char *sku_key, int kind, int a, int b, const char *uom_key)
{
	Indexing   *ix = ctx;

	AddHookDates(ix, sku_key, kind, a, b,
				 uom_key ? inc_units_intern(ix->engine->uoms, uom_key, strlen(uom_key)) : 0,
				 INT32_MIN, INT32_MAX);
}

/* AddHook: the index sink's hook: sku_key leads to the offer being indexed. */
static void
AddHook(void *ctx, const char *sku_key, int kind, int a, int b)
{
	AddHookUom(ctx, sku_key, kind, a, b, NULL);
}

/* What a filter's or an entry's selection hooks: the hook's kind, a and b. */
typedef struct Selecting
{
	Indexing   *ix;
	int			kind;
	int			a;
	int			b;				/* a filter's; an entry's hooks take the rate */
	bool		entry;
} Selecting;

/* Selected: inc_select_filter's and inc_select_entry's IncSelectFn. */
static void
Selected(void *ctx, const char *sku_key, int32_t from, int32_t to, int rate,
		 const char *product_key)
{
	Selecting  *s = ctx;

	(void) product_key;
	AddHookDates(s->ix, sku_key, s->kind, s->a, s->entry ? rate : s->b, 0, from, to);
}

/* AddFilter: the index sink's filter: what filter selects, dated. */
static void
AddFilter(void *ctx, const IncFilter *filter, int kind, int a, int b)
{
	Selecting	s = {ctx, kind, a, b, false};

	inc_select_filter(((Indexing *) ctx)->engine->products, filter, Selected, &s);
}

/* AddEntry: the index sink's entry: what entry pays, dated, b its rate. */
static void
AddEntry(void *ctx, const IncStandardEntry *entry, int kind, int a)
{
	Selecting	s = {ctx, kind, a, 0, true};

	inc_select_entry(((Indexing *) ctx)->engine->products, entry, Selected, NULL, &s);
}

/* AddProperty: the index sink's property: a property key to load, once. */
static void
AddProperty(void *ctx, const char *property_key)
{
	IncEngine  *e = ((Indexing *) ctx)->engine;
	int			i;

	for (i = 0; i < e->nproperty_keys; i++)
		if (strcmp(e->property_keys[i], property_key) == 0)
			return;
	if (e->nproperty_keys == e->property_keys_cap)
		e->property_keys = inc_grow(e->property_keys, e->nproperty_keys,
									&e->property_keys_cap, sizeof(char *), 8);
	e->property_keys[e->nproperty_keys++] = property_key;
}

/* inc_engine_prepare: each offer's operations, the SKU index and the key lists. */
void
inc_engine_prepare(IncEngine *e)
{
	Indexing	ix = {e, 0};
	IncIndexSink sink = {AddHook, AddHookUom, AddFilter, AddEntry, AddProperty, &ix};
	uint32_t	i;
	int			o;

	e->ops = inc_alloc(sizeof(IncStrategyOps *) * (e->noffers + 1));
	e->type_slot = inc_alloc(sizeof(int) * (e->noffers + 1));
	e->group_types = inc_alloc(sizeof(char *) * (e->noffers + 1));
	e->ngroup_types = 0;
	for (o = 0; o < e->noffers; o++)
	{
		const char *type = e->offers[o]->aggregation == INC_AGGREGATE_GROUP ?
			e->offers[o]->group_type : NULL;
		int			s;

		if (type == NULL)
			continue;
		for (s = 0; s < e->ngroup_types && strcmp(e->group_types[s], type) != 0; s++)
			;
		if (s == e->ngroup_types)
			e->group_types[e->ngroup_types++] = type;
		e->type_slot[o] = s + 1;
	}
	e->enrollment_offer_keys = inc_alloc(sizeof(char *) * (e->noffers + 1));
	for (o = 0; o < e->noffers; o++)
	{
		e->ops[o] = e->offers[o]->rules.any ? &inc_rules_ops :
			inc_strategy_ops(e->offers[o]->strategy);
		ix.offer = o;
		e->ops[o]->index(e->offers[o], &sink);
		if (e->offers[o]->rules.enrollment == INC_ENROLLMENT_REQUIRED)
			e->enrollment_offer_keys[e->nenrollment_offer_keys++] = e->offers[o]->offer_key;
	}

	e->sku_keys = inc_alloc(sizeof(char *) * (e->index->count + 1));
	e->hook_lists = inc_alloc(sizeof(IncHookList *) * (e->index->count + 1));
	e->sku_uom_ids = inc_alloc(sizeof(int32_t) * (e->index->count + 1));
	for (i = 0; i <= e->index->mask; i++)
		if (e->index->entries[i].key)
		{
			IncHookList *l = e->index->entries[i].value;

			e->sku_keys[e->nsku_keys++] = e->index->entries[i].key;
			l->id = e->nsku_keys;
			e->hook_lists[l->id] = l;
		}
	e->sku_uoms_stale = true;

	/* each offer's program prices by SKU id */
	e->offer_ids = inc_alloc(sizeof(IncOfferIds) * (e->noffers + 1));
	for (o = 0; o < e->noffers; o++)
	{
		e->offer_ids[o].offer = e->offers[o];
		if (e->offers[o]->nprices > 0)
		{
			const IncDec **prices = inc_alloc(sizeof(IncDec *) * (e->nsku_keys + 1));
			int			k;

			for (k = 0; k < e->nsku_keys; k++)
				prices[k + 1] = inc_offer_price(e->offers[o], e->sku_keys[k]);
			e->offer_ids[o].prices = prices;
		}
	}
	PrepareExchange(e);

	e->state_gen = inc_alloc(sizeof(uint64_t) * (e->noffers + 1));
	e->state = inc_alloc(sizeof(void *) * (e->noffers + 1));
	e->projections = inc_alloc(sizeof(IncProjection) * (e->noffers + 1));
	e->projected = inc_alloc(sizeof(IncProjection *) * (e->noffers + 1));
}

/* inc_engine_noffers: how many offers the engine has. */
int
inc_engine_noffers(const IncEngine *e)
{
	return e->noffers;
}

/* inc_engine_offer: offer i, in the order they were added. */
const IncOffer *
inc_engine_offer(const IncEngine *e, int i)
{
	return e->offers[i];
}

/* inc_engine_sku_id: the id of the SKU named by len bytes at sku, or 0. */
int
inc_engine_sku_id(const IncEngine *e, const char *sku, size_t len)
{
	const IncHookList *l = inc_strmap_get_len(e->index, sku, len);

	return l ? l->id : 0;
}

/* inc_engine_sku_key: the name of SKU id. */
const char *
inc_engine_sku_key(const IncEngine *e, int id)
{
	return e->sku_keys[id - 1];
}

/* inc_engine_uom_id: the id of the uom named by len bytes at uom (interned). */
int
inc_engine_uom_id(IncEngine *e, const char *uom, size_t len)
{
	return inc_units_intern(e->uoms, uom, len);
}

/* inc_engine_uom_key: the name of uom id. */
const char *
inc_engine_uom_key(const IncEngine *e, int id)
{
	return inc_units_name(e->uoms, id);
}

/* RefreshSkuUoms: each indexed SKU's uom id, after the SKUs' uoms changed. */
static void
RefreshSkuUoms(IncEngine *e)
{
	int			i;

	for (i = 0; i < e->nsku_keys; i++)
	{
		const char *uom = inc_units_sku_uom(e->uoms, e->sku_keys[i]);

		e->sku_uom_ids[i + 1] = uom ? inc_units_find(e->uoms, uom) : 0;
	}
	e->sku_uoms_stale = false;
}

/* inc_engine_sku_keys: every SKU some offer mentions. */
const char *const *
inc_engine_sku_keys(const IncEngine *e, int *n)
{
	*n = e->nsku_keys;
	return e->sku_keys;
}

/* inc_engine_enrollment_offer_keys: the offers whose enrollment is "required". */
const char *const *
inc_engine_enrollment_offer_keys(const IncEngine *e, int *n)
{
	*n = e->nenrollment_offer_keys;
	return e->enrollment_offer_keys;
}

/* inc_engine_aggregates_groups: is an offer aggregated by group? */
bool
inc_engine_aggregates_groups(const IncEngine *e)
{
	int			o;

	for (o = 0; o < e->noffers; o++)
		if (e->offers[o]->aggregation == INC_AGGREGATE_GROUP)
			return true;
	return false;
}

/* inc_engine_group_levels: untyped, and the distinct group_types. */
void
inc_engine_group_levels(const IncEngine *e, IncGroupLevels *levels)
{
	int			o;

	levels->untyped = false;
	for (o = 0; o < e->noffers; o++)
		if (e->offers[o]->aggregation == INC_AGGREGATE_GROUP && e->offers[o]->group_type == NULL)
			levels->untyped = true;
	levels->ntypes = e->ngroup_types;
	levels->types = e->group_types;
}

/* inc_engine_needs_properties: does an offer read a property? */
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

/*
 * A member's part of a group offer's aggregate, for the diagnostics: its
 * transactions the offer saw under the key and what its rows pay.
 */
typedef struct Member
{
	int			participant;	/* IncUnit.keys index */
	int			transactions;
	int			last_txn;
	IncRat		amount;
} Member;

typedef struct MemberList
{
	int			n;
	int			cap;
	Member	   *items;
} MemberList;

typedef struct UnitRun UnitRun;

/* The emit context of one key's calculation. */
typedef struct KeyEmit
{
	UnitRun    *run;
	int			key;
} KeyEmit;

/* What one calculation unit's calculation keeps (inc_engine_calculate_unit). */
struct UnitRun
{
	IncEngine  *e;
	const IncUnit *calc_unit;
	int			nkeys;
	IncCalc    *calcs;			/* per key */
	KeyEmit    *emits;			/* per key: its calculation's emit_ctx */
	/* offer states, by slot offer * nkeys + key, valid while gens[slot] == gen */
	uint64_t   *gens;
	void	  **states;
	uint64_t	gen;
	int		   *touched;		/* slots begun */
	int			ntouched;
	/* rows to the host */
	IncEmitFn	emit;
	void	   *emit_ctx;
	int			offer;			/* the offer whose hook or finish runs */
	/* diagnostics only */
	MemberList *members;		/* by slot (group offers) */
	const char **jsons;			/* by slot, once diagnosed */
};

/*
 * CalcOf: key k's calculation, set up for offer o: with o's projection
 * while a forecast projects (inc_engine_set_projection).
 */
static void ReplayHooks(IncCalc *c, int first, int last, IncReplayFn visit, void *ctx);

static IncCalc *
CalcOf(UnitRun *run, int o, int k)
{
	IncCalc    *c = &run->calcs[k];

	c->ids = &run->e->offer_ids[o];
	/* the program rules admit transactions of their own: no replay */
	c->replay = c->cache && !run->e->offers[o]->rules.any ? ReplayHooks : NULL;
	if (run->e->projecting)
		c->projection = run->e->projected[o];
	return c;
}

/*
 * OfferState: the state of offer o for key k of the calculation unit,
 * begun (and recorded as touched) on first use.
 */
static void *
OfferState(UnitRun *run, int o, int k)
{
	IncEngine  *e = run->e;
	int			slot = o * run->nkeys + k;

	if (run->gens[slot] == run->gen)
		return run->states[slot];
	run->states[slot] = e->ops[o]->begin(CalcOf(run, o, k), e->offers[o]);
	run->gens[slot] = run->gen;
	run->touched[run->ntouched++] = slot;
	return run->states[slot];
}

static int
CompareInts(const void *a, const void *b)
{
	int			x = *(const int *) a,
				y = *(const int *) b;

	return (x > y) - (x < y);
}

/* MemberEntry: member p's entry in a group offer state's list, made on first use. */
static Member *
MemberEntry(MemberList *l, int p)
{
	int			i;

	for (i = l->n - 1; i >= 0; i--)
		if (l->items[i].participant == p)
			return &l->items[i];
	if (l->n == l->cap)
		l->items = inc_grow(l->items, l->n, &l->cap, sizeof(Member), 4);
	memset(&l->items[l->n], 0, sizeof(Member));
	l->items[l->n].participant = p;
	l->items[l->n].last_txn = -1;
	inc_rat_from_int(&l->items[l->n].amount, 0);
	return &l->items[l->n++];
}

/*
 * UnitRunEmit: a row of one key's calculation: counted for the diagnostics
 * of a group offer, then to the host when it wants the row's participant
 * (INC_KEY_REPORT: a group's other members' rows are made for the group's
 * figures, pools and limits, and dropped here).
 */
static void
UnitRunEmit(void *ctx, const IncRow *row)
{
	const KeyEmit *ke = ctx;
	UnitRun    *run = ke->run;

	if (run->members && row->offer->aggregation == INC_AGGREGATE_GROUP)
	{
		Member	   *m = MemberEntry(&run->members[run->offer * run->nkeys + ke->key],
								 row->txn->participant);
		IncRat		a;

		inc_rat_from_dec(&a, &row->incentive_amount);
		inc_rat_add(&m->amount, &m->amount, &a);
	}
	if (run->calc_unit->flags[row->txn->participant] & INC_KEY_REPORT)
		run->emit(run->emit_ctx, row);
}

/* HookSees: is t dated within hook's days? */
static inline bool
HookSees(const IncHook *hook, const IncTxn *t)
{
	return inc_txn_date(t) >= hook->from && inc_txn_date(t) <= hook->to;
}

/*
 * StateKeyOf: the key of offer o's state for transaction t of unit: its
 * aggregation key in an offer aggregated by group (of the offer's
 * group_type), else its participant.
 */
static inline int
StateKeyOf(const IncEngine *e, const IncUnit *unit, int o, const IncTxn *t)
{
	return e->offers[o]->aggregation == INC_AGGREGATE_GROUP ?
		inc_txn_key(unit, e->offers[o]->group_type, t) : t->participant;
}

/* SlotKey: t's aggregation key in the offers of type slot s (0: untyped). */
static inline int
SlotKey(const IncEngine *e, const IncUnit *unit, int s, const IncTxn *t)
{
	return s == 0 ? t->aggregation : inc_txn_key(unit, e->group_types[s - 1], t);
}

/*
 * ReplayHooks: IncCalc.replay, for the offer being finished (run->offer)
 * under the calculation's key: its hooks at transactions first..last whose
 * state is that key's, in observe's order.
 */
static void
ReplayHooks(IncCalc *c, int first, int last, IncReplayFn visit, void *ctx)
{
	const KeyEmit *ke = c->replay_ctx;
	IncEngine  *e = ke->run->e;
	int			o = ke->run->offer;
	int			i,
				h;

	for (i = first; i <= last; i++)
	{
		const IncTxn *t = inc_calc_txn(c, i);
		const IncHookList *hooks = t->sku_id ? e->hook_lists[t->sku_id] :
			inc_strmap_get(e->index, t->sku_key);

		if (e->tick)
			e->tick();
		if (hooks == NULL || StateKeyOf(e, ke->run->calc_unit, o, t) != ke->key)
			continue;
		for (h = 0; h < hooks->n; h++)
			if (hooks->hooks[h].offer == o && HookSees(&hooks->hooks[h], t))
				visit(ctx, &hooks->hooks[h], i);
	}
}

/*
 * GroupPart: the "aggregation" member a group offer's diagnostics get:
 * {"key", "group_key" (null outside a group), "members": [{"participant_key",
 * "transactions", "incentive_amount"}]} of the members with transactions
 * under the key, or whose diagnostics are the key's, that the host lets
 * show (INC_KEY_VISIBLE), in key order.
 */
static void
GroupPart(UnitRun *run, int slot, int k, IncJsonBuf *b)
{
	const IncUnit *calc_unit = run->calc_unit;
	MemberList *l = &run->members[slot];
	int			p,
				i;
	bool		first = true;

	inc_json_raw(b, "\"aggregation\":{");
	inc_json_key_string(b, "key", calc_unit->keys[k]);
	inc_json_raw(b, ",");
	inc_json_key_string(b, "group_key", (calc_unit->flags[k] & INC_KEY_GROUP) ? calc_unit->keys[k] : NULL);
	inc_json_raw(b, ",\"members\":[");
	for (p = 0; p < calc_unit->nkeys; p++)
	{
		const Member *m = NULL;
		IncRat		zero;
		char		count[64];

		for (i = 0; i < l->n && m == NULL; i++)
			if (l->items[i].participant == p)
				m = &l->items[i];
		/* a member reported under the key with no transaction of the offer */
		if (m == NULL && !run->calcs[k].carriers[p])
			continue;
		if (!(calc_unit->flags[p] & (INC_KEY_VISIBLE | INC_KEY_REPORT)))
			continue;
		inc_rat_from_int(&zero, 0);
		inc_json_raw(b, first ? "{" : ",{");
		first = false;
		inc_json_key_string(b, "participant_key", calc_unit->keys[p]);
		snprintf(count, sizeof(count), ",\"transactions\":%d,\"incentive_amount\":",
				 m ? m->transactions : 0);
		inc_json_raw(b, count);
		inc_json_rat(b, m ? &m->amount : &zero, 2);
		inc_json_raw(b, "}");
	}
	inc_json_raw(b, "]}");
}

/*
 * Diagnose: every offer's diagnostics for every participant p the host
 * wants (INC_KEY_REPORT), in offer order: an offer aggregated by
 * participant from p's own state, one aggregated by group from the state
 * of each aggregation key p's transactions carry (carries[p * nkeys + k];
 * p's own key when it has none), with GroupPart's "aggregation" added.
 */
static void
Diagnose(UnitRun *run, const bool *carries)
{
	IncEngine  *e = run->e;
	const IncUnit *calc_unit = run->calc_unit;
	int			o,
				p,
				k;

	for (p = 0; p < run->nkeys; p++)
	{
		if (!(calc_unit->flags[p] & INC_KEY_REPORT))
			continue;
		for (o = 0; o < e->noffers; o++)
		{
			const IncOffer *offer = e->offers[o];

			if (offer->aggregation != INC_AGGREGATE_GROUP)
			{
				e->diagnostics(e->diagnostics_ctx, offer, calc_unit->keys[p], NULL,
							   run->jsons[o * run->nkeys + p]);
				continue;
			}
			for (k = 0; k < run->nkeys; k++)
			{
				int			slot = o * run->nkeys + k;
				const char *json = run->jsons[slot];
				size_t		len;
				char	   *head;
				IncJsonBuf	b;

				if (!carries[(run->e->type_slot[o] * run->nkeys + p) * run->nkeys + k])
					continue;
				len = strlen(json);
				/* the state's object without its closing brace */
				head = inc_alloc(len + 1);
				memcpy(head, json, len);
				while (len > 0 && head[len - 1] != '}')
					len--;
				head[len > 0 ? len - 1 : 0] = '\0';
				inc_json_init(&b);
				inc_json_raw(&b, head);
				inc_json_raw(&b, strcmp(head, "{") == 0 ? "" : ",");
				GroupPart(run, slot, k, &b);
				inc_json_raw(&b, "}");
				e->diagnostics(e->diagnostics_ctx, offer, calc_unit->keys[p],
							   (calc_unit->flags[k] & INC_KEY_GROUP) ? calc_unit->keys[k] : NULL, b.data);
			}
		}
	}
}

/* inc_engine_calculate: every earning row of one participant (a calc_unit of one key). */
void
inc_engine_calculate(IncEngine *e, const char *participant_key,
					 const IncTxn *txns, int ntxns,
					 IncPropertyFn props, void *props_ctx,
					 IncEmitFn emit, void *emit_ctx)
{
	static const uint8_t flags = INC_KEY_REPORT | INC_KEY_VISIBLE;
	/* in the calculation's memory: the position points at it after a failure */
	IncUnit    *calc_unit = inc_alloc(sizeof(IncUnit));
	const char **keys = inc_alloc(sizeof(char *));

	keys[0] = participant_key;
	calc_unit->nkeys = 1;
	calc_unit->keys = keys;
	calc_unit->flags = &flags;
	calc_unit->pages = NULL;
	inc_engine_calculate_unit(e, calc_unit, txns, ntxns, props, props_ctx, emit, emit_ctx);
}

/*
 * inc_engine_calculate_unit: every earning row of a calculation unit.  One
 * pass over the transactions: each goes past the offers of its SKU, into the state
 * of the offer for its participant (an offer aggregated by participant)
 * or its aggregation key (by group); then every state begun finishes, in
 * offer order, then key order.
 */
void
inc_engine_calculate_unit(IncEngine *e, const IncUnit *calc_unit,
						  const IncTxn *txns, int ntxns,
						  IncPropertyFn props, void *props_ctx,
						  IncEmitFn emit, void *emit_ctx)
{
	UnitRun		run;
	int			nkeys = calc_unit->nkeys;
	int			nslots = e->noffers * nkeys;
	bool		filtered = false;
	int			ntypes = e->ngroup_types + 1;	/* type slots, 0: untyped */
	bool	   *relevant = NULL;	/* filtered: [s * nkeys + k], keys with a
									 * wanted transaction in type slot s */
	bool	   *carries = NULL; /* diagnostics: [(s * nkeys + p) * nkeys + k] */
	bool		diagnostics = e->diagnostics != NULL;
	IncTxnCache *cache = NULL;
	int			i,
				h,
				k;

	if (calc_unit->pages)
	{
		/* the host keeps the transactions in pages: read through a cache */
		cache = inc_txn_cache_create(calc_unit->pages);
		txns = NULL;
		ntxns = calc_unit->pages->ntxns;
	}
	if (e->sku_uoms_stale)
		RefreshSkuUoms(e);
	memset(&run, 0, sizeof(run));
	run.e = e;
	run.calc_unit = calc_unit;
	run.nkeys = nkeys;
	run.emit = emit;
	run.emit_ctx = emit_ctx;
	run.touched = inc_alloc(sizeof(int) * (nslots + 1));
	if (nkeys == 1)
	{
		/* one participant: the engine's own arrays, forgotten by generation */
		run.gens = e->state_gen;
		run.states = e->state;
		run.gen = ++e->gen;
	}
	else
	{
		run.gens = inc_alloc(sizeof(uint64_t) * (nslots + 1));
		run.states = inc_alloc(sizeof(void *) * (nslots + 1));
		run.gen = 1;
	}
	run.calcs = inc_alloc(sizeof(IncCalc) * nkeys);
	run.emits = inc_alloc(sizeof(KeyEmit) * nkeys);
	for (k = 0; k < nkeys; k++)
	{
		IncCalc    *c = &run.calcs[k];

		c->units = e->uoms;
		c->sku_uom_ids = e->sku_uom_ids;
		c->participant_key = calc_unit->keys[k];
		c->unit = calc_unit;
		c->key = k;
		c->group_key = (calc_unit->flags[k] & INC_KEY_GROUP) ? calc_unit->keys[k] : NULL;
		c->txns = txns;
		c->cache = cache;
		c->replay_ctx = &run.emits[k];
		c->props = props;
		c->props_ctx = props_ctx;
		run.emits[k].run = &run;
		run.emits[k].key = k;
		c->emit = UnitRunEmit;
		c->emit_ctx = &run.emits[k];
		c->tick = e->tick;
		/* a basis is reported whether or not the rules let rows out */
		c->diagnostics = diagnostics || e->basis != NULL;
		c->position = &e->position;
		c->enrollments = e->enrollments;
		c->enrollments_ctx = e->enrollments_ctx;
		if (!(calc_unit->flags[k] & INC_KEY_REPORT))
			filtered = true;
	}
	e->position.unit = calc_unit;
	e->position.participant_key = calc_unit->keys[0];
	e->position.txn = NULL;

	/*
	 * A host that wants some participants only: an offer aggregated by
	 * participant is calculated for those, one aggregated by group for the
	 * keys their transactions carry.
	 */
	if (filtered)
	{
		relevant = inc_alloc(sizeof(bool) * nkeys * ntypes);
		for (i = 0; i < ntxns; i++)
		{
			const IncTxn *t = inc_calc_txn(&run.calcs[0], i);
			int			s;

			if (calc_unit->flags[t->participant] & INC_KEY_REPORT)
				for (s = 0; s < ntypes; s++)
					relevant[s * nkeys + SlotKey(e, calc_unit, s, t)] = true;
		}
	}
	if (diagnostics)
	{
		run.members = inc_alloc(sizeof(MemberList) * (nslots + 1));
		run.jsons = inc_alloc(sizeof(char *) * (nslots + 1));
		carries = inc_alloc(sizeof(bool) * nkeys * nkeys * ntypes);
		for (i = 0; i < ntxns; i++)
		{
			const IncTxn *t = inc_calc_txn(&run.calcs[0], i);
			int			s;

			for (s = 0; s < ntypes; s++)
				carries[(s * nkeys + t->participant) * nkeys + SlotKey(e, calc_unit, s, t)] = true;
		}
	}

	for (i = 0; i < ntxns; i++)
	{
		const IncTxn *t = inc_calc_txn(&run.calcs[0], i);
		const IncHookList *hooks = t->sku_id ? e->hook_lists[t->sku_id] :
			inc_strmap_get(e->index, t->sku_key);

		if (e->tick)
			e->tick();
		if (hooks == NULL)
			continue;
		e->position.txn = t;
		e->position.key = t->aggregation;
		for (h = 0; h < hooks->n; h++)
		{
			const IncHook *hook = &hooks->hooks[h];
			int			o = hook->offer;
			void	   *state;

			if (!HookSees(hook, t))
				continue;
			k = StateKeyOf(e, calc_unit, o, t);
			if (filtered && !(e->offers[o]->aggregation == INC_AGGREGATE_GROUP ?
							  relevant[e->type_slot[o] * nkeys + k] :
							  (calc_unit->flags[k] & INC_KEY_REPORT) != 0))
				continue;
			if (e->offers[o]->aggregation == INC_AGGREGATE_GROUP)
				e->position.key = k;
			else
				e->position.key = t->aggregation;
			state = OfferState(&run, o, k);
			run.offer = o;
			if (run.members && e->offers[o]->aggregation == INC_AGGREGATE_GROUP)
			{
				Member	   *m = MemberEntry(&run.members[o * nkeys + k], t->participant);

				if (m->last_txn != i)
				{
					m->last_txn = i;
					m->transactions++;
				}
			}
			e->ops[o]->observe(CalcOf(&run, o, k), e->offers[o], state, hook, i);
		}
	}
	e->position.txn = NULL;

	/*
	 * with diagnostics, every offer is reported for every wanted
	 * participant, touched or not
	 */
	if (diagnostics)
		for (k = 0; k < nkeys; k++)
		{
			int			o,
						g,
						s;

			if (!(calc_unit->flags[k] & INC_KEY_REPORT))
				continue;
			for (s = 0; s < ntypes; s++)
			{
				bool	   *own = &carries[(s * nkeys + k) * nkeys];
				bool		any = false;

				for (g = 0; g < nkeys; g++)
					any = any || own[g];
				if (!any)
					own[k] = true;	/* no transactions: its own key */
			}
			for (o = 0; o < e->noffers; o++)
			{
				const bool *own = &carries[(e->type_slot[o] * nkeys + k) * nkeys];

				if (e->offers[o]->aggregation != INC_AGGREGATE_GROUP)
					(void) OfferState(&run, o, k);
				else
					for (g = 0; g < nkeys; g++)
						if (own[g])
							(void) OfferState(&run, o, g);
			}
		}

	/* the participants each key's diagnostics are reported for */
	if (diagnostics)
		for (k = 0; k < nkeys; k++)
		{
			bool	   *carriers = inc_alloc(sizeof(bool) * nkeys);
			int			p;

			int			s;

			/* of any type: a key's diagnostics name the members it carries */
			for (p = 0; p < nkeys; p++)
				for (s = 0; s < ntypes; s++)
					carriers[p] = carriers[p] || ((calc_unit->flags[p] & INC_KEY_REPORT) &&
												  carries[(s * nkeys + p) * nkeys + k]);
			run.calcs[k].carriers = carriers;
		}

	/* finish in offer order, then key order, so output order is stable */
	qsort(run.touched, run.ntouched, sizeof(int), CompareInts);
	for (i = 0; i < run.ntouched; i++)
	{
		int			slot = run.touched[i];
		int			o = slot / nkeys;
		IncCalc    *c;

		k = slot % nkeys;
		c = CalcOf(&run, o, k);
		e->position.participant_key = calc_unit->keys[k];
		run.offer = o;
		e->ops[o]->finish(c, e->offers[o], run.states[slot]);
		inc_calc_at(c, NULL);
		if (diagnostics)
		{
			run.jsons[slot] = e->ops[o]->diagnose(c, e->offers[o], run.states[slot]);
			inc_calc_at(c, NULL);
		}
		if (e->basis)
		{
			IncBasis	basis;
			bool		known = e->ops[o]->basis(c, e->offers[o], run.states[slot], &basis);

			inc_calc_at(c, NULL);
			e->basis(e->basis_ctx, e->offers[o], k, known ? &basis : NULL);
		}
	}
	if (diagnostics)
		Diagnose(&run, carries);
	e->position.participant_key = NULL;
	e->position.unit = NULL;
}

/*
 * inc_engine_clear_position: outside a calculation again (a calculation
 * that failed left its position behind; a host reusing the engine clears
 * it, since the strings it points at are gone), and without what a failed
 * forecast left on: its basis report and its projection.
 */
void
inc_engine_clear_position(IncEngine *e)
{
	e->position.participant_key = NULL;
	e->position.txn = NULL;
	e->position.unit = NULL;
	/* a failed forecast's (forecast.c): its report went with it */
	e->basis = NULL;
	e->basis_ctx = NULL;
	e->projecting = false;
}

/* inc_engine_position: the participant and transaction being calculated. */
bool
inc_engine_position(const IncEngine *e, const char **participant,
					const char **transaction_id)
{
	const IncPosition *p = &e->position;

	*participant = p->participant_key;
	*transaction_id = NULL;
	if (p->participant_key && p->txn)
	{
		/* a hidden member's transaction is named by its group only */
		if (p->unit && !(p->unit->flags[p->txn->participant] & (INC_KEY_REPORT | INC_KEY_VISIBLE)))
			*participant = p->unit->keys[p->key];
		else
		{
			*transaction_id = p->txn->transaction_id;
			if (p->unit)
				*participant = p->unit->keys[p->txn->participant];
		}
	}
	return *participant != NULL;
}

/* inc_engine_position_key: the aggregation key of the transaction being calculated. */
const char *
inc_engine_position_key(const IncEngine *e)
{
	const IncPosition *p = &e->position;

	if (p->participant_key == NULL || p->txn == NULL)
		return NULL;
	return p->unit ? p->unit->keys[p->key] : p->participant_key;
}

/* inc_offer_rates: the offer's rates, listed by its strategy. */
void
inc_offer_rates(const IncOffer *offer, IncRateFn fn, void *ctx)
{
	inc_strategy_ops(offer->strategy)->rates(offer, fn, ctx);
}
