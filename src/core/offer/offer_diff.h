/*
 * offer_diff.h
 *    How a new document of an offer differs from the one before it: the
 *    test that tells a prospective rate change from a retrospective one
 *    (docs/lifecycle.md, Prospective rate changes).
 *
 * The rate values are the fields a prospective change may set: rate of a
 * standard entry's rates[], value of a stepped tier (incentive.rates[]),
 * rate of a stacked set's rates[] (incentive.sku_sets[].rates[]).  Under
 * the fixed_amount calculator those are pools, not rates.  Annotations are
 * label, description and name in any object, and the offer's metadata and
 * settlement (which changes no figure of the calculation).
 */
#ifndef INC_OFFER_DIFF_H
#define INC_OFFER_DIFF_H

#include "offer.h"

typedef enum IncOfferDifference
{
	INC_DIFF_SAME = 0,			/* equal: numbers by value, the rest exactly */
	INC_DIFF_ANNOTATIONS,		/* only annotations differ */
	INC_DIFF_RATES,				/* rate values differ (annotations may too) */
	INC_DIFF_POOL,				/* a fixed_amount pool differs, nothing else
								 * but rates and annotations */
	INC_DIFF_STRUCTURE			/* anything else differs */
} IncOfferDifference;

#define INC_NDIFFERENCES 5

/* Indexed by IncOfferDifference: same, annotations, rates, pool, structure. */
extern const char *const inc_offer_difference_names[INC_NDIFFERENCES];

/*
 * inc_offer_difference: compare the documents old_json and new_json (JSON
 * text, old_len and new_len bytes).  path (cap bytes) gets where the
 * verdict comes from, as the parser's messages write paths: the first
 * field of another kind that differs (structure; "" when the documents
 * differ at the top, one not an object), else the first pool or rate
 * value that differs, else "".  Text that is not JSON fails the parse
 * with err filled and returns INC_DIFF_STRUCTURE.  The parsers hold
 * json-c memory while it runs and are released on return (a host whose
 * allocator unwinds releases them on its cleanup path too).
 */
extern IncOfferDifference inc_offer_difference(IncOfferParser *old_parser,
											   IncOfferParser *new_parser,
											   const char *old_json, size_t old_len,
											   const char *new_json, size_t new_len,
											   char *path, size_t cap,
											   IncOfferError *err);

#endif							/* INC_OFFER_DIFF_H */
