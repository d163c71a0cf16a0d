/*
 * row_writer.c
 *    Buffered bulk inserts into a table (see row_writer.h).
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "pg/refresh/row_writer.h"

/* row_writer_begin: the bulk insert state here, the slots on first use. */
void
row_writer_begin(RowWriter *w, Relation rel)
{
	memset(w, 0, sizeof(*w));
	w->rel = rel;
	w->bistate = GetBulkInsertState();
	w->cid = GetCurrentCommandId(true);
	/*
	 * As COPY into a table new in its transaction: a new table (a run's
	 * partition or leaf, written by this writer alone) has no free space
	 * to find, and a page left behind is never filled again, so the rows
	 * stay in the order they come.
	 */
	w->options |= TABLE_INSERT_SKIP_FSM;
	w->context = CurrentMemoryContext;
	/*
	 * A slot pins a reference-counted descriptor in the resource owner,
	 * whose search for one more pin of the same descriptor grows with the
	 * pins: a copy is not counted.
	 */
	w->desc = CreateTupleDescCopy(RelationGetDescr(rel));
	w->flush_context = AllocSetContextCreate(CurrentMemoryContext, "incentives row writer",
											 ALLOCSET_DEFAULT_SIZES);
}

/* Flush: the buffered tuples into the table, and the slots cleared. */
static void
Flush(RowWriter *w)
{
	MemoryContext old;
	int			i;

	if (w->nused == 0)
		return;
	old = MemoryContextSwitchTo(w->flush_context);
	table_multi_insert(w->rel, w->slots, w->nused, w->cid, w->options, w->bistate);
	MemoryContextSwitchTo(old);
	MemoryContextReset(w->flush_context);
	for (i = 0; i < w->nused; i++)
		ExecClearTuple(w->slots[i]);
	w->nused = 0;
	w->bytes = 0;
	CHECK_FOR_INTERRUPTS();
}

/* row_writer_put: buffer a tuple, writing the buffer when it is full. */
void
row_writer_put(RowWriter *w, HeapTuple tuple)
{
	TupleTableSlot *slot = w->slots[w->nused];

	if (slot == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(w->context);

		slot = w->slots[w->nused] = MakeSingleTupleTableSlot(w->desc, &TTSOpsHeapTuple);
		MemoryContextSwitchTo(old);
	}
	ExecStoreHeapTuple(tuple, slot, true);
	w->nused++;
	w->bytes += tuple->t_len;
	if (w->nused == ROW_WRITER_TUPLES || w->bytes >= ROW_WRITER_BYTES)
		Flush(w);
}

/* row_writer_end: the last tuples, then the slots and the state released. */
void
row_writer_end(RowWriter *w)
{
	int			i;

	Flush(w);
	for (i = 0; i < ROW_WRITER_TUPLES && w->slots[i]; i++)
		ExecDropSingleTupleTableSlot(w->slots[i]);
	FreeBulkInsertState(w->bistate);
	table_finish_bulk_insert(w->rel, w->options);
	MemoryContextDelete(w->flush_context);
}
