/*
 * run_log.c
 *    How long the run log keeps a live refresh's row (docs/lifecycle.md,
 *    The run log): the setting incentives.run_log_keep and
 *    incentives_internal.run_log_keep(), which the SQL purge asks.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "pg/refresh/refresh.h"

/* Minutes a succeeded changed_only run's row is kept; -1: for ever. */
static int	RunLogKeepMinutes = 7 * 24 * 60;

void
pg_run_log_init(void)
{
	DefineCustomIntVariable("incentives.run_log_keep",
							"How long incentives.calculation_runs keeps the row of a changed_only refresh that succeeded without exceptions.",
							"Older rows are deleted by the next such refresh; -1 keeps them all. Failed runs, runs with exceptions and other refreshes are always kept.",
							&RunLogKeepMinutes, 7 * 24 * 60, -1, PG_INT32_MAX,
							PGC_USERSET, GUC_UNIT_MIN, NULL, NULL, NULL);
}

PG_FUNCTION_INFO_V1(incentives_run_log_keep);

/*
 * incentives_run_log_keep: incentives.run_log_keep as an interval, NULL
 * when it is -1 (keep every row).
 */
Datum
incentives_run_log_keep(PG_FUNCTION_ARGS)
{
	Interval   *keep;

	if (RunLogKeepMinutes < 0)
		PG_RETURN_NULL();
	keep = (Interval *) palloc0(sizeof(Interval));
	keep->time = (int64) RunLogKeepMinutes * USECS_PER_MINUTE;
	PG_RETURN_INTERVAL_P(keep);
}
