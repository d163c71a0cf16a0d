/*
 * refresh_messages.c
 *    The messages of a refresh's worker queues (refresh_messages.h): a
 *    worker's sink that encodes its share's progress, failures and totals,
 *    and the backend's receiving and decoding of them.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "storage/shm_mq.h"

#include "pg/refresh/refresh_messages.h"

/* How many units' progress a worker sends in one PROGRESS message. */
#define PROGRESS_UNITS	256

/* ---- the worker ----------------------------------------------------------- */

/* Send: one message, waiting while the queue is full. */
static void
Send(shm_mq_handle *mqh, const void *data, Size len)
{
	shm_mq_result res = shm_mq_send(mqh, len, data, false, false);

	if (res != SHM_MQ_SUCCESS)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("the backend of the refresh stopped reading its worker's rows")));
}

/* SendProgress: the participants done and their rows since the last one. */
static void
SendProgress(QueueSink *qs)
{
	MessageHeader h;

	if (qs->units == 0)
		return;
	memset(&h, 0, sizeof(h));
	h.kind = MSG_PROGRESS;
	h.participants = qs->done;
	h.rows = qs->rows;
	Send(qs->mqh, &h, sizeof(h));
	qs->units = 0;
	qs->done = 0;
	qs->rows = 0;
}

static void
QueueRead(RefreshSink *sink, uint64 participants)
{
	QueueSink  *qs = (QueueSink *) sink;
	MessageHeader h;

	memset(&h, 0, sizeof(h));
	h.kind = MSG_READ;
	h.participants = participants;
	Send(qs->mqh, &h, sizeof(h));
}

static void
QueueDone(RefreshSink *sink, uint64 participants, uint64 rows)
{
	QueueSink  *qs = (QueueSink *) sink;

	qs->done += participants;
	qs->rows += rows;
	if (++qs->units >= PROGRESS_UNITS)
		SendProgress(qs);
}

static void
QueueFailed(RefreshSink *sink, const RefreshFailure *f)
{
	QueueSink  *qs = (QueueSink *) sink;
	StringInfoData msg;
	MessageHeader h;

	SendProgress(qs);
	memset(&h, 0, sizeof(h));
	h.kind = MSG_FAILED;
	h.flag = f->partial;
	h.has_transaction = f->transaction_id != NULL;
	initStringInfo(&msg);
	appendBinaryStringInfo(&msg, (const char *) &h, sizeof(h));
	appendBinaryStringInfo(&msg, f->participant_key, strlen(f->participant_key) + 1);
	appendBinaryStringInfo(&msg, f->transaction_id ? f->transaction_id : "",
						   f->transaction_id ? strlen(f->transaction_id) + 1 : 1);
	appendBinaryStringInfo(&msg, f->sqlstate, strlen(f->sqlstate) + 1);
	appendBinaryStringInfo(&msg, f->message, strlen(f->message) + 1);
	Send(qs->mqh, msg.data, msg.len);
	pfree(msg.data);
}

/* refresh_queue_sink_init: the sink's callbacks. */
void
refresh_queue_sink_init(QueueSink *qs, shm_mq_handle *mqh)
{
	memset(qs, 0, sizeof(*qs));
	qs->pub.read = QueueRead;
	qs->pub.put = NULL;			/* the worker writes its rows itself */
	qs->pub.done = QueueDone;
	qs->pub.failed = QueueFailed;
	qs->mqh = mqh;
}

/* refresh_queue_sink_end: the progress left, then the share's totals. */
void
refresh_queue_sink_end(QueueSink *qs, const RefreshTotals *totals)
{
	MessageHeader h;

	SendProgress(qs);
	memset(&h, 0, sizeof(h));
	h.kind = MSG_END;
	h.participants = totals->participants;
	h.rows = totals->rows;
	h.cents_high = (int64) (totals->cents >> 64);
	h.cents_low = (uint64) totals->cents;
	if (shm_mq_send(qs->mqh, sizeof(h), &h, false, true) != SHM_MQ_SUCCESS)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("the backend of the refresh stopped reading its worker's rows")));
}

/* ---- the backend ---------------------------------------------------------- */

/*
 * refresh_queue_receive: the queue's next message into *len, *data
 * (waiting for one if wait); false when there is none yet, or the worker
 * has detached (q->active false; q->ended tells whether it sent its END).
 */
bool
refresh_queue_receive(Queue *q, bool wait, Size *len, void **data)
{
	shm_mq_result res = shm_mq_receive(q->mqh, len, data, !wait);

	if (res == SHM_MQ_SUCCESS)
		return true;
	if (res == SHM_MQ_DETACHED)
		q->active = false;
	return false;
}

/* refresh_message_receive: one message of a worker, to sink. */
void
refresh_message_receive(const char *data, Size len, RefreshSink *sink, RefreshTotals *totals,
						Queue *q)
{
	MessageHeader h;

	if (len < sizeof(MessageHeader))
		elog(ERROR, "a refresh worker's message of %zu bytes", len);
	memcpy(&h, data, sizeof(h));
	switch ((MessageKind) h.kind)
	{
		case MSG_PROGRESS:
			/* the participants done since the last message, and their rows */
			sink->done(sink, h.participants, h.rows);
			break;
		case MSG_READ:
			sink->read(sink, h.participants);
			break;
		case MSG_FAILED:
			{
				RefreshFailure f;
				const char *p = data + sizeof(MessageHeader);

				f.partial = h.flag;
				f.participant_key = (char *) p;
				p += strlen(p) + 1;
				f.transaction_id = h.has_transaction ? (char *) p : NULL;
				p += strlen(p) + 1;
				strlcpy(f.sqlstate, p, sizeof(f.sqlstate));
				p += strlen(p) + 1;
				f.message = (char *) p;
				sink->failed(sink, &f);
				break;
			}
		case MSG_END:
			totals->participants += h.participants;
			totals->rows += h.rows;
			totals->cents += ((inc_int128) h.cents_high << 64) | (inc_int128) h.cents_low;
			q->ended = true;
			break;
		default:
			elog(ERROR, "a refresh worker's message of kind %d", h.kind);
	}
}
