/*
 * calc_load.h
 *    What a calculation reads besides transactions: the engine (offers,
 *    SKU units, unit conversions; from the per-backend cache when it
 *    holds one for this snapshot, engine_cache.h) and the property values
 *    the offers use.  Every read is a plan prepared once per backend.
 */
#ifndef INC_CALC_LOAD_H
#define INC_CALC_LOAD_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "core/engine/engine.h"

/* The engine of a call and where it lives. */
typedef struct CalcEngine
{
	IncEngine  *engine;
	MemoryContext context;		/* the engine's memory (units interned here) */
	void	  **host;			/* a slot for the caller's per-engine data */
} CalcEngine;

/*
 * pg_calc_engine: the engine of the offers named by offer_keys (NULL: all;
 * an unknown key is an error), prepared, with the units of its SKUs and
 * the conversions: the cached one when it fits this call, else built (in
 * a context under the current one, kept in the cache when allowed).  With
 * as_of, the offers are the versions valid at *as_of
 * (incentives.offer_versions; docs/lifecycle.md, Offer versions and as_of),
 * and the engine is always built and never cached.
 */
extern void pg_calc_engine(ArrayType *offer_keys, const TimestampTz *as_of, CalcEngine *out);

/*
 * pg_calc_products: the product catalog of products keys[0..n) and their
 * descendants, in context; NULL before the declarations have the product
 * tables.  SPI must be connected.
 */
extern IncProducts *pg_calc_products(const char *const *keys, int n, MemoryContext context);

typedef struct CalcProperties CalcProperties;

/*
 * pg_calc_properties: the call's properties object and the stored values
 * (of the n participants, their groups included, or of everyone when
 * NULL) of the property keys engine's offers use; in the current memory
 * context.
 */
extern CalcProperties *pg_calc_properties(IncEngine *engine, Jsonb *properties,
										  const char *const *participants, int n);

/*
 * pg_calc_properties_hidden: add the stored values of n keys the caller
 * cannot see, read as the table's owner (the members and groups of a
 * group it sees part of: txn_source_hidden_keys).
 */
extern void pg_calc_properties_hidden(CalcProperties *props, IncEngine *engine,
									  const char *const *keys, int n);

/* pg_calc_property: an IncPropertyFn over CalcProperties (the call's value first). */
extern IncPropStatus pg_calc_property(void *ctx, const char *participant_key,
									  const char *property_key, IncDec *value);

/* pg_calc_tick: the engine's tick: CHECK_FOR_INTERRUPTS(). */
extern void pg_calc_tick(void);

/*
 * pg_calc_error_context: error context callback while an engine (arg)
 * calculates: "calculating transaction ... of participant ..." (nothing
 * outside a calculation).
 */
extern void pg_calc_error_context(void *engine);

#endif							/* INC_CALC_LOAD_H */
