/*
 * txn_relation.c
 *    The transactions relation of a calculation (see txn_relation.h): any
 *    table or view with the transaction columns, checked up front (every
 *    column present, with a type that converts exactly) and named only as
 *    a quoted identifier; and its read, one prepared query per backend,
 *    relation and kind of read (everyone or one participant, every date or
 *    through a date) (SPI_keepplan), planned for total time (not a fast
 *    start), parallel where the planner wants it, with no ORDER BY.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "optimizer/plancat.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "pg/base/convert.h"
#include "pg/base/error_context.h"
#include "pg/read/txn_relation.h"

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

StaticAssertDecl(lengthof(required_columns) == TXN_NREQUIRED,
				 "one required column per read column");

/*
 * The optional columns (docs/reference.md, Transactions), in the order of
 * their TXN_HAS_* bits and of the read columns after the required ones.
 */
static const RequiredColumn optional_columns[] = {
	{"grower_key", COL_TEXT},
	{"currency", COL_TEXT},
	{"original_transaction_id", COL_TEXT},
};

StaticAssertDecl(lengthof(optional_columns) == TXN_NCOLUMNS - TXN_NREQUIRED,
				 "one optional column per read column");

/* txn_column_name: the name of read column c. */
const char *
txn_column_name(int c)
{
	return c < TXN_NREQUIRED ? required_columns[c].name :
		optional_columns[c - TXN_NREQUIRED].name;
}

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

/*
 * UniqueIds: does a valid, immediate, non-partial unique index on the
 * plain column attnum alone make a repeated transaction_id impossible?
 */
static bool
UniqueIds(Relation rel, AttrNumber attnum)
{
	List	   *indexes;
	ListCell   *lc;
	bool		unique = false;

	if (rel->rd_rel->relkind != RELKIND_RELATION &&
		rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return false;
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		HeapTuple	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
		Form_pg_index index;

		if (!HeapTupleIsValid(tuple))
			continue;
		index = (Form_pg_index) GETSTRUCT(tuple);
		if (index->indisunique && index->indimmediate && index->indisvalid &&
			index->indnkeyatts == 1 && index->indkey.values[0] == attnum &&
			heap_attisnull(tuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(tuple, Anum_pg_index_indexprs, NULL))
			unique = true;
		ReleaseSysCache(tuple);
	}
	list_free(indexes);
	return unique;
}

/* txn_relation_check: the relation's name, columns and unique index. */
void
txn_relation_check(Oid relid, TxnRelation *out)
{
	char	   *nspname = get_namespace_name(get_rel_namespace(relid));
	char	   *name = get_rel_name(relid);
	Relation	rel;
	TupleDesc	desc;
	int			c,
				a;
	BlockNumber pages;
	/* the planner's row count estimate, in its own types (no money here) */
	double		tuples,
				allvisfrac;

	if (nspname == NULL || name == NULL)
	{
		pg_error_context_trim();
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	}
	out->relname = quote_qualified_identifier(nspname, name);
	out->unique_ids = false;
	rel = relation_open(relid, AccessShareLock);
	desc = RelationGetDescr(rel);
	out->optional = 0;
	for (c = 0; c < TXN_NCOLUMNS; c++)
	{
		const RequiredColumn *column = c < TXN_NREQUIRED ? &required_columns[c] :
			&optional_columns[c - TXN_NREQUIRED];
		Form_pg_attribute found = NULL;

		for (a = 0; a < desc->natts; a++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, a);

			if (!att->attisdropped && strcmp(NameStr(att->attname), column->name) == 0)
				found = att;
		}
		if (found == NULL && c >= TXN_NREQUIRED)
			continue;
		if (found == NULL)
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("relation %s has no column \"%s\"", out->relname, column->name),
					 errhint("The transactions relation needs the columns transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key and amount.")));
		}
		if (!TypeFits(found->atttypid, column->kind))
		{
			pg_error_context_trim();
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of relation %s has type %s, expected %s",
							column->name, out->relname,
							format_type_be(found->atttypid),
							KindName(column->kind))));
		}
		if (c >= TXN_NREQUIRED)
			out->optional |= 1 << (c - TXN_NREQUIRED);
		if (c == C_ID)
			out->unique_ids = UniqueIds(rel, found->attnum);
	}
	/*
	 * the rows: pg_class.reltuples (a view's, a partitioned table's) or, for
	 * a table, the planner's estimate (reltuples scaled to its pages now, or
	 * from its pages and row width when never analyzed: the store's batches
	 * are then not doubled again and again while it is read); capped far
	 * above any table
	 */
	tuples = rel->rd_rel->reltuples;
	if (rel->rd_rel->relkind == RELKIND_RELATION || rel->rd_rel->relkind == RELKIND_MATVIEW)
		estimate_rel_size(rel, NULL, &pages, &tuples, &allvisfrac);
	if (tuples <= 0)
		out->rows = 0;
	else if (tuples >= 1e15)
		out->rows = UINT64CONST(1000000000000000);
	else
		out->rows = (uint64) tuples;
	relation_close(rel, AccessShareLock);
}

/*
 * txn_relation_query: the text of the read (see txn_relation_read).  A
 * matched return's matching date (docs/reference.md, Returns against their
 * sale) is its original's date: the returns that name an original are
 * found first (through an index on original_transaction_id where there is
 * one), each joined to its original -- a transaction of the same
 * participant and SKU dated on or before it (through an index on
 * transaction_id) -- and the few found are hashed and joined to the read
 * by transaction_id.  Joins rather than a subquery per row, so that the
 * read stays parallel safe (a refresh's writers run it too).
 */
char *
txn_relation_query(const char *relname, int optional, bool one_participant, bool through_date)
{
	StringInfoData q;
	const char *participants = "participant_key::pg_catalog.text COLLATE \"C\""
		" OPERATOR(pg_catalog.=) ANY ($1)";
	const char *date_param = one_participant ? "$2" : "$1";

	initStringInfo(&q);
	appendStringInfoString(&q,
						   "SELECT t.transaction_id::pg_catalog.text, t.participant_key::pg_catalog.text,"
						   " t.transaction_type::pg_catalog.text, t.transaction_date,"
						   " t.sku_key::pg_catalog.text, t.quantity::pg_catalog.numeric,"
						   " t.uom_key::pg_catalog.text, t.amount::pg_catalog.numeric, ");
	appendStringInfoString(&q, (optional & TXN_HAS_GROWER) ?
						   "t.grower_key::pg_catalog.text, " : "NULL::pg_catalog.text, ");
	appendStringInfoString(&q, (optional & TXN_HAS_CURRENCY) ?
						   "t.currency::pg_catalog.text, " : "NULL::pg_catalog.text, ");
	appendStringInfoString(&q, (optional & TXN_HAS_ORIGINAL) ?
						   "m.matching_date" : "NULL::pg_catalog.date");
	appendStringInfo(&q, " FROM %s AS t", relname);
	if (optional & TXN_HAS_ORIGINAL)
	{
		appendStringInfo(&q,
						 " LEFT JOIN (SELECT r.transaction_id::pg_catalog.text AS return_id,"
						 " pg_catalog.min(o.transaction_date) AS matching_date"
						 " FROM %s AS r JOIN %s AS o"
						 " ON o.transaction_id::pg_catalog.text OPERATOR(pg_catalog.=)"
						 " r.original_transaction_id::pg_catalog.text"
						 " AND o.participant_key::pg_catalog.text OPERATOR(pg_catalog.=)"
						 " r.participant_key::pg_catalog.text"
						 " AND o.sku_key::pg_catalog.text OPERATOR(pg_catalog.=) r.sku_key::pg_catalog.text"
						 " AND o.transaction_date OPERATOR(pg_catalog.<=) r.transaction_date"
						 " WHERE r.original_transaction_id IS NOT NULL"
						 " AND (r.quantity OPERATOR(pg_catalog.<) 0"
						 " OR (r.quantity OPERATOR(pg_catalog.=) 0 AND r.amount OPERATOR(pg_catalog.<) 0))",
						 relname, relname);
		if (one_participant)
			appendStringInfo(&q, " AND r.%s", participants);
		if (through_date)
			appendStringInfo(&q, " AND r.transaction_date OPERATOR(pg_catalog.<=) %s", date_param);
		appendStringInfoString(&q,
							   " GROUP BY 1) AS m ON m.return_id OPERATOR(pg_catalog.=)"
							   " t.transaction_id::pg_catalog.text");
	}
	if (one_participant)
		appendStringInfo(&q, " WHERE t.%s", participants);
	if (through_date)
		appendStringInfo(&q, " %s (t.transaction_date IS NULL"
						 " OR t.transaction_date OPERATOR(pg_catalog.<=) %s)",
						 one_participant ? "AND" : "WHERE", date_param);
	return q.data;
}

/*
 * A kept plan of the read of one relation.  The query names the relation,
 * so the entry is used only while the relation still has that name (a
 * renamed or replaced relation gets a new one).
 */
typedef struct ReadPlan
{
	Oid			relid;
	int			optional;
	bool		one_participant;
	bool		through_date;
	char	   *relname;
	SPIPlanPtr	plan;
} ReadPlan;

#define MAX_READ_PLANS 16
static ReadPlan read_plans[MAX_READ_PLANS];
static int	nread_plans = 0;

/*
 * txn_relation_read: the kept plan reading relid (all, or one participant;
 * every date, or through a date).
 */
SPIPlanPtr
txn_relation_read(Oid relid, const char *relname, int optional, bool one_participant,
				  bool through_date)
{
	Oid			argtypes[2];
	int			nargs = 0;
	ReadPlan   *slot = NULL;
	char	   *query;
	SPIPlanPtr	plan;
	int			i;

	for (i = 0; i < nread_plans; i++)
	{
		ReadPlan   *p = &read_plans[i];

		if (p->relid == relid && p->one_participant == one_participant &&
			p->through_date == through_date)
		{
			if (strcmp(p->relname, relname) == 0 && p->optional == optional)
				return p->plan;
			slot = p;			/* renamed, replaced, columns added: plan again */
			break;
		}
	}

	/*
	 * A whole read, planned for total time (no fast start), parallel where
	 * the planner wants it; the one-participant read leans on the index on
	 * participant_key (COLLATE "C", as the extension's own).  A NULL
	 * transaction_date passes the date filter, to be reported as NULL.
	 */
	if (one_participant)
		argtypes[nargs++] = TEXTARRAYOID;
	if (through_date)
		argtypes[nargs++] = DATEOID;
	query = txn_relation_query(relname, optional, one_participant, through_date);
	plan = SPI_prepare_cursor(query, nargs, argtypes,
							  one_participant ? 0 : CURSOR_OPT_PARALLEL_OK);
	if (plan == NULL)
		elog(ERROR, "could not prepare the read of %s: %s", relname,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep the read of %s", relname);
	pfree(query);

	if (slot)
		SPI_freeplan(slot->plan);
	else if (nread_plans < MAX_READ_PLANS)
		slot = &read_plans[nread_plans++];
	else
	{
		/* full: forget the oldest */
		SPI_freeplan(read_plans[0].plan);
		pfree(read_plans[0].relname);
		memmove(read_plans, read_plans + 1, sizeof(ReadPlan) * (MAX_READ_PLANS - 1));
		slot = &read_plans[MAX_READ_PLANS - 1];
		slot->relname = NULL;
	}
	if (slot->relname)
		pfree(slot->relname);
	slot->relid = relid;
	slot->optional = optional;
	slot->one_participant = one_participant;
	slot->through_date = through_date;
	slot->relname = MemoryContextStrdup(TopMemoryContext, relname);
	slot->plan = plan;
	return plan;
}


/*
 * txn_relation_params: $1 the participants (an array), then the date, as
 * read declares them.
 */
ParamListInfo
txn_relation_params(const char *const *participants, int nparticipants,
					const DateADT *through_date)
{
	int			n = (participants != NULL) + (through_date != NULL);
	ParamListInfo params;
	int			i;

	if (n == 0)
		return NULL;
	params = makeParamList(n);
	for (i = 0; i < n; i++)
	{
		bool		date = through_date != NULL && i == n - 1;

		params->params[i].value = date ? DateADTGetDatum(*through_date) :
			pg_cstring_array(participants, nparticipants);
		params->params[i].ptype = date ? DATEOID : TEXTARRAYOID;
		params->params[i].isnull = false;
		params->params[i].pflags = PARAM_FLAG_CONST;
	}
	return params;
}
