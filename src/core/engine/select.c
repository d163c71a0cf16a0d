/*
 * select.c
 *    A filter's or a standard entry's SKUs and dates (select.h): every
 *    window the listed SKUs and products reach, and the excluded ones, are
 *    collected as items, sorted by SKU; each SKU's dates are cut where an
 *    item starts or ends, and each piece takes the best item covering it
 *    (none when an exclusion covers it).  Adjacent pieces that take the
 *    same rate are reported as one.  This runs once per offer when the
 *    engine is prepared, never per transaction.
 */
#include <stdlib.h>
#include <string.h>

#include "select.h"

typedef struct Item
{
	const char *sku_key;
	int64_t		from;			/* inclusive */
	int64_t		to;				/* inclusive */
	int			rate;			/* the entry's rate index; -1: an exclusion */
	int			distance;		/* 0: a listed SKU */
} Item;

typedef struct Items
{
	int			n;
	int			cap;
	Item	   *items;
	int			rate;			/* of what Reached adds */
} Items;

static void
Add(Items *s, const char *sku_key, int64_t from, int64_t to, int rate, int distance)
{
	if (s->n == s->cap)
		s->items = inc_grow(s->items, s->n, &s->cap, sizeof(Item), 16);
	s->items[s->n++] = (Item)
	{
		sku_key, from, to, rate, distance
	};
}

/* Reached: the catalog's IncProductReachFn, adding under s->rate. */
static void
Reached(void *ctx, const char *sku_key, int32_t start, int32_t end, int distance)
{
	Items	   *s = ctx;

	Add(s, sku_key, start, end, s->rate, distance);
}

static void
AddProducts(IncProducts *products, Items *s, char **keys, int n, int rate)
{
	int			i;

	if (products == NULL)
		return;
	s->rate = rate;
	for (i = 0; i < n; i++)
		inc_products_reach(products, keys[i], Reached, s);
}

static void
AddSkus(Items *s, char **keys, int n, int rate)
{
	int			i;

	for (i = 0; i < n; i++)
		Add(s, keys[i], INT32_MIN, INT32_MAX, rate, 0);
}

static int
CompareItems(const void *a, const void *b)
{
	return strcmp(((const Item *) a)->sku_key, ((const Item *) b)->sku_key);
}

static int
CompareDays(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/*
 * Best: the rate of the best item of items[0..n) covering day (the
 * nearest, then the first listed), -1 when none does or an exclusion
 * does; *tie when another item at the same distance, a product's, takes
 * another rate.
 */
static int
Best(const Item *items, int n, int64_t day, bool *tie)
{
	const Item *best = NULL;
	int			i;

	*tie = false;
	for (i = 0; i < n; i++)
	{
		const Item *it = &items[i];

		if (day < it->from || day > it->to)
			continue;
		if (it->rate < 0)
			return -1;
		if (best == NULL || it->distance < best->distance ||
			(it->distance == best->distance && it->rate < best->rate))
			best = it;
	}
	if (best == NULL)
		return -1;
	for (i = 0; i < n; i++)
	{
		const Item *it = &items[i];

		if (day >= it->from && day <= it->to && it->rate >= 0 && it->distance > 0 &&
			it->distance == best->distance && it->rate != best->rate)
			*tie = true;
	}
	return best->rate;
}

/* Resolve: report each SKU's dates and rates from the collected items. */
static void
Resolve(Items *s, IncSelectFn fn, void *ctx, bool *ambiguous)
{
	int64_t    *days;
	int			g,
				next;

	if (s->n == 0)
		return;
	qsort(s->items, s->n, sizeof(Item), CompareItems);
	days = inc_alloc(sizeof(int64_t) * 2 * s->n);
	for (g = 0; g < s->n; g = next)
	{
		const Item *group = &s->items[g];
		int			n,
					ndays = 0,
					k,
					u;
		int			open_rate = -1;
		int64_t		open_from = 0;

		inc_check_interrupts();
		for (next = g + 1; next < s->n && strcmp(s->items[next].sku_key, group->sku_key) == 0; next++)
			;
		n = next - g;
		for (k = 0; k < n; k++)
		{
			days[ndays++] = group[k].from;
			days[ndays++] = group[k].to + 1;
		}
		qsort(days, ndays, sizeof(int64_t), CompareDays);
		for (k = 1, u = 1; k < ndays; k++)
			if (days[k] != days[u - 1])
				days[u++] = days[k];
		ndays = u;
		/* each piece days[k] .. days[k + 1] - 1 */
		for (k = 0; k < ndays; k++)
		{
			bool		tie = false;
			int			rate = k + 1 < ndays ? Best(group, n, days[k], &tie) : -1;

			if (tie && ambiguous)
				*ambiguous = true;
			if (rate == open_rate)
				continue;
			if (open_rate >= 0)
				fn(ctx, group->sku_key, (int32_t) open_from, (int32_t) (days[k] - 1), open_rate);
			open_rate = rate;
			open_from = days[k];
		}
	}
}

void
inc_select_filter(IncProducts *products, const IncFilter *f, IncSelectFn fn, void *ctx)
{
	Items		s = {0};
	int			i;

	if (f->nproducts == 0 && f->nexclude_skus == 0 && f->nexclude_products == 0)
	{
		for (i = 0; i < f->nskus; i++)
			fn(ctx, f->sku_keys[i], INT32_MIN, INT32_MAX, 0);
		return;
	}
	AddSkus(&s, f->sku_keys, f->nskus, 0);
	AddProducts(products, &s, f->product_keys, f->nproducts, 0);
	AddSkus(&s, f->exclude_sku_keys, f->nexclude_skus, -1);
	AddProducts(products, &s, f->exclude_product_keys, f->nexclude_products, -1);
	Resolve(&s, fn, ctx, NULL);
}

void
inc_select_entry(IncProducts *products, const IncStandardEntry *entry, IncSelectFn fn,
				 void *ctx, bool *ambiguous)
{
	Items		s = {0};
	bool		by_sku = entry->nexclude_skus == 0 && entry->nexclude_products == 0;
	int			j;

	for (j = 0; j < entry->nrates; j++)
		if (entry->rates[j].product_key != NULL)
			by_sku = false;
	if (by_sku)
	{
		for (j = 0; j < entry->nrates; j++)
			fn(ctx, entry->rates[j].sku_key, INT32_MIN, INT32_MAX, j);
		return;
	}
	for (j = 0; j < entry->nrates; j++)
	{
		if (entry->rates[j].sku_key != NULL)
			AddSkus(&s, &entry->rates[j].sku_key, 1, j);
		else
			AddProducts(products, &s, &entry->rates[j].product_key, 1, j);
	}
	AddSkus(&s, entry->exclude_sku_keys, entry->nexclude_skus, -1);
	AddProducts(products, &s, entry->exclude_product_keys, entry->nexclude_products, -1);
	Resolve(&s, fn, ctx, ambiguous);
}
