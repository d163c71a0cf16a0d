/*
 * txn_source.c
 *    Streams transactions out of the caller's relation with an SPI cursor.
 *
 * The relation is checked up front (every column present, with a type
 * that converts exactly), named only as a quoted identifier, and read
 * with parameters, never pasted values.  Rows come ordered by
 * participant_key, then transaction_id, both in byte order (COLLATE "C"),
 * in batches, so the calculation holds one participant's transactions at
 * a time.  Only transactions whose SKU some offer mentions are read (and
 * those with a NULL SKU, to be reported).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "access/htup_details.h"
#include "access/relation.h"

#include "pg_glue.h"
#include "txn_source.h"

#define FETCH_BATCH 1000

typedef enum ColumnKind
{
	COL_TEXT,
	COL_DATE,
	COL_NUMBER
} ColumnKind;

typedef struct RequiredColumn
{
	const char *name;
	ColumnKind	kind;
} RequiredColumn;

/* In the order of the SELECT list below. */
static const RequiredColumn required_columns[] = {
	{"transaction_id", COL_TEXT},
	{"participant_key", COL_TEXT},
	{"transaction_type", COL_TEXT},
	{"transaction_date", COL_DATE},
	{"sku_key", COL_TEXT},
	{"quantity", COL_NUMBER},
	{"uom_key", COL_TEXT},
	{"amount", COL_NUMBER},
};

#define NCOLUMNS lengthof(required_columns)

static bool
TypeFits(Oid type, ColumnKind kind)
{
	type = getBaseType(type);
	switch (kind)
	{
		case COL_TEXT:
			return type == TEXTOID || type == VARCHAROID || type == BPCHAROID;
		case COL_DATE:
			return type == DATEOID;
		case COL_NUMBER:
			return type == NUMERICOID || type == INT2OID || type == INT4OID || type == INT8OID;
	}
	return false;
}

static const char *
KindName(ColumnKind kind)
{
	switch (kind)
	{
		case COL_TEXT:
			return "text or varchar";
		case COL_DATE:
			return "date";
		case COL_NUMBER:
			return "numeric or an integer type";
	}
	return "?";
}

/* CheckRelation: every transaction column present with a usable type. */
static void
CheckRelation(Oid relid, const char *relname)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			c,
				a;

	for (c = 0; c < (int) NCOLUMNS; c++)
	{
		Form_pg_attribute found = NULL;

		for (a = 0; a < desc->natts; a++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, a);

			if (!att->attisdropped && strcmp(NameStr(att->attname), required_columns[c].name) == 0)
				found = att;
		}
		if (found == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("relation %s has no column \"%s\"", relname, required_columns[c].name),
					 errhint("The transactions relation needs the columns transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key and amount.")));
		if (!TypeFits(found->atttypid, required_columns[c].kind))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of relation %s has type %s, expected %s",
							required_columns[c].name, relname,
							format_type_be(found->atttypid),
							KindName(required_columns[c].kind))));
	}
	relation_close(rel, AccessShareLock);
}

/* txn_source_open: check the relation and open the cursor. */
void
txn_source_open(TxnSource *src, Oid relid, const char *participant_key,
				const char *const *sku_keys, int nsku_keys,
				const DateADT *through_date)
{
	char	   *nspname = get_namespace_name(get_rel_namespace(relid));
	char	   *relname = get_rel_name(relid);
	Oid			argtypes[3] = {TEXTARRAYOID, TEXTOID, DATEOID};
	Datum		args[3];
	char		nulls[3] = {' ', ' ', ' '};
	char	   *query;

	if (nspname == NULL || relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	memset(src, 0, sizeof(*src));
	src->relname = quote_qualified_identifier(nspname, relname);
	CheckRelation(relid, src->relname);

	query = psprintf("SELECT transaction_id::pg_catalog.text, participant_key::pg_catalog.text,"
					 " transaction_type::pg_catalog.text, transaction_date,"
					 " sku_key::pg_catalog.text, quantity::pg_catalog.numeric,"
					 " uom_key::pg_catalog.text, amount::pg_catalog.numeric"
					 " FROM %s"
					 " WHERE (sku_key IS NULL OR sku_key::pg_catalog.text OPERATOR(pg_catalog.=) ANY ($1))%s%s"
					 " ORDER BY participant_key::pg_catalog.text COLLATE \"C\","
					 " transaction_id::pg_catalog.text COLLATE \"C\"",
					 src->relname,
					 participant_key ?
					 " AND participant_key::pg_catalog.text COLLATE \"C\" OPERATOR(pg_catalog.=) $2" : "",
					 through_date ?
					 " AND (transaction_date IS NULL OR transaction_date OPERATOR(pg_catalog.<=) $3)" : "");
	args[0] = pg_cstring_array(sku_keys, nsku_keys);
	args[1] = participant_key ? CStringGetTextDatum(participant_key) : (Datum) 0;
	nulls[1] = participant_key ? ' ' : 'n';
	args[2] = through_date ? DateADTGetDatum(*through_date) : (Datum) 0;
	nulls[2] = through_date ? ' ' : 'n';

	/* $2 and $3 are always declared (unused ones are NULL) */
	src->portal = SPI_cursor_open_with_args(NULL, query, 3,
											argtypes, args, nulls, true,
											CURSOR_OPT_NO_SCROLL);
	if (src->portal == NULL)
		elog(ERROR, "could not open a cursor on %s: %s", src->relname,
			 SPI_result_code_string(SPI_result));
}

/* The row being read: every column deformed once. */
typedef struct Row
{
	TxnSource  *src;
	Datum		values[NCOLUMNS];
	bool		nulls[NCOLUMNS];
	const char *id;				/* transaction_id, once read */
} Row;

/* Value: column col of the row; NULL is an error naming the transaction. */
static Datum
Value(Row *row, int col)
{
	if (row->nulls[col])
	{
		if (row->id == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("a transaction in relation %s has a NULL transaction_id",
							row->src->relname)));
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("column \"%s\" of transaction \"%s\" in relation %s is NULL",
						required_columns[col].name, row->id, row->src->relname)));
	}
	return row->values[col];
}

static char *
Text(Row *row, int col)
{
	return TextDatumGetCString(Value(row, col));
}

/* txn_source_next: the next transaction, or false at the end. */
bool
txn_source_next(TxnSource *src, IncTxn *txn, char **participant_key)
{
	MemoryContext caller = CurrentMemoryContext;
	Row			row;

	src->current_id = src->current_participant = NULL;
	if (src->pos >= src->nbatch)
	{
		if (src->batch)
		{
			SPI_freetuptable(src->batch);
			src->batch = NULL;
		}
		if (src->done)
			return false;
		SPI_cursor_fetch(src->portal, true, FETCH_BATCH);
		/* SPI returns in its procedure context: back to the caller's */
		MemoryContextSwitchTo(caller);
		src->batch = SPI_tuptable;
		src->nbatch = SPI_processed;
		src->pos = 0;
		if (src->nbatch < FETCH_BATCH)
			src->done = true;
		if (src->nbatch == 0)
			return false;
	}

	row.src = src;
	row.id = NULL;
	heap_deform_tuple(src->batch->vals[src->pos++], src->batch->tupdesc,
					  row.values, row.nulls);
	src->current_id = src->current_participant = NULL;
	row.id = Text(&row, 0);
	src->current_id = row.id;
	txn->transaction_id = row.id;
	*participant_key = Text(&row, 1);
	src->current_participant = *participant_key;
	txn->transaction_type = Text(&row, 2);
	txn->transaction_date = DatumGetDateADT(Value(&row, 3));
	txn->sku_key = Text(&row, 4);
	txn->quantity = pg_numeric_to_dec(Value(&row, 5), "quantity", row.id);
	txn->uom_key = Text(&row, 6);
	txn->amount = pg_numeric_to_dec(Value(&row, 7), "amount", row.id);
	return true;
}

/* txn_source_close: release the cursor. */
void
txn_source_close(TxnSource *src)
{
	if (src->batch)
		SPI_freetuptable(src->batch);
	src->batch = NULL;
	if (src->portal)
		SPI_cursor_close(src->portal);
	src->portal = NULL;
}
