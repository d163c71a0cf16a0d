/*
 * module.c
 *    Module initialisation: the engine core's memory, failures
 *    (base/fail.c) and interrupts routed into PostgreSQL, the caches'
 *    callbacks and the extension's settings.  The core allocates in
 *    whatever memory context is current, so a reset or an error frees
 *    everything.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "core/numbers/core.h"
#include "pg/base/fail.h"
#include "pg/load/engine_cache.h"
#include "pg/load/offer_checks.h"
#include "pg/refresh/refresh.h"

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
	inc_set_hooks(PgAlloc, pg_fail);
	inc_set_interrupt_hook(PgInterrupts);
	inc_set_free_hook(PgFree);
	pg_engine_cache_init();
	pg_offer_checks_init();
	pg_run_log_init();
	pg_change_log_init();
	pg_full_refresh_init();

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
