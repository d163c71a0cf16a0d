/*
 * row_writer.h
 *    Tuples into a table through PostgreSQL's bulk insert path, as COPY
 *    FROM writes them (copyfrom.c): buffered a thousand (or 64 kB) at a
 *    time, then table_multi_insert with a BulkInsertState, which fills
 *    page after page and WAL-logs each page's new tuples as one record.
 *    For a table without indexes, triggers or constraints to check (a new
 *    earnings partition: its indexes are built after the rows are in).
 */
#ifndef INC_ROW_WRITER_H
#define INC_ROW_WRITER_H

#include "postgres.h"

#include "access/heapam.h"
#include "executor/tuptable.h"
#include "utils/rel.h"

#define ROW_WRITER_TUPLES 1000
#define ROW_WRITER_BYTES 65535

typedef struct RowWriter
{
	Relation	rel;
	TupleDesc	desc;			/* rel's, copied: the slots do not pin it */
	BulkInsertState bistate;
	CommandId	cid;
	int			options;
	TupleTableSlot *slots[ROW_WRITER_TUPLES];
	int			nused;
	Size		bytes;
	MemoryContext context;		/* the slots */
	MemoryContext flush_context;	/* what table_multi_insert allocates */
} RowWriter;

/*
 * row_writer_begin: a writer into rel (opened by the caller), a new table
 * only this writer fills, in the current command: pages in order, the
 * free space map skipped.
 */
extern void row_writer_begin(RowWriter *w, Relation rel);

/* row_writer_put: a tuple (palloc'd; the writer frees it once written). */
extern void row_writer_put(RowWriter *w, HeapTuple tuple);

/* row_writer_end: write what is buffered, release the bulk insert state. */
extern void row_writer_end(RowWriter *w);

#endif							/* INC_ROW_WRITER_H */
