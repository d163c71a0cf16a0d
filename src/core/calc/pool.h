/*
 * pool.h
 *    Fixed pools shared penny-exactly (docs/reference.md, Fixed pools).
 *    Used by the strategies whose fixed_amount calculator pays a pool:
 *    standard (a pool per entry and SKU) and stepped (the tier's value).
 */
#ifndef INC_POOL_H
#define INC_POOL_H

#include "calc.h"

/*
 * inc_allocate_pool: share pool over txns (indexes into c->txns, in any
 * order: they are sorted by transaction_id here, in place) in proportion
 * to their base amounts, emitting one row each with the given rate key
 * and measure; no rows when the bases
 * sum to <= 0.  When paid is not NULL, the reported incentive amounts are
 * added to it.
 */
extern void inc_allocate_pool(IncCalc *c, const IncOffer *offer, const IncIndexList *txns,
							  const IncDec *pool, const char *rate_key,
							  const char *rate_measure, IncRat *paid);

#endif							/* INC_POOL_H */
