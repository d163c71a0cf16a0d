/*
 * refresh_entry.c
 *    incentives_internal.refresh_write(target, run_id, transactions,
 *    progress_every, skip, jobs, participant): a refresh's rows straight
 *    into a table of this transaction (the run's new partition, or the
 *    rows of a batch), the progress it reports, and its result (refresh.h;
 *    docs/lifecycle.md, How a refresh replaces the earnings).
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pg/base/convert.h"
#include "pg/refresh/refresh.h"
#include "pg/refresh/target_writer.h"

/* The leader: every row written here, progress reported from here. */
typedef struct Leader
{
	RefreshSink pub;
	TargetWriter writer;
	int64		run_id;
	uint64		every;			/* 0: no progress reported */
	int			unread;			/* shares whose read is not reported yet */
	uint64		total;			/* their participants so far */
	uint64		done;
	uint64		rows;
	uint64		reported;		/* done at the last NOTICE */
	RefreshFailure *failures;
	int			nfailures;
	int			failures_cap;
	MemoryContext context;		/* the failures */
} Leader;

/*
 * SetProgress: application_name "incentives refresh run N: done/total",
 * set for the transaction as set_config(..., true) does.
 */
static void
SetProgress(const char *text)
{
	(void) set_config_option("application_name", text,
							 superuser() ? PGC_SUSET : PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
}

/*
 * Progress: when due, a NOTICE (every progress_every participants and at
 * the end: "refresh_earnings: done of total participants, rows rows") and
 * application_name.
 */
static void
Progress(Leader *l)
{
	char		text[NAMEDATALEN * 2];

	if (l->every == 0 || l->unread > 0 || l->total == 0)
		return;
	if (l->done / l->every == l->reported / l->every && l->done < l->total)
		return;
	if (l->done == l->reported && l->done > 0)
		return;
	ereport(NOTICE,
			(errmsg("refresh_earnings: " UINT64_FORMAT " of " UINT64_FORMAT " participants, "
					UINT64_FORMAT " rows", l->done, l->total, l->rows)));
	l->reported = l->done;
	snprintf(text, sizeof(text), "incentives refresh run " INT64_FORMAT ": " UINT64_FORMAT "/"
			 UINT64_FORMAT, l->run_id, l->done, l->total);
	SetProgress(text);
}

static void
LeaderRead(RefreshSink *sink, uint64 participants)
{
	Leader	   *l = (Leader *) sink;

	l->unread--;
	l->total += participants;
	Progress(l);
}

static void
LeaderPut(RefreshSink *sink, HeapTuple tuple)
{
	target_writer_put(&((Leader *) sink)->writer, tuple);
}

static void
LeaderDone(RefreshSink *sink, uint64 participants, uint64 rows)
{
	Leader	   *l = (Leader *) sink;

	l->done += participants;
	l->rows += rows;
	Progress(l);
}

static void
LeaderFailed(RefreshSink *sink, const RefreshFailure *f)
{
	Leader	   *l = (Leader *) sink;
	MemoryContext old = MemoryContextSwitchTo(l->context);
	RefreshFailure *copy;

	if (l->nfailures == l->failures_cap)
	{
		l->failures_cap = l->failures_cap ? l->failures_cap * 2 : 16;
		l->failures = l->failures ?
			repalloc(l->failures, sizeof(RefreshFailure) * l->failures_cap) :
			palloc(sizeof(RefreshFailure) * l->failures_cap);
	}
	copy = &l->failures[l->nfailures++];
	*copy = *f;
	copy->participant_key = pstrdup(f->participant_key);
	copy->transaction_id = f->transaction_id ? pstrdup(f->transaction_id) : NULL;
	copy->message = pstrdup(f->message);
	MemoryContextSwitchTo(old);
}

/*
 * CheckWritable: rel has nothing the bulk path would skip: no index,
 * trigger, CHECK constraint, rule or row-level security.
 */
static void
CheckWritable(Relation rel)
{
	List	   *indexes = RelationGetIndexList(rel);

	if (indexes != NIL || rel->trigdesc != NULL || rel->rd_rules != NULL ||
		rel->rd_rel->relrowsecurity ||
		(rel->rd_att->constr && rel->rd_att->constr->num_check > 0))
		elog(ERROR, "refresh_write: \"%s\" has indexes, triggers, rules, checks or row security",
			 RelationGetRelationName(rel));
}

/*
 * CheckTarget: target is a table this transaction created, or the
 * partition of a refresh that holds the refresh lock across transactions
 * (an unattached table of incentives_internal), which the caller may
 * write: a plain table, or one partitioned by hash of participant_key
 * whose leaves are plain tables; it and its leaves writable by the bulk
 * path (CheckWritable).
 */
static void
CheckTarget(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	bool		created = rel->rd_createSubid != InvalidSubTransactionId;
	bool		held = refresh_holds() && !rel->rd_rel->relispartition &&
		get_namespace_oid("incentives_internal", false) == RelationGetNamespace(rel);
	TargetRoute route;
	int			i;

	if ((rel->rd_rel->relkind != RELKIND_RELATION &&
		 rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE) || !(created || held))
		elog(ERROR, "refresh_write: \"%s\" is not a table created by this transaction or this refresh", name);
	CheckWritable(rel);
	if (pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, name);
	refresh_check_desc(RelationGetDescr(rel), name);
	if (target_route_init(&route, rel))
		for (i = 0; i < route.nleaves; i++)
		{
			/* released at once: a writer's index build must not wait for it */
			Relation	leaf = table_open(route.leaves[i], AccessShareLock);

			CheckWritable(leaf);
			table_close(leaf, AccessShareLock);
		}
}

/* TextArray: n strings (or NULLs) as text[]. */
static Datum
TextArray(Leader *l, int field)
{
	ArrayBuildState *state = initArrayResult(TEXTOID, CurrentMemoryContext, false);
	int			i;

	for (i = 0; i < l->nfailures; i++)
	{
		RefreshFailure *f = &l->failures[i];
		const char *s;

		switch (field)
		{
			case 0:
				s = f->participant_key;
				break;
			case 1:
				s = f->transaction_id;
				break;
			case 2:
				s = f->sqlstate;
				break;
			case 3:
				s = f->message;
				break;
			default:
				/* the partial ones only */
				if (!f->partial)
					continue;
				s = f->participant_key;
				break;
		}
		accumArrayResult(state, s ? CStringGetTextDatum(s) : (Datum) 0, s == NULL, TEXTOID,
						 CurrentMemoryContext);
	}
	return makeArrayResult(state, CurrentMemoryContext);
}

PG_FUNCTION_INFO_V1(incentives_refresh_write);

/* ArgNotNull: argument n, which must not be NULL. */
static void
ArgNotNull(FunctionCallInfo fcinfo, int n, const char *name)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("refresh_write: %s must not be NULL", name)));
}

/*
 * incentives_refresh_write: refresh_write(target regclass, run_id bigint,
 * transactions regclass, progress_every integer, skip boolean, jobs
 * integer, participant text DEFAULT NULL, OUT participants integer, OUT
 * rows bigint, OUT total numeric, OUT failed_participants text[], OUT
 * failed_transactions text[], OUT failed_sqlstates text[], OUT
 * failed_messages text[], OUT partial_participants text[]).
 *
 * The caller (40_refresh.sql) has created target without indexes: the
 * run's new partition (a table, or one partitioned by hash of
 * participant_key into leaves), whose indexes it builds after this call
 * (those of the leaves its writers have not built) before it swaps the
 * partition in, or a temporary table whose rows it then moves into
 * incentives.earnings in place.  Every participant of transactions (or
 * only participant, with its groups' members) is calculated and written
 * (target_writer.c) by this backend (jobs 1: target created by this
 * transaction), or by jobs background writers, each into leaves of its
 * own, which it then indexes (refresh_parallel.c: target committed
 * before, under the refresh lock), all in this statement's snapshot.
 * progress_every 0 reports no progress.  The result is what the run log
 * and the skip handling need: the participants read, the rows written and
 * their incentive total, and the participants skipped (on_error =>
 * 'skip': participant, transaction, SQLSTATE, message), those with rows
 * already written listed apart (the caller deletes those rows).  Version
 * 0.3.0 of the extension declares the function without participant
 * (PG_NARGS tells).
 */
Datum
incentives_refresh_write(PG_FUNCTION_ARGS)
{
	Oid			target;
	RefreshArgs args;
	int			every;
	int			jobs;
	Relation	rel;
	Leader		l;
	RefreshTotals totals;
	TupleDesc	result_desc;
	Datum		values[8];
	bool		nulls[8] = {false, false, false, false, false, false, false, false};
	IncDec		total;
	char		appname[NAMEDATALEN * 2];
	const char *why;

	ArgNotNull(fcinfo, 0, "target");
	ArgNotNull(fcinfo, 1, "run_id");
	ArgNotNull(fcinfo, 2, "transactions");
	ArgNotNull(fcinfo, 3, "progress_every");
	ArgNotNull(fcinfo, 4, "skip");
	ArgNotNull(fcinfo, 5, "jobs");
	target = PG_GETARG_OID(0);
	every = PG_GETARG_INT32(3);
	jobs = PG_GETARG_INT32(5);
	memset(&args, 0, sizeof(args));
	args.run_id = PG_GETARG_INT64(1);
	args.relid = PG_GETARG_OID(2);
	args.skip = PG_GETARG_BOOL(4);
	if (PG_NARGS() > 6 && !PG_ARGISNULL(6))
	{
		args.participant = text_to_cstring(PG_GETARG_TEXT_PP(6));
		/* one participant: one unit, in this process */
		jobs = 1;
	}
	args.calculated_at = GetCurrentTransactionStartTimestamp();
	if (get_call_result_type(fcinfo, NULL, &result_desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "refresh_write must return a record");

	rel = table_open(target, RowExclusiveLock);
	CheckTarget(rel);

	memset(&l, 0, sizeof(l));
	l.pub.read = LeaderRead;
	l.pub.put = LeaderPut;
	l.pub.done = LeaderDone;
	l.pub.failed = LeaderFailed;
	l.run_id = args.run_id;
	l.every = Max(every, 0);
	l.context = CurrentMemoryContext;
	if (l.every > 0)
	{
		snprintf(appname, sizeof(appname), "incentives refresh run " INT64_FORMAT, args.run_id);
		SetProgress(appname);
	}

	if (jobs > 1 && !refresh_parallel_safe(args.relid, &why))
	{
		ereport(NOTICE,
				(errmsg("refresh_earnings: one process instead of %d jobs: %s", jobs, why)));
		jobs = 1;
	}

	if (jobs > 1 && rel->rd_createSubid != InvalidSubTransactionId)
		elog(ERROR, "refresh_write: jobs > 1 writes into a partition committed before the call");

	target_writer_begin(&l.writer, rel);
	l.unread = jobs;
	if (jobs > 1)
	{
		if (!l.writer.partitioned)
			elog(ERROR, "refresh_write: jobs > 1 writes into a partitioned table");
		refresh_parallel(&args, jobs, rel, &l.writer.route, &l.pub, &totals);
	}
	else
		refresh_share_calculate(&args, 0, 1, NULL, RelationGetDescr(rel), &l.pub, &totals);
	target_writer_end(&l.writer);
	table_close(rel, NoLock);

	/* the final progress, as a setting for the rest of the transaction */
	if (l.every > 0 && l.total > 0)
	{
		snprintf(appname, sizeof(appname), "incentives refresh run " INT64_FORMAT ": " UINT64_FORMAT "/"
				 UINT64_FORMAT, args.run_id, l.done, l.total);
		SetProgress(appname);
	}

	if (totals.participants > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a refresh of more than %d participants", PG_INT32_MAX)));
	values[0] = Int32GetDatum((int32) totals.participants);
	values[1] = Int64GetDatum((int64) totals.rows);
	total.coef = totals.cents;
	total.scale = 2;
	values[2] = pg_dec_to_numeric(&total);
	values[3] = TextArray(&l, 0);
	values[4] = TextArray(&l, 1);
	values[5] = TextArray(&l, 2);
	values[6] = TextArray(&l, 3);
	values[7] = TextArray(&l, 4);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(result_desc), values, nulls)));
}
