/*
 * engine_cache.c
 *    One engine kept per backend for calls that see the same data (see
 *    engine_cache.h), and the trigger that tells a backend the reference
 *    data changed.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "pg/load/engine_cache.h"

/* The snapshot an engine was built in (what decides row visibility). */
typedef struct SnapshotKey
{
	TransactionId xmin;
	TransactionId xmax;
	uint32		xcnt;
	TransactionId *xip;
	int32		subxcnt;
	TransactionId *subxip;
	bool		suboverflowed;
	bool		takenDuringRecovery;
	CommandId	curcid;
} SnapshotKey;

typedef struct Cached
{
	EngineEntry entry;
	Oid			userid;
	char	   *offer_keys;		/* NULL: every offer */
	SnapshotKey snapshot;
	bool		stale;			/* the reference data changed: never handed out again */
} Cached;

static Cached *cached = NULL;

/* The reference tables, looked up once per backend (InvalidOid: not yet). */
static const char *const reference_tables[] = {
	"offers", "skus", "uom_conversions", "products", "sku_products",
	"exchange_rates"
};
static Oid	reference_oids[lengthof(reference_tables)];

/* pg_engine_cache_reset: forget the cached engine. */
void
pg_engine_cache_reset(void)
{
	if (cached)
	{
		MemoryContextDelete(cached->entry.context);	/* cached lives in it */
		cached = NULL;
	}
}

/*
 * RelcacheChanged: a relcache invalidation; the engine marked stale for
 * ours.  It is not freed here: an invalidation arrives whenever the
 * backend takes a lock, in the middle of a calculation that uses the
 * engine (an ANALYZE of incentives.offers by autovacuum is one).  The next
 * call's lookup frees it.
 */
static void
RelcacheChanged(Datum arg, Oid relid)
{
	int			i;

	if (cached == NULL)
		return;
	if (relid == InvalidOid)
	{
		cached->stale = true;
		return;
	}
	for (i = 0; i < (int) lengthof(reference_oids); i++)
		if (reference_oids[i] == relid)
		{
			cached->stale = true;
			return;
		}
}

/* pg_engine_cache_init: register the relcache callback. */
void
pg_engine_cache_init(void)
{
	CacheRegisterRelcacheCallback(RelcacheChanged, (Datum) 0);
}

/*
 * LookupTables: the OIDs of the reference tables (InvalidOid for one the
 * declarations do not have yet: the product tables and the exchange rates
 * before 0.5.0); false
 * without the schema.
 */
static bool
LookupTables(void)
{
	Oid			nsp = get_namespace_oid("incentives", true);
	int			i;

	if (!OidIsValid(nsp))
		return false;
	for (i = 0; i < (int) lengthof(reference_tables); i++)
		reference_oids[i] = get_relname_relid(reference_tables[i], nsp);
	return true;
}

/* pg_engine_cache_usable: no row-level security on the reference tables. */
bool
pg_engine_cache_usable(void)
{
	int			i;

	/* a serializable read must take its predicate locks on these tables */
	if (IsolationIsSerializable() || !LookupTables())
		return false;
	for (i = 0; i < (int) lengthof(reference_oids); i++)
	{
		HeapTuple	tuple;
		bool		rls;

		if (!OidIsValid(reference_oids[i]))
			continue;
		tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(reference_oids[i]));
		if (!HeapTupleIsValid(tuple))
			return false;
		rls = ((Form_pg_class) GETSTRUCT(tuple))->relrowsecurity;
		ReleaseSysCache(tuple);
		if (rls)
			return false;
	}
	return true;
}

/* SameSnapshot: does snapshot s decide visibility as key does? */
static bool
SameSnapshot(const SnapshotKey *key, Snapshot s)
{
	return s != NULL &&
		s->snapshot_type == SNAPSHOT_MVCC &&
		key->xmin == s->xmin && key->xmax == s->xmax &&
		key->xcnt == s->xcnt && key->subxcnt == s->subxcnt &&
		key->suboverflowed == s->suboverflowed &&
		key->takenDuringRecovery == s->takenDuringRecovery &&
		key->curcid == s->curcid &&
		(key->xcnt == 0 ||
		 memcmp(key->xip, s->xip, sizeof(TransactionId) * key->xcnt) == 0) &&
		(key->subxcnt <= 0 ||
		 memcmp(key->subxip, s->subxip, sizeof(TransactionId) * key->subxcnt) == 0);
}

/* pg_engine_cache_lookup: the engine kept for this snapshot, role and offers. */
EngineEntry *
pg_engine_cache_lookup(const char *offer_keys)
{
	if (cached == NULL)
		return NULL;
	/* a change this backend made reaches RelcacheChanged through here */
	AcceptInvalidationMessages();
	if (cached != NULL && cached->stale)
		pg_engine_cache_reset();
	if (cached == NULL ||
		cached->userid != GetUserId() ||
		(cached->offer_keys == NULL) != (offer_keys == NULL) ||
		(offer_keys && strcmp(cached->offer_keys, offer_keys) != 0) ||
		!SameSnapshot(&cached->snapshot, GetActiveSnapshot()))
		return NULL;
	return &cached->entry;
}

/* pg_engine_cache_store: keep the engine for calls in this snapshot. */
EngineEntry *
pg_engine_cache_store(MemoryContext context, IncEngine *engine, const char *offer_keys)
{
	Snapshot	s = GetActiveSnapshot();
	MemoryContext old;
	Cached	   *c;

	pg_engine_cache_reset();
	old = MemoryContextSwitchTo(context);
	c = palloc0(sizeof(Cached));
	c->entry.context = context;
	c->entry.engine = engine;
	c->userid = GetUserId();
	c->offer_keys = offer_keys ? pstrdup(offer_keys) : NULL;
	c->snapshot.xmin = s->xmin;
	c->snapshot.xmax = s->xmax;
	c->snapshot.xcnt = s->xcnt;
	c->snapshot.xip = s->xcnt ? palloc(sizeof(TransactionId) * s->xcnt) : NULL;
	if (s->xcnt)
		memcpy(c->snapshot.xip, s->xip, sizeof(TransactionId) * s->xcnt);
	c->snapshot.subxcnt = s->subxcnt;
	c->snapshot.subxip = s->subxcnt > 0 ? palloc(sizeof(TransactionId) * s->subxcnt) : NULL;
	if (s->subxcnt > 0)
		memcpy(c->snapshot.subxip, s->subxip, sizeof(TransactionId) * s->subxcnt);
	c->snapshot.suboverflowed = s->suboverflowed;
	c->snapshot.takenDuringRecovery = s->takenDuringRecovery;
	c->snapshot.curcid = s->curcid;
	MemoryContextSwitchTo(old);
	MemoryContextSetParent(context, CacheMemoryContext);
	cached = c;
	return &c->entry;
}

PG_FUNCTION_INFO_V1(incentives_reference_changed);

/*
 * incentives_reference_changed: statement-level trigger on the reference
 * tables: a relcache invalidation of the table, sent to every backend at
 * commit (and seen by this one at its next command), so that a cached
 * engine built from the old rows is dropped.
 */
Datum
incentives_reference_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "incentives_reference_changed: not called as a trigger");
	CacheInvalidateRelcache(trigdata->tg_relation);
	PG_RETURN_POINTER(NULL);
}
