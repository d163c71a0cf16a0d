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
	const char *product_key;	/* the listed product that reaches it, or NULL */
	int64_t		from;			/* inclusive */
	int64_t		to;				/* inclusive */
	int			rate;			/* the entry's rate index; -1: an exclusion */
	int			distance;		/* 0: a listed SKU */
	int			order;			/* its list's place among the lists */
} Item;

typedef struct Items
{
	int			n;
	int			cap;
	Item	   *items;
	int			rate;			/* of what Reached adds */
	const char *product_key;	/* of what Reached adds */
	int			order;			/* of what Reached adds */
} Items;

static void
Add(Items *s, const char *sku_key, const char *product_key, int64_t from, int64_t to,
	int rate, int distance, int order)
{
	if (s->n == s->cap)
		s->items = inc_grow(s->items, s->n, &s->cap, sizeof(Item), 16);
	s->items[s->n++] = (Item)
	{
		sku_key, product_key, from, to, rate, distance, order
	};
}

/* Reached: the catalog's IncProductReachFn, adding under s's product. */
static void
Reached(void *ctx, const char *sku_key, int32_t start, int32_t end, int distance)
{
	Items	   *s = ctx;

	Add(s, sku_key, s->product_key, start, end, s->rate, distance, s->order);
}

/* AddProducts: the windows products keys[0..n) reach, under rate. */
static void
AddProducts(IncProducts *products, Items *s, char **keys, int n, int rate)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		s->rate = rate;
		s->product_key = keys[i];
		s->order++;
		if (products != NULL)
			inc_products_reach(products, keys[i], Reached, s);
	}
}

/* AddSkus: the SKUs keys[0..n), every day, under rate. */
static void
AddSkus(Items *s, char **keys, int n, int rate)
{
	int			i;

	for (i = 0; i < n; i++)
		Add(s, keys[i], NULL, INT32_MIN, INT32_MAX, rate, 0, ++s->order);
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

/* Before: does a come before b as the item that applies (nearer, then listed first)? */
static bool
Before(const Item *a, const Item *b)
{
	if (a->distance != b->distance)
		return a->distance < b->distance;
	return a->order < b->order;
}

/*
 * Best: the item of items[0..n) that applies on day, NULL when none covers
 * it or an exclusion does; *other, another product's item as near that
 * takes another rate (a tie), else NULL.
 */
static const Item *
Best(const Item *items, int n, int64_t day, const Item **other)
{
	const Item *best = NULL;
	int			i;

	*other = NULL;
	for (i = 0; i < n; i++)
	{
		const Item *it = &items[i];

		if (day < it->from || day > it->to)
			continue;
		if (it->rate < 0)
			return NULL;
		if (best == NULL || Before(it, best))
			best = it;
	}
	if (best == NULL || best->distance == 0)
		return best;
	for (i = 0; i < n; i++)
	{
		const Item *it = &items[i];

		if (day >= it->from && day <= it->to && it->distance == best->distance &&
			it->order != best->order && (*other == NULL || Before(it, *other)))
			*other = it;
	}
	return best;
}

/* Same: do a and b (either NULL) select alike: the same rate through the same product? */
static bool
Same(const Item *a, const Item *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return a->rate == b->rate && a->order == b->order;
}

/*
 * Resolve: report each SKU's dates, rates and products from the collected
 * items, and the ties to tie (when not NULL).
 */
static void
Resolve(Items *s, IncSelectFn fn, IncSelectTieFn tie, void *ctx)
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
		const Item *open = NULL;
		const Item *open_other = NULL;
		int64_t		open_from = 0;
		int64_t		tie_from = 0;
		int			n,
					ndays = 0,
					k,
					u;

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
		/* each piece days[k] .. days[k + 1] - 1; none after the last */
		for (k = 0; k < ndays; k++)
		{
			const Item *other = NULL;
			const Item *best = k + 1 < ndays ? Best(group, n, days[k], &other) : NULL;

			if (!Same(other, open_other) || !Same(best, open))
			{
				if (tie && open_other)
					tie(ctx, group->sku_key, (int32_t) tie_from, (int32_t) (days[k] - 1),
						open->product_key, open_other->product_key, open->distance);
				open_other = other;
				tie_from = days[k];
			}
			if (Same(best, open))
				continue;
			if (open)
				fn(ctx, group->sku_key, (int32_t) open_from, (int32_t) (days[k] - 1),
				   open->rate, open->product_key);
			open = best;
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
			fn(ctx, f->sku_keys[i], INT32_MIN, INT32_MAX, 0, NULL);
		return;
	}
	AddSkus(&s, f->sku_keys, f->nskus, 0);
	AddProducts(products, &s, f->product_keys, f->nproducts, 0);
	AddSkus(&s, f->exclude_sku_keys, f->nexclude_skus, -1);
	AddProducts(products, &s, f->exclude_product_keys, f->nexclude_products, -1);
	Resolve(&s, fn, NULL, ctx);
}

void
inc_select_entry(IncProducts *products, const IncStandardEntry *entry, IncSelectFn fn,
				 IncSelectTieFn tie, void *ctx)
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
			fn(ctx, entry->rates[j].sku_key, INT32_MIN, INT32_MAX, j, NULL);
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
	Resolve(&s, fn, tie, ctx);
}
