/*
 * target_writer.c
 *    A refresh's rows into a plain or hash-partitioned target
 *    (target_writer.h).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "nodes/parsenodes.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/partcache.h"

#include "pg/refresh/refresh.h"
#include "pg/refresh/target_writer.h"

/* target_route_init: the partition key and leaves of rel, checked. */
bool
target_route_init(TargetRoute *route, Relation rel)
{
	PartitionKey key;
	PartitionDesc desc;
	PartitionBoundInfo bounds;
	int			r;
	int			i;

	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return false;
	key = RelationGetPartitionKey(rel);
	desc = RelationGetPartitionDesc(rel, false);
	bounds = desc->boundinfo;
	if (key->strategy != PARTITION_STRATEGY_HASH || key->partnatts != 1 ||
		key->partattrs[0] != REFRESH_PARTICIPANT_COLUMN + 1 || bounds == NULL)
		elog(ERROR, "refresh_write: \"%s\" is not partitioned by hash of participant_key",
			 RelationGetRelationName(rel));
	memset(route, 0, sizeof(*route));
	route->hash_function = &key->partsupfunc[0];
	route->collation = key->partcollation[0];
	route->modulus = bounds->nindexes;
	route->nleaves = desc->nparts;
	route->leaf_of = palloc(sizeof(int) * route->modulus);
	route->leaves = palloc(sizeof(Oid) * route->nleaves);
	for (i = 0; i < desc->nparts; i++)
	{
		if (!desc->is_leaf[i] || get_rel_relkind(desc->oids[i]) != RELKIND_RELATION)
			elog(ERROR, "refresh_write: a partition of \"%s\" is not a plain table",
				 RelationGetRelationName(rel));
		route->leaves[i] = desc->oids[i];
	}
	for (r = 0; r < route->modulus; r++)
	{
		if (bounds->indexes[r] < 0)
			elog(ERROR, "refresh_write: \"%s\" has no partition for remainder %d",
				 RelationGetRelationName(rel), r);
		route->leaf_of[r] = bounds->indexes[r];
	}
	return true;
}

/* RouteHash: compute_partition_hash_value of one participant_key datum. */
static uint64
RouteHash(const TargetRoute *route, Datum key)
{
	bool		isnull = false;

	return compute_partition_hash_value(1, route->hash_function, (Oid *) &route->collation, &key,
										&isnull);
}

/* target_route_key_hash: the key as a text datum (on the stack when short). */
uint64
target_route_key_hash(const char *key, size_t len, void *arg)
{
	union
	{
		int32		align;
		char		data[VARHDRSZ + 256];
	}			buf;
	text	   *t = len <= 256 ? (text *) buf.data : palloc(VARHDRSZ + len);
	uint64		hash;

	SET_VARSIZE(t, VARHDRSZ + len);
	memcpy(VARDATA(t), key, len);
	hash = RouteHash((const TargetRoute *) arg, PointerGetDatum(t));
	if ((char *) t != buf.data)
		pfree(t);
	return hash;
}

/* target_route_share_leaves: remainder by remainder. */
int
target_route_share_leaves(const TargetRoute *route, int share, int nshares, Oid *leaves)
{
	int			n = 0;
	int			r;

	for (r = share; r < route->modulus; r += nshares)
		leaves[n++] = route->leaves[route->leaf_of[r]];
	return n;
}

void
target_writer_begin(TargetWriter *tw, Relation rel)
{
	memset(tw, 0, sizeof(*tw));
	tw->rel = rel;
	tw->partitioned = target_route_init(&tw->route, rel);
	tw->nwriters = tw->partitioned ? tw->route.nleaves : 1;
	tw->writers = palloc0(sizeof(RowWriter *) * tw->nwriters);
	tw->leaf_rels = palloc0(sizeof(Relation) * tw->nwriters);
	tw->last_leaf = -1;
}

/* LeafOf: the leaf of a tuple, by its participant_key (the last one's, when the same). */
static int
LeafOf(TargetWriter *tw, HeapTuple tuple)
{
	bool		isnull;
	Datum		key = heap_getattr(tuple, REFRESH_PARTICIPANT_COLUMN + 1,
								   RelationGetDescr(tw->rel), &isnull);
	text	   *t;
	Size		len;

	if (isnull)
		elog(ERROR, "refresh_write: a row without a participant_key");
	t = DatumGetTextPP(key);
	len = VARSIZE_ANY_EXHDR(t);
	if (tw->last_leaf >= 0 && len == tw->last_len && memcmp(VARDATA_ANY(t), tw->last_key, len) == 0)
		return tw->last_leaf;
	if (len > tw->last_cap)
	{
		tw->last_cap = Max(len, 64);
		tw->last_key = tw->last_key ? repalloc(tw->last_key, tw->last_cap) :
			MemoryContextAlloc(GetMemoryChunkContext(tw->writers), tw->last_cap);
	}
	memcpy(tw->last_key, VARDATA_ANY(t), len);
	tw->last_len = len;
	tw->last_leaf = target_route_leaf(&tw->route, RouteHash(&tw->route, PointerGetDatum(t)));
	return tw->last_leaf;
}

void
target_writer_put(TargetWriter *tw, HeapTuple tuple)
{
	int			i = tw->partitioned ? LeafOf(tw, tuple) : 0;

	if (tw->writers[i] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(tw->writers));

		tw->writers[i] = palloc(sizeof(RowWriter));
		if (tw->partitioned)
		{
			tw->leaf_rels[i] = table_open(tw->route.leaves[i], RowExclusiveLock);
			row_writer_begin(tw->writers[i], tw->leaf_rels[i]);
		}
		else
			row_writer_begin(tw->writers[i], tw->rel);
		MemoryContextSwitchTo(old);
	}
	row_writer_put(tw->writers[i], tuple);
}

void
target_writer_end(TargetWriter *tw)
{
	int			i;

	for (i = 0; i < tw->nwriters; i++)
	{
		if (tw->writers[i] == NULL)
			continue;
		row_writer_end(tw->writers[i]);
		if (tw->leaf_rels[i])
			table_close(tw->leaf_rels[i], NoLock);
	}
}
