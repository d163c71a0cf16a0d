/*
 * compat.h
 *    The one place where the glue meets differences between PostgreSQL
 *    majors: it builds on 15, 16, 17 and 18 (docs/architecture.md,
 *    Supported versions), and what 13 and 14 lack is filled in too.
 */
#ifndef INC_COMPAT_H
#define INC_COMPAT_H

#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/tuplestore.h"

#if PG_VERSION_NUM < 150000
/*
 * InitMaterializedSRF (PostgreSQL 15's funcapi.c, flags 0): a tuplestore
 * in the per-query context with the function's result descriptor.
 */
static inline void
InitMaterializedSRF(FunctionCallInfo fcinfo, bits32 flags)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	TupleDesc	desc;

	(void) flags;
	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
											  false, work_mem);
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(old);
}
#endif

#if PG_VERSION_NUM < 150000
/* PostgreSQL 15 renamed the analysis of a query without parameter types. */
#define pg_analyze_and_rewrite_fixedparams(raw, text, types, n, env) \
	pg_analyze_and_rewrite(raw, text, types, n, env)
/* and gave shm_mq_send a force_flush (before, every send notifies) */
#define shm_mq_send(mqh, nbytes, data, nowait, force_flush) \
	shm_mq_send(mqh, nbytes, data, nowait)
#endif

/*
 * PostgreSQL 16 gave tuplesort_getdatum a copy flag (before, a value
 * passed by reference is always a copy the caller owns).
 */
#if PG_VERSION_NUM < 160000
#define tuplesort_getdatum(state, forward, copy, val, isNull, abbrev) \
	tuplesort_getdatum(state, forward, val, isNull, abbrev)
#endif

/*
 * PostgreSQL 17 renamed the wait event of a shared message queue's
 * receiver.
 */
#if PG_VERSION_NUM < 170000
#define WAIT_EVENT_MESSAGE_QUEUE_RECEIVE WAIT_EVENT_MQ_RECEIVE
#endif

/*
 * PostgreSQL 18 marks a function that never returns with pg_noreturn
 * before its declaration (C11's _Noreturn), and has no
 * pg_attribute_noreturn(); before 18, the attribute placed first does the
 * same.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

#endif							/* INC_COMPAT_H */
