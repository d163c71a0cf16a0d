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
								  TxnPosition *position);

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
