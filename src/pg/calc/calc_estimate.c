/*
 * calc_estimate.c
 *    The planner's row estimates of incentive_calculate and forecast
 *    (docs/reference.md, Plans): support functions answering
 *    SupportRequestRows from what the catalog knows before the call --
 *    the size of the transactions relation passed, its number of distinct
 *    participants, the offers, and the earning rows per transaction the
 *    last refresh of incentives.earnings wrote.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

/* Where each function's arguments are (0-based; -1: it has none). */
typedef struct CalcArguments
{
	int			participant;	/* participant_key text */
	int			offer_keys;		/* offer_keys text[] */
	int			transactions;	/* transactions regclass */
} CalcArguments;

static const CalcArguments calculate_arguments = {0, 2, 3};
static const CalcArguments forecast_arguments = {1, 2, 3};

/* PostgreSQL's own guess of distinct values without statistics. */
#define DEFAULT_PARTICIPANTS 200.0

/* ConstArgument: argument n of the call when it is a constant, else NULL. */
static Const *
ConstArgument(List *args, int n)
{
	Node	   *arg;

	if (n < 0 || n >= list_length(args))
		return NULL;
	arg = (Node *) list_nth(args, n);
	return IsA(arg, Const) ? (Const *) arg : NULL;
}

/* NamedRelation: incentives.NAME's oid, or InvalidOid. */
static Oid
NamedRelation(const char *name)
{
	Oid			nsp = get_namespace_oid("incentives", true);

	return OidIsValid(nsp) ? get_relname_relid(name, nsp) : InvalidOid;
}

/*
 * RelationRows: the rows the planner expects in relid (a table, a
 * partitioned table's leaves or a materialized view), or -1 when it
 * cannot tell (a view, a relation it may not open).
 */
static double
RelationRows(Oid relid)
{
	Relation	rel;
	double		rows = -1;

	if (!OidIsValid(relid))
		return -1;
	rel = try_table_open(relid, AccessShareLock);
	if (rel == NULL)
		return -1;
	if (rel->rd_rel->relkind == RELKIND_RELATION || rel->rd_rel->relkind == RELKIND_MATVIEW)
	{
		BlockNumber pages;
		double		allvisfrac;

		estimate_rel_size(rel, NULL, &pages, &rows, &allvisfrac);
	}
	else if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
	{
		List	   *leaves = find_all_inheritors(relid, AccessShareLock, NULL);
		ListCell   *lc;

		rows = 0;
		foreach(lc, leaves)
		{
			Oid			leaf = lfirst_oid(lc);

			if (leaf != relid && get_rel_relkind(leaf) == RELKIND_RELATION)
				rows += Max(RelationRows(leaf), 0);
		}
	}
	table_close(rel, AccessShareLock);
	return rows;
}

/*
 * Participants: the distinct participant_key values of relid from its
 * statistics, when the caller may read the relation (the statistics of a
 * relation it may not read stay hidden, as pg_stats hides them); else
 * PostgreSQL's default guess.
 */
static double
Participants(Oid relid, double rows)
{
	AttrNumber	attnum = get_attnum(relid, "participant_key");
	HeapTuple	tuple;
	double		distinct = DEFAULT_PARTICIPANTS;

	if (attnum == InvalidAttrNumber ||
		pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		return Min(distinct, Max(rows, 1));
	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid), Int16GetDatum(attnum),
							BoolGetDatum(false));
	if (!HeapTupleIsValid(tuple))
		tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid), Int16GetDatum(attnum),
								BoolGetDatum(true));
	if (HeapTupleIsValid(tuple))
	{
		float4		stadistinct = ((Form_pg_statistic) GETSTRUCT(tuple))->stadistinct;

		if (stadistinct > 0)
			distinct = stadistinct;
		else if (stadistinct < 0)
			distinct = -stadistinct * rows;
		ReleaseSysCache(tuple);
	}
	return Min(Max(distinct, 1), Max(rows, 1));
}

/*
 * EarningsPerTransaction: the earning rows per transaction the last full
 * refresh wrote (incentives.earnings against incentives.transactions), or
 * 1 before any.
 */
static double
EarningsPerTransaction(void)
{
	double		earnings = RelationRows(NamedRelation("earnings"));
	double		transactions = RelationRows(NamedRelation("transactions"));

	if (earnings <= 0 || transactions <= 0)
		return 1;
	return earnings / transactions;
}

/*
 * OfferShare: the share of the stored offers a call names in offer_keys
 * (a constant array), else 1.
 */
static double
OfferShare(Const *keys)
{
	double		offers;
	ArrayType  *array;

	if (keys == NULL || keys->constisnull)
		return 1;
	offers = RelationRows(NamedRelation("offers"));
	if (offers <= 0)
		return 1;
	array = DatumGetArrayTypeP(keys->constvalue);
	return Min(ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)) / offers, 1);
}

/*
 * Estimate: the rows of one call.  The calculation: the transactions the
 * relation holds (of one participant, when participant_key is given) times
 * the earning rows per transaction, times the share of offers named; the
 * forecast: a row per participant and offer, bounded by the calculation's
 * rows.  -1 when the relation's size is unknown (a view): the declared
 * ROWS stand.
 */
static double
Estimate(FuncExpr *call, const CalcArguments *where, bool forecast)
{
	Const	   *relation = ConstArgument(call->args, where->transactions);
	Const	   *participant = ConstArgument(call->args, where->participant);
	Oid			relid;
	double		rows,
				participants,
				offers,
				share;

	if (relation == NULL || relation->constisnull)
		return -1;
	relid = DatumGetObjectId(relation->constvalue);
	rows = RelationRows(relid);
	if (rows < 0)
		return -1;
	participants = Participants(relid, rows);
	share = OfferShare(ConstArgument(call->args, where->offer_keys));
	if (participant != NULL && !participant->constisnull)
	{
		rows /= participants;
		participants = 1;
	}
	rows *= EarningsPerTransaction() * share;
	if (forecast)
	{
		offers = Max(RelationRows(NamedRelation("offers")), 1) * share;
		rows = Min(participants * offers, Max(rows, participants));
	}
	return clamp_row_est(rows);
}

/* Support: answer SupportRequestRows for a call of one of the two. */
static Node *
Support(Node *request, const CalcArguments *where, bool forecast)
{
	SupportRequestRows *req;
	double		rows;

	if (!IsA(request, SupportRequestRows))
		return NULL;
	req = (SupportRequestRows *) request;
	if (!IsA(req->node, FuncExpr))
		return NULL;
	rows = Estimate((FuncExpr *) req->node, where, forecast);
	if (rows < 0)
		return NULL;
	req->rows = rows;
	return (Node *) req;
}

PG_FUNCTION_INFO_V1(incentives_calculate_support);

/* incentives_calculate_support: incentive_calculate's planner support. */
Datum
incentives_calculate_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(Support((Node *) PG_GETARG_POINTER(0), &calculate_arguments, false));
}

PG_FUNCTION_INFO_V1(incentives_forecast_support);

/* incentives_forecast_support: forecast's planner support. */
Datum
incentives_forecast_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(Support((Node *) PG_GETARG_POINTER(0), &forecast_arguments, true));
}
