/*
 * calc_session.h
 *    One calculation over a transactions relation, set up once for every
 *    caller (incentive_calculate, diagnostics, forecast, explain and
 *    progress, each share of a refresh): the engine of the call, the
 *    participant groups, properties and enrollment windows, the source of
 *    its transactions and the error context that names where a failing
 *    calculation was.  calc_session_next hands out the units one by one.
 */
#ifndef INC_PG_CALC_SESSION_H
#define INC_PG_CALC_SESSION_H

#include "postgres.h"

#include "utils/array.h"
#include "utils/date.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "core/engine/groups.h"
#include "pg/load/calc_load.h"
#include "pg/load/enrollments.h"
#include "pg/read/txn_source.h"

/* What a calculation reads: NULL or zero fields are "all" or "none". */
typedef struct CalcSessionOptions
{
	Oid			relid;			/* the transactions relation */
	ArrayType  *offer_keys;		/* the offers calculated, or NULL: all */
	const TimestampTz *as_of;	/* the offers as of then, or NULL: now */
	const DateADT *through_date;	/* transactions up to then, or NULL */
	const char *participant;	/* one participant (and its groups), or NULL */
	Jsonb	   *properties;		/* the call's properties, or NULL */
	Jsonb	   *request_enrollments;	/* a request's windows, or NULL */
	const TxnSourceOptions *source; /* a refresh's share, or NULL */
} CalcSessionOptions;

typedef struct CalcSession
{
	CalcEngine	ce;				/* the engine and what its rows use */
	IncEngine  *engine;
	IncGroups  *groups;
	CalcProperties *props;
	PgEnrollments enrollments;
	TxnSource  *src;
	TxnPosition read_position;	/* the row a read error is about */
	MemoryContext unit_context; /* the unit being calculated, reset per unit */
	TxnUnit		unit;			/* the unit handed out last */
	ErrorContextCallback failure;	/* notes where a failure was (fail.h) */
	ErrorContextCallback context;	/* names the engine's position */
} CalcSession;

/*
 * calc_session_open: everything the calculation needs loaded and its
 * transactions read (in the current memory context, under SPI).  From the
 * start an error notes the participant and transaction it was about, the
 * row being read or the engine's position (pg_failure_note, for
 * calculation_failure()); after the read the error context that names the
 * engine's position is pushed too.
 */
extern void calc_session_open(CalcSession *s, const CalcSessionOptions *options);

/*
 * calc_session_next: the next unit in s->unit (its memory, unit_context,
 * reset first), or false after the last.
 */
extern bool calc_session_next(CalcSession *s);

/* calc_session_close: the error contexts popped, the source closed. */
extern void calc_session_close(CalcSession *s);

#endif							/* INC_PG_CALC_SESSION_H */
