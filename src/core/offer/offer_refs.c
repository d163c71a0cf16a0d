/*
 * offer_refs.c
 *    What an offer reads (offer.h, inc_offer_references): every SKU key
 *    with its role, every transaction_type and every period, each at the
 *    JSON path of the document it is written at.  incentives.program_skus
 *    counts the transactions of each SKU; incentives.offer_warnings checks
 *    each against the data (docs/reference.md, Checking a program book).
 */
#include <stdio.h>
#include <string.h>

#include "offer.h"

/* Room for a path: prefixes the walk writes and a few indexes. */
#define REF_PATH_LEN 160

typedef struct RefWalk
{
	const IncOffer *offer;
	IncOfferRefFn fn;
	void	   *ctx;
} RefWalk;

static void
Emit(RefWalk *w, IncRefKind kind, const char *path, const char *role,
	 const char *sku_key, const char *transaction_type, int period,
	 const char *from_uom, bool per_unit)
{
	IncOfferRef ref;

	ref.kind = kind;
	ref.path = path;
	ref.role = role;
	ref.sku_key = sku_key;
	ref.transaction_type = transaction_type;
	ref.period = period >= 0 ? &w->offer->periods[period] : NULL;
	ref.from_uom = from_uom;
	ref.per_unit = per_unit;
	w->fn(w->ctx, &ref);
}

/* The filters at prefix (e.g. "incentive.filters"): their types and SKUs. */
static void
Filters(RefWalk *w, const char *prefix, const IncFilter *filters, int n,
		const char *role, bool per_unit)
{
	char		path[REF_PATH_LEN];
	int			i,
				j;

	for (i = 0; i < n; i++)
	{
		const IncFilter *f = &filters[i];

		snprintf(path, sizeof(path), "%s[%d].transaction_type", prefix, i);
		Emit(w, INC_REF_TRANSACTION_TYPE, path, role, NULL, f->transaction_type,
			 f->period, NULL, false);
		for (j = 0; j < f->nskus; j++)
		{
			snprintf(path, sizeof(path), "%s[%d].sku_keys[%d]", prefix, i, j);
			Emit(w, INC_REF_SKU, path, role, f->sku_keys[j], f->transaction_type,
				 f->period, NULL, per_unit);
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
			snprintf(path, sizeof(path), "incentives[%d].rates[%d].sku_key", i, j);
			Emit(w, INC_REF_SKU, path, "earning", e->rates[j].sku_key,
				 e->transaction_type, e->period, NULL, per_unit);
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
	RefWalk		w = {offer, fn, ctx};
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
	}
}
