/*
 * offer_cache.c
 *    Compiled offers kept per backend, keyed by the exact bytes of their
 *    jsonb documents, in a memory context under TopMemoryContext.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/memutils.h"

#include "pg/load/engine_cache.h"
#include "pg/load/offer_load.h"

#define OFFER_CACHE_MAX 4096

typedef struct CachedOffer
{
	uint32		hash;
	Size		len;
	char	   *bytes;			/* a copy of the jsonb varlena */
	IncOffer   *offer;
} CachedOffer;

static MemoryContext cache_context = NULL;
static CachedOffer *entries = NULL;
static int	nentries = 0;

static void
ResetCache(void)
{
	if (cache_context == NULL)
		cache_context = AllocSetContextCreate(TopMemoryContext, "incentives offer cache",
											  ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(cache_context);
	entries = MemoryContextAllocZero(cache_context, sizeof(CachedOffer) * OFFER_CACHE_MAX);
	nentries = 0;
}

/*
 * pg_offer_cache_prune: before a calculation, empty a cache over half
 * full.  The cache is emptied whole only here, so offers handed out stay
 * valid for the whole call; when it fills up during one call, further
 * offers are compiled for that call alone.
 */
void
pg_offer_cache_prune(void)
{
	if (cache_context == NULL || nentries > OFFER_CACHE_MAX / 2)
	{
		pg_engine_cache_reset();	/* a cached engine holds our offers */
		ResetCache();
	}
}

/*
 * pg_offer_cached: the compiled offer of document, from the cache or
 * compiled now (and kept); NULL with err filled when it is not valid.  The
 * offer belongs to the cache (or, when the cache is full, to the current
 * memory context): the caller must not free or change it.
 *
 * Every calculation reads the offers it needs from incentives.offers in
 * its own snapshot; only turning a document into an IncOffer (jsonb to
 * text, json-c, validation) is skipped when the very same document bytes
 * were compiled before.  Equal bytes are the same document, so a hit can
 * never be stale: an edited offer has other bytes and is compiled afresh.
 * The engine never modifies compiled offers.
 */
const IncOffer *
pg_offer_cached(Jsonb *document, IncOfferError *err)
{
	Size		len = VARSIZE(document);
	uint32		hash = hash_bytes((const unsigned char *) document, (int) len);
	MemoryContext old,
				scratch;
	IncOffer   *offer;
	CachedOffer *entry;
	int			i;

	if (cache_context == NULL)
		ResetCache();
	for (i = 0; i < nentries; i++)
	{
		if (entries[i].hash == hash && entries[i].len == len &&
			memcmp(entries[i].bytes, document, len) == 0)
			return entries[i].offer;
	}
	if (nentries == OFFER_CACHE_MAX)
		return pg_offer_from_jsonb(document, err);

	/* compile in a context of its own, kept only for a valid offer */
	scratch = AllocSetContextCreate(cache_context, "incentives cached offer",
									ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(scratch);
	offer = pg_offer_from_jsonb(document, err);
	if (offer)
	{
		entry = &entries[nentries];
		entry->bytes = palloc(len);
		memcpy(entry->bytes, document, len);
		entry->hash = hash;
		entry->len = len;
		entry->offer = offer;
		nentries++;
	}
	MemoryContextSwitchTo(old);
	if (offer == NULL)
		MemoryContextDelete(scratch);
	return offer;
}
