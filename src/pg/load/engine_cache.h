/*
 * engine_cache.h
 *    The engine of the last calculation, kept per backend for the next
 *    one that sees the same data: a thousand per-participant calls in one
 *    statement build it once, in its own memory context under
 *    CacheMemoryContext.
 */
#ifndef INC_ENGINE_CACHE_H
#define INC_ENGINE_CACHE_H

#include "postgres.h"

#include "core/engine/engine.h"

/* The cached engine and what the calling code keeps beside it. */
typedef struct EngineEntry
{
	MemoryContext context;		/* the engine and host data live here */
	IncEngine  *engine;
	void	   *host;			/* the caller's own per-engine data */
} EngineEntry;

/* pg_engine_cache_init: register the invalidation callback (from _PG_init). */
extern void pg_engine_cache_init(void);

/*
 * pg_engine_cache_usable: may this call be served from the cache, or cache
 * its engine?  False in a serializable transaction (its reads must take
 * their predicate locks) and when the reference tables have row-level
 * security.
 */
extern bool pg_engine_cache_usable(void);

/*
 * pg_engine_cache_lookup: the cached engine for this call, or NULL.  An
 * engine holds what a calculation reads besides transactions and
 * properties: the compiled offers, the SKUs' units of measure and their
 * conversions.  It is reused only by a call that would read exactly the
 * same rows:
 *   - the same snapshot (xmin, xmax, in-progress transactions, command
 *     id): every other transaction's change is either seen by both or by
 *     neither;
 *   - no change by this backend since: statement-level triggers on
 *     incentives.offers, skus and uom_conversions send a relcache
 *     invalidation (incentives_internal.reference_changed), which this
 *     backend receives at its next command (and at a rolled-back
 *     subtransaction), and the callback drops the engine -- as pg_cron
 *     drops its job cache;
 *   - the same role, the same offer_keys, no as_of, and none of the three
 *     tables under row-level security (whose policies may depend on more
 *     than the snapshot and the role); never in a serializable
 *     transaction, whose reads must take their predicate locks.
 */
extern EngineEntry *pg_engine_cache_lookup(const char *offer_keys);

/*
 * pg_engine_cache_store: keep engine, built in context (which moves under
 * CacheMemoryContext), for calls in the current snapshot; replaces any
 * engine kept before.
 */
extern EngineEntry *pg_engine_cache_store(MemoryContext context, IncEngine *engine,
										  const char *offer_keys);

/* pg_engine_cache_reset: forget the cached engine. */
extern void pg_engine_cache_reset(void);

#endif							/* INC_ENGINE_CACHE_H */
