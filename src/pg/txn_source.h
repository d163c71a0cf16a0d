/*
 * txn_source.h
 *    Reading transactions for the calculation from any relation with the
 *    transaction columns (docs/reference.md, Transactions), through an SPI
 *    cursor.
 */
#ifndef INC_TXN_SOURCE_H
#define INC_TXN_SOURCE_H

#include "postgres.h"

#include "utils/date.h"
#include "utils/portal.h"

#include "core/engine.h"

typedef struct TxnSource
{
	char	   *relname;		/* quoted, qualified name, for messages */
	Portal		portal;
	SPITupleTable *batch;
	uint64		nbatch;
	uint64		pos;
	bool		done;
	/* the row being read, for error reports (calculate.c keeps it valid) */
	const char *current_id;
	const char *current_participant;
} TxnSource;

/*
 * Check relid's columns, then open a cursor ordered by participant, id;
 * with through_date, only the transactions dated on or before it.
 */
extern void txn_source_open(TxnSource *src, Oid relid, const char *participant_key,
							const char *const *sku_keys, int nsku_keys,
							const DateADT *through_date);

/*
 * txn_source_next: the next transaction into *txn and its participant into
 * *participant_key (strings palloc'd in the current memory context); false
 * at the end.
 */
extern bool txn_source_next(TxnSource *src, IncTxn *txn, char **participant_key);

extern void txn_source_close(TxnSource *src);

#endif							/* INC_TXN_SOURCE_H */
