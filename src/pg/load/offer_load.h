/*
 * offer_load.h
 *    Offer documents as compiled offers: parsed from jsonb (offer_load.c)
 *    and kept per backend by the bytes of their document (offer_cache.c).
 */
#ifndef INC_PG_OFFER_LOAD_H
#define INC_PG_OFFER_LOAD_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "core/offer/offer.h"

/* offer_load.c */
extern IncOffer *pg_offer_from_jsonb(Jsonb *document, IncOfferError *err);
extern IncOffer *pg_offer_from_jsonb_checked(Jsonb *document, const IncOfferChecks *checks,
											 IncOfferError *err);

/* offer_cache.c */
extern void pg_offer_cache_prune(void);
extern const IncOffer *pg_offer_cached(Jsonb *document, IncOfferError *err);

#endif							/* INC_PG_OFFER_LOAD_H */
