/*
 * fail.c
 *    The engine core's failures in PostgreSQL (see fail.h): the fail hook,
 *    which adds the hints that name SQL objects (which table to fix, how
 *    to pass a property) by the kind of failure; the trap a refresh that
 *    skips failing participants arms; and the note of where the last
 *    failed calculation was, which incentives_internal.calculation_failure()
 *    returns (a refresh with on_error => 'skip' reads it by SQLSTATE,
 *    never by a message's text).  The note lives in TopMemoryContext.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "pg/base/error_context.h"
#include "pg/base/fail.h"

/* ErrCode: the SQLSTATE of a kind of failure. */
static int
ErrCode(IncErrKind kind)
{
	switch (kind)
	{
		case INC_ERR_INVALID:
		case INC_ERR_NO_CONVERSION:
		case INC_ERR_PROPERTY_NOT_NUMBER:
		case INC_ERR_NO_EXCHANGE_RATE:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case INC_ERR_NULL:
			return ERRCODE_NOT_NULL_VIOLATION;
		case INC_ERR_RANGE:
			return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
		case INC_ERR_INTERNAL:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

PgFailTrap *pg_fail_trap = NULL;

/*
 * pg_fail: the core's fail hook: ereport(ERROR) with the hint of its kind,
 * or, a data failure while a trap is armed, a jump there.
 */
void
pg_fail(const IncFailure *f)
{
	char	   *hint = NULL;
	PgFailTrap *trap = pg_fail_trap;

	if (trap && f->kind != INC_ERR_INTERNAL)
	{
		pg_fail_trap = NULL;	/* whatever fails from here on is raised */
		trap->sqlerrcode = ErrCode(f->kind);
		trap->message = MemoryContextStrdup(trap->context, f->message);
		siglongjmp(trap->jump, 1);
	}

	if (f->kind == INC_ERR_NO_CONVERSION)
		hint = pstrdup("Add a row to incentives.uom_conversions for this pair of units.");
	else if (f->kind == INC_ERR_NO_EXCHANGE_RATE)
		hint = pstrdup("Add a row to incentives.exchange_rates for this pair of currencies dated on or before the transaction.");
	else if (f->kind == INC_ERR_PROPERTY_NOT_NUMBER && f->subject)
		hint = psprintf("Pass the property as a JSON number in properties, e.g. {\"%s\": 90}.",
						f->subject);

	/* the CONTEXT without the frames of the extension's routines */
	pg_error_context_trim();
	ereport(ERROR,
			(errcode(ErrCode(f->kind)),
			 errmsg_internal("%s", f->message),
			 hint ? errhint("%s", hint) : 0));
	pg_unreachable();
}

static char *failure_participant = NULL;
static char *failure_txn = NULL;

/* CopyNote: s in TopMemoryContext, or NULL (also when memory is short). */
static char *
CopyNote(const char *s)
{
	size_t		len;
	char	   *copy;

	if (s == NULL)
		return NULL;
	len = strlen(s);
	copy = MemoryContextAllocExtended(TopMemoryContext, len + 1, MCXT_ALLOC_NO_OOM);
	if (copy)
		memcpy(copy, s, len + 1);
	return copy;
}

/* pg_failure_clear: forget the last failure (a calculation starts). */
void
pg_failure_clear(void)
{
	if (failure_participant)
		pfree(failure_participant);
	if (failure_txn)
		pfree(failure_txn);
	failure_participant = failure_txn = NULL;
}

/*
 * pg_failure_note: remember participant and transaction (either may be
 * NULL) as where the calculation was when an error was raised.  Called from
 * an error context callback, so it must not raise: allocation failures
 * leave NULLs.
 */
void
pg_failure_note(const char *participant, const char *txn)
{
	pg_failure_clear();
	failure_participant = CopyNote(participant);
	failure_txn = CopyNote(txn);
}

PG_FUNCTION_INFO_V1(incentives_calculation_failure);

/*
 * incentives_calculation_failure: calculation_failure(OUT participant_key
 * text, OUT transaction_id text): the participant and transaction the last
 * failed incentive_calculate of this session was at; NULLs when it was at
 * neither (loading offers, a property) or no calculation failed since the
 * last one started.
 */
Datum
incentives_calculation_failure(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2];

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "calculation_failure must return a record");
	desc = BlessTupleDesc(desc);
	nulls[0] = failure_participant == NULL;
	nulls[1] = failure_txn == NULL;
	values[0] = nulls[0] ? (Datum) 0 : CStringGetTextDatum(failure_participant);
	values[1] = nulls[1] ? (Datum) 0 : CStringGetTextDatum(failure_txn);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

PG_FUNCTION_INFO_V1(incentives_calculation_failure_clear);

/*
 * incentives_calculation_failure_clear: calculation_failure_clear(): forget
 * the last failure, so that calculation_failure() then names a failure of
 * a calculation started after the call only.
 */
Datum
incentives_calculation_failure_clear(PG_FUNCTION_ARGS)
{
	pg_failure_clear();
	PG_RETURN_VOID();
}
