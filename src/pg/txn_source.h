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
 * found twice is an error, unless a unique index on transaction_id alone
 * makes that impossible.
 */
#ifndef INC_TXN_SOURCE_H
#define INC_TXN_SOURCE_H

#include "postgres.h"

#include "core/engine.h"

typedef struct TxnSource TxnSource;

/*
 * txn_source_open: check relid's columns (an error names a missing or
 * mistyped one), then read it -- only participant_key's transactions when
 * that is not NULL -- into the store.  Rows whose SKU no offer of engine
 * mentions are skipped; the rest are checked (no NULLs) and their units
 * interned into engine (allocated in engine_context, where the engine
 * lives).  The source lives in the current memory context.
 */
extern TxnSource *txn_source_open(Oid relid, const char *participant_key, IncEngine *engine,
								  MemoryContext engine_context);

/*
 * txn_source_next: the next participant's key and transactions (in no
 * particular order), in memory of context, which the caller resets
 * between participants; false after the last.  The key's text datum is
 * set too (for the rows' participant_key column).
 */
extern bool txn_source_next(TxnSource *src, MemoryContext context, const char **participant_key,
							Datum *key_datum, IncTxn **txns, int *ntxns);

/*
 * txn_source_id_datum: the transaction_id text datum of a transaction
 * txn_source_next handed out (no copy).
 */
extern Datum txn_source_id_datum(const IncTxn *txn);

/* txn_source_relname: the relation's quoted, qualified name, for messages. */
extern const char *txn_source_relname(const TxnSource *src);

/* txn_source_close: release the store and its files. */
extern void txn_source_close(TxnSource *src);

#endif							/* INC_TXN_SOURCE_H */
