/*
 * offer_refs.c
 *    What an offer reads (offer.h, inc_offer_references): every SKU key
 *    with its role, every product key and exclusion, every
 *    transaction_type and every period, each at the JSON path of the
 *    document it is written at.  incentives.program_skus
 *    counts the transactions of each SKU; incentives.offer_warnings checks
 *    each against the data (docs/reference.md, Checking a program book).
 */
#include <stdio.h>
#include <string.h>

#include "offer.h"
#include "../products/select.h"

/* Room for a path: prefixes the walk writes and a few indexes. */
#define REF_PATH_LEN 160

typedef struct RefWalk
{
	const IncOffer *offer;
	IncProducts *products;		/* NULL: SKUs through products are not read */
	IncOfferRefFn fn;
	void	   *ctx;
} RefWalk;

static void
Emit(RefWalk *w, IncRefKind kind, const char *path, const char *role,
	 const char *key, const char *transaction_type, int period,
	 const char *from_uom, bool per_unit)
{
	IncOfferRef ref;
	bool		product = kind == INC_REF_PRODUCT || kind == INC_REF_EXCLUDED_PRODUCT;

	ref.kind = kind;
	ref.path = path;
	ref.role = role;
	ref.sku_key = product ? NULL : key;
	ref.product_key = product ? key : NULL;
	ref.transaction_type = transaction_type;
	ref.period = period >= 0 ? &w->offer->periods[period] : NULL;
	ref.from_uom = from_uom;
	ref.per_unit = per_unit;
	ref.from = ref.period ? ref.period->start_date : 0;
	ref.to = ref.period ? ref.period->end_date : 0;
	w->fn(w->ctx, &ref);
}

/* What a selection of a filter or entry is reported as (Through). */
typedef struct Selecting
{
	RefWalk    *w;
	const char *prefix;			/* the filter's or entry's path */
	const char *role;
	const char *transaction_type;
	int			period;
	bool		per_unit;
	const IncFilter *filter;	/* a filter's, else NULL */
	const IncStandardEntry *entry;	/* an entry's, else NULL */
} Selecting;

/*
 * Through: inc_select_*'s IncSelectFn: a SKU read through a product, on the
 * days of the period it is selected, at the path of that product.
 */
static void
Through(void *ctx, const char *sku_key, int32_t from, int32_t to, int rate,
		const char *product_key)
{
	Selecting  *s = ctx;
	const IncPeriod *period = &s->w->offer->periods[s->period];
	char		path[REF_PATH_LEN];
	IncOfferRef ref;
	int			j;

	if (product_key == NULL)
		return;
	if (from < period->start_date)
		from = period->start_date;
	if (to > period->end_date)
		to = period->end_date;
	if (from > to)
		return;
	if (s->entry)
		snprintf(path, sizeof(path), "%s.rates[%d].product_key", s->prefix, rate);
	else
	{
		for (j = 0; j < s->filter->nproducts - 1; j++)
			if (strcmp(s->filter->product_keys[j], product_key) == 0)
				break;
		snprintf(path, sizeof(path), "%s.product_keys[%d]", s->prefix, j);
	}
	ref.kind = INC_REF_SKU;
	ref.path = path;
	ref.role = s->role;
	ref.sku_key = sku_key;
	ref.product_key = product_key;
	ref.transaction_type = s->transaction_type;
	ref.period = period;
	ref.from_uom = NULL;
	ref.per_unit = s->per_unit;
	ref.from = from;
	ref.to = to;
	s->w->fn(s->w->ctx, &ref);
}

/* The keys of one list at prefix.name[j], as references of kind. */
static void
Keys(RefWalk *w, IncRefKind kind, const char *prefix, const char *name, char **keys, int n,
	 const char *role, const char *transaction_type, int period, bool per_unit)
{
	char		path[REF_PATH_LEN];
	int			j;

	for (j = 0; j < n; j++)
	{
		snprintf(path, sizeof(path), "%s.%s[%d]", prefix, name, j);
		Emit(w, kind, path, role, keys[j], transaction_type, period, NULL, per_unit);
	}
}

/*
 * The filters at prefix (e.g. "incentive.filters"): their types, SKUs,
 * products and exclusions.
 */
static void
Filters(RefWalk *w, const char *prefix, const IncFilter *filters, int n,
		const char *role, bool per_unit)
{
	char		path[REF_PATH_LEN];
	int			i;

	for (i = 0; i < n; i++)
	{
		const IncFilter *f = &filters[i];

		snprintf(path, sizeof(path), "%s[%d].transaction_type", prefix, i);
		Emit(w, INC_REF_TRANSACTION_TYPE, path, role, NULL, f->transaction_type,
			 f->period, NULL, false);
		snprintf(path, sizeof(path), "%s[%d]", prefix, i);
		Keys(w, INC_REF_SKU, path, "sku_keys", f->sku_keys, f->nskus, role,
			 f->transaction_type, f->period, per_unit);
		Keys(w, INC_REF_PRODUCT, path, "product_keys", f->product_keys, f->nproducts, role,
			 f->transaction_type, f->period, per_unit);
		Keys(w, INC_REF_EXCLUDED_SKU, path, "exclude_sku_keys", f->exclude_sku_keys,
			 f->nexclude_skus, role, f->transaction_type, f->period, false);
		Keys(w, INC_REF_EXCLUDED_PRODUCT, path, "exclude_product_keys",
			 f->exclude_product_keys, f->nexclude_products, role, f->transaction_type,
			 f->period, false);
		if (w->products && f->nproducts > 0)
		{
			Selecting	s = {w, path, role, f->transaction_type, f->period, per_unit, f, NULL};

			inc_select_filter(w->products, f, Through, &s);
		}
	}
}

static void
Standard(RefWalk *w)
{
	const IncOffer *offer = w->offer;
	bool		per_unit = offer->calculator == INC_DOLLARS_PER_UNIT;
	char		path[REF_PATH_LEN];
	int			i,
				j;

	for (i = 0; i < offer->nentries; i++)
	{
		const IncStandardEntry *e = &offer->entries[i];

		snprintf(path, sizeof(path), "incentives[%d].transaction_type", i);
		Emit(w, INC_REF_TRANSACTION_TYPE, path, "earning", NULL, e->transaction_type,
			 e->period, NULL, false);
		for (j = 0; j < e->nrates; j++)
		{
			bool		product = e->rates[j].product_key != NULL;

			snprintf(path, sizeof(path), "incentives[%d].rates[%d].%s", i, j,
					 product ? "product_key" : "sku_key");
			Emit(w, product ? INC_REF_PRODUCT : INC_REF_SKU, path, "earning",
				 product ? e->rates[j].product_key : e->rates[j].sku_key,
				 e->transaction_type, e->period, NULL, per_unit);
		}
		snprintf(path, sizeof(path), "incentives[%d]", i);
		Keys(w, INC_REF_EXCLUDED_SKU, path, "exclude_sku_keys", e->exclude_sku_keys,
			 e->nexclude_skus, "earning", e->transaction_type, e->period, false);
		Keys(w, INC_REF_EXCLUDED_PRODUCT, path, "exclude_product_keys",
			 e->exclude_product_keys, e->nexclude_products, "earning", e->transaction_type,
			 e->period, false);
		if (w->products)
		{
			Selecting	s = {w, path, "earning", e->transaction_type, e->period, per_unit, NULL, e};

			inc_select_entry(w->products, e, Through, NULL, &s);
		}
	}
}

static void
Stepped(RefWalk *w)
{
	const IncStepped *st = &w->offer->stepped;

	Filters(w, "incentive.filters", st->filters, st->nfilters, "earning",
			w->offer->calculator == INC_DOLLARS_PER_UNIT);
	Filters(w, "incentive.threshold_definition.filters", st->threshold_filters,
			st->nthreshold_filters, "threshold", false);
}

static void
Stacked(RefWalk *w)
{
	const IncStacked *sk = &w->offer->stacked;
	char		path[REF_PATH_LEN];
	char		role[REF_PATH_LEN];
	int			i,
				j;

	for (i = 0; i < sk->nsets; i++)
	{
		const IncSkuSet *set = &sk->sets[i];

		snprintf(path, sizeof(path), "incentive.sku_sets[%d].transaction_type", i);
		Emit(w, INC_REF_TRANSACTION_TYPE, path, "conversion", NULL, set->transaction_type,
			 set->period, NULL, false);
		for (j = 0; j < set->nconversions; j++)
		{
			snprintf(path, sizeof(path), "incentive.sku_sets[%d].conversion.rates[%d].sku_key", i, j);
			Emit(w, INC_REF_SKU, path, "conversion", set->conversions[j].sku_key,
				 set->transaction_type, set->period, set->conversions[j].from_uom, false);
		}
		snprintf(role, sizeof(role), "set:%s", set->key);
		for (j = 0; j < set->nrates; j++)
		{
			snprintf(path, sizeof(path), "incentive.sku_sets[%d].rates[%d].sku_key", i, j);
			Emit(w, INC_REF_SKU, path, role, set->rates[j].sku_key,
				 set->transaction_type, set->period, NULL, false);
		}
	}
}

void
inc_offer_references(const IncOffer *offer, IncOfferRefFn fn, void *ctx)
{
	inc_offer_references_through(offer, NULL, fn, ctx);
}

void
inc_offer_references_through(const IncOffer *offer, IncProducts *products,
							 IncOfferRefFn fn, void *ctx)
{
	RefWalk		w = {offer, products, fn, ctx};
	char		path[REF_PATH_LEN];
	int			i,
				k;

	for (i = 0; i < offer->nperiods; i++)
	{
		snprintf(path, sizeof(path), "periods[%d]", i);
		Emit(&w, INC_REF_PERIOD, path, NULL, NULL, NULL, i, NULL, false);
	}
	/* prices are kept sorted by SKU: written in the document's order */
	for (k = 0; k < offer->nprices; k++)
		for (i = 0; i < offer->nprices; i++)
			if (offer->prices[i].index == k)
			{
				snprintf(path, sizeof(path), "prices[%d].sku_key", k);
				Emit(&w, INC_REF_SKU, path, "price", offer->prices[i].sku_key, NULL, -1,
					 NULL, false);
			}
	switch (offer->strategy)
	{
		case INC_STANDARD:
			Standard(&w);
			break;
		case INC_STEPPED:
			Stepped(&w);
			break;
		case INC_STACKED:
			Stacked(&w);
			break;
	}
	for (i = 0; i < offer->rules.nrequirements; i++)
	{
		const IncRequirement *r = &offer->rules.requirements[i];

		snprintf(path, sizeof(path), "requirements[%d].filters", i);
		Filters(&w, path, r->filters, r->nfilters, "requirement", false);
		/* distinct_products: the products it counts (no period of their own) */
		snprintf(path, sizeof(path), "requirements[%d]", i);
		Keys(&w, INC_REF_PRODUCT, path, "product_keys", r->product_keys, r->nproducts,
			 "requirement", NULL, -1, false);
	}
}
