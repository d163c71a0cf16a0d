/*
 * refresh.h
 *    A full refresh of the materialized earnings written from C
 *    (docs/lifecycle.md, Refreshing the earnings; docs/architecture.md,
 *    A refresh): every participant's rows calculated and written straight
 *    into the run's new partition with PostgreSQL's bulk insert path, by
 *    one process or by jobs processes that each calculate and write a
 *    share of the participants in one snapshot.
 *
 *    refresh_share.c     one share: the calculation, its rows as tuples
 *                        of the partition, failing participants skipped
 *    row_writer.c        tuples into a table, a thousand at a time
 *                        (table_multi_insert with a BulkInsertState)
 *    target_writer.c     tuples into the target: a table, or the leaves
 *                        of one partitioned by hash of participant_key
 *    refresh_parallel.c  jobs > 1: jobs background writers, each
 *                        calculating and writing a share in a
 *                        transaction of its own, then indexing its
 *                        leaves
 *    refresh_messages.c  the messages of a writer's queue to the backend:
 *                        progress, failures, totals
 *    transaction_control.c  the lock a refresh holds across its
 *                        transactions
 *    refresh_entry.c     incentives_internal.refresh_write: the SQL entry,
 *                        progress, the result
 *    run_log.c           incentives.run_log_keep: how long a live
 *                        refresh's run row is kept
 *    change_log.c        incentives.changed_only_limit: how many changed
 *                        participants a changed_only refresh takes
 */
#ifndef INC_REFRESH_H
#define INC_REFRESH_H

#include "postgres.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "datatype/timestamp.h"
#include "utils/relcache.h"

#include "core/numbers/core.h"

/* A partitioned target's route of rows to its leaves (target_writer.h). */
struct TargetRoute;

/* The columns of an earnings partition: the earning row's 17, then these. */
#define REFRESH_COLUMNS 25
/* the partitions of 0.3.0's and 0.4.0's declarations end before product_key */
#define REFRESH_COLUMNS_0_4 21
#define REFRESH_DATE_COLUMN 17
#define REFRESH_CALCULATED_AT_COLUMN 18
#define REFRESH_RUN_ID_COLUMN 19
#define REFRESH_GROUP_KEY_COLUMN 20
#define REFRESH_PRODUCT_KEY_COLUMN 21
#define REFRESH_GROWER_KEY_COLUMN 22
#define REFRESH_CURRENCY_COLUMN 23
#define REFRESH_EXCHANGE_RATE_COLUMN 24
/* participant_key, the first column of the partition and of its primary key */
#define REFRESH_PARTICIPANT_COLUMN 0

/* What every process of a refresh calculates with (the same in each). */
typedef struct RefreshArgs
{
	Oid			relid;			/* the transactions relation */
	int64		run_id;
	TimestampTz calculated_at;	/* the refresh's transaction start */
	bool		skip;			/* on_error => 'skip' */
	const char *participant;	/* one participant (with its groups' members),
								 * or NULL: everyone; one process only */
} RefreshArgs;

/*
 * A participant a refresh with on_error => 'skip' could not calculate
 * (each member with transactions of a unit of the participant groups
 * that failed).
 */
typedef struct RefreshFailure
{
	char	   *participant_key;
	char	   *transaction_id; /* the transaction it was at, or NULL */
	char		sqlstate[6];
	char	   *message;
	bool		partial;		/* some of its rows were written before it failed */
} RefreshFailure;

/* What a share (or the whole refresh) calculated. */
typedef struct RefreshTotals
{
	uint64		participants;	/* read, failed ones included */
	uint64		rows;			/* written, of the units that did not fail */
	inc_int128	cents;			/* their incentive_amount, in cents */
} RefreshTotals;

/*
 * Where a share's results go: the leader's writer, or a worker's queue to
 * the leader.
 *   read:        after the read, the share's participants;
 *   put:         a row of the partition, palloc'd; the sink frees it;
 *   done:        a unit done (succeeded or failed): so many participants
 *                (those with transactions) with so many rows;
 *   failed:      a participant skipped (on_error => 'skip').
 */
typedef struct RefreshSink RefreshSink;
struct RefreshSink
{
	void		(*read) (RefreshSink *sink, uint64 participants);
	void		(*put) (RefreshSink *sink, HeapTuple tuple);
	void		(*done) (RefreshSink *sink, uint64 participants, uint64 rows);
	void		(*failed) (RefreshSink *sink, const RefreshFailure *failure);
};

/*
 * refresh_check_desc: desc is that of an earnings partition (the columns
 * and types the rows are formed with); an error otherwise.
 */
extern void refresh_check_desc(TupleDesc desc, const char *relname);

/*
 * refresh_share_calculate: calculate every participant of args->relid whose
 * unit falls in share of nshares (a group with all its members in one
 * share; nshares 1: everyone): with route (a hash-partitioned target's),
 * the units of the leaves whose remainder is share modulo nshares, else
 * by txn_share_of; in the current snapshot, forming each row as a tuple
 * of desc for sink; *totals gets what was calculated.  Connects to SPI
 * itself.
 */
extern void refresh_share_calculate(const RefreshArgs *args, int share, int nshares,
									const struct TargetRoute *route, TupleDesc desc,
									RefreshSink *sink, RefreshTotals *totals);

/* refresh_add_cents: totals->cents += an incentive_amount (scale 2 or less). */
extern void refresh_add_cents(inc_int128 *cents, const IncDec *amount);

/*
 * refresh_parallel_safe: may the read of relid run in a parallel worker?
 * (A table or view whose query, with its row-level security, calls only
 * parallel-safe functions and reads no temporary or foreign table.)  When
 * not, *why says why.
 */
extern bool refresh_parallel_safe(Oid relid, const char **why);

/*
 * refresh_parallel: jobs > 1 (outside a transaction block, under the
 * session's refresh lock, into target: the run's partition, partitioned
 * by hash of participant_key and committed before): jobs background
 * writers, writer k calculating share k (the participants of the leaves
 * whose remainder is k modulo jobs) in this statement's snapshot, in a
 * transaction of its own; once every writer has committed its rows, each
 * builds the indexes of its leaves (refresh_earnings_index) and commits.
 * A share whose writer could not be started is calculated here through
 * leader_sink, in this transaction, and then no writer builds: the caller
 * builds every leaf.  Returns once every writer has ended; an error of one
 * is raised here with its SQLSTATE.  *totals of all shares.
 */
extern void refresh_parallel(const RefreshArgs *args, int jobs, Relation target,
							 const struct TargetRoute *route, RefreshSink *leader_sink,
							 RefreshTotals *totals);

/*
 * refresh_holds: does this session hold the lock of a refresh that spans
 * transactions (transaction_control.c)?
 */
extern bool refresh_holds(void);

/* Defines incentives.run_log_keep (run_log.c); called by _PG_init. */
extern void pg_run_log_init(void);

/* Defines incentives.changed_only_limit (change_log.c); called by _PG_init. */
extern void pg_change_log_init(void);

/* Defines incentives.full_refresh (full_refresh.c); called by _PG_init. */
extern void pg_full_refresh_init(void);

#endif							/* INC_REFRESH_H */
