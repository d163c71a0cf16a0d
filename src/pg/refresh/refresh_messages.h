/*
 * refresh_messages.h
 *    The messages a refresh's background writer sends the backend over its
 *    shm_mq queue (refresh_parallel.c): the worker's sink that encodes a
 *    share's progress, failures and totals (its rows it writes itself),
 *    and the backend's reading of them (docs/architecture.md, A refresh of everyone).
 */
#ifndef INC_REFRESH_MESSAGES_H
#define INC_REFRESH_MESSAGES_H

#include "postgres.h"

#include "storage/shm_mq.h"

#include "pg/refresh/refresh.h"

/*
 * The messages of a queue, each a header then its body:
 *   PROGRESS participants done and their rows since the last message;
 *   READ     the share's participants (after the read);
 *   FAILED   a skipped participant: partial, then the participant,
 *            transaction ("" when none: has_transaction), SQLSTATE and
 *            message, each NUL-terminated;
 *   END      the share's totals, sent once its rows are committed (the
 *            worker ends after it).
 */
typedef enum MessageKind
{
	MSG_PROGRESS = 1,
	MSG_READ,
	MSG_FAILED,
	MSG_END
} MessageKind;

typedef struct MessageHeader
{
	int32		kind;
	bool		flag;			/* FAILED: partial; */
	bool		has_transaction;	/* FAILED: a transaction is named */
	uint64		participants;	/* PROGRESS: done; READ, END: of the share */
	uint64		rows;
	int64		cents_high;		/* END: the total, as two halves */
	uint64		cents_low;
} MessageHeader;

/*
 * A worker's sink for what is not a row: read, done and failed as
 * messages into its queue (put is NULL).
 */
typedef struct QueueSink
{
	RefreshSink pub;
	shm_mq_handle *mqh;
	int			units;			/* done since the last PROGRESS message */
	uint64		done;
	uint64		rows;
} QueueSink;

/* A worker's queue, as the backend reads it. */
typedef struct Queue
{
	shm_mq_handle *mqh;
	bool		active;			/* attached, not yet seen detached */
	bool		ended;			/* END received */
} Queue;

/*
 * refresh_queue_sink_init: qs a sink whose messages go into mqh (attached
 * by the caller).
 */
extern void refresh_queue_sink_init(QueueSink *qs, shm_mq_handle *mqh);

/* refresh_queue_sink_end: the last PROGRESS message, then END with *totals. */
extern void refresh_queue_sink_end(QueueSink *qs, const RefreshTotals *totals);

/*
 * refresh_queue_receive: q's next message into *len, *data (waiting for
 * one if wait); false when there is none yet, or the worker has detached
 * (then q->active is false).
 */
extern bool refresh_queue_receive(Queue *q, bool wait, Size *len, void **data);

/*
 * refresh_message_receive: one message of q's worker: PROGRESS, READ and
 * FAILED passed to sink, END's totals added to *totals.
 */
extern void refresh_message_receive(const char *data, Size len, RefreshSink *sink,
									RefreshTotals *totals, Queue *q);

#endif							/* INC_REFRESH_MESSAGES_H */
