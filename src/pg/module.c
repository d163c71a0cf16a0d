/*
 * module.c
 *    Module initialisation: routes the engine core's memory and failures
 *    into PostgreSQL.
 *
 * The core allocates with palloc0 in whatever memory context is current
 * (so a reset or an error frees everything) and fails with ereport, which
 * unwinds by longjmp; the core holds no resource other than memory while
 * it runs (the offer parser's json-c memory is released by its callers,
 * offer_load.c), so a refresh that skips failing participants may also
 * catch a data failure by a jump instead (pg_fail_trap, pg_glue.h).  The core's messages name the data at fault; the hints
 * that name SQL objects (which table to fix, how to pass a property) are
 * added here, by the kind of failure.  Where a failing calculation was is
 * added as error context by calculate.c.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "core/numbers/core.h"
#include "engine_cache.h"
#include "offer_checks.h"
#include "pg_glue.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* PgAlloc, PgFree: the core's memory, in the current memory context. */
static void *
PgAlloc(size_t size)
{
	if (AllocSizeIsValid(size))
		return palloc0(size);
	return MemoryContextAllocExtended(CurrentMemoryContext, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

static void
PgFree(void *p)
{
	pfree(p);
}

/* ErrCode: the SQLSTATE of a kind of failure. */
static int
ErrCode(IncErrKind kind)
{
	switch (kind)
	{
		case INC_ERR_INVALID:
		case INC_ERR_NO_CONVERSION:
		case INC_ERR_PROPERTY_NOT_NUMBER:
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
 * PgFail: the core's fail hook: ereport(ERROR) with the hint of its kind,
 * or, a data failure while a trap is armed (pg_glue.h), a jump there.
 */
static void
PgFail(const IncFailure *f)
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
	else if (f->kind == INC_ERR_PROPERTY_NOT_NUMBER && f->subject)
		hint = psprintf("Pass the property as a JSON number in properties, e.g. {\"%s\": 90}.",
						f->subject);

	ereport(ERROR,
			(errcode(ErrCode(f->kind)),
			 errmsg_internal("%s", f->message),
			 hint ? errhint("%s", hint) : 0));
	pg_unreachable();
}

/* PgInterrupts: the core's check for a request to stop (a cancel, a timeout). */
static void
PgInterrupts(void)
{
	CHECK_FOR_INTERRUPTS();
}

/* _PG_init: install the engine core's hooks. */
void
_PG_init(void)
{
	inc_set_hooks(PgAlloc, PgFail);
	inc_set_interrupt_hook(PgInterrupts);
	inc_set_free_hook(PgFree);
	pg_engine_cache_init();
	pg_offer_checks_init();

	/*
	 * incentives.exact_only: a developer setting that turns the arithmetic's
	 * fast paths off (core.h), so a calculation can be compared with
	 * itself computed with the big rationals only (bench/run.sh does).
	 */
	DefineCustomBoolVariable("incentives.exact_only",
							 "Computes every figure with exact big rationals only, without the 128-bit fast path.",
							 "A developer setting: the results are the same either way, only slower.",
							 &inc_exact_only, false, PGC_USERSET,
							 GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
}
