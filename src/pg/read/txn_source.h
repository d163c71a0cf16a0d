/*
 * txn_source.h
 *    Reading transactions for the calculation from any relation with the
 *    transaction columns (docs/reference.md, Transactions), grouped by
 *    participant without ordering them.
 *
 * One query through the executor, with the caller's rights and snapshot,
 * pushes every row into a receiver that resolves its SKU and unit to the
 * engine's ids and copies it, compact, into a store partitioned by
 * participant (txn_store.h: in memory up to work_mem, temporary files
 * past it).  Then the participants come out one at a time, each with its
 * transactions as IncTxns whose strings point into the store (nothing is
 * copied per transaction).  Before the first participant, a transaction_id
 * found twice among the rows read is an error, unless a unique index on
 * transaction_id alone makes that impossible.
 */
#ifndef INC_TXN_SOURCE_H
#define INC_TXN_SOURCE_H

#include "postgres.h"

#include "common/hashfn.h"
#include "utils/date.h"

#include "core/engine/engine.h"
#include "core/engine/groups.h"

typedef struct TxnSource TxnSource;

/*
 * Where a read failed: the participant and transaction of the row it was
 * about (NULL when not known), set just before the source raises an error
 * about a row, for the caller's error context callback (refreshes that
 * skip a failing participant name the transaction; docs/lifecycle.md,
 * on_error => 'skip').  Errors about a row are raised outside the SPI
 * statement's error context, so that callback sits right under them.
 */
typedef struct TxnPosition
{
	const char *participant_key;
	const char *transaction_id;
} TxnPosition;

/*
 * What a refresh asks of a read beyond incentive_calculate's (NULL
 * options: none of it).
 *
 * share, nshares: read only the transactions whose unit falls in share
 * (0 .. nshares - 1): by share_hash when given, else by txn_share_of of
 * its hash (below); nshares 0 or 1 reads all.
 * count_participants: count the distinct participants read (of the share),
 * those whose every transaction has a SKU no offer mentions included
 * (txn_source_participants).  ordered: hand every participant out in the
 * order of its key in collation (the store partitioned by ranges of keys
 * when it does not fit one batch; a refresh writes its rows in the order
 * of the partition's primary key, so that the index build finds them
 * sorted); a unit of the participant groups comes out whole where its
 * first key is.
 */
typedef struct TxnSourceOptions
{
	int			share;
	int			nshares;
	/*
	 * share_hash: with nshares > 1, the hash of a unit's key (its first
	 * key for a group) whose remainder by nshares is its share; NULL:
	 * txn_share_of of the unit's hash.
	 */
	uint64		(*share_hash) (const char *key, size_t len, void *arg);
	void	   *share_hash_arg;
	bool		count_participants;
	bool		ordered;
	Oid			collation;		/* ordered: in this collation's order (0: bytes) */
} TxnSourceOptions;

/*
 * txn_aggregation_hash: the hash of the key of a calculation unit: the
 * participant_key of a participant in no group, the first key of its unit
 * for a member of the participant groups (groups.h: a group, its members
 * and the groups a mover joins are calculated together).  The store
 * partitions by it and txn_share_of shares by it, so that a unit's
 * transactions are always read, grouped and calculated by one process.
 */
static inline uint32
txn_aggregation_hash(const char *key, size_t len)
{
	return hash_bytes((const unsigned char *) key, (int) len);
}

/*
 * txn_share_of: which of nshares processes calculates the unit whose hash
 * (txn_aggregation_hash) is given (0 .. nshares - 1), when the caller
 * gives no share_hash (a refresh with jobs gives its partition's, so that
 * each process fills leaves of its own: docs/lifecycle.md, jobs).  The
 * hash is mixed first: the store uses its bits as they are.
 */
static inline int
txn_share_of(uint32 aggregation_hash, int nshares)
{
	return (int) (((uint64) murmurhash32(aggregation_hash) * (uint64) nshares) >> 32);
}

/*
 * txn_source_open: check relid's columns (an error names a missing or
 * mistyped one), then read it -- only participant_key's transactions when
 * that is not NULL (and those of every other key of its unit when groups,
 * the participant groups, has it), only those dated on or before *through_date when that
 * is not NULL (docs/lifecycle.md, Through-date) -- into the store.  Rows
 * whose SKU no offer of engine mentions are skipped; the rest are checked
 * (no NULL transaction_id, participant_key or sku_key; NULLs elsewhere are
 * flagged in the record, IncTxn.nulls) and their units interned into engine (allocated in
 * engine_context, where the engine lives).  A read error about a row sets
 * *position first.  The source lives in the current memory context.
 */
extern TxnSource *txn_source_open(Oid relid, const char *participant_key,
								  const DateADT *through_date, IncEngine *engine,
								  MemoryContext engine_context, const IncGroups *groups,
								  TxnPosition *position, const TxnSourceOptions *options);

/*
 * txn_source_participants: the participants counted (count_participants;
 * not those read only as the relation's owner, txn_source_hidden_keys).
 */
extern uint64 txn_source_participants(const TxnSource *src);

/*
 * txn_source_hidden_keys: under row-level security, the keys of the units
 * the caller read rows of that it read none of (members it may not see,
 * and the groups); their transactions were read as the relation's owner
 * (docs/security.md, Participant groups), for their groups' figures only.
 * Sets *n (0: none).
 */
extern const char *const *txn_source_hidden_keys(const TxnSource *src, int *n);

/*
 * A calculation unit as the source hands it out (calc_io.h, IncUnit): a
 * participant in no group alone, or every key of a unit of the
 * participant groups with all its transactions.
 */
typedef struct TxnUnit
{
	IncUnit		unit;			/* keys and flags (INC_KEY_REPORT: the
								 * participant read alone, or every
								 * participant with transactions; under
								 * row-level security only those the caller
								 * read rows of, which alone are
								 * INC_KEY_VISIBLE) */
	Datum	   *key_datums;		/* per key, its text datum */
	IncTxn	   *txns;			/* naming their participant and aggregation key */
	int			ntxns;
} TxnUnit;

/*
 * txn_source_next: the next unit and its transactions (in no particular
 * order), in memory of context, which the caller resets between units;
 * false after the last.
 */
extern bool txn_source_next(TxnSource *src, MemoryContext context, TxnUnit *unit);

/*
 * txn_source_id_datum: the transaction_id text datum of a transaction
 * txn_source_next handed out (no copy).
 */
extern Datum txn_source_id_datum(const IncTxn *txn);

/* txn_source_close: release the store and its files. */
extern void txn_source_close(TxnSource *src);

#endif							/* INC_TXN_SOURCE_H */
