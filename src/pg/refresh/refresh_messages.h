/*
 * refresh_messages.h
 *    The messages a refresh's parallel worker sends the backend over its
 *    shm_mq queue (refresh_parallel.c): the worker's sink that encodes a
 *    share's rows, failures and totals, and the backend's reading of them
 *    (docs/architecture.md, A refresh).
 */
#ifndef INC_REFRESH_MESSAGES_H
#define INC_REFRESH_MESSAGES_H

#include "postgres.h"

#include "access/parallel.h"
#include "storage/shm_mq.h"

#include "pg/refresh/refresh.h"

/*
 * The messages of a queue, each a header then its body:
 *   ROWS     participants done and their rows since the last message, then
 *            tuples (uint32 length, then the tuple's data);
 *   READ     the share's participants (after the read);
 *   FAILED   a skipped participant: partial, then the participant,
 *            transaction ("" when none: has_transaction), SQLSTATE and
 *            message, each NUL-terminated;
 *   END      the share's totals (the worker ends after it).
 */
typedef enum MessageKind
{
	MSG_ROWS = 1,
	MSG_READ,
	MSG_FAILED,
	MSG_END
} MessageKind;

typedef struct MessageHeader
{
	int32		kind;
	bool		flag;			/* FAILED: partial; */
	bool		has_transaction;	/* FAILED: a transaction is named */
	uint64		participants;	/* ROWS: done; READ, END: of the share */
	uint64		rows;
	int64		cents_high;		/* END: the total, as two halves */
	uint64		cents_low;
} MessageHeader;

/* A worker's sink: tuples into a message, messages into its queue. */
typedef struct QueueSink
{
	RefreshSink pub;
	shm_mq_handle *mqh;
	char	   *buf;			/* the ROWS message being filled */
	Size		used;
	uint64		done;			/* since the last ROWS message */
	uint64		rows;
} QueueSink;

/* A worker's queue, as the backend reads it. */
typedef struct Queue
{
	shm_mq_handle *mqh;
	bool		active;
	bool		ended;			/* END received */
	/* a ROWS message being read a tuple at a time (MergeSink) */
	const char *data;			/* NULL: none (valid until the next receive) */
	Size		len;
	Size		off;
	MessageHeader header;
} Queue;

/*
 * refresh_queue_sink_init: qs a sink whose messages go into mqh (attached
 * by the caller).
 */
extern void refresh_queue_sink_init(QueueSink *qs, shm_mq_handle *mqh);

/* refresh_queue_sink_end: the last ROWS message, then END with *totals. */
extern void refresh_queue_sink_end(QueueSink *qs, const RefreshTotals *totals);

/*
 * refresh_message_tuple: the tuple at data + *off of a ROWS message, as a
 * HeapTuple; *off past it.
 */
extern HeapTuple refresh_message_tuple(const char *data, Size *off);

/*
 * refresh_queue_receive: q's next message into *len, *data (waiting for
 * one if wait); false when there is none yet, or the worker has detached
 * after its END.
 */
extern bool refresh_queue_receive(ParallelContext *pcxt, Queue *q, bool wait, Size *len,
								  void **data);

/*
 * refresh_message_receive: one message of q's worker: a ROWS message's
 * tuples put to sink, READ, FAILED and ROWS' progress passed to it, END's
 * totals added to *totals.
 */
extern void refresh_message_receive(const char *data, Size len, RefreshSink *sink,
									RefreshTotals *totals, Queue *q);

#endif							/* INC_REFRESH_MESSAGES_H */
