/*
 * lifecycle.c
 *    Two small helpers of the earnings lifecycle (docs/lifecycle.md), both
 *    so that incentives.refresh_earnings and incentives.settle never have
 *    to read an error message's text:
 *
 *    - incentives_internal.transaction_control_allowed(): may the calling
 *      procedure COMMIT?  True when it was CALLed outside a transaction
 *      block (psql, pg_cron) and is not inside an exception block.  The
 *      answer comes from SPI's own notion of a non-atomic context, so it is
 *      the same in every lc_messages language.
 *
 *    - incentives_internal.calculation_failure(): which participant and
 *      transaction the last failed calculation of this session was working
 *      on.  calculate.c notes them from an error context callback while the
 *      error is raised (pg_failure_note); a refresh with on_error => 'skip'
 *      reads them after catching the error, by SQLSTATE, to fill
 *      incentives.calculation_exceptions.transaction_id.
 *
 * The failure note lives in TopMemoryContext (two strings, replaced at
 * each note and cleared when a calculation starts).
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "pg_glue.h"

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

PG_FUNCTION_INFO_V1(incentives_transaction_control_allowed);

/*
 * incentives_transaction_control_allowed: true when the PL/pgSQL procedure
 * that evaluates this call may COMMIT: its SPI connection is non-atomic
 * (CALLed outside a transaction block, or from such a procedure) and no
 * subtransaction (exception block) is open.
 */
Datum
incentives_transaction_control_allowed(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(SPI_inside_nonatomic_context() && !IsSubTransaction());
}
