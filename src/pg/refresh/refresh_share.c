/*
 * refresh_share.c
 *    One share of a full refresh (refresh.h): the calculation of its
 *    participants, each row formed as a tuple of the earnings partition.
 *
 * The same calculation session as incentive_calculate (calc_session.h)
 * over everyone: only the share's transactions, counting the share's
 * participants, one unit -- a participant in no group, or a group with
 * all its members -- at a time through the engine.  A row is formed straight into a heap tuple of
 * the partition (the 17 columns, the transaction's date, calculated_at,
 * run_id, group_key): no tuplestore, no executor.
 *
 * A share writes its rows in the order of the partition's primary key
 * (participant_key, offer_key, incentive_rate_key, transaction_id, each
 * in its column's collation), so that each index build's sort finds them
 * sorted (it then only checks the order: about half the build's time);
 * the rows of a partition in leaves go to their leaves in that order too
 * (target_writer.c), each leaf filled by one process: the source hands
 * the units out in key order (txn_source.h, ordered), and each unit's
 * rows are held until it is done and sorted by participant, the ranks of
 * their offer and rate keys (found once per engine string) and their
 * transaction_id (a group's members come where its first key is: the
 * build sorts what is out of place).  A unit with more rows than its
 * share's part of maintenance_work_mem (the memory its leaves' builds
 * sort in; at least work_mem) writes them as they come (the build then
 * sorts them, as ever).
 *
 * on_error => 'skip': each unit's calculation runs with the fail trap
 * armed (base/fail.h).  A data failure of the engine jumps back here: the
 * unit's rows held so far are dropped and a failure for each of its
 * participants (the participant, the transaction the calculation was at,
 * SQLSTATE and message) goes to the sink -- a group's members fail
 * together, as their rows are computed together -- and the calculation
 * goes on with the next unit, without an error, a subtransaction or a
 * rollback.  A unit's rows are held until it is done, up to that limit
 * (at least HOLD_BYTES): a unit with more rows than that has its first rows
 * written before it is done, and its participants are marked partial if
 * it then fails (the caller deletes their rows).  An error of any other
 * kind (a cancel, out of memory, a read error) is raised.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
#include "utils/memutils.h"

#include "core/engine/engine.h"
#include "pg/base/fail.h"
#include "pg/calc/calc_row.h"
#include "pg/calc/calc_session.h"
#include "pg/load/calc_load.h"
#include "pg/read/txn_source.h"
#include "pg/refresh/refresh.h"
#include "pg/refresh/target_writer.h"

/* A unit's rows held back until it is done: at least this much. */
#define HOLD_BYTES (64 * 1024)

/* The column types of an earnings partition, in order (refresh.h). */
static const Oid partition_types[REFRESH_COLUMNS] = {
	TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, NUMERICOID, NUMERICOID,
	TEXTOID, NUMERICOID, TEXTOID, NUMERICOID, NUMERICOID, NUMERICOID, NUMERICOID,
	NUMERICOID, NUMERICOID, DATEOID, TIMESTAMPTZOID, INT8OID, TEXTOID, TEXTOID,
	TEXTOID, TEXTOID, NUMERICOID
};

/*
 * The columns a row may leave NULL: incentive_effective_rate, and every
 * column after run_id (group_key, product_key, grower_key, currency,
 * exchange_rate).
 */
#define NULLABLE_COLUMN(i) ((i) == 16 || (i) > REFRESH_RUN_ID_COLUMN)

/* The columns of the partition's primary key, in its order. */
#define PARTICIPANT_COLUMN REFRESH_PARTICIPANT_COLUMN
#define OFFER_COLUMN 1
#define RATE_COLUMN 4
#define ID_COLUMN 8

/* refresh_check_desc: the partition's columns are those rows are formed for. */
void
refresh_check_desc(TupleDesc desc, const char *relname)
{
	int			i;

	if (desc->natts != REFRESH_COLUMNS && desc->natts != REFRESH_COLUMNS_0_4)
		elog(ERROR, "%s has %d columns, an earnings partition %d", relname, desc->natts,
			 REFRESH_COLUMNS);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || att->atttypid != partition_types[i] ||
			(NULLABLE_COLUMN(i) && att->attnotnull))
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

/*
 * The ranks of an engine's strings of one column (offer keys, rate keys)
 * in the order of its collation, found by address: a row's sort key is
 * then two integers and its transaction_id.
 */
typedef struct RankEntry
{
	const char *s;
	int			len;
	int			rank;
} RankEntry;

/* An engine string's entry, by its address. */
typedef struct RankSlot
{
	const char *ptr;
	RankEntry  *entry;
	char		status;			/* simplehash's */
} RankSlot;

/* PointerHash: a hash of an address. */
static inline uint32
PointerHash(const char *p)
{
	return (uint32) (((uintptr_t) p >> 3) * 2654435761u);
}

#define SH_PREFIX		ranks
#define SH_ELEMENT_TYPE	RankSlot
#define SH_KEY_TYPE		const char *
#define SH_KEY			ptr
#define SH_HASH_KEY(tb, key)	PointerHash(key)
#define SH_EQUAL(tb, a, b)	((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

typedef struct RankSet
{
	Oid			collation;
	RankEntry **sorted;			/* distinct strings, in order */
	int			n;
	int			cap;
	ranks_hash *slots;			/* by address */
	MemoryContext context;
} RankSet;

static void
RankSetInit(RankSet *rs, Oid collation, MemoryContext context)
{
	memset(rs, 0, sizeof(*rs));
	rs->collation = collation;
	rs->context = context;
	rs->slots = ranks_create(context, 128, NULL);
}

/* AddSlot: ptr -> entry in the table by address. */
static void
AddSlot(RankSet *rs, const char *ptr, RankEntry *e)
{
	bool		found;

	ranks_insert(rs->slots, ptr, &found)->entry = e;
}

/*
 * RankOf: the rank of engine string s in its column's order: found by
 * address, or placed among the strings seen so far (the later ones move
 * up a rank; equal strings share one).
 */
static int
RankOf(RankSet *rs, const char *s)
{
	RankSlot   *slot = ranks_lookup(rs->slots, s);
	int			lo = 0,
				hi,
				len;
	RankEntry  *e;

	if (slot)
		return slot->entry->rank;
	len = (int) strlen(s);
	hi = rs->n;
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;
		int			c = varstr_cmp(rs->sorted[mid]->s, rs->sorted[mid]->len, s, len, rs->collation);

		if (c == 0)
		{
			AddSlot(rs, s, rs->sorted[mid]);
			return rs->sorted[mid]->rank;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (rs->n == rs->cap)
	{
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->sorted = rs->sorted ? repalloc(rs->sorted, sizeof(RankEntry *) * rs->cap) :
			MemoryContextAlloc(rs->context, sizeof(RankEntry *) * rs->cap);
	}
	e = MemoryContextAlloc(rs->context, sizeof(RankEntry));
	e->s = s;
	e->len = len;
	memmove(rs->sorted + lo + 1, rs->sorted + lo, sizeof(RankEntry *) * (rs->n - lo));
	rs->sorted[lo] = e;
	rs->n++;
	for (hi = lo; hi < rs->n; hi++)
		rs->sorted[hi]->rank = hi;
	AddSlot(rs, s, e);
	return e->rank;
}

/* A row held until its unit is done, with what orders it. */
typedef struct HeldRow
{
	HeapTuple	tuple;
	int			participant;	/* the unit's key index of its participant */
	const char *offer_key;		/* the engine's strings */
	const char *rate_key;
	const char *transaction_id; /* in its record, or a copy (pages) */
	int			offer_rank;
	int			rate_rank;
} HeldRow;

/* One share being calculated. */
typedef struct Share
{
	const RefreshArgs *args;
	TupleDesc	desc;
	RefreshSink *sink;
	CalcRowState rows;
	CalcRowExtra extra;			/* the partition's date and group_key columns */
	MemoryContext tuple_context;	/* the tuples, until the sink frees them */
	RankSet		offer_ranks;
	RankSet		rate_ranks;
	Oid			participant_collation;
	Oid			id_collation;
	Size		hold_limit;
	/* the unit being calculated (a participant, or a group's members) */
	const TxnUnit *unit;
	HeldRow    *held;			/* its rows not yet put */
	int			nheld;
	int			held_cap;
	Size		held_bytes;
	bool		partial;		/* some of its rows were put already */
	uint64		p_rows;
	inc_int128	p_cents;
} Share;

/* CompareHeld: two rows of one unit in the partition key's order. */
static int
CompareHeld(const void *a, const void *b, void *arg)
{
	const Share *sh = arg;
	const HeldRow *x = a;
	const HeldRow *y = b;

	if (x->participant != y->participant)
	{
		const char *xk = sh->unit->unit.keys[x->participant];
		const char *yk = sh->unit->unit.keys[y->participant];

		return varstr_cmp(xk, (int) strlen(xk), yk, (int) strlen(yk),
						  sh->participant_collation);
	}
	if (x->offer_rank != y->offer_rank)
		return x->offer_rank < y->offer_rank ? -1 : 1;
	if (x->rate_rank != y->rate_rank)
		return x->rate_rank < y->rate_rank ? -1 : 1;
	return varstr_cmp(x->transaction_id, (int) strlen(x->transaction_id),
					  y->transaction_id, (int) strlen(y->transaction_id),
					  sh->id_collation);
}

/* PutHeld: the held rows to the sink (sorted first when whole). */
static void
PutHeld(Share *sh, bool whole)
{
	int			i;

	if (whole && !sh->partial && sh->nheld > 1)
	{
		/* every string placed first: a new one moves the later ranks up */
		for (i = 0; i < sh->nheld; i++)
		{
			(void) RankOf(&sh->offer_ranks, sh->held[i].offer_key);
			(void) RankOf(&sh->rate_ranks, sh->held[i].rate_key);
		}
		for (i = 0; i < sh->nheld; i++)
		{
			sh->held[i].offer_rank = RankOf(&sh->offer_ranks, sh->held[i].offer_key);
			sh->held[i].rate_rank = RankOf(&sh->rate_ranks, sh->held[i].rate_key);
		}
		qsort_arg(sh->held, sh->nheld, sizeof(HeldRow), CompareHeld, sh);
	}
	for (i = 0; i < sh->nheld; i++)
		sh->sink->put(sh->sink, sh->held[i].tuple);
	if (sh->nheld > 0)
		sh->partial = true;
	sh->nheld = 0;
	sh->held_bytes = 0;
}

/* DropHeld: forget the held rows (the unit failed). */
static void
DropHeld(Share *sh)
{
	int			i;

	for (i = 0; i < sh->nheld; i++)
		heap_freetuple(sh->held[i].tuple);
	sh->nheld = 0;
	sh->held_bytes = 0;
}

/*
 * EmitTuple: one engine row as a tuple of the partition, held until the
 * unit is done (to order its rows, and to drop them if it fails); past
 * hold_limit the held rows go out as they are.
 */
static void
EmitTuple(void *ctx, const IncRow *row)
{
	Share	   *sh = ctx;
	Datum		values[REFRESH_COLUMNS];
	bool		nulls[REFRESH_COLUMNS];
	CalcRowBuffers buf;
	MemoryContext old;
	HeapTuple	tuple;
	HeldRow    *h;

	calc_row_datums(&sh->rows, row, sh->unit->key_datums, &sh->extra, values, nulls, &buf);
	values[REFRESH_CALCULATED_AT_COLUMN] = TimestampTzGetDatum(sh->args->calculated_at);
	nulls[REFRESH_CALCULATED_AT_COLUMN] = false;
	values[REFRESH_RUN_ID_COLUMN] = Int64GetDatum(sh->args->run_id);
	nulls[REFRESH_RUN_ID_COLUMN] = false;
	old = MemoryContextSwitchTo(sh->tuple_context);
	tuple = heap_form_tuple(sh->desc, values, nulls);
	MemoryContextSwitchTo(old);
	refresh_add_cents(&sh->p_cents, &row->incentive_amount);
	sh->p_rows++;
	if (sh->nheld == sh->held_cap)
	{
		sh->held_cap = sh->held_cap ? sh->held_cap * 2 : 256;
		sh->held = sh->held ? repalloc_huge(sh->held, sizeof(HeldRow) * sh->held_cap) :
			MemoryContextAllocHuge(sh->tuple_context, sizeof(HeldRow) * sh->held_cap);
	}
	h = &sh->held[sh->nheld++];
	h->tuple = tuple;
	h->participant = row->txn->participant;
	h->offer_key = row->offer->offer_key;
	h->rate_key = row->rate_key;
	/* in pages, the record is gone once its page is reloaded: a copy */
	h->transaction_id = sh->unit->unit.pages ?
		MemoryContextStrdup(sh->tuple_context, row->txn->transaction_id) :
		row->txn->transaction_id;
	sh->held_bytes += tuple->t_len + sizeof(HeldRow);
	if (sh->held_bytes > sh->hold_limit)
		PutHeld(sh, false);
}

/*
 * Failed: the unit the trap caught failing, to the sink: a RefreshFailure
 * for each of its participants with transactions (a group's failure is
 * every member's: docs/lifecycle.md, on_error => 'skip').  The failing
 * participant's names the transaction the calculation was at, with the
 * message; another member's says only that a transaction of another
 * member of the group cannot be calculated, so that each participant's
 * log speaks of its own data alone (docs/security.md).
 */
static void
Failed(Share *sh, IncEngine *engine, const PgFailTrap *trap)
{
	const IncUnit *unit = &sh->unit->unit;
	const char *participant = NULL;
	const char *transaction_id = NULL;
	char	   *owner = NULL;
	char	   *transaction = NULL;
	char	   *other = NULL;
	RefreshFailure f;
	uint64		n = 0;
	int			k;

	if (inc_engine_position(engine, &participant, &transaction_id) && transaction_id)
	{
		owner = pstrdup(participant);
		transaction = pstrdup(transaction_id);
		other = psprintf("a transaction of another member of group \"%s\" cannot be calculated",
						 inc_engine_position_key(engine));
	}
	inc_engine_clear_position(engine);
	strlcpy(f.sqlstate, unpack_sql_state(trap->sqlerrcode), sizeof(f.sqlstate));
	f.partial = sh->partial;
	for (k = 0; k < unit->nkeys; k++)
		if (unit->flags[k] & INC_KEY_REPORT)
		{
			bool		own = owner == NULL || strcmp(owner, unit->keys[k]) == 0;

			f.participant_key = (char *) unit->keys[k];
			f.transaction_id = own ? transaction : NULL;
			f.message = own ? trap->message : other;
			sh->sink->failed(sh->sink, &f);
			n++;
		}
	sh->sink->done(sh->sink, n, 0);
}

/* Reported: the participants of the unit whose rows are wanted. */
static uint64
Reported(const IncUnit *unit)
{
	uint64		n = 0;
	int			k;

	for (k = 0; k < unit->nkeys; k++)
		if (unit->flags[k] & INC_KEY_REPORT)
			n++;
	return n;
}

/* refresh_share_calculate: the share's units, each row to the sink. */
void
refresh_share_calculate(const RefreshArgs *args, int share, int nshares,
						const TargetRoute *route, TupleDesc desc, RefreshSink *sink,
						RefreshTotals *totals)
{
	MemoryContext call_context = CurrentMemoryContext;
	CalcSession session;
	CalcSessionOptions options;
	TxnSourceOptions source;
	IncEngine  *engine;
	Share		sh;
	PgFailTrap	trap;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	memset(totals, 0, sizeof(*totals));
	memset(&sh, 0, sizeof(sh));
	sh.args = args;
	sh.desc = desc;
	sh.sink = sink;
	sh.unit = &session.unit;
	sh.extra.date_column = REFRESH_DATE_COLUMN;
	sh.extra.group_key_column = REFRESH_GROUP_KEY_COLUMN;
	/* before the update to 0.5.0, none of the columns after group_key */
	sh.extra.product_key_column = desc->natts > REFRESH_PRODUCT_KEY_COLUMN ?
		REFRESH_PRODUCT_KEY_COLUMN : -1;
	sh.extra.grower_key_column = desc->natts > REFRESH_GROWER_KEY_COLUMN ?
		REFRESH_GROWER_KEY_COLUMN : -1;
	sh.extra.currency_column = desc->natts > REFRESH_CURRENCY_COLUMN ?
		REFRESH_CURRENCY_COLUMN : -1;
	sh.extra.exchange_rate_column = desc->natts > REFRESH_EXCHANGE_RATE_COLUMN ?
		REFRESH_EXCHANGE_RATE_COLUMN : -1;
	sh.tuple_context = AllocSetContextCreate(call_context, "incentives refresh rows",
											 ALLOCSET_DEFAULT_SIZES);
	/*
	 * The held rows are the index builds' sort done early: up to the
	 * share's part of maintenance_work_mem, as the builds get, and never
	 * less than work_mem.
	 */
	sh.hold_limit = Max((Size) maintenance_work_mem * 1024 / Max(nshares, 1),
						Max((Size) work_mem * 1024, HOLD_BYTES));
	RankSetInit(&sh.offer_ranks, TupleDescAttr(desc, OFFER_COLUMN)->attcollation, call_context);
	RankSetInit(&sh.rate_ranks, TupleDescAttr(desc, RATE_COLUMN)->attcollation, call_context);
	sh.participant_collation = TupleDescAttr(desc, PARTICIPANT_COLUMN)->attcollation;
	sh.id_collation = TupleDescAttr(desc, ID_COLUMN)->attcollation;

	/* the share's transactions, grouped by unit, and what they need */
	memset(&source, 0, sizeof(source));
	source.share = share;
	source.nshares = nshares;
	if (route)
	{
		/* the share's units are those of its leaves */
		source.share_hash = target_route_key_hash;
		source.share_hash_arg = (void *) route;
	}
	source.count_participants = true;
	source.ordered = true;
	source.collation = sh.participant_collation;
	memset(&options, 0, sizeof(options));
	options.relid = args->relid;
	options.participant = args->participant;
	options.source = &source;
	calc_session_open(&session, &options);
	engine = session.engine;
	calc_row_init(&sh.rows, &session.ce);
	totals->participants = txn_source_participants(session.src);
	sink->read(sink, totals->participants);

	trap.context = call_context;

	PG_TRY();
	{
		while (calc_session_next(&session))
		{
			TxnUnit    *volatile unit = &session.unit;
			volatile bool failed = false;

			sh.p_rows = 0;
			sh.p_cents = 0;
			sh.partial = false;
			MemoryContextSwitchTo(session.unit_context);
			if (args->skip)
			{
				pg_fail_trap = &trap;
				if (sigsetjmp(trap.jump, 0) == 0)
					inc_engine_calculate_unit(engine, &unit->unit, unit->txns, unit->ntxns,
											  pg_calc_property, session.props, EmitTuple, &sh);
				else
					failed = true;
				pg_fail_trap = NULL;
			}
			else
				inc_engine_calculate_unit(engine, &unit->unit, unit->txns, unit->ntxns,
										  pg_calc_property, session.props, EmitTuple, &sh);
			MemoryContextSwitchTo(call_context);

			if (failed)
			{
				DropHeld(&sh);
				Failed(&sh, engine, &trap);
			}
			else
			{
				PutHeld(&sh, true);
				totals->rows += sh.p_rows;
				if (__builtin_add_overflow(totals->cents, sh.p_cents, &totals->cents))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("the total incentive of the refresh is out of range")));
				sink->done(sink, Reported(&unit->unit), sh.p_rows);
			}
		}
	}
	PG_FINALLY();
	{
		pg_fail_trap = NULL;
	}
	PG_END_TRY();

	calc_session_close(&session);
	SPI_finish();
}
