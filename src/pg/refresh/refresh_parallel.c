/*
 * refresh_parallel.c
 *    A full refresh with jobs > 1 (refresh.h; docs/architecture.md, A
 *    refresh of everyone, jobs => N): whether the read may run in another
 *    process, the background writers' entry (a share written and
 *    committed, then, once every share is, its leaves indexed), and the
 *    backend's launch of them and its wait for their ends.  The messages
 *    of the queues: refresh_messages.c.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "pg/base/compat.h"
#include "pg/refresh/refresh.h"
#include "pg/refresh/refresh_messages.h"
#include "pg/refresh/target_writer.h"
#include "pg/read/txn_relation.h"

/* The shared memory segment: its magic number and table of contents. */
#define SEGMENT_MAGIC	0x1AC0F00D
#define KEY_SHARED		UINT64CONST(0x1AC0000000000001)
#define KEY_QUEUES		UINT64CONST(0x1AC0000000000002)
#define KEY_SNAPSHOT	UINT64CONST(0x1AC0000000000003)
#define KEY_SETTINGS	UINT64CONST(0x1AC0000000000004)

/* Each writer's queue to the backend (progress, failures, totals). */
#define QUEUE_BYTES		(256 * 1024)

/* What a writer tells the backend through shared memory. */
typedef struct WriterSlot
{
	bool		committed;		/* its rows are committed */
	bool		failed;			/* it raised the error below */
	char		sqlstate[6];
	char		message[1024];
	char		detail[1024];
	char		hint[512];
	char		context[2048];
} WriterSlot;

/* Who builds the leaves' indexes (Shared.builds). */
#define BUILDS_UNDECIDED	0
#define BUILDS_WRITERS		1	/* each writer its own, once every share is committed */
#define BUILDS_CALLER		2	/* the caller, every leaf (a writer did not start) */

/* What every writer reads first. */
typedef struct Shared
{
	RefreshArgs args;
	Oid			database;
	Oid			authenticated_user;
	Oid			current_user;
	int			sec_context;
	Oid			target;			/* the partition */
	int			nshares;		/* = writers */
	PGPROC	   *leader;			/* whose snapshot the writers share */
	pg_atomic_uint32 committed; /* shares whose rows are committed */
	pg_atomic_uint32 builds;	/* BUILDS_* */
	ConditionVariable changed;	/* committed or builds changed */
	WriterSlot	slots[FLEXIBLE_ARRAY_MEMBER];	/* writer i: share i */
} Shared;

/* ---- parallel safety ---------------------------------------------------- */

/* TemporaryOrForeign: a walker finding a relation a worker cannot read. */
static bool
TemporaryOrForeign(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION &&
			(get_rel_persistence(rte->relid) == RELPERSISTENCE_TEMP ||
			 get_rel_relkind(rte->relid) == RELKIND_FOREIGN_TABLE))
		{
			*(Oid *) context = rte->relid;
			return true;
		}
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, TemporaryOrForeign, context,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, TemporaryOrForeign, context);
}

/*
 * QuerySafe: may query_text run in a background writer, as it would in a
 * parallel worker (its own session, the caller's snapshot): every function it
 * calls, its row-level security policies' and its views' included,
 * parallel safe, and no temporary or foreign table read?
 */
static bool
QuerySafe(const char *query_text, const char **why)
{
	List	   *raw = pg_parse_query(query_text);
	ListCell   *lc;

	foreach(lc, raw)
	{
		List	   *queries = pg_analyze_and_rewrite_fixedparams(lfirst_node(RawStmt, lc),
																 query_text, NULL, 0, NULL);
		ListCell   *q;

		foreach(q, queries)
		{
			Query	   *query = lfirst_node(Query, q);
			Oid			rel = InvalidOid;

			if (max_parallel_hazard(query) != PROPARALLEL_SAFE)
			{
				*why = psprintf("reading it calls a function that is not parallel safe (%s)",
								query_text);
				return false;
			}
			if (TemporaryOrForeign((Node *) query, &rel))
			{
				*why = psprintf("it reads %s, which the background writers cannot read",
								get_rel_name(rel));
				return false;
			}
		}
	}
	return true;
}

/*
 * refresh_parallel_safe: the transactions relation as the calculation
 * reads it, and the extension's tables a calculation reads besides (with
 * their row-level security, if any; a table the declarations do not have
 * yet, such as 0.5.0's before the update, is not read and not checked).
 */
bool
refresh_parallel_safe(Oid relid, const char **why)
{
	static const char *const tables[] = {
		"offers", "skus", "uom_conversions", "participant_properties",
		"enrollments", "participant_groups", "groups", "products",
		"sku_products", "exchange_rates"
	};
	Oid			nsp = get_namespace_oid("incentives", false);
	TxnRelation rel;
	int			i;

	if (!IsUnderPostmaster)
	{
		*why = "a single-user server has no background workers";
		return false;
	}
	txn_relation_check(relid, &rel);
	if (!QuerySafe(txn_relation_query(rel.relname, rel.optional, false, false), why))
		return false;
	for (i = 0; i < (int) lengthof(tables); i++)
		if (OidIsValid(get_relname_relid(tables[i], nsp)) &&
			!QuerySafe(psprintf("SELECT 1 FROM incentives.%s", tables[i]), why))
			return false;
	return true;
}

/* ---- a background writer ------------------------------------------------- */

PGDLLEXPORT void incentives_refresh_writer(Datum arg);

/*
 * A writer's sink: its rows into the partition, the rest (read, done,
 * failed) to the backend through its queue.
 */
typedef struct WriterSink
{
	RefreshSink pub;
	TargetWriter writer;
	QueueSink	queue;
} WriterSink;

static void
WriterRead(RefreshSink *sink, uint64 participants)
{
	WriterSink *ws = (WriterSink *) sink;

	ws->queue.pub.read(&ws->queue.pub, participants);
}

static void
WriterPut(RefreshSink *sink, HeapTuple tuple)
{
	target_writer_put(&((WriterSink *) sink)->writer, tuple);
}

static void
WriterDone(RefreshSink *sink, uint64 participants, uint64 rows)
{
	WriterSink *ws = (WriterSink *) sink;

	ws->queue.pub.done(&ws->queue.pub, participants, rows);
}

static void
WriterFailed(RefreshSink *sink, const RefreshFailure *f)
{
	WriterSink *ws = (WriterSink *) sink;

	ws->queue.pub.failed(&ws->queue.pub, f);
}

/* CopyText: src into a slot's field of size bytes ("" for NULL). */
static void
CopyText(char *dst, const char *src, Size size)
{
	strlcpy(dst, src ? src : "", size);
}

/*
 * WriteShare: the writer's transaction: the backend's settings, then,
 * in REPEATABLE READ with the backend's snapshot and as its role, the
 * share calculated and its rows written into the partition's leaves,
 * committed.
 */
static void
WriteShare(Shared *shared, int share, char *snapshot, char *settings, QueueSink *qs,
		   RefreshTotals *totals)
{
	WriterSink	ws;
	Relation	rel;
	char		activity[NAMEDATALEN * 2];

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	RestoreGUCState(settings);
	CommitTransactionCommand();

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	/* one snapshot for the whole share, the backend's */
	XactIsoLevel = XACT_REPEATABLE_READ;
	RestoreTransactionSnapshot(RestoreSnapshot(snapshot), shared->leader);
	PushActiveSnapshot(GetTransactionSnapshot());
	SetUserIdAndSecContext(shared->current_user, shared->sec_context);
	snprintf(activity, sizeof(activity), "incentives refresh run " INT64_FORMAT ": share %d of %d",
			 shared->args.run_id, share + 1, shared->nshares);
	pgstat_report_activity(STATE_RUNNING, activity);

	rel = table_open(shared->target, RowExclusiveLock);
	memset(&ws, 0, sizeof(ws));
	ws.pub.read = WriterRead;
	ws.pub.put = WriterPut;
	ws.pub.done = WriterDone;
	ws.pub.failed = WriterFailed;
	ws.queue = *qs;
	target_writer_begin(&ws.writer, rel);
	refresh_share_calculate(&shared->args, share, shared->nshares,
							ws.writer.partitioned ? &ws.writer.route : NULL,
							RelationGetDescr(rel), &ws.pub, totals);
	target_writer_end(&ws.writer);
	*qs = ws.queue;
	table_close(rel, NoLock);

	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * AwaitBuilds: after this writer's commit, wait until the backend has
 * said who builds the indexes and, when the writers do, until every share
 * is committed (no other writer inserts into this writer's leaves any
 * more: a group's members may be in other leaves than its first key).
 * True when this writer builds.
 */
static bool
AwaitBuilds(Shared *shared)
{
	uint32		builds;

	pg_atomic_add_fetch_u32(&shared->committed, 1);
	ConditionVariableBroadcast(&shared->changed);
	ConditionVariablePrepareToSleep(&shared->changed);
	for (;;)
	{
		builds = pg_atomic_read_u32(&shared->builds);
		if (builds == BUILDS_CALLER ||
			(builds == BUILDS_WRITERS &&
			 pg_atomic_read_u32(&shared->committed) == (uint32) shared->nshares))
			break;
		ConditionVariableSleep(&shared->changed, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	return builds == BUILDS_WRITERS;
}

/*
 * BuildLeaves: the writer's second transaction: the primary key and the
 * offer index of each of its leaves (incentives_internal.
 * refresh_earnings_index, one build after the other), with its share of
 * maintenance_work_mem (PostgreSQL's parallel index build divides it among
 * its processes too), committed.
 */
static void
BuildLeaves(Shared *shared, int share)
{
	Relation	rel;
	TargetRoute route;
	Oid		   *leaves;
	int			nleaves;
	int			i;
	char		memory[32];
	char		activity[NAMEDATALEN * 2];

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	SetUserIdAndSecContext(shared->current_user, shared->sec_context);
	snprintf(activity, sizeof(activity), "incentives refresh run " INT64_FORMAT ": indexes of share %d of %d",
			 shared->args.run_id, share + 1, shared->nshares);
	pgstat_report_activity(STATE_RUNNING, activity);
	snprintf(memory, sizeof(memory), "%dkB", Max(maintenance_work_mem / shared->nshares, 1024));
	(void) set_config_option("maintenance_work_mem", memory, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);

	rel = table_open(shared->target, AccessShareLock);
	if (!target_route_init(&route, rel))
		elog(ERROR, "refresh_write: a writer's target is not partitioned");
	leaves = palloc(sizeof(Oid) * route.nleaves);
	nleaves = target_route_share_leaves(&route, share, shared->nshares, leaves);
	table_close(rel, NoLock);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	for (i = 0; i < nleaves; i++)
	{
		Oid			argtypes[1] = {REGCLASSOID};
		Datum		values[1] = {ObjectIdGetDatum(leaves[i])};

		if (SPI_execute_with_args("SELECT incentives_internal.refresh_earnings_index($1)",
								  1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "refresh_write: the indexes of a leaf could not be built");
	}
	SPI_finish();

	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * CancelSleepAtDetach: the writer's sleep on the segment's condition
 * variable cancelled while the segment is still mapped.  A writer ended
 * while it waits in AwaitBuilds (a SIGTERM from the backend, between its
 * transactions) would otherwise cancel it at process exit, after the
 * segment is gone.
 */
static void
CancelSleepAtDetach(dsm_segment *seg, Datum arg)
{
	(void) ConditionVariableCancelSleep();
}

/*
 * incentives_refresh_writer: a background writer's entry (arg: the
 * segment's handle; bgw_extra: its number).  An error is copied into its
 * slot for the backend, then ends the process, which rolls its
 * transaction back.
 */
void
incentives_refresh_writer(Datum arg)
{
	dsm_segment *seg;
	shm_toc    *toc;
	Shared	   *shared;
	WriterSlot *slot;
	shm_mq	   *mq;
	QueueSink	qs;
	RefreshTotals totals;
	int			i;

	pqsignal(SIGTERM, die);
	pqsignal(SIGINT, StatementCancelHandler);
	BackgroundWorkerUnblockSignals();

	CurrentResourceOwner = ResourceOwnerCreate(NULL, "incentives refresh writer");
	seg = dsm_attach(DatumGetUInt32(arg));
	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a refresh writer found its refresh gone")));
	on_dsm_detach(seg, CancelSleepAtDetach, (Datum) 0);
	toc = shm_toc_attach(SEGMENT_MAGIC, dsm_segment_address(seg));
	if (toc == NULL)
		elog(ERROR, "a refresh writer's segment is not its refresh's");
	memcpy(&i, MyBgworkerEntry->bgw_extra, sizeof(int));
	shared = shm_toc_lookup(toc, KEY_SHARED, false);
	slot = &shared->slots[i];
	mq = (shm_mq *) ((char *) shm_toc_lookup(toc, KEY_QUEUES, false) + (Size) i * QUEUE_BYTES);
	shm_mq_set_sender(mq, MyProc);
	refresh_queue_sink_init(&qs, shm_mq_attach(mq, seg, NULL));

	BackgroundWorkerInitializeConnectionByOid(shared->database, shared->authenticated_user, 0);

	PG_TRY();
	{
		WriteShare(shared, i, shm_toc_lookup(toc, KEY_SNAPSHOT, false),
				   shm_toc_lookup(toc, KEY_SETTINGS, false), &qs, &totals);
		pg_write_barrier();
		slot->committed = true;
		if (AwaitBuilds(shared))
			BuildLeaves(shared, i);
		refresh_queue_sink_end(&qs, &totals);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(TopMemoryContext);
		e = CopyErrorData();
		strlcpy(slot->sqlstate, unpack_sql_state(e->sqlerrcode), sizeof(slot->sqlstate));
		CopyText(slot->message, e->message, sizeof(slot->message));
		CopyText(slot->detail, e->detail, sizeof(slot->detail));
		CopyText(slot->hint, e->hint, sizeof(slot->hint));
		CopyText(slot->context, e->context, sizeof(slot->context));
		pg_write_barrier();
		slot->failed = true;
		PG_RE_THROW();
	}
	PG_END_TRY();

	shm_mq_detach(qs.mqh);
	dsm_detach(seg);
	proc_exit(0);
}

/* ---- the backend ---------------------------------------------------------- */

/* The backend's view of its writers. */
typedef struct Writers
{
	int			n;				/* registered */
	BackgroundWorkerHandle **handles;
	Queue	   *queues;
	Shared	   *shared;
	RefreshSink *sink;			/* the leader's: progress and failures */
	RefreshTotals *totals;		/* the writers' END totals added here */
} Writers;

/* RaiseWriterError: writer i's error, or that it ended without committing. */
static void
RaiseWriterError(Writers *w, int i)
{
	WriterSlot *slot = &w->shared->slots[i];

	pg_read_barrier();
	if (slot->failed)
		ereport(ERROR,
				(errcode(MAKE_SQLSTATE(slot->sqlstate[0], slot->sqlstate[1], slot->sqlstate[2],
									   slot->sqlstate[3], slot->sqlstate[4])),
				 errmsg_internal("%s", slot->message),
				 slot->detail[0] ? errdetail_internal("%s", slot->detail) : 0,
				 slot->hint[0] ? errhint("%s", slot->hint) : 0,
				 slot->context[0] ? errcontext("%s", slot->context) : 0));
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("a writer of refresh run " INT64_FORMAT " ended before its share was committed",
					w->shared->args.run_id)));
}

/*
 * Drain: every message the writers have sent, to the leader's sink; with
 * wait, until every writer has detached.  A writer that detached without
 * its END raises its error.
 */
static void
Drain(Writers *w, bool wait)
{
	for (;;)
	{
		bool		got = false;
		int			active = 0;
		int			i;

		for (i = 0; i < w->n; i++)
		{
			Queue	   *q = &w->queues[i];
			Size		len;
			void	   *data;

			if (!q->active)
				continue;
			if (refresh_queue_receive(q, false, &len, &data))
			{
				refresh_message_receive(data, len, w->sink, w->totals, q);
				got = true;
			}
			else if (!q->active && !q->ended)
				RaiseWriterError(w, i);
			if (q->active)
				active++;
		}
		if (!wait || active == 0)
			return;
		if (!got)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1,
							 WAIT_EVENT_MESSAGE_QUEUE_RECEIVE);
			ResetLatch(MyLatch);
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The backend's own shares' sink: the leader's, with the writers'
 * messages read after each unit, so that progress counts them and no
 * queue fills up.
 */
typedef struct OwnSink
{
	RefreshSink pub;
	Writers    *writers;
} OwnSink;

static void
OwnRead(RefreshSink *sink, uint64 participants)
{
	OwnSink    *os = (OwnSink *) sink;

	os->writers->sink->read(os->writers->sink, participants);
}

static void
OwnPut(RefreshSink *sink, HeapTuple tuple)
{
	OwnSink    *os = (OwnSink *) sink;

	os->writers->sink->put(os->writers->sink, tuple);
}

static void
OwnDone(RefreshSink *sink, uint64 participants, uint64 rows)
{
	OwnSink    *os = (OwnSink *) sink;

	os->writers->sink->done(os->writers->sink, participants, rows);
	Drain(os->writers, false);
}

static void
OwnFailed(RefreshSink *sink, const RefreshFailure *f)
{
	OwnSink    *os = (OwnSink *) sink;

	os->writers->sink->failed(os->writers->sink, f);
}

/* AddTotals: *into += *add. */
static void
AddTotals(RefreshTotals *into, const RefreshTotals *add)
{
	into->participants += add->participants;
	into->rows += add->rows;
	into->cents += add->cents;
}

/*
 * Register: writer i's background worker, notifying this backend; false
 * when no slot is free (max_worker_processes).
 */
static bool
Register(Writers *w, int i, dsm_segment *seg)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "$libdir/incentives");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "incentives_refresh_writer");
	snprintf(worker.bgw_name, BGW_MAXLEN, "incentives refresh writer %d of run " INT64_FORMAT,
			 i + 1, w->shared->args.run_id);
	snprintf(worker.bgw_type, BGW_MAXLEN, "incentives refresh writer");
	worker.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	worker.bgw_notify_pid = MyProcPid;
	memcpy(worker.bgw_extra, &i, sizeof(int));
	return RegisterDynamicBackgroundWorker(&worker, &w->handles[i]);
}

/*
 * refresh_parallel: the segment (the arguments, the snapshot, the
 * settings, a queue and a slot per writer), jobs writers registered, who
 * builds the indexes said, the shares of writers that could not start
 * calculated here, then the wait for every writer's END (sent after its
 * last commit) and its exit.  On any error here (a writer's, a cancel)
 * the writers still running are told to stop; their open transactions
 * roll back.
 */
void
refresh_parallel(const RefreshArgs *args, int jobs, Relation target, const TargetRoute *route,
				 RefreshSink *leader_sink, RefreshTotals *totals)
{
	int			nwriters = jobs;
	Snapshot	snapshot = GetActiveSnapshot();
	Size		snapshot_bytes = EstimateSnapshotSpace(snapshot);
	Size		settings_bytes = EstimateGUCStateSpace();
	Size		shared_bytes = add_size(offsetof(Shared, slots),
										mul_size(sizeof(WriterSlot), nwriters));
	shm_toc_estimator e;
	dsm_segment *seg;
	shm_toc    *toc;
	char	   *queue_space;
	char	   *space;
	Writers		w;
	OwnSink		own;
	RefreshTotals share_totals;
	int			registered;
	int			i;

	Assert(args->participant == NULL);
	shm_toc_initialize_estimator(&e);
	shm_toc_estimate_chunk(&e, shared_bytes);
	shm_toc_estimate_chunk(&e, (Size) QUEUE_BYTES * nwriters);
	shm_toc_estimate_chunk(&e, snapshot_bytes);
	shm_toc_estimate_chunk(&e, settings_bytes);
	shm_toc_estimate_keys(&e, 4);
	seg = dsm_create(shm_toc_estimate(&e), 0);
	toc = shm_toc_create(SEGMENT_MAGIC, dsm_segment_address(seg), shm_toc_estimate(&e));

	memset(&w, 0, sizeof(w));
	w.shared = shm_toc_allocate(toc, shared_bytes);
	memset(w.shared, 0, shared_bytes);
	w.shared->args = *args;
	w.shared->database = MyDatabaseId;
	w.shared->authenticated_user = GetAuthenticatedUserId();
	GetUserIdAndSecContext(&w.shared->current_user, &w.shared->sec_context);
	w.shared->target = RelationGetRelid(target);
	w.shared->nshares = jobs;
	w.shared->leader = MyProc;
	pg_atomic_init_u32(&w.shared->committed, 0);
	pg_atomic_init_u32(&w.shared->builds, BUILDS_UNDECIDED);
	ConditionVariableInit(&w.shared->changed);
	shm_toc_insert(toc, KEY_SHARED, w.shared);
	space = shm_toc_allocate(toc, snapshot_bytes);
	SerializeSnapshot(snapshot, space);
	shm_toc_insert(toc, KEY_SNAPSHOT, space);
	space = shm_toc_allocate(toc, settings_bytes);
	SerializeGUCState(settings_bytes, space);
	shm_toc_insert(toc, KEY_SETTINGS, space);
	queue_space = shm_toc_allocate(toc, (Size) QUEUE_BYTES * nwriters);
	shm_toc_insert(toc, KEY_QUEUES, queue_space);

	w.handles = palloc0(sizeof(BackgroundWorkerHandle *) * nwriters);
	w.queues = palloc0(sizeof(Queue) * nwriters);
	w.sink = leader_sink;
	w.totals = totals;
	memset(totals, 0, sizeof(*totals));
	memset(&own, 0, sizeof(own));
	own.pub.read = OwnRead;
	own.pub.put = OwnPut;
	own.pub.done = OwnDone;
	own.pub.failed = OwnFailed;
	own.writers = &w;

	PG_TRY();
	{
		for (registered = 0; registered < nwriters; registered++)
		{
			shm_mq	   *mq = shm_mq_create(queue_space + (Size) registered * QUEUE_BYTES,
										   QUEUE_BYTES);

			if (!Register(&w, registered, seg))
				break;
			shm_mq_set_receiver(mq, MyProc);
			w.queues[registered].mqh = shm_mq_attach(mq, seg, w.handles[registered]);
			w.queues[registered].active = true;
			w.n = registered + 1;
		}
		/*
		 * Every writer started: each builds its leaves.  Else this process
		 * calculates the other shares and the caller builds every leaf, as
		 * a writer cannot build a leaf this transaction writes into.
		 */
		pg_atomic_write_u32(&w.shared->builds,
							registered == nwriters ? BUILDS_WRITERS : BUILDS_CALLER);
		ConditionVariableBroadcast(&w.shared->changed);
		if (registered < nwriters)
			ereport(NOTICE,
					(errmsg("refresh_earnings: %d of %d background writers started; this process writes the other shares",
							registered, nwriters),
					 errhint("max_worker_processes limits the background workers of the server.")));
		for (i = registered; i < nwriters; i++)
		{
			refresh_share_calculate(args, i, jobs, route, RelationGetDescr(target), &own.pub,
									&share_totals);
			AddTotals(totals, &share_totals);
		}
		Drain(&w, true);
		for (i = 0; i < w.n; i++)
			(void) WaitForBackgroundWorkerShutdown(w.handles[i]);
	}
	PG_CATCH();
	{
		for (i = 0; i < w.n; i++)
			TerminateBackgroundWorker(w.handles[i]);
		PG_RE_THROW();
	}
	PG_END_TRY();

	dsm_detach(seg);
}
