/*
 * refresh_calc.c
 *    One share of a full refresh (refresh.h): the calculation of its
 *    participants, each row formed as a tuple of the earnings partition.
 *
 * The same path as incentive_calculate (calculate.c): the engine, the
 * properties and enrollments of everyone, the transactions read once into
 * the participant-partitioned store (only the share's, and counting the
 * share's participants), one participant at a time through the engine.
 * A row is formed straight into a heap tuple of the partition (the 17
 * columns, the transaction's date, calculated_at, run_id): no tuplestore,
 * no executor.  The participants of a batch of the store come in the byte
 * order of their keys.
 *
 * on_error => 'skip': each participant's calculation runs with the fail
 * trap armed (pg_glue.h).  A data failure of the engine jumps back here:
 * the participant's rows held so far are dropped and the failure (its
 * participant, the transaction it was at, SQLSTATE and message) goes to
 * the sink; the calculation goes on with the next participant, without an
 * error, a subtransaction or a rollback.  A participant's rows are held
 * until it is done, up to HOLD_BYTES: a participant with more rows than
 * that has its first rows written before it is done, and is marked
 * partial if it then fails (the caller deletes them).  An error of any
 * other kind (a cancel, out of memory, a read error) is raised.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"
#include "utils/memutils.h"

#include "calc_load.h"
#include "calc_row.h"
#include "core/engine.h"
#include "enrollments.h"
#include "pg_glue.h"
#include "refresh.h"
#include "txn_source.h"

/* on_error => 'skip': a participant's rows held back until it is done. */
#define HOLD_BYTES (1024 * 1024)

/* The column types of an earnings partition, in order (refresh.h). */
static const Oid partition_types[REFRESH_COLUMNS] = {
	TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, NUMERICOID, NUMERICOID,
	TEXTOID, NUMERICOID, TEXTOID, NUMERICOID, NUMERICOID, NUMERICOID, NUMERICOID,
	NUMERICOID, NUMERICOID, DATEOID, TIMESTAMPTZOID, INT8OID
};

/* The incentive_effective_rate column: the only one a row may leave NULL. */
#define NULLABLE_COLUMN 16

/* refresh_check_desc: the partition's columns are those rows are formed for. */
void
refresh_check_desc(TupleDesc desc, const char *relname)
{
	int			i;

	if (desc->natts != REFRESH_COLUMNS)
		elog(ERROR, "%s has %d columns, an earnings partition %d", relname, desc->natts,
			 REFRESH_COLUMNS);
	for (i = 0; i < REFRESH_COLUMNS; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || att->atttypid != partition_types[i] ||
			(i == NULLABLE_COLUMN && att->attnotnull))
			elog(ERROR, "column %d of %s is not that of an earnings partition", i + 1, relname);
	}
}

/* refresh_add_cents: an incentive_amount added to a sum in cents. */
void
refresh_add_cents(inc_int128 *cents, const IncDec *amount)
{
	inc_int128	c = amount->coef;

	if (amount->scale > 2 || amount->scale < 0)
		elog(ERROR, "incentive_amount with scale %d", amount->scale);
	if (amount->scale < 2)
		c *= amount->scale == 1 ? 10 : 100;
	if (__builtin_add_overflow(*cents, c, cents))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the total incentive of the refresh is out of range")));
}

/* One share being calculated. */
typedef struct Share
{
	const RefreshArgs *args;
	TupleDesc	desc;
	RefreshSink *sink;
	CalcRowState rows;
	MemoryContext tuple_context;	/* the tuples, until the sink frees them */
	Datum		participant_datum;
	/* the participant being calculated */
	HeapTuple  *held;			/* skip: its rows not yet put */
	int			nheld;
	int			held_cap;
	Size		held_bytes;
	bool		partial;		/* some of its rows were put already */
	uint64		p_rows;
	inc_int128	p_cents;
} Share;

/* PutHeld: the held rows to the sink. */
static void
PutHeld(Share *sh)
{
	int			i;

	for (i = 0; i < sh->nheld; i++)
		sh->sink->put(sh->sink, sh->held[i]);
	if (sh->nheld > 0)
		sh->partial = true;
	sh->nheld = 0;
	sh->held_bytes = 0;
}

/* DropHeld: forget the held rows (the participant failed). */
static void
DropHeld(Share *sh)
{
	int			i;

	for (i = 0; i < sh->nheld; i++)
		heap_freetuple(sh->held[i]);
	sh->nheld = 0;
	sh->held_bytes = 0;
}

/* EmitTuple: one engine row as a tuple of the partition, to the sink or held. */
static void
EmitTuple(void *ctx, const IncRow *row)
{
	Share	   *sh = ctx;
	Datum		values[REFRESH_COLUMNS];
	bool		nulls[REFRESH_COLUMNS];
	CalcRowBuffers buf;
	MemoryContext old;
	HeapTuple	tuple;

	calc_row_datums(&sh->rows, row, sh->participant_datum, true, values, nulls, &buf);
	values[REFRESH_CALCULATED_AT_COLUMN] = TimestampTzGetDatum(sh->args->calculated_at);
	nulls[REFRESH_CALCULATED_AT_COLUMN] = false;
	values[REFRESH_RUN_ID_COLUMN] = Int64GetDatum(sh->args->run_id);
	nulls[REFRESH_RUN_ID_COLUMN] = false;
	old = MemoryContextSwitchTo(sh->tuple_context);
	tuple = heap_form_tuple(sh->desc, values, nulls);
	MemoryContextSwitchTo(old);
	refresh_add_cents(&sh->p_cents, &row->incentive_amount);
	sh->p_rows++;

	if (!sh->args->skip)
	{
		sh->sink->put(sh->sink, tuple);
		return;
	}
	if (sh->nheld == sh->held_cap)
	{
		sh->held_cap = sh->held_cap ? sh->held_cap * 2 : 256;
		sh->held = sh->held ? repalloc(sh->held, sizeof(HeapTuple) * sh->held_cap) :
			MemoryContextAlloc(sh->tuple_context, sizeof(HeapTuple) * sh->held_cap);
	}
	sh->held[sh->nheld++] = tuple;
	sh->held_bytes += tuple->t_len;
	if (sh->held_bytes > HOLD_BYTES)
		PutHeld(sh);
}

/* Failure: what the trap caught about the participant key, as a RefreshFailure. */
static void
Failure(Share *sh, IncEngine *engine, const char *key, const PgFailTrap *trap,
		RefreshFailure *f)
{
	const char *participant;
	const char *transaction_id;

	f->participant_key = pstrdup(key);
	f->transaction_id = NULL;
	if (inc_engine_position(engine, &participant, &transaction_id) && transaction_id)
		f->transaction_id = pstrdup(transaction_id);
	inc_engine_clear_position(engine);
	strlcpy(f->sqlstate, unpack_sql_state(trap->sqlerrcode), sizeof(f->sqlstate));
	f->message = trap->message;
	f->partial = sh->partial;
}

/* refresh_calc_share: the share's participants, each row to the sink. */
void
refresh_calc_share(const RefreshArgs *args, int share, int nshares, TupleDesc desc,
				   RefreshSink *sink, RefreshTotals *totals)
{
	MemoryContext call_context = CurrentMemoryContext;
	MemoryContext participant_context;
	CalcEngine	ce;
	IncEngine  *engine;
	CalcProperties *props;
	PgEnrollments enrollments;
	TxnSourceOptions options;
	TxnPosition read_position = {NULL, NULL};
	TxnSource  *src;
	ErrorContextCallback context;
	Share		sh;
	PgFailTrap	trap;
	const char *key;
	IncTxn	   *txns;
	int			ntxns;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	memset(totals, 0, sizeof(*totals));
	memset(&sh, 0, sizeof(sh));
	sh.args = args;
	sh.desc = desc;
	sh.sink = sink;
	sh.tuple_context = AllocSetContextCreate(call_context, "incentives refresh rows",
											 ALLOCSET_DEFAULT_SIZES);
	participant_context = AllocSetContextCreate(call_context, "incentives participant",
												ALLOCSET_DEFAULT_SIZES);

	/* the engine, properties and enrollments of everyone (calculate.c) */
	pg_calc_engine(NULL, NULL, &ce);
	engine = ce.engine;
	calc_row_init(&sh.rows, &ce);
	inc_engine_set_tick(engine, pg_calc_tick);
	inc_engine_set_diagnostics(engine, NULL, NULL);
	props = pg_calc_properties(engine, NULL, NULL);
	pg_enrollments_load(&enrollments, engine, NULL, NULL);
	inc_engine_set_enrollments(engine, pg_enrollments_lookup, &enrollments);

	/* the share's transactions, grouped by participant */
	memset(&options, 0, sizeof(options));
	options.share = share;
	options.nshares = nshares;
	options.count_participants = true;
	options.ordered = true;
	src = txn_source_open(args->relid, NULL, NULL, engine, ce.context, &read_position, &options);
	totals->participants = txn_source_participants(src);
	sink->read(sink, totals->participants);

	context.callback = pg_calc_error_context;
	context.arg = engine;
	context.previous = error_context_stack;
	error_context_stack = &context;
	trap.context = call_context;

	PG_TRY();
	{
		while (txn_source_next(src, participant_context, &key, &sh.participant_datum,
							   &txns, &ntxns))
		{
			volatile bool failed = false;

			sh.p_rows = 0;
			sh.p_cents = 0;
			sh.partial = false;
			MemoryContextSwitchTo(participant_context);
			if (args->skip)
			{
				pg_fail_trap = &trap;
				if (sigsetjmp(trap.jump, 0) == 0)
					inc_engine_calculate(engine, key, txns, ntxns, pg_calc_property, props,
										 EmitTuple, &sh);
				else
					failed = true;
				pg_fail_trap = NULL;
			}
			else
				inc_engine_calculate(engine, key, txns, ntxns, pg_calc_property, props,
									 EmitTuple, &sh);
			MemoryContextSwitchTo(call_context);

			if (failed)
			{
				RefreshFailure f;

				DropHeld(&sh);
				Failure(&sh, engine, key, &trap, &f);
				sink->failed(sink, &f);
				sink->participant(sink, 0);
			}
			else
			{
				PutHeld(&sh);
				totals->rows += sh.p_rows;
				if (__builtin_add_overflow(totals->cents, sh.p_cents, &totals->cents))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("the total incentive of the refresh is out of range")));
				sink->participant(sink, sh.p_rows);
			}
			MemoryContextReset(participant_context);
		}
	}
	PG_FINALLY();
	{
		pg_fail_trap = NULL;
	}
	PG_END_TRY();

	error_context_stack = context.previous;
	txn_source_close(src);
	MemoryContextDelete(participant_context);
	SPI_finish();
}
