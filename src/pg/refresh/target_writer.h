/*
 * target_writer.h
 *    The rows of a refresh into its target: a plain table (one row
 *    writer), or a table partitioned by hash of participant_key whose
 *    leaves each get a row writer of their own, every row going to the
 *    leaf PostgreSQL's own routing would give it (the partition key's
 *    hash function, compute_partition_hash_value, the remainder of the
 *    greatest modulus).  A refresh with jobs => N writes such a target
 *    (docs/architecture.md, A refresh of everyone): share k of N
 *    calculates the participants of the leaves whose remainder is k
 *    modulo N, so that each writer fills leaves of its own and builds
 *    their indexes.
 */
#ifndef INC_TARGET_WRITER_H
#define INC_TARGET_WRITER_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/rel.h"

#include "pg/refresh/row_writer.h"

/* How a hash-partitioned target routes a participant_key to a leaf. */
typedef struct TargetRoute
{
	FmgrInfo   *hash_function;	/* the partition key's hash support function */
	Oid			collation;		/* the partition key's collation */
	int			modulus;		/* the greatest modulus */
	int		   *leaf_of;		/* by remainder: the index of its leaf */
	Oid		   *leaves;			/* by index: the leaf */
	int			nleaves;
} TargetRoute;

/*
 * target_route_init: the route of rel, a table partitioned by hash of
 * participant_key alone whose leaves are plain tables; an error for any
 * other partitioned table.  False (and nothing set) when rel is not
 * partitioned.
 */
extern bool target_route_init(TargetRoute *route, Relation rel);

/* target_route_key_hash: the partition hash of a participant_key (arg: the route). */
extern uint64 target_route_key_hash(const char *key, size_t len, void *arg);

/* target_route_leaf: the index of the leaf for a partition hash. */
static inline int
target_route_leaf(const TargetRoute *route, uint64 hash)
{
	return route->leaf_of[hash % (uint64) route->modulus];
}

/*
 * target_route_share_leaves: the leaves whose remainder is share modulo
 * nshares, in the order of their remainders; returns how many (into
 * leaves, room for route->nleaves).
 */
extern int	target_route_share_leaves(const TargetRoute *route, int share, int nshares,
									  Oid *leaves);

typedef struct TargetWriter
{
	Relation	rel;			/* the target, opened by the caller */
	bool		partitioned;
	TargetRoute route;			/* partitioned */
	RowWriter **writers;		/* by leaf index (or [0]: rel), begun on first row */
	Relation   *leaf_rels;
	int			nwriters;
	/* the last row's participant_key and its leaf */
	char	   *last_key;
	Size		last_len;
	Size		last_cap;
	int			last_leaf;
} TargetWriter;

/*
 * target_writer_begin: a writer into rel (opened by the caller, with the
 * lock to insert), in the current command.
 */
extern void target_writer_begin(TargetWriter *tw, Relation rel);

/* target_writer_put: a tuple of rel's descriptor (palloc'd; freed once written). */
extern void target_writer_put(TargetWriter *tw, HeapTuple tuple);

/* target_writer_end: every row written, the leaves closed (their locks kept). */
extern void target_writer_end(TargetWriter *tw);

#endif							/* INC_TARGET_WRITER_H */
