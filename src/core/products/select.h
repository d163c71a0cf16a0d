/*
 * select.h
 *    What a filter or a standard entry selects, SKU by SKU and date by
 *    date, once its products are resolved through the catalog
 *    (docs/reference.md, Products).  The engine turns each answer into a
 *    hook valid from..to, so a transaction costs what it costs for an
 *    offer that lists its SKU.
 */
#ifndef INC_SELECT_H
#define INC_SELECT_H

#include "../offer/offer.h"
#include "products.h"

/*
 * sku_key is selected from from to to (days since 2000-01-01, both
 * inclusive; INT32_MIN and INT32_MAX open); rate is the index of the
 * entry's rate it takes there (0 for a filter); product_key the listed
 * product it is selected through (the nearest, the first listed of two as
 * near), NULL when it is listed itself.
 */
typedef void (*IncSelectFn) (void *ctx, const char *sku_key, int32_t from, int32_t to,
							 int rate, const char *product_key);

/*
 * A tie in a standard entry: from from to to, sku_key is in the listed
 * products taken (whose rate applies, listed first) and other at the same
 * nearest distance.
 */
typedef void (*IncSelectTieFn) (void *ctx, const char *sku_key, int32_t from, int32_t to,
								const char *taken, const char *other, int distance);

/*
 * inc_select_filter: the SKUs and dates f selects: listed or in a listed
 * product, and neither excluded nor in an excluded product on the day.  A
 * filter of SKUs alone selects each listed SKU on every day, as written.
 * products may be NULL (no catalog: a product reaches nothing).
 */
extern void inc_select_filter(IncProducts *products, const IncFilter *f,
							  IncSelectFn fn, void *ctx);

/*
 * inc_select_entry: the SKUs and dates a standard entry pays, and the rate
 * each takes: its own SKU's rate when listed, else the rate of the listed
 * product nearest to it on the day (the one listed first at the same
 * distance); nothing on a day it is excluded.  tie (when not NULL) hears
 * of every piece of days where two listed products are as near.
 */
extern void inc_select_entry(IncProducts *products, const IncStandardEntry *entry,
							 IncSelectFn fn, IncSelectTieFn tie, void *ctx);

#endif							/* INC_SELECT_H */
