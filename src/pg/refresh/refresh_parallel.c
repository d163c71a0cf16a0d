/*
 * refresh_parallel.c
 *    A full refresh with jobs > 1 (refresh.h; docs/architecture.md, A
 *    refresh): whether the read may run in a parallel worker, the parallel
 *    context, a worker's entry, and the backend's loops that write the
 *    workers' rows, merged with its own share's in key order with two jobs
 *    (MergeSink).  The messages of the queues: refresh_messages.c.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "tcop/tcopprot.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/varlena.h"

#include "pg/base/compat.h"
#include "pg/refresh/refresh.h"
#include "pg/refresh/refresh_messages.h"
#include "pg/read/txn_relation.h"

/* Keys of the shared memory table of contents. */
#define KEY_SHARED		UINT64CONST(0x1AC0000000000001)
#define KEY_QUEUES		UINT64CONST(0x1AC0000000000002)

/* Each worker's queue to the backend. */
#define QUEUE_BYTES		(4 * 1024 * 1024)

/* What every worker reads first. */
typedef struct Shared
{
	RefreshArgs args;
	Oid			target;			/* the partition (its tuple descriptor) */
	int			nshares;
	int			first_share;	/* worker i calculates share first_share + i */
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
 * QuerySafe: may query_text run in a parallel worker: every function it
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
				*why = psprintf("it reads %s, which parallel workers cannot read",
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
 * their row-level security, if any).
 */
bool
refresh_parallel_safe(Oid relid, const char **why)
{
	static const char *const tables[] = {
		"incentives.offers", "incentives.skus", "incentives.uom_conversions",
		"incentives.participant_properties", "incentives.enrollments",
		"incentives.participant_groups"
	};
	TxnRelation rel;
	int			i;

	if (!IsUnderPostmaster)
	{
		*why = "a single-user server has no parallel workers";
		return false;
	}
	txn_relation_check(relid, &rel);
	if (!QuerySafe(txn_relation_query(rel.relname, false, false), why))
		return false;
	for (i = 0; i < (int) lengthof(tables); i++)
		if (!QuerySafe(psprintf("SELECT 1 FROM %s", tables[i]), why))
			return false;
	return true;
}

/* ---- the worker ----------------------------------------------------------- */

PGDLLEXPORT void incentives_refresh_worker(dsm_segment *seg, shm_toc *toc);

/*
 * incentives_refresh_worker: a parallel worker's share (the parallel
 * infrastructure has restored the backend's transaction, snapshot,
 * settings and role).
 */
void
incentives_refresh_worker(dsm_segment *seg, shm_toc *toc)
{
	Shared	   *shared = shm_toc_lookup(toc, KEY_SHARED, false);
	char	   *queues = shm_toc_lookup(toc, KEY_QUEUES, false);
	shm_mq	   *mq = (shm_mq *) (queues + (Size) ParallelWorkerNumber * QUEUE_BYTES);
	QueueSink	qs;
	RefreshTotals totals;
	Relation	rel;

	shm_mq_set_sender(mq, MyProc);
	refresh_queue_sink_init(&qs, shm_mq_attach(mq, seg, NULL));

	rel = table_open(shared->target, AccessShareLock);
	refresh_share_calculate(&shared->args, shared->first_share + ParallelWorkerNumber,
							shared->nshares, RelationGetDescr(rel), &qs.pub, &totals);
	refresh_queue_sink_end(&qs, &totals);
	table_close(rel, AccessShareLock);
	shm_mq_detach(qs.mqh);
}

/* ---- the backend ---------------------------------------------------------- */

/* GatherRows: every worker's messages, until every queue is done. */
static void
GatherRows(ParallelContext *pcxt, Queue *queues, int n, RefreshSink *sink, RefreshTotals *totals)
{
	int			active = n;

	while (active > 0)
	{
		bool		got = false;
		int			i;

		for (i = 0; i < n; i++)
		{
			Queue	   *q = &queues[i];
			Size		len;
			void	   *data;

			if (!q->active)
				continue;
			if (refresh_queue_receive(pcxt, q, false, &len, &data))
			{
				refresh_message_receive(data, len, sink, totals, q);
				got = true;
			}
			else if (!q->active)
				active--;
		}
		if (!got && active > 0)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1,
							 WAIT_EVENT_MESSAGE_QUEUE_RECEIVE);
			ResetLatch(MyLatch);
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The backend's own share with two jobs: its rows and its worker's put to
 * the writer in the order of participant_key (each share's rows come in
 * that order), so that the partition's primary key build finds them
 * sorted, as with one job.  A row of the backend's goes after every row of the worker
 * with a smaller key: the worker's next row is read first, waiting for it
 * when the queue is empty (the worker never waits for the backend but
 * when its queue is full).  A participant, and a group with its members,
 * is in one share, so the two never have rows of one key.
 */
typedef struct MergeSink
{
	RefreshSink pub;			/* the backend's own rows come here */
	RefreshSink *out;			/* the writer */
	ParallelContext *pcxt;
	Queue	   *q;				/* the worker's queue */
	RefreshTotals *worker_totals;	/* from its END */
	TupleDesc	desc;
	Oid			collation;		/* participant_key's */
	MemoryContext context;		/* the worker's rows and own_key (the share's
								 * own contexts end with it) */
	HeapTuple	next;			/* the worker's next row, NULL: not read */
	const char *next_key;
	int			next_len;
	char	   *own_key;		/* the backend's last row's key (a copy) */
	int			own_len;
	int			own_cap;
	int			cmp;			/* next_key against own_key, when cmp_valid */
	bool		cmp_valid;
} MergeSink;

/* TupleParticipantKey: the tuple's participant_key, in place. */
static const char *
TupleParticipantKey(MergeSink *ms, HeapTuple tuple, int *len)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, REFRESH_PARTICIPANT_COLUMN + 1, ms->desc, &isnull);

	if (isnull)
		elog(ERROR, "a refresh row without participant_key");
	*len = (int) VARSIZE_ANY_EXHDR(DatumGetPointer(d));
	return VARDATA_ANY(DatumGetPointer(d));
}

/*
 * PeekWorker: the worker's next row in ms->next (read from its queue,
 * waiting for it; the queue's other messages passed to the writer on the
 * way); false when the worker has no more.
 */
static bool
PeekWorker(MergeSink *ms)
{
	Queue	   *q = ms->q;

	while (ms->next == NULL)
	{
		Size		len;
		void	   *data;
		MessageHeader h;

		if (q->data != NULL && q->off < q->len)
		{
			MemoryContext old = MemoryContextSwitchTo(ms->context);

			ms->next = refresh_message_tuple(q->data, &q->off);
			MemoryContextSwitchTo(old);
			ms->next_key = TupleParticipantKey(ms, ms->next, &ms->next_len);
			ms->cmp_valid = false;
			break;
		}
		if (q->data != NULL)
		{
			/* a ROWS message read: its participants are done */
			if (q->header.participants > 0 || q->header.rows > 0)
				ms->out->done(ms->out, q->header.participants, q->header.rows);
			q->data = NULL;
		}
		if (q->ended || !q->active || !refresh_queue_receive(ms->pcxt, q, true, &len, &data))
			return false;
		memcpy(&h, data, Min(len, sizeof(h)));
		if (len >= sizeof(h) && h.kind == MSG_ROWS)
		{
			q->data = data;
			q->len = len;
			q->off = sizeof(MessageHeader);
			q->header = h;
		}
		else
			refresh_message_receive(data, len, ms->out, ms->worker_totals, q);
		CHECK_FOR_INTERRUPTS();
	}
	return true;
}

/* PutWorkerRow: the worker's next row to the writer. */
static void
PutWorkerRow(MergeSink *ms)
{
	HeapTuple	tuple = ms->next;

	ms->next = NULL;
	ms->cmp_valid = false;
	ms->out->put(ms->out, tuple);
}

static void
MergePut(RefreshSink *sink, HeapTuple tuple)
{
	MergeSink  *ms = (MergeSink *) sink;
	int			len;
	const char *key = TupleParticipantKey(ms, tuple, &len);

	if (len != ms->own_len || memcmp(key, ms->own_key, len) != 0)
	{
		if (len > ms->own_cap)
		{
			ms->own_cap = Max(len, 64);
			ms->own_key = ms->own_key ? repalloc(ms->own_key, ms->own_cap) :
				MemoryContextAlloc(ms->context, ms->own_cap);
		}
		memcpy(ms->own_key, key, len);
		ms->own_len = len;
		ms->cmp_valid = false;
	}
	while (PeekWorker(ms))
	{
		if (!ms->cmp_valid)
		{
			ms->cmp = varstr_cmp(ms->next_key, ms->next_len, ms->own_key, ms->own_len,
								 ms->collation);
			ms->cmp_valid = true;
		}
		if (ms->cmp >= 0)
			break;
		PutWorkerRow(ms);
	}
	ms->out->put(ms->out, tuple);
}

static void
MergeRead(RefreshSink *sink, uint64 participants)
{
	MergeSink  *ms = (MergeSink *) sink;

	ms->out->read(ms->out, participants);
}

static void
MergeDone(RefreshSink *sink, uint64 participants, uint64 rows)
{
	MergeSink  *ms = (MergeSink *) sink;

	ms->out->done(ms->out, participants, rows);
}

static void
MergeFailed(RefreshSink *sink, const RefreshFailure *f)
{
	MergeSink  *ms = (MergeSink *) sink;

	ms->out->failed(ms->out, f);
}

/*
 * CalculateMerged: the backend's share 0 of nshares, merged with the rows
 * of the worker reading q (if it started), then the worker's rest.
 */
static void
CalculateMerged(const RefreshArgs *args, int nshares, TupleDesc desc, ParallelContext *pcxt,
				Queue *q, RefreshSink *leader_sink, RefreshTotals *own, RefreshTotals *worker_totals)
{
	MergeSink	ms;

	memset(&ms, 0, sizeof(ms));
	ms.pub.read = MergeRead;
	ms.pub.put = MergePut;
	ms.pub.done = MergeDone;
	ms.pub.failed = MergeFailed;
	ms.out = leader_sink;
	ms.pcxt = pcxt;
	ms.q = q;
	ms.worker_totals = worker_totals;
	ms.desc = desc;
	ms.collation = TupleDescAttr(desc, REFRESH_PARTICIPANT_COLUMN)->attcollation;
	ms.context = CurrentMemoryContext;
	refresh_share_calculate(args, 0, nshares, desc, &ms.pub, own);
	while (PeekWorker(&ms))
		PutWorkerRow(&ms);
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
 * refresh_parallel: the shares of nworkers workers (and the backend's).
 * The backend enters parallel mode (its transaction has its XID first: its
 * writes need one, and parallel mode cannot assign it) and launches the
 * workers, which share its transaction, snapshot, settings and role; each
 * calculates a share (refresh_share_calculate) and sends its rows through
 * its shm_mq queue, since a parallel worker may not insert.  The backend
 * calculates the share of any worker that could not be started itself,
 * after the others.  A worker's error reaches the backend through the
 * parallel infrastructure's error queues and is raised there with its
 * SQLSTATE and context: the run fails, and the rows written so far roll
 * back with the transaction.  A worker that dies (kill -9) makes the
 * postmaster restart every backend, as any backend's crash does.
 */
void
refresh_parallel(const RefreshArgs *args, int nworkers, int nshares, Relation target,
				 RefreshSink *leader_sink, RefreshTotals *totals)
{
	TupleDesc	desc = RelationGetDescr(target);
	ParallelContext *pcxt;
	Shared	   *shared;
	char	   *queue_space;
	Queue	   *queues;
	RefreshTotals own;
	int			i;

	(void) GetCurrentTransactionId();	/* before parallel mode */
	EnterParallelMode();
	pcxt = CreateParallelContext("$libdir/incentives", "incentives_refresh_worker", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(Shared));
	shm_toc_estimate_chunk(&pcxt->estimator, (Size) QUEUE_BYTES * nworkers);
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);

	shared = shm_toc_allocate(pcxt->toc, sizeof(Shared));
	Assert(args->participant == NULL);
	shared->args = *args;
	shared->target = RelationGetRelid(target);
	shared->nshares = nshares;
	shared->first_share = nshares - nworkers;
	shm_toc_insert(pcxt->toc, KEY_SHARED, shared);
	queue_space = shm_toc_allocate(pcxt->toc, (Size) QUEUE_BYTES * nworkers);
	shm_toc_insert(pcxt->toc, KEY_QUEUES, queue_space);
	queues = palloc0(sizeof(Queue) * nworkers);
	for (i = 0; i < nworkers; i++)
	{
		shm_mq	   *mq = shm_mq_create(queue_space + (Size) i * QUEUE_BYTES, QUEUE_BYTES);

		shm_mq_set_receiver(mq, MyProc);
		queues[i].mqh = shm_mq_attach(mq, pcxt->seg, NULL);
	}
	LaunchParallelWorkers(pcxt);
	for (i = 0; i < pcxt->nworkers_launched; i++)
	{
		shm_mq_set_handle(queues[i].mqh, pcxt->worker[i].bgwhandle);
		queues[i].active = true;
	}
	memset(totals, 0, sizeof(*totals));
	if (shared->first_share == 1)
	{
		Assert(nworkers == 1);
		CalculateMerged(args, nshares, desc, pcxt, &queues[0], leader_sink, &own, totals);
		AddTotals(totals, &own);
	}
	else
		GatherRows(pcxt, queues, pcxt->nworkers_launched, leader_sink, totals);
	WaitForParallelWorkersToFinish(pcxt);

	/* the shares of the workers that could not be started */
	for (i = pcxt->nworkers_launched; i < nworkers; i++)
	{
		refresh_share_calculate(args, shared->first_share + i, nshares, desc, leader_sink, &own);
		AddTotals(totals, &own);
	}

	DestroyParallelContext(pcxt);
	ExitParallelMode();
}
